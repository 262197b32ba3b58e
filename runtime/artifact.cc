#include "runtime/artifact.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <utility>

#include "runtime/elf_machine.h"

namespace kiln {
namespace {

// memfd names are limited to 249 bytes; the name only shows up in /proc, so truncating is fine.
constexpr size_t kMaxMemfdName = 200;

// How many times to move the memfd to a new descriptor number if its /proc path collides with a
// library that is still loaded (see LoadFromFd).
constexpr int kMaxNameRetries = 8;

std::string DlError() {
  const char* e = dlerror();
  return e != nullptr ? e : "unknown dynamic loader error";
}

std::string ErrnoText() { return std::strerror(errno); }

Status WriteAll(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = write(fd, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return IoError("writing artifact to memfd: " + ErrnoText());
    }
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return Status::Ok();
}

std::string FdPath(int fd) { return "/proc/self/fd/" + std::to_string(fd); }

}  // namespace

Artifact::Artifact(void* handle, int fd, std::string label)
    : handle_(handle), fd_(fd), label_(std::move(label)) {}

Artifact::~Artifact() {
  if (handle_ != nullptr) dlclose(handle_);
  if (fd_ >= 0) close(fd_);
}

Result<std::unique_ptr<Artifact>> Artifact::load_from_bytes(std::string_view so_bytes,
                                                            std::string label) {
  if (so_bytes.empty()) {
    return InvalidArgument("artifact '" + label + "': no bytes to load");
  }
  KILN_RETURN_IF_ERROR(check_runs_here(so_bytes, label));
  const std::string name = label.substr(0, kMaxMemfdName);
  int fd = memfd_create(name.c_str(), MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) return IoError("artifact '" + label + "': memfd_create: " + ErrnoText());

  if (Status s = WriteAll(fd, so_bytes); !s.ok()) {
    close(fd);
    return IoError("artifact '" + label + "': " + s.message());
  }
  // Freeze the contents: the code must not change under a loaded (and measured) artifact.
  // Best effort: sealing is a safeguard, not needed for loading.
  fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL);

  // The dynamic loader recognizes an already loaded object by its path name before looking at
  // the file, so "/proc/self/fd/N" would return a stale library if one loaded under the same
  // descriptor number were still resident (dlclose does not always unmap). Keeping our fd open
  // for the artifact's lifetime keeps the number unique among live artifacts; the RTLD_NOLOAD
  // probe catches anything else that holds the name, and we move to another number.
  for (int attempt = 0; attempt < kMaxNameRetries; ++attempt) {
    const std::string path = FdPath(fd);
    if (void* stale = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD)) {
      dlclose(stale);
      const int moved = fcntl(fd, F_DUPFD_CLOEXEC, fd + 1);
      close(fd);
      if (moved < 0) return IoError("artifact '" + label + "': dup of memfd: " + ErrnoText());
      fd = moved;
      continue;
    }
    dlerror();  // The probe's failure is expected; clear it.
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const std::string why = DlError();
      close(fd);
      return RuntimeError("artifact '" + label + "': dlopen failed: " + why);
    }
    return std::unique_ptr<Artifact>(new Artifact(handle, fd, std::move(label)));
  }
  close(fd);
  return InternalError("artifact '" + label + "': no unused descriptor path to load it from");
}

Result<std::unique_ptr<Artifact>> Artifact::load_from_file(const std::string& path) {
  // Loaded through a memfd too, rather than dlopen(path): the loader would hand back a stale
  // object if a previous version of the file at the same path were still loaded.
  std::ifstream in(path, std::ios::binary);
  if (!in) return IoError("artifact '" + path + "': cannot open: " + ErrnoText());
  std::ostringstream bytes;
  bytes << in.rdbuf();
  if (in.bad()) return IoError("artifact '" + path + "': read failed: " + ErrnoText());
  return load_from_bytes(bytes.view(), path);
}

Result<kiln_stage_fn> Artifact::stage(std::string_view symbol) const {
  const std::string name(symbol);
  dlerror();
  void* sym = dlsym(handle_, name.c_str());
  if (sym == nullptr) {
    return RuntimeError("artifact '" + label_ + "' has no stage '" + name + "': " + DlError());
  }
  return reinterpret_cast<kiln_stage_fn>(sym);
}

const uint64_t* Artifact::buffer_table(std::string_view symbol) const {
  const std::string name = std::string(symbol) + KILN_BUFFER_TABLE_SUFFIX;
  return static_cast<const uint64_t*>(dlsym(handle_, name.c_str()));
}

}  // namespace kiln
