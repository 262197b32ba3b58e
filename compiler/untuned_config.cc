#include "compiler/untuned_config.h"

#include <algorithm>
#include <random>
#include <set>
#include <vector>

#include "costmodel/features.h"
#include "costmodel/transfer_rows.h"
#include "costmodel/xgb_cost_model.h"
#include "store/store.h"

namespace kiln::compiler {

namespace {

constexpr uint64_t kPredictionSeed = 22;
constexpr int kPlanSize = 64;  // AutoTVM's: the transfer model's early stopping reads it

// The configs the model ranks: all valid indices of a small space, else a seeded sample.
std::vector<int64_t> sample_indices(const ConfigSpace& space, int64_t must_include) {
  const int64_t n = space.size();
  std::set<int64_t> picked = {must_include};
  if (n <= kPredictionSample) {
    for (int64_t k = 0; k < n; ++k) picked.insert(space.nth_valid_index(k));
  } else {
    std::mt19937_64 rng(kPredictionSeed);
    std::uniform_int_distribution<int64_t> pick(0, n - 1);
    while (static_cast<int64_t>(picked.size()) < kPredictionSample + 1) {
      picked.insert(space.nth_valid_index(pick(rng)));
    }
  }
  return {picked.begin(), picked.end()};
}

}  // namespace

std::string_view config_source_name(ConfigSource source) {
  switch (source) {
    case ConfigSource::kTuned:
      return "tuned";
    case ConfigSource::kPredicted:
      return "predicted";
    case ConfigSource::kDefault:
      return "default";
  }
  return "default";
}

// A template's transfer model. It predicts for whichever task's extractor is current.
struct UntunedConfigs::Model {
  costmodel::FeatureExtractor* current = nullptr;
  costmodel::XgbCostModel xgb{
      [this](const std::vector<int64_t>& indices) { return current->extract(indices); },
      costmodel::LossType::kRankBinary, kPredictionSeed};
};

UntunedConfigs::UntunedConfigs(store::Store* store, std::string target, ops::TargetInfo info)
    : store_(store), target_(std::move(target)), info_(info) {}

UntunedConfigs::~UntunedConfigs() = default;

Result<UntunedConfigs::Model*> UntunedConfigs::model_for(const ops::Template& tmpl) {
  const std::string name(tmpl.name());
  auto it = models_.find(name);
  if (it != models_.end()) return it->second.get();
  std::unique_ptr<Model> model;
  if (store_) {
    store::RecordFilter filter;
    filter.target = target_;
    filter.task_name = name;
    filter.versions = store::Versions::kComparable;
    KILN_ASSIGN_OR_RETURN(std::vector<store::Record> records, store_->records(filter));
    costmodel::TransferRows rows = costmodel::transfer_rows(
        tmpl, records, info_, costmodel::FeatureType::kItervar, kMinPredictionRecords);
    if (!rows.rows.empty()) {
      model = std::make_unique<Model>();
      KILN_ASSIGN_OR_RETURN(bool used, model->xgb.fit_transfer(rows.rows, rows.flops, kPlanSize,
                                                               kMinPredictionRecords));
      if (!used) model.reset();
    }
  }
  return (models_[name] = std::move(model)).get();
}

Result<UntunedConfig> UntunedConfigs::choose(const ops::Template& tmpl, const ops::Workload& w) {
  auto key = std::make_pair(std::string(tmpl.name()), w.to_string());
  auto cached = chosen_.find(key);
  if (cached != chosen_.end()) return cached->second;
  ConfigSpace space = tmpl.space(w);
  UntunedConfig out{tmpl.default_config(w, space, info_), ConfigSource::kDefault};
  KILN_ASSIGN_OR_RETURN(Model * model, model_for(tmpl));
  if (model) {
    costmodel::FeatureExtractor extractor(tmpl, w, space, info_, costmodel::FeatureType::kItervar);
    model->current = &extractor;
    std::vector<int64_t> indices = sample_indices(space, out.config.index());
    std::vector<float> scores = model->xgb.predict(indices);
    model->current = nullptr;
    auto [lo, hi] = std::minmax_element(scores.begin(), scores.end());
    // A model that cannot tell the sample apart predicts nothing: the default stays.
    if (hi != scores.end() && *hi > *lo) {
      out = {space.get(indices[hi - scores.begin()]), ConfigSource::kPredicted};
    }
  }
  chosen_[key] = out;
  return out;
}

}  // namespace kiln::compiler
