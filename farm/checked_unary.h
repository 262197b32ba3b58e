// The farm's unary methods served so that a request that is not a valid protobuf message is
// answered INVALID_ARGUMENT naming the method and the message type ("malformed messages
// get INVALID_ARGUMENT"). gRPC's generated handlers decode the request before any of kiln's code
// runs and answer INTERNAL when that fails; here the request is read from a streamed-unary call
// (one message in, one out, as gRPC's own WithStreamedUnaryMethod does), so kiln sees the
// failure. The wire protocol is unchanged: clients call the same unary methods.
#pragma once

#include <google/protobuf/descriptor.h>
#include <grpcpp/impl/service_type.h>
#include <grpcpp/support/method_handler.h>
#include <grpcpp/support/status.h>
#include <grpcpp/support/sync_stream.h>

#include <string>

#include "common/check.h"

namespace kiln::farm {

// Base of a service implementation: `Generated` is the protoc-generated class of the service
// (`v1::Tracker`), whose `Service` this derives from.
template <class Generated>
class CheckedUnaryService : public Generated::Service {
 protected:
  // Serves the unary method `name` of the proto service through `method` (the derived class's
  // override of the generated virtual), parsing the request here. Call it in the derived class's
  // constructor, once per unary method.
  template <class Derived, class Request, class Reply>
  void check_unary(const std::string& name,
                   grpc::Status (Derived::*method)(grpc::ServerContext*, const Request*, Reply*)) {
    const google::protobuf::ServiceDescriptor* service =
        google::protobuf::DescriptorPool::generated_pool()->FindServiceByName(
            Generated::service_full_name());
    const google::protobuf::MethodDescriptor* m =
        service ? service->FindMethodByName(name) : nullptr;
    KILN_CHECK(m && !m->client_streaming() && !m->server_streaming())
        << "no unary method " << name << " in " << Generated::service_full_name();
    Derived* self = static_cast<Derived*>(this);
    std::string what = "/" + service->full_name() + "/" + name + ": the request is not a valid " +
                       Request::descriptor()->full_name() + " message";
    this->MarkMethodStreamed(
        m->index(), new grpc::internal::StreamedUnaryHandler<Request, Reply>(
                        [self, method, what](grpc::ServerContext* context,
                                             grpc::ServerUnaryStreamer<Request, Reply>* stream) {
                          Request request;
                          if (!stream->Read(&request)) {
                            return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, what);
                          }
                          Reply reply;
                          grpc::Status status = (self->*method)(context, &request, &reply);
                          if (status.ok()) stream->Write(reply);
                          return status;
                        }));
  }
};

}  // namespace kiln::farm
