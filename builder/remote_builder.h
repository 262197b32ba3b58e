// RemoteBuilder: the Builder contract over `kiln builder` servers. A batch is split
// over the builders and built on all of them in parallel; a builder that fails (killed, network
// cut, a malformed reply) is dropped and its share is built by another one. Inputs no builder
// could build are COMPILE_HOST results saying why. Each artifact is checked against its digest.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "builder/builder.h"
#include "farm/security.h"
#include "proto/kiln.grpc.pb.h"

namespace kiln::builder {

struct RemoteBuilderOptions {
  std::vector<std::string> addresses;  // HOST:PORT of each `kiln builder`
  farm::ClientAuth auth;
  double timeout_s = 10;  // per config build (the builders enforce it)
  int n_parallel = 8;     // configs per batch
};

class RemoteBuilder : public Builder {
 public:
  static Result<std::unique_ptr<RemoteBuilder>> create(RemoteBuilderOptions options);

  std::vector<BuildResult> build(const std::vector<MeasureInput>& inputs) override;
  int n_parallel() const override { return options_.n_parallel; }

 private:
  explicit RemoteBuilder(RemoteBuilderOptions options,
                         std::shared_ptr<grpc::ChannelCredentials> creds);
  // Builds inputs[idx] on builder b: their results, or why the builder failed.
  Result<std::vector<BuildResult>> build_on(size_t b, const std::vector<MeasureInput>& inputs,
                                            const std::vector<size_t>& idx);

  RemoteBuilderOptions options_;
  std::vector<std::unique_ptr<v1::Builder::Stub>> stubs_;
  std::vector<bool> alive_;
};

}  // namespace kiln::builder
