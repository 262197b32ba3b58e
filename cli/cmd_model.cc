// Model commands: `kiln tasks` (the tunable tasks of an ONNX model, as TVM's
// extract_from_program lists them) and `kiln compile` (the model as one runnable artifact).
#include <cstdio>
#include <nlohmann/json.hpp>

#include "cli/common.h"
#include "common/safe_file.h"
#include "compiler/compile_model.h"
#include "frontend/onnx_import.h"
#include "frontend/task_extraction.h"
#include "runtime/model_artifact.h"
#include "runtime/thread_pool.h"
#include "store/open_store.h"
#include "store/record_selection.h"

namespace kiln::cli {

Command add_tasks_command(CLI::App& app) {
  struct Options {
    std::string model;
    std::vector<std::string> input_shapes;
    std::string target = "llvm";
    bool json = false;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "tasks", "list an ONNX model's tuning tasks: template, workload, count, FLOPs, space size");
  cmd->add_option("model", o->model, "the .onnx file")->required();
  cmd->add_option("--input-shape", o->input_shapes,
                  "NAME=DIMS (e.g. input=1x3x224x224) for an input with symbolic dimensions; "
                  "repeat for several inputs");
  add_target_option(cmd, &o->target, "target the tasks are for (default: the host)");
  cmd->add_flag("--json", o->json, "print a JSON list, one object per task");
  return [o] {
    Target target = resolve_target(o->target);
    frontend::Graph graph =
        value_or_exit(frontend::import_onnx(o->model, import_options(o->input_shapes)));
    frontend::TaskExtraction extraction = frontend::extract_tasks(graph);
    for (const std::string& note : extraction.not_tunable) {
      std::fprintf(stderr, "kiln: note: not tunable, left out of the tasks: %s\n", note.c_str());
    }
    if (o->json) {
      nlohmann::json list = nlohmann::json::array();
      for (const frontend::ModelTask& t : extraction.tasks) {
        list.push_back({{"template", std::string(t.tmpl->name())},
                        {"workload", t.workload.to_string()},
                        {"count", t.count},
                        {"flops", t.flops},
                        {"space_size", t.space_size}});
      }
      std::printf("%s\n", list.dump(2).c_str());
      return 0;
    }
    double total_flops = 0;
    for (const frontend::ModelTask& t : extraction.tasks) {
      // A node's FLOPs count once, whatever the number of templates for it.
      if (t.tmpl == ops::templates_for_op(t.tmpl->op()).front()) total_flops += t.flops * t.count;
    }
    std::printf(
        "%s: %lld tunable nodes, %lld distinct workloads, %zu tasks, %.3f GFLOP "
        "(target %s)\n",
        o->model.c_str(), static_cast<long long>(extraction.tunable_nodes),
        static_cast<long long>(extraction.workloads), extraction.tasks.size(), total_flops / 1e9,
        target.to_string().c_str());
    std::printf("%3s  %-28s %5s %12s %10s  %s\n", "#", "template", "count", "flops", "space",
                "workload");
    for (size_t i = 0; i < extraction.tasks.size(); ++i) {
      const frontend::ModelTask& t = extraction.tasks[i];
      std::printf("%3zu  %-28s %5lld %12.0f %10lld  %s\n", i, std::string(t.tmpl->name()).c_str(),
                  static_cast<long long>(t.count), t.flops, static_cast<long long>(t.space_size),
                  t.workload.to_string().c_str());
    }
    return 0;
  };
}

namespace {

// Whether tuning made the model faster, as far as the records know: the template kernels with
// the chosen configs against kiln's default configs, summed over the tasks' nodes.
void print_records_speedup(const compiler::CompileReport& report, const std::string& onnx,
                           const std::string& artifact) {
  double chosen = 0, defaults = 0;
  int unmeasured = 0;
  for (const compiler::CompiledTask& t : report.tasks) {
    if (!t.chosen_seconds || !t.default_seconds) {
      ++unmeasured;
      continue;
    }
    chosen += t.count * *t.chosen_seconds;
    defaults += t.count * *t.default_seconds;
  }
  const std::string bench =
      "kiln bench " + artifact + " --against-untuned --onnx " + onnx + " times both builds";
  if (unmeasured > 0) {
    std::printf(
        "records: %d of %zu tasks lack a record of their chosen or their default config, so "
        "the records cannot say what tuning gained; %s\n",
        unmeasured, report.tasks.size(), bench.c_str());
    return;
  }
  std::printf(
      "records: template kernels %.4f ms with these configs against %.4f ms with kiln's default "
      "configs: %.2fx (layout transforms and other operators aside); %s\n",
      chosen * 1e3, defaults * 1e3, defaults / chosen, bench.c_str());
}

}  // namespace

Command add_compile_command(CLI::App& app) {
  struct Options {
    std::string model;
    std::string output;
    std::string db;
    std::vector<std::string> input_shapes;
    std::string target = "llvm";
    int jobs = 2;
    std::string records_from = "exact";
    int threads = default_num_threads();
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "compile",
      "compile an ONNX model into one artifact (kernels, pre-packed weights, graph) with the "
      "store's best configs; untuned tasks get configs predicted from the store's records of "
      "other workloads, else kiln's default configs for the target");
  cmd->add_option("model", o->model, "the .onnx file")->required();
  cmd->add_option("-o,--output", o->output, "the artifact to write, e.g. model.kiln")->required();
  cmd->add_option("--db", o->db, "record store whose best configs to use (default: none)");
  cmd->add_option("--input-shape", o->input_shapes,
                  "NAME=DIMS (e.g. input=1x3x224x224) for an input with symbolic dimensions");
  add_target_option(cmd, &o->target, "target to compile for (default: the host)");
  add_bounded(cmd, "--jobs", &o->jobs, 1, 64, "kernels built in parallel");
  add_records_from_option(cmd, &o->records_from);
  add_bounded(cmd, "--threads", &o->threads, 1, max_pool_threads(),
              "threads the model will run with: records measured at it are preferred (default: "
              "KILN_NUM_THREADS, else the cores)");
  return [o] {
    store::RecordsFrom records_from = value_or_exit(store::parse_records_from(o->records_from));
    resolve_target(o->target);
    // Refused before the compile, which takes minutes for a large model.
    ok_or_exit(check_writable_path(o->output));
    frontend::Graph graph =
        value_or_exit(frontend::import_onnx(o->model, import_options(o->input_shapes)));
    std::unique_ptr<store::Store> db;
    if (!o->db.empty()) db = value_or_exit(store::open_store(o->db, /*read_only=*/true));
    compiler::CompileOptions options;
    options.target = o->target;
    options.store = db.get();
    options.jobs = o->jobs;
    options.records = {records_from, o->threads};
    compiler::CompileReport report;
    ModelArtifact model = value_or_exit(compiler::compile_model(graph, options, &report));
    ok_or_exit(write_model_file(model, o->output));
    int tasks = static_cast<int>(report.tasks.size());
    std::printf(
        "%s: %d kernels (%d nodes fused), %d tasks: %d tuned, %d predicted, %d default; built "
        "in %.1f s\n",
        o->model.c_str(), report.kernels, report.fused_nodes, tasks, tasks - report.untuned_tasks,
        report.predicted_tasks, report.untuned_tasks - report.predicted_tasks,
        report.build_seconds);
    int other_target = 0, other_threads = 0;
    for (const compiler::CompiledTask& t : report.tasks) {
      std::printf("  %-9s %-26s x%-2d %s %s%s\n",
                  std::string(compiler::config_source_name(t.source)).c_str(),
                  t.template_name.c_str(), t.count, t.workload.c_str(), t.config.c_str(),
                  t.tuned ? origin_note(t.origin).c_str() : "");
      other_target += t.tuned && t.origin.other_target;
      other_threads += t.tuned && t.origin.threads_differ;
    }
    if (other_target > 0) {
      std::printf(
          "note: %d tasks use records of another CPU of this ISA (--records-from any-cpu)\n",
          other_target);
    }
    if (other_threads > 0) {
      std::printf(
          "note: %d tasks use records measured at another thread count than this model's %d "
          "threads (none at %d): tune with --threads %d to choose for it\n",
          other_threads, o->threads, o->threads, o->threads);
    }
    if (report.untuned_tasks > 0) {
      std::printf(
          "note: %d of %d tasks untuned: %d predicted from the store's records of other "
          "workloads, %d kiln's default configs for the target%s\n",
          report.untuned_tasks, tasks, report.predicted_tasks,
          report.untuned_tasks - report.predicted_tasks,
          o->db.empty() ? " (no --db given)" : " (no record in the store for them)");
    }
    if (db) print_records_speedup(report, o->model, o->output);
    std::printf("%d layout transforms remain (NCHW <-> NCHW[x]c)\n", report.layout_transforms);
    if (report.planned) {
      std::printf(
          "layout plan: conv kernels %.3f ms (their records, preferably timed at %d "
          "thread%s) + %d block conversions between them %.3f ms (one thread: copies hardly "
          "scale) = %.3f ms estimated (conversion costs %s)\n",
          report.plan_kernel_seconds * 1e3, o->threads, o->threads == 1 ? "" : "s",
          report.plan_transforms, report.plan_transform_seconds * 1e3,
          (report.plan_kernel_seconds + report.plan_transform_seconds) * 1e3,
          report.transform_costs.c_str());
      if (report.plan_unmeasured_kernels > 0) {
        std::printf("note: %d convs have no recorded time (left out of the estimate)\n",
                    report.plan_unmeasured_kernels);
      }
    }
    if (!report.not_run_here.empty()) {
      std::printf(
          "note: %s; none of its code ran here (constant stages ran from a build for this "
          "machine, layout conversion costs are fixed estimates)\n",
          report.not_run_here.c_str());
    }
    std::printf("wrote %s (target %s, %.1f MB)\n", o->output.c_str(), model.target.c_str(),
                (model.shared_object.size() + model.constants.size() * 4.0) / 1e6);
    return 0;
  };
}

}  // namespace kiln::cli
