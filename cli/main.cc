// The `kiln` command. Bad input (a workload, a config index, a target, a file, an option's
// value) is one line on stderr and exit code 2; see cli/common.h for the other exit codes.
#include <cstdio>

#include "cli/cli_docs.h"
#include "cli/common.h"
#include "cli/farm_commands.h"
#include "cli/job_commands.h"
#include "cli/records_estimate.h"
#include "cli/untuned_build.h"

#if defined(__SANITIZE_ADDRESS__)
// An AddressSanitizer build (make asan) only. LLVM installs its own alternate signal stack (a
// malloc'd one, from its signal handlers that lld's output files register) on the thread that
// builds in-process, e.g. a kiln serve job thread compiling its export; at that thread's exit
// ASan would unmap that stack as if it were its own and abort ("unable to unmap"). Without
// ASan's per-thread alternate stacks, the two do not meet.
extern "C" const char* __asan_default_options() { return "use_sigaltstack=0"; }
#endif

int main(int argc, char** argv) {
  using namespace kiln::cli;
  CLI::App app{"kiln: a schedule auto-tuner for tensor programs"};
  app.set_version_flag("--version", std::string("kiln ") + KILN_VERSION);
  app.option_defaults()->always_capture_default();
  app.require_subcommand(1);
  std::vector<std::pair<CLI::App*, Command>> commands;
  auto add = [&](Command (*f)(CLI::App&)) {
    Command c = f(app);
    commands.emplace_back(app.get_subcommands({}).back(), std::move(c));
  };
  add(add_templates_command);
  add(add_space_command);
  add(add_show_command);
  add(add_measure_command);
  add(add_tune_command);
  add(add_best_command);
  add(add_export_command);
  add(add_report_command);
  add(add_import_command);
  add(add_store_command);
  add(add_tasks_command);
  add(add_compile_command);
  add(add_run_command);
  add([](CLI::App& a) { return add_bench_command(a, {records_estimate, untuned_build}); });
  add(add_certs_command);
  add(add_tracker_command);
  add(add_farm_command);
  add(add_runner_command);
  add(add_measure_worker_command);
  add(add_builder_command);
  add(add_build_worker_command);
  add(add_serve_command);
  add(add_model_worker_command);
  add(add_submit_command);
  add(add_jobs_command);
  add(add_watch_command);
  add(add_cancel_command);
  add(add_pause_command);
  add(add_resume_command);
  add(add_completion_command);
  add(add_man_command);
  // CLI11 would say only "The following argument was not expected": name the closest command.
  auto known = [&](const char* name) {
    for (const CLI::App* sub : app.get_subcommands({})) {
      if (sub->check_name(name)) return true;
    }
    return false;
  };
  if (argc > 1 && argv[1][0] != '-' && !known(argv[1])) {
    std::optional<std::string> near = closest_subcommand(app, argv[1]);
    std::fprintf(stderr, "kiln: unknown command '%s'%s; kiln --help lists them\n", argv[1],
                 near ? (" (did you mean " + *near + "?)").c_str() : "");
    return kUsageError;
  }
  return run_command_line(app, commands, argc, argv, "kiln");
}
