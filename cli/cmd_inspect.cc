// kiln templates / space / show / measure: list the templates, look at a task's config space,
// lower a config, build and time it.
#include <cstdio>
#include <numeric>

#include "builder/build_pool.h"
#include "builder/codegen_llvm.h"
#include "builder/lower.h"
#include "cli/common.h"
#include "exchange/target_description.h"
#include "ir/printer.h"
#include "ops/measured_layout.h"
#include "runner/local_runner.h"

namespace kiln::cli {

Command add_templates_command(CLI::App& app) {
  app.add_subcommand("templates", "list the operators and their templates (TVM task names)");
  return [] {
    std::vector<std::string> ops;
    for (const ops::Template* t : ops::all_templates()) {
      if (std::find(ops.begin(), ops.end(), t->op()) == ops.end()) ops.emplace_back(t->op());
    }
    for (const std::string& op : ops) {
      std::printf("%s\n", op.c_str());
      for (const ops::Template* t : ops::templates_for_op(op)) {
        std::printf("  %s\n", std::string(t->name()).c_str());
      }
    }
    return 0;
  };
}

Command add_space_command(CLI::App& app) {
  auto o = std::make_shared<TaskOptions>();
  CLI::App* cmd = app.add_subcommand("space", "print a task's knobs and config space size");
  add_task_options(cmd, o.get());
  return [o] {
    for (const Task& task : resolve_tasks(*o).tasks) {
      ConfigSpace space = task.tmpl->space(task.workload);
      std::printf("%s  %s\n", std::string(task.tmpl->name()).c_str(),
                  task.workload.to_string().c_str());
      for (const Knob& k : space.knobs()) {
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
  };
}

Command add_show_command(CLI::App& app) {
  struct Options {
    TaskOptions task;
    std::optional<int64_t> index;
    bool fallback = false;
    bool passes = false, llvm_ir = false, assembly = false;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("show", "print a config's entities and its loop nest");
  add_task_options(cmd, &o->task);
  cmd->add_option("--config,-c", o->index, "config index (default: kiln's default config)");
  cmd->add_flag("--fallback", o->fallback,
                "without --config: AutoTVM's fallback config instead of kiln's default");
  cmd->add_flag("--passes", o->passes,
                "also print each stage after every lowering pass, in the pipeline's order");
  cmd->add_flag("--llvm", o->llvm_ir, "also print the optimized LLVM IR");
  cmd->add_flag("--asm", o->assembly, "also print the generated assembly");
  return [o] {
    ResolvedTasks resolved = resolve_tasks(o->task);
    const Target& target = resolved.target;
    for (const Task& task : resolved.tasks) {
      ConfigSpace space = task.tmpl->space(task.workload);
      ConfigEntity config = pick_config(task, space, o->index, target, o->fallback);
      std::printf("%s  %s\nconfig %s%s\n", std::string(task.tmpl->name()).c_str(),
                  task.workload.to_string().c_str(), config.to_json().dump().c_str(),
                  picked_label(o->index, o->fallback));
      Result<ir::Program> program = ops::instantiate_measured(*task.tmpl, task.workload, config,
                                                              describe(target).template_info());
      if (!program.ok()) {
        std::printf("invalid config: %s\n", program.status().message().c_str());
        continue;
      }
      std::printf("%s", ir::to_string(*program).c_str());
      if (o->passes) std::printf("%s", builder::lowering_trace(*program, target).c_str());
      if (o->llvm_ir) {
        std::printf("%s", value_or_exit(builder::program_llvm_ir(*program, target, true)).c_str());
      }
      if (o->assembly) {
        std::printf("%s", value_or_exit(builder::program_assembly(*program, target)).c_str());
      }
    }
    return 0;
  };
}

Command add_measure_command(CLI::App& app) {
  struct Options {
    TaskOptions task;
    std::optional<int64_t> index;
    bool fallback = false;
    double build_timeout_s = 10;
    runner::RunnerOptions runner;
  };
  auto o = std::make_shared<Options>();
  o->runner.threads = 1;
  o->runner.cooldown_interval_s = 0;
  CLI::App* cmd = app.add_subcommand(
      "measure", "build, check and time one config (in isolated builder and runner processes)");
  add_task_options(cmd, &o->task);
  cmd->add_option("--config,-c", o->index, "config index (default: kiln's default config)");
  cmd->add_flag("--fallback", o->fallback,
                "without --config: AutoTVM's fallback config instead of kiln's default");
  add_bounded(cmd, "--threads", &o->runner.threads, 1, 1024,
              "threads of the kernel's parallel loops");
  add_bounded(cmd, "--number", &o->runner.measure.time.number, 1, 1000000, "runs per timed repeat");
  add_bounded(cmd, "--repeat", &o->runner.measure.time.repeat, 1, 10000, "timed repeats");
  add_bounded(cmd, "--min-repeat-ms", &o->runner.measure.time.min_repeat_ms, 0, 600000,
              "grow number until a repeat lasts this long");
  add_bounded(cmd, "--timeout", &o->runner.timeout_s, 0, 3600,
              "seconds the kernel may run (checking and timing)", /*min_exclusive=*/true);
  add_bounded(cmd, "--build-timeout", &o->build_timeout_s, 0, 3600, "seconds the build may take",
              /*min_exclusive=*/true);
  cmd->add_flag("--cache-flush", o->runner.measure.time.enable_cpu_cache_flush,
                "flush every argument but the data from the caches before each repeat");
  return [o] {
    ResolvedTasks resolved = resolve_tasks(o->task);
    const Target& target = resolved.target;
    // The same isolation as `kiln tune`: a build or a kernel that crashes, hangs or runs out of
    // memory costs a child process and is reported, never this one.
    builder::LocalBuildPool builder({1, o->build_timeout_s});
    runner::LocalRunner runner(o->runner);
    int failures = 0;
    for (const Task& task : resolved.tasks) {
      ConfigSpace space = task.tmpl->space(task.workload);
      ConfigEntity config = pick_config(task, space, o->index, target, o->fallback);
      std::vector<MeasureInput> inputs = {{{task.tmpl, task.workload, target}, config}};
      std::vector<MeasureResult> results = runner.run(inputs, builder.build(inputs));
      const MeasureResult& m = results.front();
      std::printf("%s  %s  config %lld%s\n  %s\n", std::string(task.tmpl->name()).c_str(),
                  task.workload.to_string().c_str(), static_cast<long long>(config.index()),
                  picked_label(o->index, o->fallback), config.to_json()["entity"].dump().c_str());
      if (m.error != MeasureError::kNoError) {
        std::printf("  error %d %s: %s\n", static_cast<int>(m.error), measure_error_name(m.error),
                    m.message.c_str());
        ++failures;
        continue;
      }
      double mean = std::accumulate(m.costs.begin(), m.costs.end(), 0.0) / m.costs.size();
      int threads = o->runner.resolved_threads();
      std::printf(
          "  build %.1f ms | checked: relative error %.2e | %.4f ms | %.2f GFLOPS | %d thread%s\n",
          m.build_seconds * 1e3, m.relative_error, mean * 1e3,
          task.tmpl->flop(task.workload) / mean / 1e9, threads, threads == 1 ? "" : "s");
    }
    return failures == 0 ? 0 : kFailed;
  };
}

}  // namespace kiln::cli
