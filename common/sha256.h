// SHA-256 digests (OpenSSL's libcrypto), as lowercase hex. An artifact travels with its digest
// (DESIGN.md "Contracts"), and a runner loads only bytes that hash to the digest it was given.
#pragma once

#include <string>
#include <string_view>

namespace kiln {

// The 64 lowercase hex digits of SHA-256(bytes).
std::string sha256_hex(std::string_view bytes);

}  // namespace kiln
