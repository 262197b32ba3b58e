// How the job commands (kiln submit, jobs, watch, cancel, pause, resume, export --job) reach
// `kiln serve`: --server HOST:PORT (default 127.0.0.1:9300) with the farm's TLS options
// (--certs DIR, --token FILE); a loopback server without them is reached in plaintext, as
// `kiln serve` serves it without --certs.
#pragma once

#include <memory>
#include <string>

#include "cli/common.h"
#include "farm/security.h"
#include "proto/kiln.grpc.pb.h"

namespace kiln::cli {

inline constexpr const char* kDefaultServeAddress = "127.0.0.1:9300";

struct TunerClientOptions {
  std::string server = kDefaultServeAddress;
  farm::ClientAuth auth;
  double timeout_s = 30;
};

void add_tuner_client_options(CLI::App* cmd, TunerClientOptions* o);

std::unique_ptr<v1::Tuner::Stub> tuner_stub(const TunerClientOptions& o);

// A context with the options' deadline (none for streams: `stream` true).
std::unique_ptr<grpc::ClientContext> tuner_context(const TunerClientOptions& o,
                                                   bool stream = false);

// A failed call as the command's error: "kiln serve HOST:PORT: MESSAGE"; bad input (the server's
// INVALID_ARGUMENT, NOT_FOUND, FAILED_PRECONDITION) exits 2, the rest 1.
[[noreturn]] void throw_rpc_error(const TunerClientOptions& o, const grpc::Status& s);

// "42" -> 42; CommandError naming `what` for anything but a positive integer.
int64_t parse_job_id(const std::string& what, const std::string& text);

}  // namespace kiln::cli
