// The token that guards `kiln serve --http` (the dashboard and /metrics), and its check.
//
// Where it comes from, first match:
//   --http-token-file F   the token in F (farm/security.h read_token: >= 32 characters)
//   --certs DIR           DIR/token, the bearer token the daemon's gRPC side accepts
//   neither               DB.http-token next to the store: created with a random token (mode
//                         0600) at the first start, reused afterwards so that a browser's cookie
//                         and a Prometheus scrape config outlive a restart
// A token file that others than its owner may read is refused (chmod 600 says how to fix it):
// anyone who holds the token reads the daemon's jobs.
#pragma once

#include <string>

#include "common/status.h"

namespace kiln::dashboard {

struct DashboardToken {
  std::string token;
  std::string path;  // the file it came from
  bool created = false;
};

Result<DashboardToken> dashboard_token(const std::string& http_token_file,
                                       const std::string& certs_dir, const std::string& db);

// `given` equals `expected`, compared in constant time (no early exit on the first difference);
// an empty `expected` matches nothing.
bool token_matches(const std::string& given, const std::string& expected);

}  // namespace kiln::dashboard
