// Model benchmark: whole ONNX models compiled by kiln against ONNX Runtime (CPU provider), timed
// in the same run on the same thread counts.
//
//   model_bench [--models resnet18,mobilenet_v2,mlp,DIR...] [--threads 1,2] [--runs 50]
//               [--round-ms 1000] [--rounds 3] [--db F]
//               [--tune 40m [--seed N]] [--models-dir DIR] [--target T] [--no-ort]
//               [--json-out FILE]
//
// With --tune T, each model is first tuned by the real `kiln tune MODEL --time T --db F` (xgb,
// fixed seed; F defaults to model_bench.db), as a user would, and the tuned rows use that store.
//
// A model is a NAME of --models-dir (default ../shared/models) or a directory (a path with a
// '/', e.g. build/bench/models/resnet50 from bench/export_torchvision_models.py); its io.json
// names the .onnx file, its input file and its expected output. kiln compiles it for --target
// (default: this machine; one it cannot run is refused) once untuned (kiln's default config
// for the target per task, as `kiln compile` without a store) and, with --db, once more with the
// store's best records. For each thread count it times, in --rounds alternating rounds (so that
// a slow spell of a shared machine falls on both sides), ONNX Runtime 1.30 with
// bench/ort/time_model.js under `node` as docs' baselines (f) did (intraOpNumThreads T,
// interOpNumThreads 1, sequential, all optimizations), always at the machine's own ISA (its
// kernels pick the ISA themselves; the header says which), then each kiln build with its
// GraphExecutor, checking kiln's output against the reference (max|y - ref| / max|ref| <= 1e-4).
// Every round of either times the same number of runs after the same number of warm-up runs: at
// least --runs (at least 30), and as many as last --round-ms at kiln's speed (estimated from a
// few runs of the first kiln build before the rounds), after a tenth as many warm-up runs (at
// least 5). A few-millisecond model is thus timed for as long as a large one: a fixed count
// would leave its median to the first transients of a freshly started process. The times
// of all rounds are pooled: median, mean, std, min; the ratio is of the pooled medians, and each
// round's ratio of medians is printed too (their spread says how steady the machine was). Only
// one of the two runs at a time: ONNX Runtime's process has exited before kiln's executor is
// made, and that is destroyed before the next round starts. Without onnxruntime-node installed it
// says how to install it and times kiln alone.
//
// Prints a table and one JSON line per row:
//   {"model", "configs", "threads", "runs", "kiln_ms", "kiln_mean_ms", "kiln_std_ms",
//    "kiln_min_ms", "ort_ms", "ratio", "round_ratios", "rel_err"}
// where runs is the timed runs per round.
// with ratio = ONNX Runtime's median / kiln's median (> 1: kiln is faster); with --json-out, the
// rows also go to FILE in the format `kiln report --bench` reads (report/bench_file.h). Exit status
// 1 when a model fails to compile or run, or an output is out of tolerance.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/bench_machine.h"
#include "builder/target.h"
#include "compiler/compile_model.h"
#include "frontend/onnx_import.h"
#include "report/bench_file.h"
#include "runtime/graph_executor.h"
#include "store/open_store.h"

namespace kiln::bench {
namespace {

namespace fs = std::filesystem;

constexpr double kTolerance = 1e-4;  // max|y - ref| / max|ref|
constexpr int kWarmup = 5;
constexpr int kMinRuns = 30;
constexpr int kMaxRuns = 100000;
const char* const kOrtInstall =
    "bash scripts/install-ort.sh  (runs: cd bench/ort && npm install --ignore-scripts "
    "onnxruntime-node@1.30.0)";

struct Args {
  std::vector<std::string> models = {"resnet18", "mobilenet_v2", "mlp"};
  std::vector<int> threads = {1, 2};
  int runs = 50;
  int round_ms = 1000;
  int rounds = 3;
  std::string db;
  std::string models_dir = std::string(KILN_SHARED_DIR) + "/models";
  bool no_ort = false;
  std::string tune;      // `kiln tune --time` per model before timing; empty: no tuning
  std::string json_out;  // also write the rows here (report/bench_file.h)
  uint64_t seed = 1;
  std::string target;  // kiln's; empty: this machine
};

// The folder of model `name`: a path when it has a '/', else NAME in --models-dir.
fs::path model_dir(const Args& args, const std::string& name) {
  if (name.find('/') != std::string::npos) return fs::path(name);
  return fs::path(args.models_dir) / name;
}

// The name a model's rows carry: its folder's last component.
std::string model_name(const std::string& name) {
  fs::path p = fs::path(name);
  if (!p.has_filename()) p = p.parent_path();
  return p.filename().string();
}

// What io.json says about a model: its file, its one input and its one expected output.
struct ModelFiles {
  std::string onnx, input_name, input, output;
  std::vector<int64_t> input_shape;
};

struct Timing {
  double median = 0, mean = 0, std = 0, min = 0;
};

Result<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return IoError("cannot open " + path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return std::move(buffer).str();
}

Result<std::vector<float>> read_floats(const std::string& path) {
  KILN_ASSIGN_OR_RETURN(std::string bytes, read_file(path));
  if (bytes.size() % sizeof(float) != 0) {
    return InvalidArgument(path + ": " + std::to_string(bytes.size()) +
                           " bytes is not a float32 array");
  }
  std::vector<float> v(bytes.size() / sizeof(float));
  std::memcpy(v.data(), bytes.data(), bytes.size());  // little-endian, as the files are
  return v;
}

Result<ModelFiles> read_io_json(const fs::path& dir) {
  const std::string path = (dir / "io.json").string();
  KILN_ASSIGN_OR_RETURN(std::string text, read_file(path));
  try {
    nlohmann::json j = nlohmann::json::parse(text);
    if (j.at("inputs").size() != 1 || j.at("outputs").size() != 1) {
      return InvalidArgument(path + ": model_bench feeds one input and checks one output");
    }
    const nlohmann::json& in = j.at("inputs")[0];
    ModelFiles f;
    f.onnx = (dir / j.at("onnx").get<std::string>()).string();
    f.input_name = in.at("name").get<std::string>();
    f.input = (dir / in.at("file").get<std::string>()).string();
    f.input_shape = in.at("shape").get<std::vector<int64_t>>();
    f.output = (dir / j.at("outputs")[0].at("file").get<std::string>()).string();
    return f;
  } catch (const nlohmann::json::exception& e) {
    return InvalidArgument(path + ": " + e.what());
  }
}

Timing summarize(std::vector<double> ms) {
  Timing t;
  std::sort(ms.begin(), ms.end());
  const size_t n = ms.size();
  t.median = n % 2 ? ms[n / 2] : (ms[n / 2 - 1] + ms[n / 2]) / 2;
  t.min = ms.front();
  for (double x : ms) t.mean += x / n;
  for (double x : ms) t.std += (x - t.mean) * (x - t.mean) / n;
  t.std = std::sqrt(t.std);
  return t;
}

double relative_error(std::span<const float> y, const std::vector<float>& ref) {
  double err = 0, scale = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    err = std::max(err, std::abs(static_cast<double>(y[i]) - ref[i]));
    scale = std::max(scale, std::abs(static_cast<double>(ref[i])));
  }
  return scale > 0 ? err / scale : err;
}

// Runs the model `runs` times after `warmup` runs: the times in ms and the output's error.
Result<std::pair<std::vector<double>, double>> time_kiln(const ModelArtifact& model,
                                                         const ModelFiles& files,
                                                         const std::vector<float>& input,
                                                         const std::vector<float>& ref, int threads,
                                                         int runs, int warmup) {
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<GraphExecutor> ex,
                        GraphExecutor::create(model, threads, files.onnx));
  if (ex->num_inputs() != 1 || ex->num_outputs() < 1) {
    return InvalidArgument(files.onnx + ": the compiled model has " +
                           std::to_string(ex->num_inputs()) + " inputs, " +
                           std::to_string(ex->num_outputs()) + " outputs");
  }
  KILN_RETURN_IF_ERROR(ex->set_input(ex->input_info(0).name, input));
  for (int i = 0; i < warmup; ++i) ex->run();
  std::vector<double> ms;
  for (int i = 0; i < runs; ++i) {
    const auto start = std::chrono::steady_clock::now();
    ex->run();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                     .count());
  }
  std::span<const float> y = ex->get_output(0);
  if (y.size() != ref.size()) {
    return InvalidArgument(files.output + ": " + std::to_string(ref.size()) +
                           " floats, kiln's output has " + std::to_string(y.size()));
  }
  return std::make_pair(std::move(ms), relative_error(y, ref));
}

std::string ort_script() { return std::string(KILN_SOURCE_DIR) + "/bench/ort/time_model.js"; }

// Why ONNX Runtime cannot be timed here, or "" when it can.
std::string ort_missing() {
  if (std::system("node --version > /dev/null 2>&1") != 0) return "node (Node.js) is not on PATH";
  const fs::path package =
      fs::path(KILN_SOURCE_DIR) / "bench/ort/node_modules/onnxruntime-node/package.json";
  if (!fs::exists(package))
    return "onnxruntime-node is not installed; install it with " + std::string(kOrtInstall);
  return "";
}

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// ONNX Runtime's times in ms for the model on `threads` threads, from time_model.js's JSON line.
Result<std::vector<double>> time_ort(const ModelFiles& files, int threads, int runs, int warmup) {
  std::string shape;
  for (int64_t d : files.input_shape) shape += (shape.empty() ? "" : "x") + std::to_string(d);
  const std::string command = "node " + shell_quote(ort_script()) + " " + shell_quote(files.onnx) +
                              " " + shell_quote(files.input) + " " + std::to_string(threads) + " " +
                              std::to_string(runs) + " --shape " + shape + " --warmup " +
                              std::to_string(warmup) + " 2>&1";
  std::FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return IoError("cannot run: " + command);
  std::string out;
  char buffer[4096];
  for (size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) out.append(buffer, n);
  const int status = pclose(pipe);
  const size_t brace = out.rfind('{');
  try {
    if (brace == std::string::npos) throw std::runtime_error("no JSON");
    nlohmann::json j = nlohmann::json::parse(out.substr(brace));
    if (j.contains("error")) return RuntimeError("ONNX Runtime: " + j["error"].get<std::string>());
    if (status != 0) throw std::runtime_error("exit status " + std::to_string(status));
    return j.at("times_ms").get<std::vector<double>>();
  } catch (const std::exception& e) {
    return RuntimeError("time_model.js (" + std::string(e.what()) + "): " + out);
  }
}

std::string number(std::optional<double> v, const char* format = "%.3f") {
  if (!v || !std::isfinite(*v)) return "null";
  char buf[64];
  std::snprintf(buf, sizeof buf, format, *v);
  return buf;
}

// `kiln tune MODEL --time T --db F` for every model, before anything is timed.
int tune_models(Args& args) {
  if (args.db.empty()) args.db = "model_bench.db";
  for (const std::string& name : args.models) {
    Result<ModelFiles> files = read_io_json(model_dir(args, name));
    if (!files.ok()) {
      std::fprintf(stderr, "model_bench: %s\n", files.status().message().c_str());
      return 1;
    }
    std::string shape;
    for (int64_t d : files->input_shape) shape += (shape.empty() ? "" : "x") + std::to_string(d);
    const std::string command =
        shell_quote(KILN_BINARY) + " tune " + shell_quote(files->onnx) + " --input-shape " +
        shell_quote(files->input_name + "=" + shape) + " --time " + shell_quote(args.tune) +
        " --db " + shell_quote(args.db) + " --seed " + std::to_string(args.seed) +
        (args.target.empty() ? "" : " --target " + shell_quote(args.target));
    std::printf("model_bench: %s\n", command.c_str());
    std::fflush(stdout);
    int status = std::system(command.c_str());
    if (status != 0) {
      std::fprintf(stderr, "model_bench: kiln tune of %s failed (status %d)\n", name.c_str(),
                   status);
      return 1;
    }
  }
  return 0;
}

int run(const Args& args) {
  std::unique_ptr<store::Store> db;
  if (!args.db.empty()) {
    auto opened = store::open_store(args.db, /*read_only=*/true);
    if (!opened.ok()) {
      std::fprintf(stderr, "model_bench: %s\n", opened.status().message().c_str());
      return 1;
    }
    db = std::move(opened).value();
  }
  Result<Target> target = bench_target(args.target);
  if (!target.ok()) {
    std::fprintf(stderr, "model_bench: %s\n", target.status().message().c_str());
    return 2;
  }
  const std::string machine_isa = isa_name(builder::host_target());
  std::printf("machine: %s\n", machine_text().c_str());
  std::printf("kiln: %s (ISA %s); ONNX Runtime at the machine's own ISA (%s)\n",
              target->to_string().c_str(), isa_name(*target).c_str(), machine_isa.c_str());
  const std::string missing = args.no_ort ? "--no-ort given" : ort_missing();
  if (!missing.empty()) std::printf("ONNX Runtime not timed: %s\n", missing.c_str());

  std::printf(
      "kiln model benchmark: %d rounds, each of at least %d timed runs and %d ms (at kiln's "
      "speed) after a tenth as many warm-up runs (at least %d), threads",
      args.rounds, args.runs, args.round_ms, kWarmup);
  for (int t : args.threads) std::printf(" %d", t);
  std::printf("%s\n", db ? (", configs from " + args.db).c_str() : "");
  std::printf("%-13s %-8s %3s %10s %10s %9s %10s %10s %8s %11s %10s\n", "model", "configs", "T",
              "kiln ms", "mean ms", "std ms", "min ms", "ORT ms", "ORT/kiln", "per round",
              "rel.err");
  bool all_ok = true;
  std::vector<std::string> json_lines;
  report::BenchResults results{"model_bench", {}};
  for (const std::string& model_arg : args.models) {
    const fs::path dir = model_dir(args, model_arg);
    const std::string name = model_name(model_arg);
    Result<ModelFiles> files = read_io_json(dir);
    Result<std::vector<float>> input =
        files.ok() ? read_floats(files->input) : Result<std::vector<float>>(files.status());
    Result<std::vector<float>> ref =
        files.ok() ? read_floats(files->output) : Result<std::vector<float>>(files.status());
    Result<frontend::Graph> graph =
        files.ok() ? frontend::import_onnx(files->onnx, {{{files->input_name, files->input_shape}}})
                   : Result<frontend::Graph>(files.status());
    for (const Status& s : {input.status(), ref.status(), graph.status()}) {
      if (s.ok()) continue;
      std::printf("%-13s %s\n", name.c_str(), s.message().c_str());
      all_ok = false;
      break;
    }
    if (!input.ok() || !ref.ok() || !graph.ok()) continue;

    std::vector<std::pair<std::string, store::Store*>> variants = {{"untuned", nullptr}};
    if (db) variants.emplace_back("tuned", db.get());
    // Compile first, so that nothing of kiln runs while ONNX Runtime is timed below.
    struct Compiled {
      std::string configs;
      std::optional<ModelArtifact> model;
    };
    std::vector<Compiled> compiled;
    for (const auto& [configs, store] : variants) {
      compiler::CompileOptions options;
      options.target = target->to_string();
      options.store = store;
      compiler::CompileReport report;
      Result<ModelArtifact> model = compiler::compile_model(*graph, options, &report);
      if (!model.ok()) {
        std::printf("%-13s %-8s compile: %s\n", name.c_str(), configs.c_str(),
                    model.status().message().c_str());
        all_ok = false;
        continue;
      }
      if (report.untuned_tasks > 0) {
        std::printf("%-13s %-8s %d of %zu tasks untuned (predicted or default configs)\n",
                    name.c_str(), configs.c_str(), report.untuned_tasks, report.tasks.size());
      }
      compiled.push_back({configs, std::move(model).value()});
    }

    for (int threads : args.threads) {
      // Alternating rounds: ONNX Runtime, then each kiln build; times pooled over the rounds.
      std::vector<double> ort_times;
      std::vector<double> ort_round_medians;
      std::optional<std::string> ort_error;
      struct KilnTimes {
        std::vector<double> times, round_medians;
        double rel_err = 0;
        std::optional<std::string> error;
      };
      std::vector<KilnTimes> kiln(compiled.size());
      int runs = args.runs;
      if (!compiled.empty() && args.round_ms > 0) {
        auto estimate = time_kiln(*compiled[0].model, *files, *input, *ref, threads, kWarmup, 1);
        if (estimate.ok()) {
          const double ms = std::max(1e-3, summarize(estimate->first).median);
          runs = static_cast<int>(
              std::clamp(std::ceil(args.round_ms / ms), double(args.runs), double(kMaxRuns)));
        }
      }
      const int warmup = std::max(kWarmup, runs / 10);
      for (int round = 0; round < args.rounds; ++round) {
        if (missing.empty() && !ort_error) {
          Result<std::vector<double>> ort = time_ort(*files, threads, runs, warmup);
          if (ort.ok()) {
            ort_times.insert(ort_times.end(), ort->begin(), ort->end());
            ort_round_medians.push_back(summarize(*ort).median);
          } else {
            ort_error = ort.status().message();
          }
        }
        for (size_t i = 0; i < compiled.size(); ++i) {
          if (kiln[i].error) continue;
          auto timed = time_kiln(*compiled[i].model, *files, *input, *ref, threads, runs, warmup);
          if (!timed.ok()) {
            kiln[i].error = timed.status().message();
            continue;
          }
          kiln[i].times.insert(kiln[i].times.end(), timed->first.begin(), timed->first.end());
          kiln[i].round_medians.push_back(summarize(timed->first).median);
          kiln[i].rel_err = std::max(kiln[i].rel_err, timed->second);
        }
      }
      std::optional<double> ort_ms;
      if (ort_error) {
        std::printf("%-13s %-8s %3d %s\n", name.c_str(), "ORT", threads, ort_error->c_str());
      } else if (!ort_times.empty()) {
        ort_ms = summarize(ort_times).median;
      }
      if (compiled.empty() && ort_ms) {  // kiln failed to compile: ONNX Runtime's time alone
        std::printf("%-13s %-8s %3d %10s %10s %9s %10s %10.3f\n", name.c_str(), "-", threads, "-",
                    "-", "-", "-", *ort_ms);
      }
      for (size_t i = 0; i < compiled.size(); ++i) {
        const Compiled& c = compiled[i];
        if (kiln[i].error) {
          std::printf("%-13s %-8s %3d %10s %10s %9s %10s %10s  %s\n", name.c_str(),
                      c.configs.c_str(), threads, "-", "-", "-", "-", number(ort_ms).c_str(),
                      kiln[i].error->c_str());
          all_ok = false;
          continue;
        }
        const Timing t = summarize(kiln[i].times);
        const double rel_err = kiln[i].rel_err;
        std::optional<double> ratio;
        std::string round_ratios = "[]", spread = "-";
        if (ort_ms) {
          ratio = *ort_ms / t.median;
          std::vector<double> r;
          // ONNX Runtime's rounds all ran when it has a pooled median.
          for (size_t k = 0; k < kiln[i].round_medians.size(); ++k) {
            r.push_back(ort_round_medians[k] / kiln[i].round_medians[k]);
          }
          round_ratios = "[";
          for (size_t k = 0; k < r.size(); ++k) {
            round_ratios += (k ? ", " : "") + number(r[k], "%.3f");
          }
          round_ratios += "]";
          auto [lo, hi] = std::minmax_element(r.begin(), r.end());
          spread = number(*lo, "%.2f") + "-" + number(*hi, "%.2f");
        }
        const bool ok = rel_err <= kTolerance;
        all_ok = all_ok && ok;
        std::printf("%-13s %-8s %3d %10.3f %10.3f %9.3f %10.3f %10s %8s %11s %10.2e%s\n",
                    name.c_str(), c.configs.c_str(), threads, t.median, t.mean, t.std, t.min,
                    number(ort_ms).c_str(), number(ratio, "%.2f").c_str(), spread.c_str(), rel_err,
                    ok ? "" : "  OUT OF TOLERANCE");
        std::fflush(stdout);
        json_lines.push_back(
            "{\"model\": \"" + name + "\", \"configs\": \"" + c.configs +
            "\", \"threads\": " + std::to_string(threads) + ", \"runs\": " + std::to_string(runs) +
            ", \"kiln_ms\": " + number(t.median, "%.4f") + ", \"kiln_mean_ms\": " +
            number(t.mean, "%.4f") + ", \"kiln_std_ms\": " + number(t.std, "%.4f") +
            ", \"kiln_min_ms\": " + number(t.min, "%.4f") +
            ", \"ort_ms\": " + number(ort_ms, "%.4f") + ", \"ratio\": " + number(ratio, "%.3f") +
            ", \"round_ratios\": " + round_ratios + ", \"rel_err\": " + number(rel_err, "%.3g") +
            "}");
        results.rows.push_back({name + " " + c.configs + " T=" + std::to_string(threads),
                                t.median,
                                {{"ONNX Runtime", ort_ms}},
                                nlohmann::json::parse(json_lines.back())});
      }
    }
  }
  for (const std::string& line : json_lines) std::printf("%s\n", line.c_str());
  if (!args.json_out.empty()) {
    if (Status s = report::write_bench_file(args.json_out, results); !s.ok()) {
      std::fprintf(stderr, "model_bench: %s\n", s.message().c_str());
      return 1;
    }
  }
  return all_ok ? 0 : 1;
}

}  // namespace
}  // namespace kiln::bench

int main(int argc, char** argv) {
  kiln::bench::Args args;
  CLI::App app{"kiln's compiled models against ONNX Runtime", "model_bench"};
  app.add_option("--models", args.models,
                 "models to run: names in --models-dir, or folders (a path with '/') holding "
                 "io.json")
      ->delimiter(',');
  app.add_option("--target", args.target,
                 "kiln's target, e.g. 'llvm -mcpu=znver3' (AVX2 code on an AVX-512 machine); "
                 "default: this machine");
  app.add_option("--threads", args.threads, "thread counts")
      ->delimiter(',')
      ->check(CLI::PositiveNumber);
  app.add_option("--runs", args.runs, "timed runs per measurement (at least 30)")
      ->check(CLI::Range(kiln::bench::kMinRuns, kiln::bench::kMaxRuns));
  app.add_option("--round-ms", args.round_ms,
                 "time each round for at least this long at kiln's speed (more runs than --runs "
                 "for a fast model; the same count for ONNX Runtime); 0: exactly --runs")
      ->check(CLI::Range(0, 600000));
  app.add_option("--rounds", args.rounds,
                 "alternating rounds of ONNX Runtime and kiln; times pooled")
      ->check(CLI::Range(1, 1000));
  app.add_option("--db", args.db, "record store whose best configs to compile with as well");
  app.add_option("--models-dir", args.models_dir, "directory of NAME/io.json model folders");
  app.add_flag("--no-ort", args.no_ort, "time kiln alone");
  app.add_option("--json-out", args.json_out,
                 "also write the rows to this file (kiln report --bench)");
  app.add_option("--tune", args.tune,
                 "first tune each model with `kiln tune --time T` into --db (default "
                 "model_bench.db), e.g. 40m");
  app.add_option("--seed", args.seed, "the tuner's seed with --tune");
  CLI11_PARSE(app, argc, argv);
  if (!args.tune.empty() && kiln::bench::tune_models(args) != 0) return 1;
  return kiln::bench::run(args);
}
