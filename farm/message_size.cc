#include "farm/message_size.h"

#include <string>

namespace kiln::farm {

grpc::Status check_request_size(const google::protobuf::MessageLite& request, size_t max,
                                const char* what) {
  const size_t bytes = request.ByteSizeLong();
  if (bytes <= max) return grpc::Status::OK;
  return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                      std::string(what) + ": " + std::to_string(bytes) +
                          " bytes, over this service's maximum of " + std::to_string(max));
}

}  // namespace kiln::farm
