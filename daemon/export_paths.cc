#include "daemon/export_paths.h"

#include <sys/stat.h>

#include <filesystem>

#include "common/safe_file.h"
#include "store/open_store.h"

namespace kiln::daemon {

namespace fs = std::filesystem;

namespace {

// `dir` is `root` or below it (both canonical).
bool is_within(const fs::path& dir, const fs::path& root) {
  auto d = dir.begin();
  for (auto r = root.begin(); r != root.end(); ++r, ++d) {
    if (r->empty()) continue;  // a trailing separator
    if (d == dir.end() || *d != *r) return false;
  }
  return true;
}

bool same_file(const std::string& a, const std::string& b) {
  struct stat sa, sb;
  return ::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev &&
         sa.st_ino == sb.st_ino;
}

}  // namespace

Status check_export_path(const std::string& field, const std::string& path,
                         const ExportPolicy& policy) {
  auto refuse = [&](const std::string& why) {
    return InvalidArgument(field + ": " + path + ": " + why);
  };
  if (path.empty()) return refuse("empty path");
  std::error_code ec;
  const fs::path given = fs::absolute(path, ec);
  if (ec) return refuse(ec.message());
  const fs::path name = given.filename();
  if (name.empty() || name == "." || name == "..") return refuse("names a directory, not a file");
  const fs::path dir = fs::canonical(given.parent_path(), ec);
  if (ec) return refuse("its directory " + given.parent_path().string() + " does not exist");
  const fs::path resolved = dir / name;

  std::vector<std::string> allowed = policy.allowed_dirs;
  if (allowed.empty() && store::is_postgres_location(policy.store)) {
    return refuse(
        "this kiln serve has no directory to write exports to: on a PostgreSQL store "
        "name one with kiln serve --export-dir");
  }
  if (allowed.empty()) {
    fs::path store_dir = fs::absolute(policy.store, ec).parent_path();
    allowed.push_back(store_dir.string());
  }
  bool inside = false;
  std::string list;
  for (const std::string& a : allowed) {
    fs::path root = fs::canonical(a, ec);
    if (!ec && is_within(dir, root)) inside = true;
    list += (list.empty() ? "" : ", ") + (ec ? a : root.string());
  }
  if (!inside) {
    return refuse("outside the directories this kiln serve writes exports to (" + list +
                  "; kiln serve --export-dir)");
  }

  // The store and its companions, by resolved name (they may not exist yet) and by inode.
  fs::path store = fs::weakly_canonical(fs::absolute(policy.store, ec), ec);
  for (const char* suffix : {"", "-wal", "-shm", "-journal", ".http-token", ".serve-lock"}) {
    const std::string companion = store.string() + suffix;
    if (resolved.string() == companion || same_file(resolved.string(), companion)) {
      return refuse(*suffix ? "is a file kept beside the record store (" + policy.store + ")"
                            : "is the record store (" + policy.store + ")");
    }
  }
  std::string kind = non_regular_file_kind(resolved.string());
  if (!kind.empty()) return refuse("is " + kind + ", not a regular file");
  return Status::Ok();
}

}  // namespace kiln::daemon
