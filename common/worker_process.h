// A forked helper process that serves framed requests (common/wire.h) over a pair of pipes.
// kiln isolates everything that may crash, hang or corrupt memory (compiling a config, running
// a generated kernel) in such workers: the caller survives whatever happens to the child, and
// tells a reply from a timeout from a death.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace kiln {

class WorkerProcess {
 public:
  // Forks a child that calls serve(request_fd, response_fd) and exits when it returns. The
  // child keeps no other file descriptor of the parent (so one worker's death is seen as EOF
  // even when several exist) and is killed if the parent dies.
  static Result<std::unique_ptr<WorkerProcess>> spawn(
      const std::function<void(int request_fd, int response_fd)>& serve);

  // What an exec'd worker may use (setrlimit in the child before exec); 0 means no limit.
  struct Limits {
    uint64_t address_space_bytes = 0;  // RLIMIT_AS (not applied in an AddressSanitizer build)
    uint64_t cpu_seconds = 0;          // RLIMIT_CPU, the worker's whole life (hard limit)
    // A fresh private directory (0700) under this one becomes the child's working directory;
    // it is removed with everything in it when the worker ends. Empty: the parent's directory.
    std::string scratch_parent;
  };
  // Starts argv[0] (a path) with `argv` by fork + exec, for a parent that has threads (a gRPC
  // server): between fork and exec the child calls only async-signal-safe functions. The child
  // gets the request pipe as fd 3 and the response pipe as fd 4 and no other descriptor but
  // 0-2, SIGINT/SIGTERM ignored and no signal blocked, `limits`, and is killed if the parent
  // dies (PR_SET_PDEATHSIG: in fact when the *thread* that called this ends, so call it from a
  // thread that outlives the worker). A child that cannot exec exits 127 (seen as kDied on the
  // first receive).
  static Result<std::unique_ptr<WorkerProcess>> spawn_exec(const std::vector<std::string>& argv,
                                                           const Limits& limits);
  static constexpr int kExecRequestFd = 3;
  static constexpr int kExecResponseFd = 4;

  const std::string& scratch_dir() const { return scratch_dir_; }

  // Kills the child (SIGKILL) and reaps it.
  ~WorkerProcess();
  WorkerProcess(const WorkerProcess&) = delete;
  WorkerProcess& operator=(const WorkerProcess&) = delete;

  Status send(std::string_view payload);

  enum class Outcome { kReply, kTimeout, kDied };
  // Waits up to timeout_s for the child's reply. On kDied, `why` says how it ended (signal or
  // exit code); on kTimeout the child is still running (kill it or wait again).
  Outcome receive(double timeout_s, std::string* reply, std::string* why);

  // Reads a reply that poll() reported readable on response_fd().
  Outcome read_ready(std::string* reply, std::string* why);

  int response_fd() const { return response_fd_; }
  pid_t pid() const { return pid_; }

  // SIGKILL and reap; returns how the child ended.
  std::string kill_and_reap();

 private:
  WorkerProcess(pid_t pid, int request_fd, int response_fd)
      : pid_(pid), request_fd_(request_fd), response_fd_(response_fd) {}
  std::string reap();

  pid_t pid_;
  int request_fd_;
  int response_fd_;
  bool reaped_ = false;
  std::string scratch_dir_;  // removed by the destructor, if set
};

}  // namespace kiln
