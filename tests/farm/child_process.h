// A child process for the farm's end-to-end tests and bench/farm_bench: started with
// posix_spawn (the parent may run gRPC threads), its output read through a pipe up to a line
// that says it is ready. No GoogleTest here, so that a benchmark can use it too.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

extern char** environ;

namespace kiln::farm::testing {

// A child process (`BINARY ARGS`) whose stdout and stderr go to a pipe; the constructor reads up
// to the line holding `ready` (or EOF). SIGTERM (after SIGCONT) and reaped at the end.
class ChildProcess {
 public:
  ChildProcess(const std::string& binary, const std::vector<std::string>& args,
               const std::string& ready) {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) return;
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
    posix_spawn_file_actions_adddup2(&actions, fds[1], 2);
    std::vector<std::string> argv_s = {binary};
    argv_s.insert(argv_s.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (std::string& a : argv_s) argv.push_back(a.data());
    argv.push_back(nullptr);
    if (posix_spawn(&pid_, binary.c_str(), &actions, nullptr, argv.data(), environ) != 0) pid_ = -1;
    posix_spawn_file_actions_destroy(&actions);
    close(fds[1]);
    out_fd_ = fds[0];
    if (ready.empty()) return;
    char c;
    while (read(out_fd_, &c, 1) == 1) {
      output_ += c;
      if (c != '\n') continue;
      size_t at = output_.find(ready);
      if (at != std::string::npos) {
        line_ = output_.substr(at, output_.find('\n', at) - at);
        break;
      }
    }
  }
  ~ChildProcess() {
    if (pid_ > 0) {
      kill(pid_, SIGCONT);
      kill(pid_, SIGTERM);
      int status;
      waitpid(pid_, &status, 0);
    }
    if (out_fd_ >= 0) close(out_fd_);
  }
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  const std::string& line() const { return line_; }  // the ready line, empty if never seen
  // The first "127.0.0.1:PORT" of the ready line.
  std::string address() const {
    size_t at = line_.find("127.0.0.1:");
    if (at == std::string::npos) return "";
    size_t end = line_.find_first_not_of("0123456789", at + 10);
    return line_.substr(at, end - at);
  }
  pid_t pid() const { return pid_; }
  bool running() const {
    int status;
    return pid_ > 0 && waitpid(pid_, &status, WNOHANG) == 0;
  }
  void signal(int sig) const {
    if (pid_ > 0) kill(pid_, sig);
  }
  void kill_now() {
    kill(pid_, SIGKILL);
    int status;
    waitpid(pid_, &status, 0);
    pid_ = -1;
  }
  // Waits for the process to exit; its exit code (-1 if killed by a signal).
  int wait_exit() {
    char buf[256];
    ssize_t n;
    while ((n = read(out_fd_, buf, sizeof buf)) > 0) output_.append(buf, n);
    int status;
    if (waitpid(pid_, &status, 0) != pid_) return -1;
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  const std::string& output() const { return output_; }

 private:
  pid_t pid_ = -1;
  int out_fd_ = -1;
  std::string output_;
  std::string line_;
};

}  // namespace kiln::farm::testing
