// A forked helper process that serves framed requests (common/wire.h) over a pair of pipes.
// kiln isolates everything that may crash, hang or corrupt memory (compiling a config, running
// a generated kernel) in such workers: the caller survives whatever happens to the child, and
// tells a reply from a timeout from a death.
#pragma once

#include <sys/types.h>

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "common/status.h"

namespace kiln {

class WorkerProcess {
 public:
  // Forks a child that calls serve(request_fd, response_fd) and exits when it returns. The
  // child keeps no other file descriptor of the parent (so one worker's death is seen as EOF
  // even when several exist) and is killed if the parent dies.
  static Result<std::unique_ptr<WorkerProcess>> spawn(
      const std::function<void(int request_fd, int response_fd)>& serve);

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
};

}  // namespace kiln
