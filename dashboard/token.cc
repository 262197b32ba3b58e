#include "dashboard/token.h"

#include <openssl/crypto.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "farm/security.h"

namespace kiln::dashboard {

namespace {

Status check_private(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    return IoError("cannot read " + path + ": " + std::strerror(errno));
  }
  if ((st.st_mode & 077) != 0) {
    return InvalidArgument(path + ": the dashboard token file may be read by others than its " +
                           "owner; chmod 600 " + path);
  }
  return Status::Ok();
}

}  // namespace

Result<DashboardToken> dashboard_token(const std::string& http_token_file,
                                       const std::string& certs_dir, const std::string& db) {
  DashboardToken out;
  if (!http_token_file.empty()) {
    out.path = http_token_file;
  } else if (!certs_dir.empty()) {
    out.path = farm::cert_files(certs_dir).token;
  } else {
    out.path = db + ".http-token";
    struct stat st;
    if (::stat(out.path.c_str(), &st) != 0 && errno == ENOENT) {
      KILN_ASSIGN_OR_RETURN(out.token, farm::random_token());
      KILN_RETURN_IF_ERROR(farm::write_token_file(out.path, out.token));
      out.created = true;
      return out;
    }
  }
  KILN_RETURN_IF_ERROR(check_private(out.path));
  KILN_ASSIGN_OR_RETURN(out.token, farm::read_token(out.path));
  return out;
}

bool token_matches(const std::string& given, const std::string& expected) {
  if (expected.empty() || given.size() != expected.size()) return false;
  return CRYPTO_memcmp(given.data(), expected.data(), expected.size()) == 0;
}

}  // namespace kiln::dashboard
