#include "tuner/xgb_tuner.h"

#include <chrono>

#include "costmodel/transfer_rows.h"

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
  costmodel::TransferRows rows =
      costmodel::transfer_rows(tmpl_, records, target_, feature_type_, min_rows);
  report.records = rows.records;
  report.usable = static_cast<int64_t>(rows.flops.size());
  if (report.usable < min_rows) {
    report.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return report;
  }
  KILN_ASSIGN_OR_RETURN(report.used,
                        xgb.fit_transfer(rows.rows, rows.flops, plan_size(), min_rows));
  if (report.used) plan_from_model();
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return report;
}

}  // namespace kiln::tuner
