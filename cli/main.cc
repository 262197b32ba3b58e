// The `kiln` command: inspect config spaces, lower configs, build and measure kernels.
// Bad input (a workload, a config index, a target) is one line on stderr and exit code 2.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>
#include <numeric>
#include <optional>
#include <string>

#include "builder/codegen_llvm.h"
#include "builder/target.h"
#include "ir/printer.h"
#include "ops/registry.h"
#include "runner/local_measure.h"
#include "runtime/thread_pool.h"

namespace kiln::cli {

namespace {

constexpr int kUsageError = 2;

// Raised for user errors; main prints the message and exits with kUsageError.
struct UsageError {
  std::string message;
};

template <typename T>
T value_or_exit(Result<T> r) {
  if (!r.ok()) throw UsageError{r.status().message()};
  return std::move(r).value();
}

struct TaskOptions {
  std::string workload;
  std::string template_name;
  std::string target = "llvm";
};

void add_task_options(CLI::App* cmd, TaskOptions* o) {
  cmd->add_option("--workload,-w", o->workload, "e.g. dense:M=1024,N=1024,K=1024")->required();
  cmd->add_option("--template", o->template_name,
                  "one template of the operator (default: all of them)");
  cmd->add_option("--target", o->target, "e.g. 'llvm -mcpu=znver5' (default: the host)");
}

struct Task {
  const ops::Template* tmpl;
  ops::Workload workload;
};

std::vector<Task> resolve(const TaskOptions& o) {
  ops::Workload w = value_or_exit(ops::Workload::parse(o.workload));
  std::vector<Task> tasks;
  for (const ops::Template* t : value_or_exit(ops::resolve_templates(w, o.template_name))) {
    tasks.push_back({t, value_or_exit(t->normalize(w))});
  }
  return tasks;
}

ops::ConfigEntity pick_config(const Task& task, const ops::ConfigSpace& space,
                              std::optional<int64_t> index, const builder::Target& target) {
  if (!index) return task.tmpl->fallback(task.workload, space, {target.simd_lanes()});
  Result<ops::ConfigEntity> c = space.checked_get(*index);
  if (!c.ok()) throw UsageError{std::string(task.tmpl->name()) + ": " + c.status().message()};
  if (!space.is_index_valid(*index)) {
    throw UsageError{std::string(task.tmpl->name()) + ": config " + std::to_string(*index) +
                     " is excluded by the space's filter"};
  }
  return *c;
}

int run_space(const TaskOptions& o) {
  for (const Task& task : resolve(o)) {
    ops::ConfigSpace space = task.tmpl->space(task.workload);
    std::printf("%s  %s\n", std::string(task.tmpl->name()).c_str(),
                task.workload.to_string().c_str());
    for (const ops::Knob& k : space.knobs()) {
      std::printf("  %-12s %-3s %6zu entities%s%s\n", k.name.c_str(), k.tag.c_str(),
                  k.entities.size(), k.policy.empty() ? "" : "  policy ", k.policy.c_str());
    }
    std::printf("  space size: %lld configs", static_cast<long long>(space.size()));
    if (space.size() != space.range_length()) {
      std::printf(" (of %lld raw)", static_cast<long long>(space.range_length()));
    }
    std::printf("\n  flop: %.0f\n", task.tmpl->flop(task.workload));
  }
  return 0;
}

int run_show(const TaskOptions& o, std::optional<int64_t> index, bool llvm_ir, bool assembly) {
  builder::Target target = value_or_exit(builder::Target::parse(o.target));
  for (const Task& task : resolve(o)) {
    ops::ConfigSpace space = task.tmpl->space(task.workload);
    ops::ConfigEntity config = pick_config(task, space, index, target);
    std::printf("%s  %s\nconfig %s%s\n", std::string(task.tmpl->name()).c_str(),
                task.workload.to_string().c_str(), config.to_json().dump().c_str(),
                index ? "" : "  (fallback)");
    Result<ir::Program> program =
        task.tmpl->instantiate(task.workload, config, {target.simd_lanes()});
    if (!program.ok()) {
      std::printf("invalid config: %s\n", program.status().message().c_str());
      continue;
    }
    std::printf("%s", ir::to_string(*program).c_str());
    if (llvm_ir)
      std::printf("%s", value_or_exit(builder::program_llvm_ir(*program, target, true)).c_str());
    if (assembly)
      std::printf("%s", value_or_exit(builder::program_assembly(*program, target)).c_str());
  }
  return 0;
}

int run_measure(const TaskOptions& o, std::optional<int64_t> index, int threads,
                const runner::MeasureOptions& options) {
  builder::Target target = value_or_exit(builder::Target::parse(o.target));
  ThreadPool pool(threads);
  int failures = 0;
  for (const Task& task : resolve(o)) {
    ops::ConfigSpace space = task.tmpl->space(task.workload);
    ops::ConfigEntity config = pick_config(task, space, index, target);
    runner::MeasureOutcome m =
        runner::measure_config(*task.tmpl, task.workload, config, target, options, pool);
    std::printf("%s  %s  config %lld%s\n  %s\n", std::string(task.tmpl->name()).c_str(),
                task.workload.to_string().c_str(), static_cast<long long>(config.index()),
                index ? "" : " (fallback)", config.entity_string().c_str());
    if (m.error != runner::MeasureError::kNoError) {
      std::printf("  error %d %s: %s\n", static_cast<int>(m.error),
                  runner::measure_error_name(m.error), m.message.c_str());
      ++failures;
      continue;
    }
    double mean = std::accumulate(m.costs.begin(), m.costs.end(), 0.0) / m.costs.size();
    std::printf(
        "  build %.1f ms | checked: relative error %.2e | %.4f ms | %.2f GFLOPS | %d thread%s\n",
        m.build_ms, m.relative_error, mean * 1e3, task.tmpl->flop(task.workload) / mean / 1e9,
        pool.num_threads(), pool.num_threads() == 1 ? "" : "s");
  }
  return failures == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"kiln: a schedule auto-tuner for tensor programs"};
  app.require_subcommand(1);

  TaskOptions space_opts;
  CLI::App* space = app.add_subcommand("space", "print a task's knobs and config space size");
  add_task_options(space, &space_opts);

  TaskOptions show_opts;
  std::optional<int64_t> show_index;
  bool show_llvm = false, show_asm = false;
  CLI::App* show = app.add_subcommand("show", "print a config's entities and its loop nest");
  add_task_options(show, &show_opts);
  show->add_option("--config,-c", show_index, "config index (default: the fallback config)");
  show->add_flag("--llvm", show_llvm, "also print the optimized LLVM IR");
  show->add_flag("--asm", show_asm, "also print the generated assembly");

  TaskOptions measure_opts;
  std::optional<int64_t> measure_index;
  int threads = 1;
  runner::MeasureOptions measure;
  CLI::App* m = app.add_subcommand("measure", "build, check and time one config");
  add_task_options(m, &measure_opts);
  m->add_option("--config,-c", measure_index, "config index (default: the fallback config)");
  m->add_option("--threads", threads, "threads of the kernel's parallel loops")
      ->check(CLI::PositiveNumber);
  m->add_option("--number", measure.time.number, "runs per timed repeat")
      ->check(CLI::PositiveNumber);
  m->add_option("--repeat", measure.time.repeat, "timed repeats")->check(CLI::PositiveNumber);
  m->add_option("--min-repeat-ms", measure.time.min_repeat_ms,
                "grow number until a repeat lasts this long");
  m->add_flag("--cache-flush", measure.time.enable_cpu_cache_flush,
              "flush inputs from the caches before each repeat");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : kUsageError;
  }
  try {
    if (*space) return run_space(space_opts);
    if (*show) return run_show(show_opts, show_index, show_llvm, show_asm);
    if (*m) return run_measure(measure_opts, measure_index, threads, measure);
  } catch (const UsageError& e) {
    std::fprintf(stderr, "kiln: %s\n", e.message.c_str());
    return kUsageError;
  }
  return 0;
}

}  // namespace kiln::cli

int main(int argc, char** argv) { return kiln::cli::main(argc, argv); }
