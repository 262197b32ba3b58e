// Training rows from the records of other workloads of one template (AutoTVM's fit_log input):
// each record's features come from its own workload and entities, on one target. Shared by the
// xgb tuner's transfer learning and the compiler's predicted configs.
#pragma once

#include <cstdint>
#include <vector>

#include "costmodel/features.h"
#include "ops/template.h"
#include "store/record.h"

namespace kiln::costmodel {

struct TransferRows {
  int64_t records = 0;                   // records of the template considered
  std::vector<std::vector<float>> rows;  // one per usable record (empty: not instantiable)
  std::vector<double> flops;             // its FLOP/s, 0 for a failed record
};

// The rows of `records` for `tmpl`: records of another template, of an older measurement
// version (store::is_comparable), or whose workload or entities do not parse for the template
// are skipped. Features are extracted (on every hardware thread) only when at least `min_rows`
// records are usable; otherwise `rows` stays empty and `flops` holds the usable count's values.
TransferRows transfer_rows(const ops::Template& tmpl, const std::vector<store::Record>& records,
                           const ops::TargetInfo& target, FeatureType type, int64_t min_rows);

}  // namespace kiln::costmodel
