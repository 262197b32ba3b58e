// Kernel benchmark: kiln's best config per workload against oneDNN and OpenBLAS, timed in the
// same run on the same thread count.
//
//   kernel_bench [--trials N] [--tuner xgb|random|...] [--threads T] [--seed S] [--only TEXT]
//                [--target 'llvm -mcpu=znver3'] [--json-out FILE]
//
// For each workload, kiln tunes each of the operator's templates with kiln tune's loop (xgb
// tuner by default, fixed seed, `trials` configs each, the first being kiln's default config,
// every config built, checked and timed; records go to --db), then times the three fastest of
// each template and the peers with the same evaluator (warm-up, 7 repeats of >= 50 ms, median),
// taking turns over --rounds rounds (3) so that a slow spell of a shared machine falls on both
// sides: each config's and each peer's time is the median of its rounds, and kiln's is its
// fastest config's. Prints a table and one JSON line per workload:
//   {"workload", "threads", "kiln_ms", "onednn_ms", "openblas_ms", "ratio", "round_ratios"}
// with ratio = best library time / kiln time (> 1: kiln is faster; round_ratios: the same per
// round, for kiln's fastest config), then the geometric mean of
// the ratios per kind of layer (dense, 3x3 conv, 1x1 conv, depthwise conv). With --json-out, the
// rows also go to FILE in the format `kiln report --bench` reads (report/bench_file.h).
//
// Convolutions compare like with like: kiln's conv kernels are timed as they are tuned (as
// AutoTVM's conv2d_NCHWc): data already in NCHW[tile_ic]c, kernel pre-packed, output left in
// NCHW[tile_oc]c; oneDNN's primitive runs on the blocked layouts it prefers, its reorders not
// timed either.
//
// Both instruction sets from one machine: --target generates kiln's code for another CPU (a
// target this machine cannot run is refused), and the peers are held to the target's ISA:
// oneDNN through ONEDNN_MAX_CPU_ISA (AVX2 for znver3), OpenBLAS through OPENBLAS_CORETYPE=Haswell
// (its AVX2 kernels) when the target has no AVX-512. Both read these when they load, so the
// program re-executes itself with them set before doing anything else; at the machine's own ISA
// it unsets OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE (a preset Haswell would force the AVX2
// kernels) and ONEDNN_MAX_CPU_ISA. The thread count is set for OpenMP and OpenBLAS the same way.
// The first lines say the CPU model and ISA of the machine and the ISA measured.
#include <cblas.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dnnl.hpp>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "bench/bench_machine.h"
#include "builder/build_pool.h"
#include "builder/target.h"
#include "ops/registry.h"
#include "report/bench_file.h"
#include "runner/build_and_measure.h"
#include "runner/local_measure.h"
#include "runner/local_runner.h"
#include "runtime/thread_pool.h"
#include "runtime/time_evaluator.h"
#include "store/open_store.h"
#include "tuner/tune_job.h"

namespace kiln::bench {
namespace {

struct Args {
  int trials = 300;
  int threads = 1;
  uint64_t seed = 1;
  std::string tuner = "xgb";
  std::string only;
  std::string db = "kernel_bench.db";  // the tuning records (kept for `kiln best` / `kiln export`)
  std::string json_out;                // also write the rows here (report/bench_file.h)
  std::string target;                  // kiln's target (and the peers' ISA); empty: the host's
  int rounds = 3;                      // alternating rounds of the final timing
};

const TimeOptions kFinalTiming{.number = 1, .repeat = 7, .min_repeat_ms = 50};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double time_ms(const std::function<void()>& f) {
  auto costs = time_function(f, kFinalTiming, {});
  return costs.ok() ? median(*costs) * 1e3 : NAN;
}

std::vector<float> random_vector(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> d(-1, 1);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

// --- peers ------------------------------------------------------------------------------------

std::optional<double> openblas_dense_ms(const ops::Workload& w) {
  int64_t M = w.at("M"), N = w.at("N"), K = w.at("K");
  auto a = random_vector(M * K, 1), b = random_vector(N * K, 2);
  std::vector<float> c(M * N);
  return time_ms([&] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, M, N, K, 1.0f, a.data(), K, b.data(), K,
                0.0f, c.data(), N);
  });
}

void fill(dnnl::memory& m) {
  size_t n = m.get_desc().get_size() / sizeof(float);
  auto v = random_vector(n, n);
  std::memcpy(m.get_data_handle(), v.data(), n * sizeof(float));
}

std::optional<double> onednn_dense_ms(const ops::Workload& w) {
  using namespace dnnl;
  int64_t M = w.at("M"), N = w.at("N"), K = w.at("K");
  engine eng(engine::kind::cpu, 0);
  stream s(eng);
  memory::desc src({M, K}, memory::data_type::f32, memory::format_tag::ab);
  memory::desc wei({K, N}, memory::data_type::f32, memory::format_tag::ba);  // stored N x K
  memory::desc dst({M, N}, memory::data_type::f32, memory::format_tag::ab);
  matmul::primitive_desc pd(matmul::desc(src, wei, dst), eng);
  memory a(pd.src_desc(), eng), b(pd.weights_desc(), eng), c(pd.dst_desc(), eng);
  fill(a);
  fill(b);
  matmul prim(pd);
  return time_ms([&] {
    prim.execute(s, {{DNNL_ARG_SRC, a}, {DNNL_ARG_WEIGHTS, b}, {DNNL_ARG_DST, c}});
    s.wait();
  });
}

// Direct convolution on oneDNN's preferred (blocked) layouts, with bias: the primitive alone,
// as in reference/baselines.md's "conv" column.
std::optional<double> onednn_conv_ms(const ops::Workload& w, bool depthwise) {
  using namespace dnnl;
  int64_t N = w.at("N"), C = w.at("C"), H = w.at("H"), W = w.at("W"), R = w.at("R"), S = w.at("S"),
          stride = w.at("stride"), pad = w.at("pad");
  int64_t dil = w.params.count("dilation") ? w.at("dilation") : 1;
  int64_t K = depthwise ? C : w.at("K");
  int64_t P = (H + 2 * pad - dil * (R - 1) - 1) / stride + 1;
  int64_t Q = (W + 2 * pad - dil * (S - 1) - 1) / stride + 1;
  engine eng(engine::kind::cpu, 0);
  stream s(eng);
  auto any = [](memory::dims d) {
    return memory::desc(d, memory::data_type::f32, memory::format_tag::any);
  };
  memory::dims weights = depthwise ? memory::dims{C, 1, 1, R, S} : memory::dims{K, C, R, S};
  convolution_forward::desc d(prop_kind::forward_inference, algorithm::convolution_direct,
                              any({N, C, H, W}), any(weights), any({K}), any({N, K, P, Q}),
                              {stride, stride}, {dil - 1, dil - 1}, {pad, pad}, {pad, pad});
  convolution_forward::primitive_desc pd(d, eng);
  memory src(pd.src_desc(), eng), wei(pd.weights_desc(), eng), bias(pd.bias_desc(), eng),
      dst(pd.dst_desc(), eng);
  fill(src);
  fill(wei);
  fill(bias);
  convolution_forward prim(pd);
  return time_ms([&] {
    prim.execute(
        s,
        {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, wei}, {DNNL_ARG_BIAS, bias}, {DNNL_ARG_DST, dst}});
    s.wait();
  });
}

// --- kiln -------------------------------------------------------------------------------------

struct Best {
  const ops::Template* tmpl = nullptr;
  ConfigEntity config;
  int64_t valid = 0, tried = 0;
};

// A config that tuning measured among its template's fastest.
struct Finalist {
  const ops::Template* tmpl = nullptr;
  ops::Workload workload;
  ConfigEntity config;
};

// The configs of each template whose tuning measurements were fastest: the final timing
// (kFinalTiming, longer than a trial's) picks among them, so that one trial's lucky run on a noisy
// machine does not pick the config reported.
constexpr size_t kFinalistsPerTemplate = 3;

// kiln tune's loop (the chosen tuner, fixed seed and trial count, builder processes, isolated
// runner) over every template of the operator, recording into `db`; returns the finalists of
// every template (kFinalistsPerTemplate) and counts the configs tried and valid in `best`.
std::vector<Finalist> tune(const ops::Workload& raw, const Args& args, const Target& target,
                           store::Store& db, Best* best) {
  std::vector<Finalist> finalists;
  builder::LocalBuildPool builder;
  runner::RunnerOptions options;
  options.measure.time = {.number = 1, .repeat = 3, .min_repeat_ms = 5};
  options.cooldown_interval_s = 0;
  options.threads = args.threads;
  runner::LocalRunner runner(options);
  std::vector<tuner::TuneJobTask> tasks;
  for (const ops::Template* t : ops::templates_for_op(raw.op)) {
    // An extra template (Winograd: 3x3 stride 1 only) does not take every workload of its op.
    Result<ops::Workload> w = t->normalize(raw);
    if (w.ok()) tasks.push_back({t, *w});
  }
  tuner::TuneJobOptions job_options;
  job_options.tuner = args.tuner;
  job_options.seed = args.seed;
  job_options.loop.n_trial = args.trials;
  job_options.loop.source = "kernel_bench";
  // As kiln tune does for a model: kiln's default config is the first trial, so the tuned
  // figure is never worse than the untuned one.
  job_options.measure_fallback_first = true;
  tuner::TuneJob job(std::move(tasks), target, job_options);
  Result<tuner::TuneJobResult> result = job.run(builder, runner, db);
  if (!result.ok()) {
    std::fprintf(stderr, "kernel_bench: %s\n", result.status().message().c_str());
    return finalists;
  }
  for (const tuner::TuneTaskOutcome& outcome : result->tasks) {
    store::RecordFilter filter =
        store::RecordFilter::of_task({outcome.task.tmpl, outcome.task.workload, target});
    best->tried += outcome.progress.done;
    filter.only_ok = true;
    filter.versions = store::Versions::kComparable;
    Result<std::vector<store::Record>> records = db.records(filter);
    if (!records.ok()) continue;
    best->valid += static_cast<int64_t>(records->size());
    std::sort(records->begin(), records->end(), [](const store::Record& a, const store::Record& b) {
      return a.mean_cost() < b.mean_cost();
    });
    ConfigSpace space = outcome.task.tmpl->space(outcome.task.workload);
    std::vector<int64_t> taken;
    for (const store::Record& r : *records) {
      if (taken.size() == kFinalistsPerTemplate) break;
      if (std::find(taken.begin(), taken.end(), r.config_index) != taken.end()) continue;
      Result<ConfigEntity> config = space.from_json_entities(r.entities);
      if (!config.ok()) continue;
      taken.push_back(r.config_index);
      finalists.push_back({outcome.task.tmpl, outcome.task.workload, std::move(config).value()});
    }
  }
  return finalists;
}

// The kind of layer a workload is, for the per-kind summary.
std::string layer_kind(const ops::Workload& w) {
  if (w.op != "conv2d") return w.op;
  return w.at("R") == 1 && w.at("S") == 1
             ? "conv 1x1"
             : "conv " + std::to_string(w.at("R")) + "x" + std::to_string(w.at("S"));
}

std::string json_number(std::optional<double> v) {
  if (!v || !std::isfinite(*v)) return "null";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", *v);
  return buf;
}

int run(const Args& args) {
  const std::vector<std::string> workloads = {
      "dense:M=1024,N=1024,K=1024",
      "dense:M=1,N=1000,K=512",
      "dense:M=128,N=3072,K=768",
      "conv2d:N=1,C=64,H=56,W=56,K=64,R=3,S=3,stride=1,pad=1",
      "conv2d:N=1,C=128,H=28,W=28,K=128,R=3,S=3,stride=1,pad=1",
      "conv2d:N=1,C=256,H=14,W=14,K=256,R=3,S=3,stride=1,pad=1",
      "conv2d:N=1,C=64,H=56,W=56,K=128,R=1,S=1,stride=2,pad=0",
      // MobileNetV2's pointwise (1x1) and depthwise layers, early to late.
      "conv2d:N=1,C=16,H=112,W=112,K=96,R=1,S=1,stride=1,pad=0",
      "conv2d:N=1,C=24,H=56,W=56,K=144,R=1,S=1,stride=1,pad=0",
      "conv2d:N=1,C=96,H=14,W=14,K=576,R=1,S=1,stride=1,pad=0",
      "conv2d:N=1,C=960,H=7,W=7,K=320,R=1,S=1,stride=1,pad=0",
      "depthwise_conv2d:N=1,C=32,H=112,W=112,R=3,S=3,stride=1,pad=1",
      "depthwise_conv2d:N=1,C=96,H=112,W=112,R=3,S=3,stride=2,pad=1",
      "depthwise_conv2d:N=1,C=144,H=56,W=56,R=3,S=3,stride=1,pad=1",
      "depthwise_conv2d:N=1,C=384,H=14,W=14,R=3,S=3,stride=1,pad=1",
      "depthwise_conv2d:N=1,C=960,H=7,W=7,R=3,S=3,stride=1,pad=1",
  };
  Result<Target> parsed = bench_target(args.target);
  if (!parsed.ok()) {
    std::fprintf(stderr, "kernel_bench: %s\n", parsed.status().message().c_str());
    return 2;
  }
  const Target target = *parsed;
  std::printf("machine: %s\n", machine_text().c_str());
  const char* coretype = std::getenv("OPENBLAS_CORETYPE");
  std::printf("measured ISA: %s (kiln %s; oneDNN ONEDNN_MAX_CPU_ISA=%s; OpenBLAS %s)\n",
              isa_name(target).c_str(), target.to_string().c_str(),
              std::getenv("ONEDNN_MAX_CPU_ISA") ? std::getenv("ONEDNN_MAX_CPU_ISA") : "unset",
              coretype ? ("OPENBLAS_CORETYPE=" + std::string(coretype)).c_str()
                       : "at the machine's own kernels");
  ThreadPool pool(args.threads);
  auto opened = store::open_store(args.db);
  if (!opened.ok()) {
    std::fprintf(stderr, "kernel_bench: %s\n", opened.status().message().c_str());
    return 1;
  }
  std::unique_ptr<store::Store> db = std::move(opened).value();
  std::printf(
      "kiln kernel benchmark: %s, %d thread(s), %d configs per template (%s tuner), seed %llu\n",
      target.to_string().c_str(), args.threads, args.trials, args.tuner.c_str(),
      static_cast<unsigned long long>(args.seed));
  std::printf("%-62s %10s %10s %10s %8s %8s  %s\n", "workload", "kiln ms", "oneDNN ms",
              "OpenBLAS ms", "GFLOPS", "ratio", "best config");
  std::vector<std::string> json_lines;
  report::BenchResults results{"kernel_bench", {}};
  std::map<std::string, std::vector<double>> ratios_by_kind;
  for (const std::string& text : workloads) {
    if (!args.only.empty() && text.find(args.only) == std::string::npos) continue;
    ops::Workload raw = *ops::Workload::parse(text);
    Best best;
    std::vector<Finalist> finalists = tune(raw, args, target, *db, &best);
    runner::MeasureOptions final_options;
    final_options.time = kFinalTiming;
    // Alternating rounds: every finalist, then the peers; per round, the times in ms.
    std::vector<std::vector<double>> finalist_ms(finalists.size());
    std::vector<bool> failed(finalists.size(), false);
    std::vector<double> onednn_rounds, openblas_rounds;
    for (int round = 0; round < args.rounds; ++round) {
      for (size_t i = 0; i < finalists.size(); ++i) {
        if (failed[i]) continue;
        const Finalist& f = finalists[i];
        MeasureResult m =
            runner::measure_config(*f.tmpl, f.workload, f.config, target, final_options, pool);
        if (m.error != MeasureError::kNoError) {
          // E.g. a record store tuned by an older kiln whose config this one rejects.
          std::fprintf(stderr, "kernel_bench: %s: config %s failed its final run: %s %s\n",
                       text.c_str(), f.config.entity_string().c_str(), measure_error_name(m.error),
                       m.message.c_str());
          failed[i] = true;
          continue;
        }
        finalist_ms[i].push_back(median(m.costs) * 1e3);
      }
      const ops::Workload peer_workload =
          finalists.empty() ? raw : *finalists.front().tmpl->normalize(raw);
      std::optional<double> onednn, openblas;
      if (raw.op == "dense") {
        onednn = onednn_dense_ms(peer_workload);
        openblas = openblas_dense_ms(peer_workload);
      } else {
        onednn = onednn_conv_ms(peer_workload, raw.op == "depthwise_conv2d");
      }
      if (onednn) onednn_rounds.push_back(*onednn);
      if (openblas) openblas_rounds.push_back(*openblas);
    }
    std::optional<double> kiln_ms, onednn_ms, openblas_ms;
    size_t fastest = 0;
    for (size_t i = 0; i < finalists.size(); ++i) {
      if (failed[i] || finalist_ms[i].empty()) continue;
      const double ms = median(finalist_ms[i]);
      if (!kiln_ms || ms < *kiln_ms) {
        kiln_ms = ms;
        fastest = i;
        best.tmpl = finalists[i].tmpl;
        best.config = finalists[i].config;
      }
    }
    if (best.tmpl) raw = *best.tmpl->normalize(raw);
    if (!onednn_rounds.empty()) onednn_ms = median(onednn_rounds);
    if (!openblas_rounds.empty()) openblas_ms = median(openblas_rounds);
    // Per round: the best library's time over kiln's fastest config's.
    std::string round_ratios = "[";
    if (kiln_ms) {
      for (size_t r = 0; r < finalist_ms[fastest].size(); ++r) {
        double lib_r = std::min(r < onednn_rounds.size() ? onednn_rounds[r] : INFINITY,
                                r < openblas_rounds.size() ? openblas_rounds[r] : INFINITY);
        round_ratios += (r ? ", " : "") + json_number(lib_r / finalist_ms[fastest][r]);
      }
    }
    round_ratios += "]";
    double lib = std::min(onednn_ms.value_or(INFINITY), openblas_ms.value_or(INFINITY));
    std::optional<double> ratio;
    if (kiln_ms) ratio = lib / *kiln_ms;
    if (ratio && std::isfinite(*ratio)) ratios_by_kind[layer_kind(raw)].push_back(*ratio);
    double gflops = kiln_ms ? best.tmpl->flop(raw) / (*kiln_ms * 1e-3) / 1e9 : 0;
    std::printf("%-62s %10s %10s %10s %8.1f %8s  %s %s (%lld/%lld valid)\n", text.c_str(),
                json_number(kiln_ms).c_str(), json_number(onednn_ms).c_str(),
                json_number(openblas_ms).c_str(), gflops, json_number(ratio).c_str(),
                best.tmpl ? std::string(best.tmpl->name()).c_str() : "-",
                best.tmpl ? best.config.entity_string().c_str() : "",
                static_cast<long long>(best.valid), static_cast<long long>(best.tried));
    std::fflush(stdout);
    json_lines.push_back(
        "{\"workload\": \"" + text + "\", \"threads\": " + std::to_string(args.threads) +
        ", \"kiln_ms\": " + json_number(kiln_ms) + ", \"onednn_ms\": " + json_number(onednn_ms) +
        ", \"openblas_ms\": " + json_number(openblas_ms) + ", \"ratio\": " + json_number(ratio) +
        ", \"round_ratios\": " + round_ratios + "}");
    results.rows.push_back({text + " T=" + std::to_string(args.threads),
                            kiln_ms,
                            {{"oneDNN", onednn_ms}, {"OpenBLAS", openblas_ms}},
                            nlohmann::json::parse(json_lines.back())});
  }
  if (!args.json_out.empty()) {
    if (Status s = report::write_bench_file(args.json_out, results); !s.ok()) {
      std::fprintf(stderr, "kernel_bench: %s\n", s.message().c_str());
      return 1;
    }
  }
  for (const std::string& line : json_lines) std::printf("%s\n", line.c_str());
  for (const auto& [kind, ratios] : ratios_by_kind) {
    double log_sum = 0;
    for (double r : ratios) log_sum += std::log(r);
    std::printf("%-10s geometric mean ratio %.3f over %zu workload(s)\n", kind.c_str(),
                std::exp(log_sum / ratios.size()), ratios.size());
  }
  return 0;
}

// Re-executes with the peers' environment fixed (see the file comment). Returns only if no
// re-execution was needed (or the target cannot be parsed: run() then says why).
void fix_environment(const Args& args, char** argv) {
  std::string threads = std::to_string(args.threads);
  std::string isa, coretype;  // empty: unset
  if (!args.target.empty()) {
    Result<Target> target = builder::parse_target(args.target);
    if (!target.ok()) return;
    Target host = builder::host_target();
    if (isa_name(*target) != isa_name(host)) {
      isa = onednn_isa(*target);
      if (!target->has_feature("avx512f") && target->has_feature("avx2")) coretype = "Haswell";
    }
  }
  auto is = [](const char* name, const std::string& want) {
    const char* v = std::getenv(name);
    return want.empty() ? v == nullptr : v != nullptr && want == v;
  };
  if (is("OPENBLAS_CORETYPE", coretype) && !std::getenv("OPENBLAS_L2_SIZE") &&
      is("ONEDNN_MAX_CPU_ISA", isa) && is("OMP_NUM_THREADS", threads)) {
    return;
  }
  auto set = [](const char* name, const std::string& value) {
    if (value.empty()) {
      unsetenv(name);
    } else {
      setenv(name, value.c_str(), 1);
    }
  };
  set("OPENBLAS_CORETYPE", coretype);
  unsetenv("OPENBLAS_L2_SIZE");
  set("ONEDNN_MAX_CPU_ISA", isa);
  setenv("OMP_NUM_THREADS", threads.c_str(), 1);
  setenv("OPENBLAS_NUM_THREADS", threads.c_str(), 1);
  setenv("OMP_WAIT_POLICY", "passive", 1);
  execv("/proc/self/exe", argv);
  std::perror("kernel_bench: re-exec failed; the peers may run at another ISA than kiln");
}

}  // namespace
}  // namespace kiln::bench

int main(int argc, char** argv) {
  kiln::bench::Args args;
  CLI::App app{"kiln's best configs against oneDNN and OpenBLAS", "kernel_bench"};
  app.add_option("--trials", args.trials, "configs tried per template")->check(CLI::PositiveNumber);
  app.add_option("--threads", args.threads, "threads of kiln and the peers")
      ->check(CLI::PositiveNumber);
  app.add_option("--tuner", args.tuner, "tuner of kiln tune (xgb, random, ...)");
  app.add_option("--seed", args.seed, "seed of the tuner");
  app.add_option("--only", args.only, "only workloads containing this text");
  app.add_option("--db", args.db, "SQLite file for the tuning records");
  app.add_option("--target", args.target,
                 "kiln's target, e.g. 'llvm -mcpu=znver3' (AVX2 on an AVX-512 machine); the "
                 "peers are held to its ISA; default: this machine");
  app.add_option("--rounds", args.rounds,
                 "alternating rounds of the final timing of kiln's finalists and the peers")
      ->check(CLI::Range(1, 100));
  app.add_option("--json-out", args.json_out,
                 "also write the rows to this file (kiln report --bench)");
  CLI11_PARSE(app, argc, argv);
  kiln::bench::fix_environment(args, argv);
  return kiln::bench::run(args);
}
