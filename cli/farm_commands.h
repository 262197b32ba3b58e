// The device farm's subcommands, registered by cli/main.cc: kiln certs init,
// kiln tracker, kiln farm status, kiln runner.
#pragma once

#include "cli/board_commands.h"
#include "cli/common.h"

namespace kiln::cli {

// --listen, --certs and --insecure of a server command (kiln tracker, kiln builder, kiln serve).
void add_server_options(CLI::App* cmd, std::string* listen, std::string* certs_dir, bool* insecure);

Command add_certs_command(CLI::App& app);
Command add_tracker_command(CLI::App& app);
Command add_farm_command(CLI::App& app);
Command add_runner_command(CLI::App& app);        // kiln runner, registering LLVM's host target
Command add_builder_command(CLI::App& app);       // kiln builder
Command add_build_worker_command(CLI::App& app);  // hidden: kiln builder's build worker

}  // namespace kiln::cli
