#include "builder/remote_builder.h"

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <thread>

#include "farm/convert.h"
#include "farm/server_trust.h"

namespace kiln::builder {

Result<std::unique_ptr<RemoteBuilder>> RemoteBuilder::create(RemoteBuilderOptions options) {
  if (options.addresses.empty()) return InvalidArgument("--builders: no address given");
  for (const std::string& a : options.addresses) {
    if (a.empty() || a.find(':') == std::string::npos) {
      return InvalidArgument("--builders: '" + a + "' is not HOST:PORT");
    }
  }
  if (options.n_parallel < 1) return InvalidArgument("--n-parallel: must be at least 1");
  KILN_ASSIGN_OR_RETURN(auto creds, farm::client_credentials(options.auth));
  return std::unique_ptr<RemoteBuilder>(new RemoteBuilder(std::move(options), std::move(creds)));
}

RemoteBuilder::RemoteBuilder(RemoteBuilderOptions options,
                             std::shared_ptr<grpc::ChannelCredentials> creds)
    : options_(std::move(options)) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(512 << 20);
  for (const std::string& a : options_.addresses) {
    stubs_.push_back(v1::Builder::NewStub(grpc::CreateCustomChannel(a, creds, args)));
    alive_.push_back(true);
  }
}

Result<std::vector<BuildResult>> RemoteBuilder::build_on(size_t b,
                                                         const std::vector<MeasureInput>& inputs,
                                                         const std::vector<size_t>& idx) {
  v1::BuildRequest request;
  farm::MeasureOptions mo;
  mo.build_timeout_s = options_.timeout_s;
  *request.mutable_options() = farm::to_proto(mo);
  for (size_t i : idx) *request.add_inputs() = farm::to_proto(inputs[i]);
  v1::BuildReply reply;
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() +
                   std::chrono::milliseconds(static_cast<int64_t>(
                       (options_.timeout_s * static_cast<double>(idx.size()) + 60) * 1000)));
  grpc::Status s = stubs_[b]->Build(&ctx, request, &reply);
  const std::string who = "builder " + options_.addresses[b];
  if (!s.ok()) {
    if (std::string why = farm::untrusted_server_reason(s, options_.addresses[b], options_.auth);
        !why.empty()) {
      return IoError(who + ": " + why);
    }
    return IoError(who + ": " + std::to_string(static_cast<int>(s.error_code())) + " " +
                   s.error_message());
  }
  if (reply.results_size() != static_cast<int>(idx.size())) {
    return IoError(who + ": " + std::to_string(reply.results_size()) + " results for " +
                   std::to_string(idx.size()) + " inputs");
  }
  std::vector<BuildResult> out;
  for (int k = 0; k < reply.results_size(); ++k) {
    Result<BuildResult> r =
        farm::from_proto(reply.results(k), "BuildReply.results[" + std::to_string(k) + "]");
    if (!r.ok()) return IoError(who + ": " + r.status().message());
    if (r->error == MeasureError::kNoError) {
      if (Status d = r->verify_digest(); !d.ok()) return IoError(who + ": " + d.message());
    }
    out.push_back(std::move(r).value());
  }
  return out;
}

std::vector<BuildResult> RemoteBuilder::build(const std::vector<MeasureInput>& inputs) {
  std::vector<BuildResult> results(inputs.size());
  std::vector<size_t> pending(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) pending[i] = i;
  std::string why = "no builder is left";
  while (!pending.empty()) {
    std::vector<size_t> live;
    for (size_t b = 0; b < alive_.size(); ++b) {
      if (alive_[b]) live.push_back(b);
    }
    if (live.empty()) break;
    // Round-robin shares, one thread per builder.
    std::vector<std::vector<size_t>> share(live.size());
    for (size_t k = 0; k < pending.size(); ++k) share[k % live.size()].push_back(pending[k]);
    std::vector<Result<std::vector<BuildResult>>> got(
        live.size(), Result<std::vector<BuildResult>>(std::vector<BuildResult>{}));
    std::vector<std::thread> threads;
    for (size_t s = 0; s < live.size(); ++s) {
      if (share[s].empty()) continue;
      threads.emplace_back([&, s] { got[s] = build_on(live[s], inputs, share[s]); });
    }
    for (std::thread& t : threads) t.join();
    pending.clear();
    for (size_t s = 0; s < live.size(); ++s) {
      if (share[s].empty()) continue;
      if (!got[s].ok()) {
        alive_[live[s]] = false;  // dropped; its share goes to the others
        why = got[s].status().message();
        pending.insert(pending.end(), share[s].begin(), share[s].end());
        continue;
      }
      for (size_t k = 0; k < share[s].size(); ++k) results[share[s][k]] = std::move((*got[s])[k]);
    }
  }
  for (size_t i : pending) {
    results[i].error = MeasureError::kCompileHost;
    results[i].message = "no builder could build it: " + why;
  }
  return results;
}

}  // namespace kiln::builder
