// What the SQL backends (store/sqlite/, store/postgres/) share: the condition of is_comparable
// and string literals (text both dialects accept), the decoding of a record's JSON columns, and
// the check of run times before they are added.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "store/record.h"
#include "store/run_times.h"

namespace kiln::store {

// An SQL string literal.
std::string sql_quote(std::string_view text);
// The SQL condition of is_comparable(record) over a table with columns task_name,
// measure_version and measure_options: measure_version >= the oldest comparable version of its
// task_name (ops/measured_layout.h), and measure_options without "emulated":true.
std::string comparable_sql();

// Sets r.entities and r.costs from their columns' JSON text; an error names the store (`store`,
// as in its errors), the record (r.id) and the malformed column.
Status decode_json_columns(const std::string& store, const std::string& entities,
                           const std::string& costs, Record& r);

// validate_record of every record of a batch; the error names the store and the batch item.
Status validate_batch(const std::string& store, const std::vector<Record>& batch);

// What Store::add_run_times refuses (store/store.h), before any write: a read-only store, no run
// identity, a number that is not finite and non-negative. Errors name the store.
Status check_run_times_delta(const std::string& store, bool read_only, const RunTimes& delta);

}  // namespace kiln::store
