// A tuning job as a user writes it (configs/jobs/*.yaml) and as `kiln serve` stores it: what to
// tune (an ONNX model, or a list of workloads), for which target, with which tuner, under which
// budget, measured how and where, at which priority, and what to export at the end.
//
// parse_job_spec checks everything that can be checked without running the job and names the
// field and the problem on failure: an unknown key, a value of the wrong type, a model file that
// does not exist, a target this kiln's LLVM cannot generate code for, a budget that is not
// positive, an unknown tuner or workload. Keys (all optional but one of model / workloads):
//
//   name: text                       shown by `kiln jobs`
//   model: PATH.onnx                 tune the model's tasks (kiln tasks), or
//   workloads: [op:k=v,..., ...]     these workloads (every template, or `template`)
//   template: NAME                   workloads only: one template of their operator
//   ops: [conv2d, dense]             model only: tune only these operators
//   winograd: bool                   model only: also tune the Winograd conv of 3x3 stride-1
//                                    layers (kiln's extra tasks; default true)
//   input_shapes: {NAME: 1x3x224x224}  model only: fix symbolic input dimensions
//   target: 'llvm -mcpu=...'         default llvm (the host)
//   tuner: xgb                       make_tuner's names
//   tuner_options: {plan_size, loss, feature, diversity_filter_ratio}
//   seed: N, transfer: bool, scheduler: gradient | round-robin
//   budget: {trials: N, trials_per_task: N, time: 8h}   any combination; the first reached ends
//           the job; none given: 1000 trials per task (kiln tune's default)
//   early_stopping: N                per task
//   measure: {number, repeat, min_repeat_ms, timeout, cooldown_interval, cache_flush, threads,
//             build_timeout, n_parallel}   a model job given none of number, repeat,
//             min_repeat_ms and cache_flush is timed as `kiln tune MODEL` (tuner::use_model_timing)
//   run_on: local | {tracker: HOST:PORT, key: K, certs: DIR, token_file: F, signing_key: F,
//                    insecure: bool, runner_wait: seconds}   no runner in that time: job failed
//   priority: N                      higher first (default 0)
//   export: {tvm_log: PATH, compiled_model: PATH}   written when the job is done
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "runner/local_runner.h"
#include "tuner/make_tuner.h"

namespace kiln::daemon {

struct JobBudget {
  std::optional<int64_t> trials;           // all tasks together (records in the store count)
  std::optional<int64_t> trials_per_task;  // per task
  std::optional<double> seconds;           // time actually spent tuning, over every run
};

// Where the kernels are measured: this machine (tracker empty) or a farm's runners.
struct JobRunOn {
  std::string tracker;  // HOST:PORT; empty: local
  std::string key;
  std::string certs_dir;
  std::string token_file;
  std::string signing_key_file;
  bool insecure = false;
  double runner_wait_s = 60;  // a batch waits this long for a free runner (kiln tune --runner-wait)
};

struct JobExport {
  std::string tvm_log;         // TVM autotvm log v0.2 of the job's best records
  std::string compiled_model;  // model jobs: kiln compile's artifact
};

struct JobSpec {
  std::string name;
  std::string model;  // exactly one of model / workloads
  std::vector<std::string> workloads;
  std::string template_name;
  std::vector<std::string> ops;
  bool winograd = true;
  std::vector<std::pair<std::string, std::string>> input_shapes;  // NAME, "1x3x224x224"
  std::string target = "llvm";
  std::string tuner = "xgb";
  tuner::TunerSettings tuner_settings;
  uint64_t seed = 0;
  bool transfer = true;
  std::string scheduler = "gradient";
  JobBudget budget;
  std::optional<int64_t> early_stopping;
  runner::RunnerOptions measure;
  double build_timeout_s = 10;
  int n_parallel = 0;  // builder processes; 0: one per core
  JobRunOn run_on;
  int64_t priority = 0;
  JobExport export_to;
};

// The largest job file accepted (256 KiB): a job is a page of YAML, and every job is listed to
// every client (kiln jobs), so one huge one must not fill their replies.
constexpr size_t kMaxJobSpecBytes = 256 * 1024;

// Parses and validates a job file's text (at most kMaxJobSpecBytes; a key given twice, a NUL byte
// in a value or a control character in the name is an error). `origin` (a file name, or "job" for a
// submitted text) starts every error: "<origin>: <field>: <problem>". Relative paths (model, certs,
// token and signing key files, exports) are taken relative to `base_dir` when it is given (kiln
// submit sends its working directory, so a path means what it means where the user typed it).
Result<JobSpec> parse_job_spec(const std::string& yaml_text, const std::string& origin,
                               const std::string& base_dir = "");

}  // namespace kiln::daemon
