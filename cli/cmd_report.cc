// `kiln report`: a record store's tuning report as one self-contained HTML file (report/report.h).
#include <cstdio>
#include <memory>

#include "cli/common.h"
#include "common/safe_file.h"
#include "report/report.h"

namespace kiln::cli {

Command add_report_command(CLI::App& app) {
  struct Options {
    std::string db;
    std::optional<int64_t> job;
    std::string model;
    std::vector<std::string> bench;
    std::string title;
    std::string output;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "report", "a tuning report as one self-contained HTML file (charts, tables; no network)");
  cmd->add_option("--db", o->db, "SQLite record store (read only)")->required();
  auto* job =
      cmd->add_option("--job", o->job, "a kiln serve job of the store: its tasks and records")
          ->check(CLI::PositiveNumber);
  cmd->add_option("--model", o->model, "an ONNX model: its tasks, weights and estimated latency")
      ->excludes(job);
  cmd->add_option("--bench", o->bench,
                  "results of model_bench or kernel_bench --json-out (repeatable)");
  cmd->add_option("--title", o->title, "the page's title (default: from the scope)");
  cmd->add_option("-o,--output", o->output, "the HTML file to write")->required();
  return [o] {
    report::Scope scope;
    scope.job = o->job;
    scope.model_path = o->model;
    report::RenderOptions options;
    options.title = o->title;
    options.bench_files = o->bench;
    // Refused before the rendering, which reads the whole store.
    ok_or_exit(check_writable_path(o->output));
    std::string html = value_or_exit(report::render_report_html(o->db, scope, options));
    ok_or_exit(write_file_atomically(o->output, html));
    std::printf("wrote %s (%zu bytes)\n", o->output.c_str(), html.size());
    return 0;
  };
}

}  // namespace kiln::cli
