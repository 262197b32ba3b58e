#include "costmodel/transfer_rows.h"

#include <map>
#include <string>
#include <utility>

namespace kiln::costmodel {

TransferRows transfer_rows(const ops::Template& tmpl, const std::vector<store::Record>& records,
                           const ops::TargetInfo& target, FeatureType type, int64_t min_rows) {
  TransferRows out;
  // Resolve each record to (workload, config) of this template; spaces cached per workload.
  std::map<std::string, std::pair<ops::Workload, ConfigSpace>> tasks;
  std::vector<FeatureQuery> samples;
  for (const store::Record& r : records) {
    if (r.task_name != tmpl.name()) continue;
    // Records of an older measurement version timed another program: not this task's costs.
    if (!store::is_comparable(r)) continue;
    ++out.records;
    auto it = tasks.find(r.workload);
    if (it == tasks.end()) {
      Result<ops::Workload> parsed = ops::Workload::parse(r.workload);
      if (!parsed.ok()) continue;
      Result<ops::Workload> w = tmpl.normalize(*parsed);
      if (!w.ok()) continue;
      it = tasks.emplace(r.workload, std::make_pair(*w, tmpl.space(*w))).first;
    }
    Result<ConfigEntity> config = it->second.second.from_json_entities(r.entities);
    if (!config.ok()) continue;
    samples.push_back({&it->second.first, *config});
    out.flops.push_back(r.flops());
  }
  if (static_cast<int64_t>(samples.size()) < min_rows) return out;
  // A config that does not instantiate keeps an empty row: all zeros once padded, as in
  // AutoTVM's fit_log.
  out.rows = extract_features_parallel(tmpl, samples, target, type);
  return out;
}

}  // namespace kiln::costmodel
