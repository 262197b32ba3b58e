// SQL shared by the SQL backends (store/sqlite/, store/postgres/): the condition of
// is_comparable, and string literals. Both dialects accept this text.
#pragma once

#include <string>
#include <string_view>

namespace kiln::store {

// An SQL string literal.
std::string sql_quote(std::string_view text);
// The SQL condition of is_comparable(record) over a table with columns task_name and
// measure_version: measure_version >= the oldest comparable version of its task_name
// (ops/measured_layout.h).
std::string comparable_sql();

}  // namespace kiln::store
