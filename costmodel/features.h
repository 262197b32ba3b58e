// Feature vectors of a config for the cost model, as AutoTVM computes them (reference/autotvm.md
// §4, python/tvm/autotvm/feature.py and src/autotvm/touch_extractor.cc), from kiln's loop-nest
// IR of the config (the timed stages of its program) and its entities:
//  - itervar: per loop (in first-visit order) length, nest level, top-down and bottom-up
//    products, an 11-wide annotation one-hot, add/mul/div counts, then per touched buffer
//    (sorted by name) stride, mod, count, reuse, thread count, thread reuse; log-scaled; the
//    config's define_knob values appended.
//  - knob: the config's entities flattened (AutoTVM's ConfigEntity.get_flatten_feature; see
//    knob_feature_flatten).
//  - curve: sampled reuse/count/top-down curves of the innermost buffers (kCurveSampleN points
//    per curve, the cost model's sample_n), knob values appended.
// Vector lengths vary with the config; the model pads rows with zeros.
// The loop-nest analysis itself lives in costmodel/touch_extractor.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/status.h"
#include "ops/config_space.h"
#include "ops/template.h"

namespace kiln::costmodel {

enum class FeatureType { kItervar, kKnob, kCurve };

// Points sampled per curve for 'curve' features: xgboost_cost_model.py passes sample_n=20.
inline constexpr int kCurveSampleN = 20;

// "itervar", "knob" or "curve"; kInvalidArgument naming the known ones otherwise.
Result<FeatureType> parse_feature_type(std::string_view name);
const char* feature_type_name(FeatureType type);

// The feature vector of one config of (tmpl, workload). For itervar and curve features,
// kInstantiationError (or the template's error) when the config does not instantiate. Knob
// features come from the config alone and are never an error: AutoTVM's
// _extract_knob_feature_index does not instantiate the template either. Thread-safe.
Result<std::vector<float>> extract_features(const ops::Template& tmpl,
                                            const ops::Workload& workload,
                                            const ConfigEntity& config,
                                            const ops::TargetInfo& target, FeatureType type);

// One config of some workload of a template, for extract_features_parallel.
struct FeatureQuery {
  const ops::Workload* workload;  // normalized; REQUIRES it outlives the call
  ConfigEntity config;
};

// extract_features for many configs on num_threads threads (0: one per hardware thread), one row
// per query in order; a config whose extraction fails gives an empty row (all zeros once padded,
// as in AutoTVM). The rows do not depend on the thread count.
std::vector<std::vector<float>> extract_features_parallel(const ops::Template& tmpl,
                                                          const std::vector<FeatureQuery>& queries,
                                                          const ops::TargetInfo& target,
                                                          FeatureType type, int num_threads = 0);

// AutoTVM's ConfigEntity.get_flatten_feature, in knob definition order: a split's size list
// (with its leading -1), a reorder's permutation, per annotated axis an 11-wide one-hot (none 0,
// vec 1, unroll 2, blockIdx.x/y/z 3-5, threadIdx.x/y/z 6-8, vthread 9, fuse 10; an unknown
// annotation gives an all-zero one-hot), a define_knob value (see other_option_values). No log.
std::vector<float> knob_feature_flatten(const ConfigEntity& config);

// AutoTVM's config.get_other_option().values(): the define_knob values in knob order; true/false
// become 1/0 and numbers themselves. A string (or null) value becomes 0: AutoTVM would put the
// string itself into a numpy float array (and fail); kiln's templates define no string knobs.
std::vector<float> other_option_values(const ConfigEntity& config);

// Extracts and caches the features of one task's configs, in parallel.
class FeatureExtractor {
 public:
  // REQUIRES: tmpl, space outlive the extractor; workload is normalized. num_threads 0 means
  // one per hardware thread.
  FeatureExtractor(const ops::Template& tmpl, ops::Workload workload, const ConfigSpace& space,
                   ops::TargetInfo target, FeatureType type, int num_threads = 0);

  // One row per index, in order. A config that fails to instantiate gives an empty row for
  // itervar and curve features (it becomes all zeros once padded, as in AutoTVM). Rows are cached
  // by index; the cache is cleared when it reaches 100000 entries. The configs not cached are
  // extracted on up to num_threads worker threads; the rows do not depend on the thread count.
  // REQUIRES: every index in [0, space.range_length()). Not thread-safe: call it from one
  // thread at a time (the parallelism is internal).
  std::vector<std::vector<float>> extract(const std::vector<int64_t>& indices);

  FeatureType type() const { return type_; }
  // Rows currently cached (for tests and diagnostics).
  size_t cache_size() const { return cache_.size(); }

 private:
  // AutoTVM clears its feature cache when it holds this many rows (xgboost_cost_model.py).
  static constexpr size_t kMaxCacheSize = 100000;

  const ops::Template& tmpl_;
  ops::Workload workload_;
  const ConfigSpace& space_;
  ops::TargetInfo target_;
  FeatureType type_;
  int num_threads_;
  std::unordered_map<int64_t, std::vector<float>> cache_;
};

}  // namespace kiln::costmodel
