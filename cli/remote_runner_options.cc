#include "cli/remote_runner_options.h"

#include "builder/build_pool.h"
#include "builder/remote_builder.h"
#include "farm/security.h"
#include "farm/signing.h"
#include "runner/remote_runner.h"

namespace kiln::cli {

void add_remote_runner_options(CLI::App* cmd, RemoteRunnerCliOptions* o) {
  cmd->add_option("--tracker", o->tracker,
                  "measure on the farm: the tracker's HOST:PORT (with --key)");
  cmd->add_option("--key", o->key, "the farm's runners of this key measure (with --tracker)");
  cmd->add_option("--certs", o->certs_dir,
                  "farm TLS: a kiln certs init directory (mutual TLS; its token signs artifacts)");
  cmd->add_option("--token-file", o->token_file,
                  "farm: send this bearer token (with --certs); it also signs artifacts");
  cmd->add_option("--signing-key", o->signing_key_file,
                  "farm: the key that signs artifacts (default: the token)");
  cmd->add_flag("--insecure", o->insecure, "farm: plaintext to a tracker started with --insecure");
  cmd->add_option("--builders", o->builders,
                  "build on these kiln builder servers (HOST:PORT, comma-separated)")
      ->delimiter(',');
  add_bounded(cmd, "--runner-wait", &o->wait_s, 0, 86400,
              "farm: seconds a batch waits for a free runner");
  add_bounded(cmd, "--runner-chunk", &o->chunk, 1, 1024,
              "farm: configs per call to a runner (a batch is spread over its runners in chunks)");
}

std::unique_ptr<runner::Runner> make_runner(const RemoteRunnerCliOptions& o,
                                            const runner::RunnerOptions& local) {
  if (o.tracker.empty()) {
    if (!o.key.empty() || !o.signing_key_file.empty() ||
        (o.builders.empty() && (!o.certs_dir.empty() || !o.token_file.empty() || o.insecure))) {
      throw CommandError{
          "--key, --certs, --token-file, --signing-key and --insecure need --tracker"};
    }
    return std::make_unique<runner::LocalRunner>(local);
  }
  if (o.key.empty()) throw CommandError{"--tracker needs --key (the runners' device kind)"};
  runner::RemoteRunnerOptions r;
  r.tracker = o.tracker;
  r.key = o.key;
  r.auth.certs_dir = o.certs_dir;
  r.auth.token_file = o.token_file;
  r.auth.insecure = o.insecure;
  r.measure = local;
  r.wait_s = o.wait_s;
  r.chunk = o.chunk;
  const std::string key_file = farm::signing_key_file(r.auth, o.signing_key_file);
  if (key_file.empty()) {
    throw CommandError{
        "--tracker: runners execute only signed artifacts: pass --certs DIR, --token-file F or "
        "--signing-key F"};
  }
  r.signing_key = value_or_exit(farm::read_signing_key(key_file));
  return value_or_exit(runner::RemoteRunner::create(std::move(r)));
}

std::unique_ptr<builder::Builder> make_builder(const RemoteRunnerCliOptions& o, int n_parallel,
                                               double timeout_s) {
  if (o.builders.empty()) {
    return std::make_unique<builder::LocalBuildPool>(
        builder::BuildPoolOptions{n_parallel, timeout_s});
  }
  builder::RemoteBuilderOptions r;
  r.addresses = o.builders;
  r.auth.certs_dir = o.certs_dir;
  r.auth.token_file = o.token_file;
  r.auth.insecure = o.insecure;
  r.timeout_s = timeout_s;
  r.n_parallel = n_parallel > 0 ? n_parallel : 8;
  return value_or_exit(builder::RemoteBuilder::create(std::move(r)));
}

double cooldown_seconds(const runner::Runner& r) { return r.cooldown_seconds().value_or(0); }

}  // namespace kiln::cli
