// The config of a task the store has no record of its own for (what `kiln compile` lists as
// "predicted" or "default"):
//  - predicted: the store holds records of other workloads of the same template and target (at
//    least kMinPredictionRecords): an XGBoost cost model trained on them (AutoTVM's transfer
//    learning, costmodel/transfer_rows.h, itervar features) ranks a seeded sample of the task's
//    space (at most kPredictionSample configs and the default config), and its best prediction
//    is taken: a zero-shot config, where TVM would need a TopHub download;
//  - default: otherwise the template's default config for the target
//    (ops::Template::default_config), chosen without measuring.
// A model is trained once per template and compile; choices are cached per workload.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "common/status.h"
#include "ops/config_space.h"
#include "ops/template.h"
#include "ops/workload.h"

namespace kiln::store {
class Store;
}

namespace kiln::compiler {

// Where a tunable kernel's config came from.
enum class ConfigSource { kTuned, kPredicted, kDefault };
std::string_view config_source_name(ConfigSource source);  // "tuned", "predicted", "default"

inline constexpr int64_t kMinPredictionRecords = 64;  // one AutoTVM plan of measurements
inline constexpr int64_t kPredictionSample = 1024;

struct UntunedConfig {
  ConfigEntity config;
  ConfigSource source = ConfigSource::kDefault;
};

class UntunedConfigs {
 public:
  // `store` may be null (defaults only); it must outlive this object. `target` is the records'
  // target string (Target::to_string()).
  UntunedConfigs(store::Store* store, std::string target, ops::TargetInfo info);
  ~UntunedConfigs();

  // The predicted config of (tmpl, w) when the store allows one, else the default config.
  // REQUIRES: w normalized for tmpl. Errors: a store read failure.
  Result<UntunedConfig> choose(const ops::Template& tmpl, const ops::Workload& w);

 private:
  struct Model;
  // The template's model, or null when its records are too few. Trained on first use.
  Result<Model*> model_for(const ops::Template& tmpl);

  store::Store* store_;
  std::string target_;
  ops::TargetInfo info_;
  std::map<std::string, std::unique_ptr<Model>> models_;  // by template name
  std::map<std::pair<std::string, std::string>, UntunedConfig> chosen_;
};

}  // namespace kiln::compiler
