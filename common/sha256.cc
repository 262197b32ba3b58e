#include "common/sha256.h"

#include <openssl/sha.h>

#include "common/check.h"

namespace kiln {

std::string sha256_hex(std::string_view bytes) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  // One-shot SHA256() cannot fail for in-memory input; its result is the digest pointer.
  KILN_CHECK(SHA256(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), digest))
      << "SHA-256 failed";
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * SHA256_DIGEST_LENGTH);
  for (unsigned char b : digest) {
    out += kHex[b >> 4];
    out += kHex[b & 15];
  }
  return out;
}

}  // namespace kiln
