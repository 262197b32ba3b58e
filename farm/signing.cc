#include "farm/signing.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <fstream>
#include <sstream>

namespace kiln::farm {

Result<std::string> read_signing_key(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return IoError(path + ": cannot read the signing key");
  std::stringstream ss;
  ss << in.rdbuf();
  std::string key = ss.str();
  while (!key.empty() && (key.back() == '\n' || key.back() == '\r' || key.back() == ' ')) {
    key.pop_back();
  }
  if (key.size() < 32)
    return InvalidArgument(path + ": the signing key is shorter than 32 characters");
  if (key.find_first_of(" \t\r\n") != std::string::npos) {
    return InvalidArgument(path + ": the signing key holds whitespace");
  }
  return key;
}

std::string signing_key_file(const ClientAuth& auth, const std::string& key_file) {
  if (!key_file.empty()) return key_file;
  if (!auth.token_file.empty()) return auth.token_file;
  if (!auth.certs_dir.empty()) return cert_files(auth.certs_dir).token;
  return "";
}

std::string sign_digest(const std::string& key, const std::string& digest) {
  const std::string message = "kiln-artifact-v1:" + digest;
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(message.data()), message.size(), mac, &len);
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < len; ++i) {
    out += hex[mac[i] >> 4];
    out += hex[mac[i] & 15];
  }
  return out;
}

bool signature_matches(const std::string& key, const std::string& digest,
                       const std::string& signature) {
  const std::string expected = sign_digest(key, digest);
  return signature.size() == expected.size() &&
         CRYPTO_memcmp(signature.data(), expected.data(), expected.size()) == 0;
}

}  // namespace kiln::farm
