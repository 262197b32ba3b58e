// The commands a board needs, shared by `kiln` and the lean `kiln-runner` (cli/runner_main.cc),
// which links neither LLVM nor the builder: the farm's runner and its measurement child, and
// running or timing a compiled model (a board runs what was tuned and compiled for it).
#pragma once

#include <functional>

#include "cli/base.h"
#include "exchange/target.h"
#include "runtime/model_artifact.h"

namespace kiln::cli {

// gRPC's threads must not take SIGINT/SIGTERM: the servers wait for them with sigwait. Call
// before any gRPC thread starts.
void block_stop_signals();

// `runner`: registers the target `host_target` returns (kiln passes LLVM's), or, when it is
// empty, the one exchange/host_target.h detects without LLVM.
Command add_runner_command(CLI::App& app, std::function<Target()> host_target);
Command add_measure_worker_command(CLI::App& app);  // hidden: the runner's measurement child
Command add_run_command(CLI::App& app);             // cli/cmd_run.cc

// The tuner's estimate of a compiled model's latency from a store's best records, for `bench
// --profile N --db DB --onnx MODEL`: seconds over the model's tasks, and how many of its
// workloads have a record (seconds 0 when none has). kiln passes one (cli/records_estimate.h);
// kiln-runner, which has neither a store nor a tuner, passes none and has no --db / --onnx.
struct RecordsEstimate {
  double seconds = 0;
  int measured = 0;
  int workloads = 0;
};
using RecordsEstimator = std::function<RecordsEstimate(
    const std::string& db, const std::string& onnx, const std::string& target)>;
// For `bench --against-untuned --onnx MODEL`: the ONNX model compiled now for `target` with
// kiln's default configs (cli/untuned_build.h); NAME=DIMS input shapes fix symbolic dimensions.
using UntunedCompiler = std::function<ModelArtifact(
    const std::string& onnx, const std::string& target, const std::vector<std::string>& shapes)>;
// What `bench` can do beyond timing when the program links a store, a tuner and the compiler
// (kiln); kiln-runner passes none, and its bench has no --db, --onnx or --against-untuned.
struct BenchExtras {
  RecordsEstimator estimator;
  UntunedCompiler untuned;
};
Command add_bench_command(CLI::App& app, BenchExtras extras = {});

// --exec-prefix's words with the first resolved to a path on PATH (execv takes no search);
// a CommandError naming the option when it is not found. Empty text: none.
std::vector<std::string> resolve_exec_prefix(const std::string& text);

}  // namespace kiln::cli
