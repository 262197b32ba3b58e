#include "tuner/xgb_tuner.h"

#include <chrono>
#include <map>

namespace kiln::tuner {

namespace detail {

XgbParts::XgbParts(const ops::Template& tmpl, const ops::Workload& workload,
                   const ConfigSpace& space, ops::TargetInfo target,
                   costmodel::FeatureType features, costmodel::LossType loss, uint64_t seed)
    : extractor(tmpl, workload, space, target, features), xgb(extractor, loss, seed) {}

}  // namespace detail

XgbTuner::XgbTuner(const ops::Template& tmpl, const ops::Workload& workload,
                   const ConfigSpace& space, ops::TargetInfo target,
                   costmodel::FeatureType features, costmodel::LossType loss, uint64_t seed,
                   ModelTunerOptions options)
    : detail::XgbParts(tmpl, workload, space, target, features, loss, seed),
      ModelBasedTuner(space, xgb, std::move(options), seed),
      tmpl_(tmpl),
      target_(target),
      feature_type_(features) {}

Result<TransferReport> XgbTuner::transfer_from(const std::vector<store::Record>& records,
                                               int min_rows) {
  auto start = std::chrono::steady_clock::now();
  TransferReport report;
  // Resolve each record to (workload, config) of this template; spaces cached per workload.
  std::map<std::string, std::pair<ops::Workload, ConfigSpace>> tasks;
  std::vector<costmodel::FeatureQuery> samples;
  std::vector<double> flops;
  for (const store::Record& r : records) {
    if (r.task_name != tmpl_.name()) continue;
    // Records of an older measurement version timed another program: not this task's costs.
    if (!store::is_comparable(r)) continue;
    ++report.records;
    auto it = tasks.find(r.workload);
    if (it == tasks.end()) {
      Result<ops::Workload> parsed = ops::Workload::parse(r.workload);
      if (!parsed.ok()) continue;
      Result<ops::Workload> w = tmpl_.normalize(*parsed);
      if (!w.ok()) continue;
      it = tasks.emplace(r.workload, std::make_pair(*w, tmpl_.space(*w))).first;
    }
    Result<ConfigEntity> config = it->second.second.from_json_entities(r.entities);
    if (!config.ok()) continue;
    samples.push_back({&it->second.first, *config});
    flops.push_back(r.flops());
  }
  report.usable = static_cast<int64_t>(samples.size());
  if (report.usable < min_rows) {
    report.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return report;
  }
  // A config that does not instantiate keeps an empty row: all zeros once padded, as in
  // AutoTVM's fit_log.
  std::vector<std::vector<float>> rows =
      costmodel::extract_features_parallel(tmpl_, samples, target_, feature_type_);
  KILN_ASSIGN_OR_RETURN(report.used, xgb.fit_transfer(rows, flops, plan_size(), min_rows));
  if (report.used) plan_from_model();
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return report;
}

}  // namespace kiln::tuner
