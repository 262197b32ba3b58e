#include "costmodel/features.h"

#include <algorithm>
#include <atomic>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <variant>

#include "costmodel/touch_extractor.h"
#include "ops/measured_layout.h"

namespace kiln::costmodel {

namespace {

// space.py's _ann_to_number.
int annotation_number(const std::string& ann) {
  static constexpr const char* kNames[] = {
      "none",        "vec",         "unroll",      "blockIdx.x", "blockIdx.y", "blockIdx.z",
      "threadIdx.x", "threadIdx.y", "threadIdx.z", "vthread",    "fuse"};
  for (int i = 0; i < static_cast<int>(std::size(kNames)); ++i) {
    if (ann == kNames[i]) return i;
  }
  return -1;
}
constexpr int kNumKnobAnnotations = 11;

float option_value(const nlohmann::json& val) {
  if (val.is_boolean()) return val.get<bool>() ? 1.0f : 0.0f;
  if (val.is_number()) return val.get<float>();
  return 0.0f;  // strings and null: see other_option_values in features.h
}

void append(std::vector<float>& out, const std::vector<float>& tail) {
  out.insert(out.end(), tail.begin(), tail.end());
}

}  // namespace

Result<FeatureType> parse_feature_type(std::string_view name) {
  if (name == "itervar") return FeatureType::kItervar;
  if (name == "knob") return FeatureType::kKnob;
  if (name == "curve") return FeatureType::kCurve;
  return InvalidArgument("unknown feature type '" + std::string(name) +
                         "' (known: itervar, knob, curve)");
}

const char* feature_type_name(FeatureType type) {
  switch (type) {
    case FeatureType::kItervar:
      return "itervar";
    case FeatureType::kKnob:
      return "knob";
    case FeatureType::kCurve:
      return "curve";
  }
  return "unknown";
}

std::vector<float> knob_feature_flatten(const ConfigEntity& config) {
  std::vector<float> out;
  for (const auto& [name, entity] : config.entities()) {
    std::visit(
        [&](const auto& e) {
          using T = std::decay_t<decltype(e)>;
          if constexpr (std::is_same_v<T, SplitEntity>) {
            for (int64_t s : e.size) out.push_back(static_cast<float>(s));
          } else if constexpr (std::is_same_v<T, ReorderEntity>) {
            for (int p : e.perm) out.push_back(static_cast<float>(p));
          } else if constexpr (std::is_same_v<T, AnnotateEntity>) {
            for (const std::string& ann : e.anns) {
              const size_t at = out.size();
              out.resize(at + kNumKnobAnnotations, 0.0f);
              // An unknown annotation is a KeyError in AutoTVM; no kiln space produces one.
              const int k = annotation_number(ann);
              if (k >= 0) out[at + k] = 1.0f;
            }
          } else {
            out.push_back(option_value(e.val));
          }
        },
        entity);
  }
  return out;
}

std::vector<float> other_option_values(const ConfigEntity& config) {
  std::vector<float> out;
  for (const auto& [name, entity] : config.entities()) {
    if (const auto* o = std::get_if<OtherOptionEntity>(&entity))
      out.push_back(option_value(o->val));
  }
  return out;
}

Result<std::vector<float>> extract_features(const ops::Template& tmpl,
                                            const ops::Workload& workload,
                                            const ConfigEntity& config,
                                            const ops::TargetInfo& target, FeatureType type) {
  // Knob features need no IR: AutoTVM reads them off the config without instantiating it, so a
  // config the template rejects still gets them.
  if (type == FeatureType::kKnob) return knob_feature_flatten(config);
  // The program that is timed for this config, so that features describe what was measured.
  KILN_ASSIGN_OR_RETURN(ir::Program program,
                        ops::instantiate_measured(tmpl, workload, config, target));
  std::vector<float> out;
  switch (type) {
    case FeatureType::kItervar:
      out = itervar_feature_flatten(extract_touch_features(program));
      append(out, other_option_values(config));
      break;
    case FeatureType::kKnob:
      break;  // handled above
    case FeatureType::kCurve:
      out = curve_feature_flatten(extract_touch_features(program), kCurveSampleN);
      append(out, other_option_values(config));
      break;
  }
  return out;
}

std::vector<std::vector<float>> extract_features_parallel(const ops::Template& tmpl,
                                                          const std::vector<FeatureQuery>& queries,
                                                          const ops::TargetInfo& target,
                                                          FeatureType type, int num_threads) {
  std::vector<std::vector<float>> rows(queries.size());
  auto work = [&](size_t i) {
    Result<std::vector<float>> row =
        extract_features(tmpl, *queries[i].workload, queries[i].config, target, type);
    // A failed config keeps its empty row, as AutoTVM caches None for it.
    if (row.ok()) rows[i] = std::move(row).value();
  };
  const int threads = num_threads > 0
                          ? num_threads
                          : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  const size_t workers = std::min(queries.size(), static_cast<size_t>(threads));
  if (workers <= 1) {
    for (size_t i = 0; i < queries.size(); ++i) work(i);
    return rows;
  }
  // Configs cost very different amounts (a config's IR grows with its unrolling), so workers
  // take one query at a time rather than a fixed share.
  std::atomic<size_t> next{0};
  auto loop = [&] {
    for (size_t i = next.fetch_add(1); i < queries.size(); i = next.fetch_add(1)) work(i);
  };
  std::vector<std::thread> pool;
  pool.reserve(workers - 1);
  for (size_t t = 0; t + 1 < workers; ++t) pool.emplace_back(loop);
  loop();
  for (std::thread& t : pool) t.join();
  return rows;
}

FeatureExtractor::FeatureExtractor(const ops::Template& tmpl, ops::Workload workload,
                                   const ConfigSpace& space, ops::TargetInfo target,
                                   FeatureType type, int num_threads)
    : tmpl_(tmpl),
      workload_(std::move(workload)),
      space_(space),
      target_(target),
      type_(type),
      num_threads_(num_threads > 0
                       ? num_threads
                       : std::max(1, static_cast<int>(std::thread::hardware_concurrency()))) {}

std::vector<std::vector<float>> FeatureExtractor::extract(const std::vector<int64_t>& indices) {
  // As xgboost_cost_model.py's _get_feature: clear a full cache before extracting, so the rows
  // of this call are always served from it.
  if (cache_.size() >= kMaxCacheSize) cache_.clear();

  std::vector<int64_t> missing;
  for (int64_t index : indices) {
    if (cache_.count(index)) continue;
    // Reserve the slot now so that a repeated index is extracted once.
    cache_.emplace(index, std::vector<float>());
    missing.push_back(index);
  }

  if (!missing.empty()) {
    std::vector<FeatureQuery> queries;
    queries.reserve(missing.size());
    for (int64_t index : missing) queries.push_back({&workload_, space_.get(index)});
    std::vector<std::vector<float>> rows =
        extract_features_parallel(tmpl_, queries, target_, type_, num_threads_);
    for (size_t i = 0; i < missing.size(); ++i) cache_[missing[i]] = std::move(rows[i]);
  }

  std::vector<std::vector<float>> out;
  out.reserve(indices.size());
  for (int64_t index : indices) out.push_back(cache_.at(index));
  return out;
}

}  // namespace kiln::costmodel
