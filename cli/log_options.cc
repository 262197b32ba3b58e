#include "cli/log_options.h"

#include "cli/base.h"
#include "common/log.h"
#include "farm/grpc_log.h"

namespace kiln::cli {

void add_log_options(CLI::App* cmd, LogOptions* o) {
  CLI::Option* level = cmd->add_option("--log-level", o->level,
                                       "what goes to the log: debug, info, warn, error, off")
                           ->capture_default_str()
                           ->check([](const std::string& text) -> std::string {
                             Result<log::Level> l = log::parse_level(text);
                             return l.ok() ? "" : l.status().message();
                           });
  CLI::Option* verbose = cmd->add_flag("-v,--verbose", o->verbose, "log debug lines too (gRPC's)");
  CLI::Option* quiet = cmd->add_flag("-q,--quiet", o->quiet, "log warnings and errors only");
  verbose->excludes(quiet)->excludes(level);
  quiet->excludes(level);
}

void start_log(const std::string& program, const LogOptions& o) {
  log::Level level = o.verbose ? log::Level::kDebug
                     : o.quiet ? log::Level::kWarn
                               : value_or_exit(log::parse_level(o.level));
  log::init(program, level);
  farm::route_grpc_log(farm::HandshakeLog::kWarning);
}

}  // namespace kiln::cli
