#include "tuner/xgb_tuner.h"

#include <chrono>
#include <cmath>
#include <map>
#include <thread>

namespace kiln::tuner {

namespace detail {

XgbParts::XgbParts(const ops::Template& tmpl, const ops::Workload& workload,
                   const ConfigSpace& space, ops::TargetInfo target,
                   costmodel::FeatureType features, costmodel::LossType loss, uint64_t seed)
    : extractor(tmpl, workload, space, target, features),
      xgb(extractor, loss, seed),
      adapter(xgb) {}

}  // namespace detail

XgbTuner::XgbTuner(const ops::Template& tmpl, const ops::Workload& workload,
                   const ConfigSpace& space, ops::TargetInfo target,
                   costmodel::FeatureType features, costmodel::LossType loss, uint64_t seed,
                   ModelTunerOptions options)
    : detail::XgbParts(tmpl, workload, space, target, features, loss, seed),
      ModelBasedTuner(space, adapter, std::move(options), seed),
      tmpl_(tmpl),
      target_(target),
      feature_type_(features) {}

Result<TransferReport> XgbTuner::transfer_from(const std::vector<store::Record>& records,
                                               int min_rows) {
  auto start = std::chrono::steady_clock::now();
  TransferReport report;
  // Resolve each record to (workload, config) of this template; spaces cached per workload.
  struct Sample {
    const ops::Workload* workload;
    ConfigEntity config;
    double flops;
  };
  std::map<std::string, std::pair<ops::Workload, ConfigSpace>> tasks;
  std::vector<Sample> samples;
  for (const store::Record& r : records) {
    if (r.task_name != tmpl_.name()) continue;
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
    double cost = r.mean_cost();
    double flops = r.error_no == 0 && std::isfinite(cost) && cost > 0 ? r.flop / cost : 0.0;
    samples.push_back({&it->second.first, *config, flops});
  }
  report.usable = static_cast<int64_t>(samples.size());
  if (report.usable < min_rows) {
    report.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return report;
  }
  // Features of every sample, in parallel (extract_features is thread-safe). A config that
  // does not instantiate keeps an empty row: all zeros once padded, as in AutoTVM's fit_log.
  std::vector<std::vector<float>> rows(samples.size());
  unsigned n_threads = std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::thread> workers;
  for (unsigned t = 0; t < n_threads; ++t) {
    workers.emplace_back([&, t] {
      for (size_t i = t; i < samples.size(); i += n_threads) {
        Result<std::vector<float>> f = costmodel::extract_features(
            tmpl_, *samples[i].workload, samples[i].config, target_, feature_type_);
        if (f.ok()) rows[i] = std::move(*f);
      }
    });
  }
  for (std::thread& w : workers) w.join();
  std::vector<double> flops;
  for (const Sample& s : samples) flops.push_back(s.flops);
  KILN_ASSIGN_OR_RETURN(report.used, xgb.fit_transfer(rows, flops, plan_size(), min_rows));
  if (report.used) plan_from_model();
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return report;
}

}  // namespace kiln::tuner
