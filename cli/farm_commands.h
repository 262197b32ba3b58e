// The device farm's subcommands (issue 12), registered by cli/main.cc: kiln certs init,
// kiln tracker, kiln farm status.
#pragma once

#include "cli/common.h"

namespace kiln::cli {

Command add_certs_command(CLI::App& app);
Command add_tracker_command(CLI::App& app);
Command add_farm_command(CLI::App& app);

}  // namespace kiln::cli
