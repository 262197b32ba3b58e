// Artifact signing (DESIGN.md "Remote execution is remote code execution"): a runner executes
// only artifacts whose digest an authorised requester vouched for. The requester sends, with
// each artifact, HMAC-SHA256(key, "kiln-artifact-v1:" + sha256 hex) as 64 hex digits; the key
// is the farm's (the token `kiln certs init` writes, or another key file); the runner checks it
// before anything is loaded.
#pragma once

#include <string>

#include "common/status.h"
#include "farm/security.h"

namespace kiln::farm {

// The signing key from a file (a token file: at least 32 characters, no whitespace; a trailing
// newline is dropped). Errors name the file.
Result<std::string> read_signing_key(const std::string& path);

// The file whose key signs a client's artifacts: `key_file` when given, else the client's
// bearer token file, else its certs directory's token (the farm's, from `kiln certs init`);
// "" when the client has none of them.
std::string signing_key_file(const ClientAuth& auth, const std::string& key_file);

// 64 lowercase hex digits of HMAC-SHA256(key, "kiln-artifact-v1:" + digest).
std::string sign_digest(const std::string& key, const std::string& digest);

// True when `signature` is sign_digest(key, digest) (compared in constant time).
bool signature_matches(const std::string& key, const std::string& digest,
                       const std::string& signature);

}  // namespace kiln::farm
