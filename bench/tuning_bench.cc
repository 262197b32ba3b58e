// Tuning-efficiency benchmark: how fast each search strategy finds good configs.
//
//   tuning_bench [--random-trials 1000] [--model-trials 300] [--tuners xgb,xgb-knob,xgb-curve]
//                [--only SUBSTRING] [--seed 1] [--db-dir DIR] [--no-transfer]
//
// For a fixed set of tasks (dense_pack 1024^3, the four ResNet-18 conv layers of the kernel
// benchmark, one depthwise layer) it runs random search for --random-trials trials and each
// tuner of --tuners for --model-trials, all through kiln tune's loop (builder processes,
// isolated runner on all cores, every config checked), and prints the best-so-far curve at
// 25/50/100/200/300 trials as a fraction of the random search's best after all its trials,
// then the geometric mean over the tasks, and each model tuner's own overhead (feature
// extraction + fitting + SA, i.e. wall time outside build, run and store) as a share of its
// wall time. Then, unless --no-transfer or --only, the transfer-learning experiment: conv 128@28
// tuned by xgb starting from the xgb records of conv 64@56 and 256@14, against xgb without them.
//
// Each tuner records into its own SQLite file in --db-dir (default: a fresh temporary
// directory), so a rerun with the same --db-dir resumes instead of re-measuring; the overhead
// is only reported for runs that measured something. Trials are timed with number=1,
// repeat=3, min_repeat_ms=5 and no cooldown (as the kernel benchmark), to keep the 1000-trial
// random baselines affordable; the search algorithms see the same costs either way.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "builder/build_pool.h"
#include "builder/target.h"
#include "ops/registry.h"
#include "runner/local_runner.h"
#include "store/open_store.h"
#include "tuner/make_tuner.h"
#include "tuner/model_based_tuner.h"
#include "tuner/tune_job.h"
#include "tuner/xgb_tuner.h"

namespace kiln::bench {
namespace {

struct Args {
  int64_t random_trials = 1000;
  int64_t model_trials = 300;
  std::vector<std::string> tuners = {"xgb"};
  std::string only;
  uint64_t seed = 1;
  std::string db_dir;
  bool transfer = true;
  tuner::TunerSettings settings;  // run the transfer experiment (needs the whole task set and xgb)
};

struct BenchTask {
  const char* label;
  const char* template_name;
  const char* workload;
};

const BenchTask kTasks[] = {
    {"dense 1024^3", "dense_pack.x86", "dense:M=1024,N=1024,K=1024"},
    {"conv 64@56 3x3", "conv2d_NCHWc.x86", "conv2d:N=1,C=64,H=56,W=56,K=64,R=3,S=3,stride=1,pad=1"},
    {"conv 128@28 3x3", "conv2d_NCHWc.x86",
     "conv2d:N=1,C=128,H=28,W=28,K=128,R=3,S=3,stride=1,pad=1"},
    {"conv 256@14 3x3", "conv2d_NCHWc.x86",
     "conv2d:N=1,C=256,H=14,W=14,K=256,R=3,S=3,stride=1,pad=1"},
    {"conv 64->128@56 1x1 s2", "conv2d_NCHWc.x86",
     "conv2d:N=1,C=64,H=56,W=56,K=128,R=1,S=1,stride=2,pad=0"},
    {"depthwise 32@112 3x3", "depthwise_conv2d_NCHWc.x86",
     "depthwise_conv2d:N=1,C=32,H=112,W=112,R=3,S=3,stride=1,pad=1"},
};

const int64_t kCheckpoints[] = {25, 50, 100, 200, 300};

struct RunResult {
  std::vector<double> best_so_far;  // best GFLOPS after trial i+1, in measurement order
  std::vector<int64_t> configs;     // the config of trial i+1
  int64_t best_config = -1;         // the config of the best measurement
  double wall_s = 0, overhead_s = 0;
  bool fresh = false;  // measured something in this process
};

double at(const std::vector<double>& curve, int64_t trials) {
  if (curve.empty()) return 0;
  return curve[std::min<size_t>(curve.size(), static_cast<size_t>(trials)) - 1];
}

// Tunes `bt` with `tuner_name` into <db-dir>/<db_name or tuner_name>.db. With `transfer`
// records, the xgb tuner first learns a base model from them (kiln tune's transfer learning).
RunResult tune(const BenchTask& bt, const std::string& tuner_name, int64_t trials, const Args& args,
               builder::Builder& builder, runner::Runner& runner, const std::string& db_name = "",
               const std::vector<store::Record>* transfer = nullptr) {
  RunResult out;
  const ops::Template* tmpl = ops::find_template(bt.template_name);
  ops::Workload w = *tmpl->normalize(*ops::Workload::parse(bt.workload));
  ConfigSpace space = tmpl->space(w);
  Target target = builder::host_target();
  std::string path = args.db_dir + "/" + (db_name.empty() ? tuner_name : db_name) + ".db";
  auto db = store::open_store(path);
  if (!db.ok()) {
    std::fprintf(stderr, "tuning_bench: %s\n", db.status().message().c_str());
    std::exit(1);
  }
  tuner::TuneJobOptions job_options;
  job_options.tuner = tuner_name;
  job_options.tuner_settings = args.settings;
  job_options.seed = args.seed;
  job_options.transfer = false;  // only the transfer experiment transfers, from its own records
  job_options.transfer_records = transfer;
  job_options.loop.n_trial = trials;
  job_options.loop.source = "tuning_bench:" + tuner_name;
  tuner::TuneJob job({{tmpl, w}}, target, job_options);
  auto result = job.run(builder, runner, **db);
  if (!result.ok()) {
    std::fprintf(stderr, "tuning_bench: %s\n", result.status().message().c_str());
    std::exit(1);
  }
  const tuner::TuneProgress* p = &result->tasks.front().progress;
  out.fresh = p->done > p->resumed;
  out.wall_s = p->times.wall_s;
  out.overhead_s = p->times.tuner_s();
  store::RecordFilter filter;
  filter.target = target.to_string();
  filter.task_name = bt.template_name;
  filter.workload = w.to_string();
  double best = 0;
  Result<std::vector<store::Record>> records = (*db)->records(filter);
  if (!records.ok()) {
    std::fprintf(stderr, "tuning_bench: %s\n", records.status().message().c_str());
    std::exit(1);
  }
  for (const store::Record& r : *records) {
    if (r.flops() > best) {
      best = r.flops();
      out.best_config = r.config_index;
    }
    out.best_so_far.push_back(best / 1e9);
    out.configs.push_back(r.config_index);
  }
  return out;
}

// Transfer learning: conv 128@28 tuned by xgb after conv 64@56 and 256@14 are in the store,
// against the same tuner without transfer (the main run's records).
void transfer_experiment(const Args& args, builder::Builder& builder, runner::Runner& runner) {
  const BenchTask& target = kTasks[2];
  auto db = store::open_store(args.db_dir + "/xgb.db");
  if (!db.ok()) return;
  std::vector<store::Record> sources;
  for (const BenchTask* source : {&kTasks[1], &kTasks[3]}) {
    const ops::Template* tmpl = ops::find_template(source->template_name);
    store::RecordFilter filter;
    filter.task_name = source->template_name;
    filter.workload = tmpl->normalize(*ops::Workload::parse(source->workload))->to_string();
    auto records = (*db)->records(filter);
    if (records.ok()) sources.insert(sources.end(), records->begin(), records->end());
  }
  RunResult cold = tune(target, "xgb", args.model_trials, args, builder, runner);
  RunResult warm =
      tune(target, "xgb", args.model_trials, args, builder, runner, "xgb-transfer", &sources);
  // The same config measures about 1-2 % apart from run to run on this machine, so "reaching"
  // the no-transfer best is counted both within 2 % of its GFLOPS and as measuring its config.
  double goal = at(cold.best_so_far, args.model_trials);
  auto trials_to_reach = [&](const RunResult& r) -> long long {
    for (size_t i = 0; i < r.best_so_far.size(); ++i) {
      if (r.best_so_far[i] >= 0.98 * goal) return static_cast<long long>(i + 1);
    }
    return -1;
  };
  auto trials_to_config = [&](const RunResult& r) -> long long {
    for (size_t i = 0; i < r.configs.size(); ++i) {
      if (r.configs[i] == cold.best_config) return static_cast<long long>(i + 1);
    }
    return -1;
  };
  std::printf("\ntransfer: %s with xgb, base model from %zu records of conv 64@56 and 256@14\n",
              target.label, sources.size());
  std::printf("  %-12s", "run");
  for (int64_t k : kCheckpoints) std::printf(" %7lld", static_cast<long long>(k));
  std::printf(
      "   trials to 98%% of / to the config of the no-transfer best (%.1f GFLOPS, config "
      "%lld)\n",
      goal, static_cast<long long>(cold.best_config));
  for (const auto& [name, r] :
       {std::pair<const char*, const RunResult&>{"no transfer", cold}, {"transfer", warm}}) {
    std::printf("  %-12s", name);
    for (int64_t k : kCheckpoints) std::printf(" %7.1f", at(r.best_so_far, k));
    std::printf("   %lld / %lld\n", trials_to_reach(r), trials_to_config(r));
  }
}

int run(const Args& args) {
  builder::LocalBuildPool builder;
  runner::RunnerOptions options;
  options.measure.time = {.number = 1, .repeat = 3, .min_repeat_ms = 5};
  options.cooldown_interval_s = 0;
  runner::LocalRunner runner(options);
  std::printf(
      "tuning_bench: %lld random trials vs %lld per model tuner, seed %llu, records in %s\n",
      static_cast<long long>(args.random_trials), static_cast<long long>(args.model_trials),
      static_cast<unsigned long long>(args.seed), args.db_dir.c_str());
  std::map<std::string, std::vector<double>> log_fraction_sum;  // "tuner@k" -> sum of logs
  std::map<std::string, double> overhead_wall, overhead_s;
  int tasks = 0;
  for (const BenchTask& bt : kTasks) {
    if (!args.only.empty() && std::string(bt.label).find(args.only) == std::string::npos) continue;
    ++tasks;
    RunResult random = tune(bt, "random", args.random_trials, args, builder, runner);
    double reference = at(random.best_so_far, args.random_trials);
    std::printf("\n%s (%s): random best after %zu trials = %.1f GFLOPS\n", bt.label,
                bt.template_name, random.best_so_far.size(), reference);
    std::printf("  %-10s", "tuner");
    for (int64_t k : kCheckpoints) std::printf(" %8lld", static_cast<long long>(k));
    std::printf("   (best so far / random's %lld-trial best)\n",
                static_cast<long long>(args.random_trials));
    std::vector<std::pair<std::string, RunResult>> rows = {{"random", random}};
    for (const std::string& name : args.tuners) {
      rows.push_back({name, tune(bt, name, args.model_trials, args, builder, runner)});
    }
    for (const auto& [name, r] : rows) {
      std::printf("  %-10s", name.c_str());
      auto& sums = log_fraction_sum[name];
      sums.resize(std::size(kCheckpoints));
      for (size_t c = 0; c < std::size(kCheckpoints); ++c) {
        double f = reference > 0 ? at(r.best_so_far, kCheckpoints[c]) / reference : 0;
        sums[c] += std::log(std::max(f, 1e-9));
        std::printf(" %8.3f", f);
      }
      if (name != "random" && r.fresh && r.wall_s > 0) {
        std::printf("   overhead %.1f s of %.1f s (%.1f%%)", r.overhead_s, r.wall_s,
                    100 * r.overhead_s / r.wall_s);
        overhead_wall[name] += r.wall_s;
        overhead_s[name] += r.overhead_s;
      }
      std::printf("\n");
    }
  }
  if (args.transfer && tasks == static_cast<int>(std::size(kTasks))) {
    transfer_experiment(args, builder, runner);
  }
  if (tasks == 0) {
    std::fprintf(stderr, "tuning_bench: no task matches --only %s\n", args.only.c_str());
    return 2;
  }
  std::printf("\ngeometric mean over %d task(s), best so far / random's %lld-trial best:\n", tasks,
              static_cast<long long>(args.random_trials));
  std::printf("  %-10s", "tuner");
  for (int64_t k : kCheckpoints) std::printf(" %8lld", static_cast<long long>(k));
  std::printf("\n");
  for (const auto& [name, sums] : log_fraction_sum) {
    std::printf("  %-10s", name.c_str());
    for (double s : sums) std::printf(" %8.3f", std::exp(s / tasks));
    if (overhead_wall.count(name)) {
      std::printf("   overhead %.1f%%", 100 * overhead_s[name] / overhead_wall[name]);
    }
    std::printf("\n");
  }
  return 0;
}

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

}  // namespace
}  // namespace kiln::bench

int main(int argc, char** argv) {
  kiln::bench::Args args;
  std::string tuners = "xgb";
  bool no_transfer = false;
  CLI::App app{"search efficiency of kiln's tuners against random search", "tuning_bench"};
  app.add_option("--random-trials", args.random_trials, "trials of random search (the reference)")
      ->check(CLI::Range(int64_t{300}, int64_t{1} << 40));
  app.add_option("--model-trials", args.model_trials, "trials of each other tuner")
      ->check(CLI::PositiveNumber);
  app.add_option("--tuners", tuners, "comma-separated tuners to compare with random");
  app.add_option("--only", args.only, "only tasks whose label contains this text");
  app.add_option("--seed", args.seed, "seed of every tuner");
  app.add_option("--db-dir", args.db_dir, "directory of the records (kept; reruns resume)");
  app.add_option("--plan-size", args.settings.plan_size, "plan size of the xgb tuners")
      ->check(CLI::PositiveNumber);
  app.add_flag("--no-transfer", no_transfer, "skip the transfer-learning experiment");
  CLI11_PARSE(app, argc, argv);
  args.tuners = kiln::bench::split_list(tuners);
  args.transfer = !no_transfer;
  if (args.db_dir.empty()) {
    char pattern[] = "/tmp/tuning_bench.XXXXXX";
    if (!mkdtemp(pattern)) {
      std::perror("tuning_bench: mkdtemp");
      return 1;
    }
    args.db_dir = pattern;
  }
  std::filesystem::create_directories(args.db_dir);
  return kiln::bench::run(args);
}
