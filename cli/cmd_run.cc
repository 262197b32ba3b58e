// kiln run / kiln bench: execute a compiled model (`kiln compile`) with the GraphExecutor.
//
// Tensors travel as raw little-endian float32 files (as numpy's tofile writes them). `run`
// prints each output's shape and checksums and can write the outputs; `bench` times whole
// model runs.
#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <tuple>

#include "cli/board_commands.h"
#include "cli/step_kind.h"
#include "common/safe_file.h"
#include "runtime/graph_executor.h"
#include "runtime/thread_pool.h"

namespace kiln::cli {

namespace {

std::string ShapeText(const std::vector<int64_t>& shape) {
  if (shape.empty()) return "scalar";
  std::string s;
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? "x" : "") + std::to_string(shape[i]);
  return s;
}

std::string InputNames(const GraphExecutor& exec) {
  std::string names;
  for (int i = 0; i < exec.num_inputs(); ++i) {
    names += (i ? ", " : "") + exec.input_info(i).name + " (" +
             ShapeText(exec.input_info(i).shape) + ")";
  }
  return names.empty() ? "none" : names;
}

// Loads and validates the model; every failure names the file (exit 2, or 74 if unreadable).
std::unique_ptr<GraphExecutor> LoadModel(const std::string& path, int threads) {
  ModelArtifact model = value_or_exit(read_model_file(path));
  return value_or_exit(GraphExecutor::create(std::move(model), threads, path));
}

// Reads `path` as exactly `count` float32; CommandError naming the file otherwise.
std::vector<float> ReadFloats(const std::string& path, int64_t count, const std::string& input) {
  std::error_code ec;
  const uintmax_t size = std::filesystem::file_size(path, ec);  // fails for a directory too
  if (ec) {
    throw CommandError{"--input " + input + ": cannot read '" + path + "': " + ec.message(),
                       kIoError};
  }
  const int64_t expected = count * static_cast<int64_t>(sizeof(float));
  if (size != static_cast<uintmax_t>(expected)) {
    throw CommandError{"--input " + input + ": '" + path + "' has " + std::to_string(size) +
                       " bytes, expected " + std::to_string(expected) + " (" +
                       std::to_string(count) + " float32)"};
  }
  std::vector<float> data(count);
  std::ifstream in(path, std::ios::binary);
  in.read(reinterpret_cast<char*>(data.data()), expected);
  if (!in) throw CommandError{"--input " + input + ": reading '" + path + "' failed", kIoError};
  return data;
}

// --input NAME=FILE (or FILE alone for a model with one input), each input at most once.
std::map<std::string, std::vector<float>> ReadInputs(const GraphExecutor& exec,
                                                     const std::vector<std::string>& specs) {
  std::map<std::string, std::vector<float>> inputs;
  for (const std::string& spec : specs) {
    const size_t eq = spec.find('=');
    std::string name, path;
    if (eq == std::string::npos) {
      if (exec.num_inputs() != 1) {
        throw CommandError{"--input '" + spec + "': give NAME=FILE; the model's inputs are " +
                           InputNames(exec)};
      }
      name = exec.input_info(0).name;
      path = spec;
    } else {
      name = spec.substr(0, eq);
      path = spec.substr(eq + 1);
    }
    int index = -1;
    for (int i = 0; i < exec.num_inputs(); ++i) {
      if (exec.input_info(i).name == name) index = i;
    }
    if (index < 0) {
      throw CommandError{"--input: the model has no input '" + name + "'; its inputs are " +
                         InputNames(exec)};
    }
    if (inputs.count(name)) throw CommandError{"--input: '" + name + "' is given more than once"};
    inputs[name] = ReadFloats(path, exec.input_info(index).num_elements(), name);
  }
  return inputs;
}

// A fixed pseudo-random pattern in [-1, 1) (a 64-bit LCG), the same on every run and machine.
std::vector<float> PatternInput(int64_t count, uint64_t seed) {
  std::vector<float> data(count);
  uint64_t state = seed * 0x9E3779B97F4A7C15ull + 1;
  for (float& v : data) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    v = static_cast<float>(static_cast<double>(state >> 40) / static_cast<double>(1 << 23) - 1.0);
  }
  return data;
}

// Raw little-endian elements (float32, or int64 for an int64 output).
template <typename T>
void WriteElements(const std::string& path, std::span<const T> data) {
  Status s = write_file_atomically(
      path, std::string_view(reinterpret_cast<const char*>(data.data()), data.size() * sizeof(T)));
  if (!s.ok()) throw CommandError{"--output: " + s.message(), kIoError};
}

// Where output `name` goes when a model has several: "out.bin" -> "out.NAME.bin", with any
// character of the name that is unsafe in a file name replaced by '_'.
std::string OutputPath(const std::string& base, const std::string& name) {
  std::string safe = name;
  for (char& c : safe) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') c = '_';
  }
  const size_t slash = base.find_last_of('/');
  const size_t dot = base.find_last_of('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) {
    return base + "." + safe;
  }
  return base.substr(0, dot) + "." + safe + base.substr(dot);
}

template <typename T>
void PrintOutput(int i, const TensorInfo& info, std::span<const T> data) {
  double sum = 0, abs_sum = 0;
  for (T v : data) {
    sum += v;
    abs_sum += std::fabs(static_cast<double>(v));
  }
  std::printf("output %d '%s' shape %s: sum %.6g  sum|x| %.6g  first", i, info.name.c_str(),
              ShapeText(info.shape).c_str(), sum, abs_sum);
  for (size_t k = 0; k < std::min<size_t>(5, data.size()); ++k) {
    std::printf(" %.6g", static_cast<double>(data[k]));
  }
  std::printf("\n");
}

struct RunOptions {
  std::string model;
  std::vector<std::string> inputs;
  std::string output;
  int threads = default_num_threads();
  int repeat = 50;
  int warmup = 5;
  int profile = 0;   // bench: print the N steps that take the most time
  std::string db;    // bench --profile: the records whose estimate the run is compared with
  std::string onnx;  // the model the records' tasks come from
  bool against_untuned = false;  // bench: also time --onnx compiled with default configs
};

void AddCommonOptions(CLI::App* cmd, RunOptions* o) {
  cmd->add_option("model", o->model, "the compiled model (kiln compile -o model.kiln)")->required();
  add_bounded(cmd, "--threads", &o->threads, 1, max_pool_threads(),
              "threads running the kernels (default: KILN_NUM_THREADS, else the cores)");
}

int RunModel(const RunOptions& o) {
  auto exec = LoadModel(o.model, o.threads);
  auto inputs = ReadInputs(*exec, o.inputs);
  for (int i = 0; i < exec->num_inputs(); ++i) {
    const std::string& name = exec->input_info(i).name;
    auto it = inputs.find(name);
    if (it == inputs.end()) {
      throw CommandError{"input '" + name + "' is not given (--input " + name +
                         "=FILE); the model's inputs are " + InputNames(*exec)};
    }
    ok_or_exit(exec->set_input(name, it->second));
  }
  exec->run();
  auto is_int64 = [&](int i) { return exec->output_info(i).dtype == ModelDType::kInt64; };
  for (int i = 0; i < exec->num_outputs(); ++i) {
    if (is_int64(i)) {
      PrintOutput(i, exec->output_info(i), exec->get_output_int64(i));
    } else {
      PrintOutput(i, exec->output_info(i), exec->get_output(i));
    }
  }
  if (!o.output.empty()) {
    for (int i = 0; i < exec->num_outputs(); ++i) {
      const std::string path =
          exec->num_outputs() == 1 ? o.output : OutputPath(o.output, exec->output_info(i).name);
      if (is_int64(i)) {
        WriteElements(path, exec->get_output_int64(i));
      } else {
        WriteElements(path, exec->get_output(i));
      }
      std::printf("wrote output %d '%s' to %s\n", i, exec->output_info(i).name.c_str(),
                  path.c_str());
    }
  }
  return 0;
}

// The template kernels' time by where their configs came from (tuned, predicted, default), so
// that a profile says how much of the run the tuner has not reached yet.
void PrintConfigSources(const ModelArtifact& model, const std::vector<double>& seconds, int repeat,
                        double mean_ms) {
  std::map<std::string, std::pair<double, int>> per_source;  // ms per run, steps
  int unknown = 0;
  for (size_t i = 0; i < seconds.size(); ++i) {
    const ModelStep& step = model.steps[i];
    if (step_kind(step) != StepKind::kTemplateKernel) continue;
    if (step.config_source.empty()) {
      ++unknown;
      continue;
    }
    auto& [ms, steps] = per_source[step.config_source];
    ms += seconds[i] * 1e3 / repeat;
    steps += 1;
  }
  for (const char* source : {"tuned", "predicted", "default"}) {
    auto it = per_source.find(source);
    if (it == per_source.end()) continue;
    auto [ms, steps] = it->second;
    std::printf("    %-16s %10.4f ms %6.1f%%  (%d step%s with %s configs)\n", source, ms,
                100 * ms / mean_ms, steps, steps == 1 ? "" : "s", source);
  }
  if (unknown > 0) {
    std::printf(
        "    (%d template kernels of an artifact that does not say where their configs "
        "came from: compiled by an older kiln)\n",
        unknown);
  }
}

// The floating-point throughput of each template kernel, in GFLOPS, by step index: on the
// kernel's last step (the one carrying its flop), over the time of its template-kernel steps
// (the consecutive steps with its label, data packing aside). Steps without flop are absent.
std::map<size_t, double> KernelGflops(const ModelArtifact& model,
                                      const std::vector<double>& seconds, int repeat) {
  std::map<size_t, double> gflops;
  for (size_t i = 0; i < seconds.size(); ++i) {
    const ModelStep& step = model.steps[i];
    if (step.flop <= 0) continue;
    double kernel_seconds = 0;
    for (size_t j = i + 1; j-- > 0 && model.steps[j].label == step.label;) {
      if (step_kind(model.steps[j]) == StepKind::kTemplateKernel) kernel_seconds += seconds[j];
    }
    if (kernel_seconds > 0) gflops[i] = step.flop * repeat / kernel_seconds * 1e-9;
  }
  return gflops;
}

// Per-step times over `repeat` profiled runs, the `top` slowest steps first, then the time per
// kind of step (cli/step_kind.h) with the executor's overhead, which add up to the mean of
// `repeat` plain runs taken in turn with the profiled ones (the overhead is that mean less the
// steps' sum: measured side by side, a slow spell of a shared machine falls on both, where the
// timed runs before would be compared with profiled runs taken later); with --db, the timed
// runs' mean (`mean_ms`) against the records' estimate.
void PrintProfile(GraphExecutor& exec, const RunOptions& o, double mean_ms,
                  const RecordsEstimator& estimator) {
  const int repeat = o.repeat, top = o.profile;
  std::vector<double> seconds;
  double plain_seconds = 0;
  for (int r = 0; r < repeat; ++r) {
    const auto start = std::chrono::steady_clock::now();
    exec.run();
    plain_seconds +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    exec.run_profiled(&seconds);
  }
  const double plain_ms = plain_seconds * 1e3 / repeat;
  double total = 0;
  for (double t : seconds) total += t;
  std::vector<size_t> order(seconds.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return seconds[a] > seconds[b]; });
  std::printf("profile: %.4f ms per run in %zu steps; the slowest:\n", total * 1e3 / repeat,
              seconds.size());
  const std::map<size_t, double> gflops = KernelGflops(exec.model(), seconds, repeat);
  for (size_t k = 0; k < order.size() && k < static_cast<size_t>(top); ++k) {
    const ModelStep& step = exec.model().steps[order[k]];
    std::string source = step.config_source.empty() ? "" : ", " + step.config_source;
    if (auto it = gflops.find(order[k]); it != gflops.end()) {
      char text[32];
      std::snprintf(text, sizeof text, ", %.1f GFLOPS", it->second);
      source += text;
    }
    std::printf("  %8.4f ms %5.1f%%  #%-3zu %s (%s%s)\n", seconds[order[k]] * 1e3 / repeat,
                100 * seconds[order[k]] / total, order[k], step.label.c_str(), step.symbol.c_str(),
                source.c_str());
  }
  const StepKind kinds[] = {StepKind::kTemplateKernel, StepKind::kLayoutTransform,
                            StepKind::kOther};
  std::map<StepKind, std::pair<double, int>> per_kind;  // ms per run, steps
  for (size_t i = 0; i < seconds.size(); ++i) {
    auto& [ms, steps] = per_kind[step_kind(exec.model().steps[i])];
    ms += seconds[i] * 1e3 / repeat;
    steps += 1;
  }
  const double overhead_ms = plain_ms - total * 1e3 / repeat;
  std::printf(
      "by kind, of the mean %.4f ms of %d plain runs taken in turn with the profiled ones:\n",
      plain_ms, repeat);
  for (StepKind kind : kinds) {
    auto [ms, steps] = per_kind[kind];
    std::printf("  %-18s %10.4f ms %6.1f%%  (%d step%s)\n",
                std::string(step_kind_name(kind)).c_str(), ms, 100 * ms / plain_ms, steps,
                steps == 1 ? "" : "s");
    if (kind == StepKind::kTemplateKernel) {
      PrintConfigSources(exec.model(), seconds, repeat, plain_ms);
      double flop = 0;
      for (const ModelStep& step : exec.model().steps) flop += step.flop;
      if (flop > 0 && ms > 0) {
        std::printf("    %.1f GFLOPS: the template kernels' flop over their time\n",
                    flop / ms * 1e-6);
      }
    }
  }
  std::printf("  %-18s %10.4f ms %6.1f%%  (the plain runs' mean less the steps' sum%s)\n",
              "executor overhead", overhead_ms, 100 * overhead_ms / plain_ms,
              overhead_ms < 0
                  ? "; negative: timing every step costs more than the executor's own work"
                  : "");
  if (o.db.empty()) return;
  const RecordsEstimate estimate = estimator(o.db, o.onnx, exec.model().target);
  const int measured = estimate.measured, workloads = estimate.workloads;
  const double estimate_ms = estimate.seconds * 1e3;
  if (measured == 0) {
    std::printf("records: no task of %s has a record for %s in %s\n", o.onnx.c_str(),
                exec.model().target.c_str(), o.db.c_str());
    return;
  }
  std::printf(
      "records: the tuner's estimate %s%.4f ms (%d of %d workloads measured) against the mean "
      "%.4f ms: the run takes %.2fx the estimate; template kernels alone %.2fx\n",
      measured < workloads ? ">= " : "", estimate_ms, measured, workloads, mean_ms,
      mean_ms / estimate_ms, per_kind[StepKind::kTemplateKernel].first / estimate_ms);
}

// Mean, median, sample std and min of `ms`.
struct RunStats {
  double mean = 0, median = 0, std_dev = 0, min = 0;
};

RunStats stats_of(std::vector<double> ms) {
  RunStats st;
  for (double t : ms) st.mean += t;
  st.mean /= ms.size();
  double var = 0;
  for (double t : ms) var += (t - st.mean) * (t - st.mean);
  st.std_dev = ms.size() > 1 ? std::sqrt(var / (ms.size() - 1)) : 0.0;
  std::sort(ms.begin(), ms.end());
  const size_t mid = ms.size() / 2;
  st.median = ms.size() % 2 ? ms[mid] : (ms[mid - 1] + ms[mid]) / 2;
  st.min = ms.front();
  return st;
}

double time_run_ms(GraphExecutor& exec) {
  const auto start = std::chrono::steady_clock::now();
  exec.run();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

void set_bench_inputs(GraphExecutor& exec, const std::map<std::string, std::vector<float>>& given) {
  for (int i = 0; i < exec.num_inputs(); ++i) {
    const TensorInfo& info = exec.input_info(i);
    auto it = given.find(info.name);
    ok_or_exit(exec.set_input(
        info.name, it != given.end() ? it->second : PatternInput(info.num_elements(), i)));
  }
}

// The untuned build of --onnx for the tuned artifact's target, with the tuned one's inputs; a
// CommandError when its inputs or outputs are not the tuned one's (another model).
std::unique_ptr<GraphExecutor> LoadUntuned(const GraphExecutor& tuned, const RunOptions& o,
                                           const UntunedCompiler& compile) {
  std::vector<std::string> shapes;
  for (int i = 0; i < tuned.num_inputs(); ++i) {
    const TensorInfo& info = tuned.input_info(i);
    std::string dims;
    for (int64_t d : info.shape) dims += (dims.empty() ? "" : "x") + std::to_string(d);
    shapes.push_back(info.name + "=" + dims);
  }
  ModelArtifact model = compile(o.onnx, tuned.model().target, shapes);
  auto untuned = value_or_exit(
      GraphExecutor::create(std::move(model), tuned.threads(), o.onnx + " (untuned build)"));
  auto same = [](const TensorInfo& a, const TensorInfo& b) {
    return a.name == b.name && a.shape == b.shape && a.dtype == b.dtype;
  };
  bool matches =
      untuned->num_inputs() == tuned.num_inputs() && untuned->num_outputs() == tuned.num_outputs();
  for (int i = 0; matches && i < tuned.num_inputs(); ++i) {
    matches = same(tuned.input_info(i), untuned->input_info(i));
  }
  for (int i = 0; matches && i < tuned.num_outputs(); ++i) {
    matches = same(tuned.output_info(i), untuned->output_info(i));
  }
  if (!matches) {
    throw CommandError{"--onnx " + o.onnx + " is not the model " + o.model +
                       " was compiled from: their inputs or outputs differ"};
  }
  return untuned;
}

// The largest difference between the two builds' float outputs, relative to the largest
// magnitude of the tuned one's (both ran on the same inputs).
double max_relative_difference(const GraphExecutor& a, const GraphExecutor& b) {
  double diff = 0, scale = 0;
  for (int i = 0; i < a.num_outputs(); ++i) {
    if (a.output_info(i).dtype != ModelDType::kFloat32) continue;
    std::span<const float> x = a.get_output(i), y = b.get_output(i);
    for (size_t k = 0; k < x.size() && k < y.size(); ++k) {
      diff = std::max(diff, static_cast<double>(std::fabs(x[k] - y[k])));
      scale = std::max(scale, static_cast<double>(std::fabs(x[k])));
    }
  }
  return scale > 0 ? diff / scale : diff;
}

int BenchModel(const RunOptions& o, const BenchExtras& extras) {
  auto exec = LoadModel(o.model, o.threads);
  auto inputs = ReadInputs(*exec, o.inputs);
  set_bench_inputs(*exec, inputs);
  std::unique_ptr<GraphExecutor> untuned;
  if (o.against_untuned) {
    std::printf("compiling %s for %s with kiln's default configs (the untuned build)...\n",
                o.onnx.c_str(), exec->model().target.c_str());
    std::fflush(stdout);
    untuned = LoadUntuned(*exec, o, extras.untuned);
    set_bench_inputs(*untuned, inputs);
  }
  for (int r = 0; r < o.warmup; ++r) {
    exec->run();
    if (untuned) untuned->run();
  }
  // With a baseline, the two builds' runs alternate (each first every other time), so that a
  // change of the machine's speed during the bench falls on both alike.
  std::vector<double> ms, untuned_ms;
  for (int r = 0; r < o.repeat; ++r) {
    if (untuned && r % 2 == 1) untuned_ms.push_back(time_run_ms(*untuned));
    ms.push_back(time_run_ms(*exec));
    if (untuned && r % 2 == 0) untuned_ms.push_back(time_run_ms(*untuned));
  }
  const RunStats st = stats_of(ms);
  std::printf("%s: %zu steps, %d threads, %d runs after %d warm-up\n", o.model.c_str(),
              exec->model().steps.size(), exec->threads(), o.repeat, o.warmup);
  std::printf("mean %.4f ms  median %.4f ms  std %.4f ms  min %.4f ms\n", st.mean, st.median,
              st.std_dev, st.min);
  std::printf("arena %lld bytes (without reuse %lld bytes)\n",
              static_cast<long long>(exec->arena_bytes()),
              static_cast<long long>(exec->unplanned_bytes()));
  if (untuned) {
    const RunStats base = stats_of(untuned_ms);
    std::printf(
        "untuned build: mean %.4f ms  median %.4f ms  std %.4f ms  min %.4f ms (%d runs, "
        "alternating with the tuned ones)\n",
        base.mean, base.median, base.std_dev, base.min, o.repeat);
    const double speedup = base.median / st.median;
    std::printf("%s is %.2fx %s than its untuned build (medians %.4f ms against %.4f ms)\n",
                o.model.c_str(), speedup >= 1 ? speedup : 1 / speedup,
                speedup >= 1 ? "faster" : "slower", st.median, base.median);
    const double diff = max_relative_difference(*exec, *untuned);
    std::printf("outputs of the two builds %s: max difference %.2g of the largest magnitude\n",
                diff <= 1e-3 ? "agree" : "DIFFER", diff);
  }
  if (o.profile > 0) PrintProfile(*exec, o, st.mean, extras.estimator);
  return 0;
}

}  // namespace

Command add_run_command(CLI::App& app) {
  auto o = std::make_shared<RunOptions>();
  CLI::App* cmd = app.add_subcommand(
      "run", "run a compiled model once: print each output's shape and checksums");
  AddCommonOptions(cmd, o.get());
  cmd->add_option("--input,-i", o->inputs,
                  "NAME=FILE: raw little-endian float32 for input NAME (FILE alone if the model "
                  "has one input); repeat for each input");
  cmd->add_option("--output,-o", o->output,
                  "write the output as raw float32 to this file; a model with several outputs "
                  "writes each to FILE with its name before the extension (out.NAME.bin)");
  return [o] { return RunModel(*o); };
}

Command add_bench_command(CLI::App& app, BenchExtras extras) {
  auto o = std::make_shared<RunOptions>();
  CLI::App* cmd = app.add_subcommand(
      "bench", "time a compiled model: mean, median, std and min of whole-model runs in ms");
  AddCommonOptions(cmd, o.get());
  cmd->add_option("--input,-i", o->inputs,
                  "NAME=FILE as for `kiln run`; inputs not given get a fixed pseudo-random "
                  "pattern in [-1, 1)");
  add_bounded(cmd, "--repeat", &o->repeat, 1, 1000000, "timed runs");
  add_bounded(cmd, "--warmup", &o->warmup, 0, 1000000, "untimed runs before them");
  add_bounded(cmd, "--profile", &o->profile, 0, 100000,
              "also time each step over --repeat runs and print the N slowest, then the time "
              "per kind of step (0: off)");
  if (extras.estimator) {  // kiln-runner has no store or tuner to estimate with
    cmd->add_option("--db", o->db,
                    "with --profile: compare the run with the tuner's estimate from this store's "
                    "best records (needs --onnx)");
    cmd->add_option("--onnx", o->onnx,
                    "with --db or --against-untuned: the ONNX model the compiled model was made "
                    "from");
  }
  if (extras.untuned) {  // nor a compiler
    cmd->add_flag("--against-untuned", o->against_untuned,
                  "also compile --onnx now with kiln's default configs and time both builds, "
                  "alternating, on the same inputs: says whether tuning made it faster");
  }
  return [o, extras = std::move(extras)] {
    if (o->against_untuned && o->onnx.empty()) {
      throw CommandError{"--against-untuned needs --onnx MODEL.onnx, the model " + o->model +
                         " was compiled from"};
    }
    if (!o->db.empty() && o->onnx.empty()) throw CommandError{"--db needs --onnx"};
    if (!o->onnx.empty() && o->db.empty() && !o->against_untuned) {
      throw CommandError{"--onnx goes with --db (and --profile) or --against-untuned"};
    }
    if (!o->db.empty() && o->profile == 0) throw CommandError{"--db needs --profile N"};
    return BenchModel(*o, extras);
  };
}

}  // namespace kiln::cli
