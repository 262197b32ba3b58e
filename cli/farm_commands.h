// The device farm's subcommands (issue 12), registered by cli/main.cc: kiln certs init,
// kiln tracker, kiln farm status, kiln runner.
#pragma once

#include "cli/common.h"

namespace kiln::cli {

Command add_certs_command(CLI::App& app);
Command add_tracker_command(CLI::App& app);
Command add_farm_command(CLI::App& app);
Command add_runner_command(CLI::App& app);  // kiln runner
Command add_measure_worker_command(CLI::App& app);
Command add_builder_command(CLI::App& app);       // kiln builder
Command add_build_worker_command(CLI::App& app);  // hidden: kiln builder's build worker  // hidden:
                                                  // kiln runner's measurement child

}  // namespace kiln::cli
