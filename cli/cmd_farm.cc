// kiln certs init / kiln tracker / kiln farm status: the device farm's foundation.
#include <grpcpp/grpcpp.h>

#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <thread>

#include "builder/builder_service.h"
#include "builder/target.h"
#include "cli/farm_commands.h"
#include "cli/log_options.h"
#include "farm/security.h"
#include "farm/server_trust.h"
#include "farm/tracker_service.h"

namespace kiln::cli {

void add_server_options(CLI::App* cmd, std::string* listen, std::string* certs_dir,
                        bool* insecure) {
  cmd->add_option("--listen", *listen,
                  "HOST:PORT (port 0: any free one, printed); other than loopback only with "
                  "--certs or --insecure");
  cmd->add_option("--certs", *certs_dir,
                  "TLS with this kiln certs init directory: mutual TLS or its bearer token");
  cmd->add_flag("--insecure", *insecure,
                "allow a non-loopback address without TLS and authentication (warns)");
}

Command add_certs_command(CLI::App& app) {
  struct Options {
    std::string dir;
    std::vector<std::string> hosts;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("certs", "TLS material of a device farm");
  cmd->require_subcommand(1);
  CLI::App* init = cmd->add_subcommand(
      "init",
      "make a farm CA, a server certificate (localhost, 127.0.0.1 and --host names), a client "
      "certificate and a bearer token in DIR; never overwrites");
  init->add_option("DIR", o->dir, "directory to create or fill")->required();
  init->add_option("--host", o->hosts, "another name or IPv4 address of the servers (repeatable)");
  return [o] {
    ok_or_exit(farm::init_certs(o->dir, o->hosts));
    std::printf(
        "farm CA, server and client certificates and a bearer token written to %s\n"
        "  servers: --certs %s   clients: --certs %s (mutual TLS) or --token-file %s/token\n",
        o->dir.c_str(), o->dir.c_str(), o->dir.c_str(), o->dir.c_str());
    return 0;
  };
}

Command add_tracker_command(CLI::App& app) {
  auto o = std::make_shared<farm::TrackerServerOptions>();
  auto log = std::make_shared<LogOptions>();
  CLI::App* cmd = app.add_subcommand(
      "tracker", "serve the farm's tracker: runners register by key, clients lease them");
  add_server_options(cmd, &o->listen, &o->certs_dir, &o->insecure);
  add_bounded(cmd, "--heartbeat-timeout", &o->tracker.heartbeat_timeout_s, 0, 86400,
              "seconds without a heartbeat before a runner is quarantined", true);
  add_bounded(cmd, "--heartbeat-interval", &o->tracker.heartbeat_interval_s, 0, 86400,
              "heartbeat period told to runners", true);
  add_bounded(cmd, "--max-faults", &o->tracker.max_consecutive_faults, 1, 1000000,
              "failed measurements in a row before a runner is quarantined");
  add_bounded(cmd, "--quarantine", &o->tracker.quarantine_s, 0, 30 * 86400,
              "seconds a quarantine lasts at least");
  add_bounded(cmd, "--forget-after", &o->tracker.forget_after_s, 0, 30 * 86400,
              "seconds without a heartbeat before a runner is removed from the farm", true);
  add_log_options(cmd, log.get());
  return [o, log] {
    start_log("kiln tracker", *log);
    block_stop_signals();
    ok_or_exit(farm::run_tracker(*o));
    return 0;
  };
}

Command add_runner_command(CLI::App& app) {
  return add_runner_command(app, [] { return builder::host_target(); });
}

Command add_builder_command(CLI::App& app) {
  auto o = std::make_shared<builder::BuilderServerOptions>();
  auto log = std::make_shared<LogOptions>();
  CLI::App* cmd = app.add_subcommand(
      "builder", "serve builds for remote tuning (kiln tune --builders): a pool of build workers");
  add_server_options(cmd, &o->listen, &o->certs_dir, &o->insecure);
  add_bounded(cmd, "--n-parallel", &o->n_parallel, 1, max_n_parallel(), "build worker processes")
      ->default_str("one per core");
  add_log_options(cmd, log.get());
  return [o, log] {
    start_log("kiln builder", *log);
    o->worker_binary = self_binary();
    block_stop_signals();
    ok_or_exit(builder::run_builder(*o));
    return 0;
  };
}

Command add_build_worker_command(CLI::App& app) {
  CLI::App* cmd =
      app.add_subcommand("build-worker", "(internal) a kiln builder's build worker on fds 3 and 4");
  cmd->group("");  // hidden
  return [] {
    builder::serve_build_worker(WorkerProcess::kExecRequestFd, WorkerProcess::kExecResponseFd);
    return 0;
  };
}

namespace {

nlohmann::ordered_json status_json(const farm::FarmReport& r) {
  nlohmann::ordered_json keys = nlohmann::ordered_json::array();
  for (const farm::KeyReport& k : r.keys) {
    nlohmann::ordered_json j;
    j["key"] = k.key;
    j["free"] = k.free;
    j["busy"] = k.busy;
    j["quarantined"] = k.quarantined;
    j["queued"] = k.queued;
    j["runners"] = nlohmann::ordered_json::array();
    for (const farm::RunnerReport& rr : r.runners) {
      if (rr.capabilities.key != k.key) continue;
      nlohmann::ordered_json x;
      x["id"] = rr.runner_id;
      x["state"] = farm::runner_state_name(rr.state);
      x["address"] = rr.capabilities.address;
      x["target_cpu"] = rr.capabilities.target.cpu;
      x["cores"] = rr.capabilities.cores;
      x["kiln_version"] = rr.capabilities.kiln_version;
      x["trials"] = rr.trials;
      x["errors"] = rr.errors;
      x["consecutive_faults"] = rr.consecutive_faults;
      x["last_seen_s_ago"] = rr.last_seen_s_ago;
      if (rr.state == farm::RunnerState::kQuarantined) {
        x["quarantine_reason"] = rr.quarantine_reason;
        x["quarantine_left_s"] = rr.quarantine_left_s;
      }
      if (rr.state == farm::RunnerState::kBusy) x["lease_client"] = rr.lease_client;
      j["runners"].push_back(x);
    }
    keys.push_back(j);
  }
  nlohmann::ordered_json out;
  out["keys"] = keys;
  return out;
}

void print_status(const farm::FarmReport& r) {
  if (r.keys.empty()) std::printf("no runners registered and no requests waiting\n");
  for (const farm::KeyReport& k : r.keys) {
    std::printf("%s: %d free, %d busy, %d quarantined, %d queued\n", k.key.c_str(), k.free, k.busy,
                k.quarantined, k.queued);
    for (const farm::RunnerReport& rr : r.runners) {
      if (rr.capabilities.key != k.key) continue;
      std::printf("  %-24s %-11s %s  trials %lld  errors %lld  last seen %.1f s ago",
                  rr.runner_id.c_str(), farm::runner_state_name(rr.state),
                  rr.capabilities.address.c_str(), static_cast<long long>(rr.trials),
                  static_cast<long long>(rr.errors), rr.last_seen_s_ago);
      if (rr.state == farm::RunnerState::kQuarantined) {
        std::printf("  (%s; %.0f s left)", rr.quarantine_reason.c_str(), rr.quarantine_left_s);
      }
      if (rr.state == farm::RunnerState::kBusy) std::printf("  (for %s)", rr.lease_client.c_str());
      std::printf("\n");
    }
  }
}

}  // namespace

Command add_farm_command(CLI::App& app) {
  struct Options {
    std::string tracker = "127.0.0.1:9190";
    farm::ClientAuth auth;
    bool json = false;
    double timeout_s = 10;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("farm", "inspect a device farm");
  cmd->require_subcommand(1);
  CLI::App* status = cmd->add_subcommand(
      "status",
      "per key: free / busy / quarantined runners and queue length; per runner: "
      "trials, errors, last seen");
  status->add_option("--tracker", o->tracker, "the tracker's HOST:PORT");
  status->add_option("--certs", o->auth.certs_dir,
                     "trust this farm CA (and use its client certificate when present)");
  status->add_option("--token-file,--token", o->auth.token_file, "send this bearer token file");
  status->add_flag("--insecure", o->auth.insecure, "plaintext (a tracker started without --certs)");
  status->add_flag("--json", o->json, "one JSON object");
  add_bounded(status, "--timeout", &o->timeout_s, 0, 3600, "seconds to wait for the tracker", true);
  return [o] {
    farm::ClientAuth auth = o->auth;
    // A tracker on loopback without --certs serves plaintext; so does this client then.
    const std::string host = o->tracker.substr(0, o->tracker.rfind(':'));
    if (auth.certs_dir.empty() && auth.token_file.empty() && farm::is_loopback_host(host)) {
      auth.insecure = true;
    }
    std::shared_ptr<grpc::ChannelCredentials> creds = value_or_exit(farm::client_credentials(auth));
    auto stub = v1::Tracker::NewStub(grpc::CreateChannel(o->tracker, creds));
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() +
                     std::chrono::milliseconds(static_cast<int64_t>(o->timeout_s * 1000)));
    v1::FarmStatus reply;
    grpc::Status s = stub->Status(&ctx, v1::StatusRequest(), &reply);
    if (!s.ok()) {
      if (std::string why = farm::untrusted_server_reason(s, o->tracker, auth); !why.empty()) {
        throw CommandError{"tracker " + o->tracker + ": " + why, kUsageError};
      }
      throw CommandError{"tracker " + o->tracker + ": " + s.error_message() + " (gRPC code " +
                             std::to_string(static_cast<int>(s.error_code())) + ")",
                         kFailed};
    }
    farm::FarmReport report = farm::from_proto(reply);
    if (o->json) {
      std::printf("%s\n", status_json(report).dump().c_str());
    } else {
      print_status(report);
    }
    return 0;
  };
}

}  // namespace kiln::cli
