#include "farm/grpc_log.h"

#include <grpc/support/log.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>

namespace kiln::farm {

namespace {

std::atomic<HandshakeLog> handshake_mode{HandshakeLog::kWarning};

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

// What OpenSSL's reason (spelled by OpenSSL 3 or by BoringSSL: "certificate verify failed" or
// "CERTIFICATE_VERIFY_FAILED") means in a kiln farm.
struct KnownFailure {
  std::string_view reason;  // lower case, '_' read as ' '
  std::string_view cause;
};

constexpr std::array kKnownFailures = {
    KnownFailure{"certificate verify failed",
                 "the peer's certificate is not signed by this farm's CA (or has expired)"},
    KnownFailure{"alert unknown ca",
                 "the peer does not accept this side's certificate: it trusts another CA "
                 "(another farm's certificates?)"},
    KnownFailure{"alert bad certificate", "the peer refused this side's certificate"},
    KnownFailure{"alert certificate expired", "the peer says this side's certificate has expired"},
    KnownFailure{"peer did not return a certificate",
                 "the client sent no certificate (mutual TLS needs the farm's client "
                 "certificate: --certs DIR, or --token-file)"},
    KnownFailure{"wrong version number",
                 "the peer does not speak TLS (a plaintext client of a --certs server, or "
                 "--insecure on one side only)"},
    KnownFailure{"http request", "the peer sent plaintext HTTP to a TLS server"},
    KnownFailure{"no shared cipher", "the peer offers no TLS cipher this side accepts"},
    KnownFailure{"unsupported protocol", "the peer's TLS version is not accepted"},
};

void log_from_grpc(gpr_log_func_args* args) {
  const std::string_view message = args->message ? args->message : "";
  if (std::string why = handshake_failure_reason(message); !why.empty()) {
    if (handshake_mode.load() == HandshakeLog::kWarning) {
      spdlog::warn("{}", why);
    } else {
      spdlog::debug("{}", why);
    }
    return;
  }
  switch (args->severity) {
    case GPR_LOG_SEVERITY_ERROR:
      spdlog::warn("grpc: {}", message);
      break;
    case GPR_LOG_SEVERITY_INFO:
      spdlog::debug("grpc: {}", message);
      break;
    default:
      spdlog::trace("grpc: {}", message);
  }
}

}  // namespace

std::string handshake_failure_reason(std::string_view grpc_message) {
  std::string text = lower(grpc_message);
  if (text.find("handshake") == std::string::npos) return {};
  std::replace(text.begin(), text.end(), '_', ' ');
  for (const KnownFailure& f : kKnownFailures) {
    if (text.find(f.reason) != std::string::npos) {
      return "a TLS handshake failed: " + std::string(f.cause) + " (" + std::string(f.reason) + ")";
    }
  }
  return {};
}

void route_grpc_log(HandshakeLog handshakes) {
  handshake_mode.store(handshakes);
  gpr_set_log_function(log_from_grpc);
  // gRPC formats only what passes its own threshold: its debug lines only when kiln's are shown.
  gpr_set_log_verbosity(spdlog::should_log(spdlog::level::debug) ? GPR_LOG_SEVERITY_INFO
                                                                 : GPR_LOG_SEVERITY_ERROR);
}

}  // namespace kiln::farm
