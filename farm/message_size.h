// The farm's message sizes ("malformed or oversized messages get INVALID_ARGUMENT").
// Each service declares the largest request it accepts, and every handler checks its request
// against that first: a larger one is INVALID_ARGUMENT naming the size and the limit, and nothing
// of it is used. The server's transport limit (transport_limit) is twice the declared maximum, so
// that a request over the maximum reaches this check; one over the transport limit is refused by
// gRPC itself with RESOURCE_EXHAUSTED before any of it is read.
#pragma once

#include <google/protobuf/message_lite.h>
#include <grpcpp/support/status.h>

#include <cstddef>

namespace kiln::farm {

// Tracker calls carry names and short lists.
constexpr size_t kMaxTrackerRequestBytes = size_t{1} << 20;
// A Measure request carries a chunk's artifacts (shared objects of a few hundred KiB each).
constexpr size_t kMaxRunnerRequestBytes = size_t{256} << 20;
// A Build request carries configs only.
constexpr size_t kMaxBuilderRequestBytes = size_t{32} << 20;

// What a server passes to ServerBuilder::SetMaxReceiveMessageSize for a declared maximum.
constexpr int transport_limit(size_t declared_max) { return static_cast<int>(2 * declared_max); }

// OK, or INVALID_ARGUMENT "<what>: N bytes, over the maximum of M" for a larger request.
grpc::Status check_request_size(const google::protobuf::MessageLite& request, size_t max,
                                const char* what);

}  // namespace kiln::farm
