// The daemon's subcommands, registered by cli/main.cc: kiln serve, and its clients
// kiln submit, jobs, watch, cancel, pause, resume (kiln export --job is kiln export's).
#pragma once

#include "cli/common.h"

namespace kiln::cli {

Command add_serve_command(CLI::App& app);
Command add_model_worker_command(CLI::App& app);
Command add_submit_command(CLI::App& app);
Command add_jobs_command(CLI::App& app);
Command add_watch_command(CLI::App& app);
Command add_cancel_command(CLI::App& app);
Command add_pause_command(CLI::App& app);
Command add_resume_command(CLI::App& app);

}  // namespace kiln::cli
