#include "store/record_sql.h"

#include "ops/measured_layout.h"

namespace kiln::store {

std::string sql_quote(std::string_view text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

std::string comparable_sql() {
  std::string oldest = "CASE task_name";
  for (std::string_view name : ops::templates_with_newer_measurements()) {
    oldest += " WHEN " + sql_quote(name) + " THEN " +
              std::to_string(ops::oldest_comparable_version(name));
  }
  return "(measure_version >= (" + oldest + " ELSE 1 END))";
}

}  // namespace kiln::store
