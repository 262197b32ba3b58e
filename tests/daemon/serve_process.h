// A `kiln serve` (or another server: `command`, e.g. "tracker") child process for end-to-end
// tests: its stdout and stderr go to a log file (so a chatty daemon never blocks on a full pipe);
// the constructor waits for the line that says where it listens. kill() sends a signal; the
// destructor SIGKILLs and reaps what is left. Give each process its own log file.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace kiln::testing {

class ServeProcess {
 public:
  ServeProcess(const std::vector<std::string>& args, const std::string& log_path,
               const std::string& command = "serve")
      : log_path_(log_path) {
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND,
                                     0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    std::vector<std::string> argv_s = {KILN_BINARY, command, "--listen", "127.0.0.1:0"};
    argv_s.insert(argv_s.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (std::string& a : argv_s) argv.push_back(a.data());
    argv.push_back(nullptr);
    if (posix_spawn(&pid_, KILN_BINARY, &actions, nullptr, argv.data(), environ) != 0) pid_ = -1;
    posix_spawn_file_actions_destroy(&actions);
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (pid_ > 0 && std::chrono::steady_clock::now() < deadline) {
      std::string text = log();
      const std::string ready = "kiln " + command + " listening on ";
      size_t at = text.find(ready);
      if (at != std::string::npos) {
        std::string rest = text.substr(at + ready.size());
        address_ = rest.substr(0, rest.find(' '));
        break;
      }
      int status;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {  // it refused to start
        pid_ = -1;
        exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  ~ServeProcess() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      int status;
      waitpid(pid_, &status, 0);
    }
  }
  ServeProcess(const ServeProcess&) = delete;
  ServeProcess& operator=(const ServeProcess&) = delete;

  pid_t pid() const { return pid_; }  // -1 once reaped
  // "127.0.0.1:PORT", empty if it did not start.
  const std::string& address() const { return address_; }
  std::string log() const {
    std::ifstream in(log_path_);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  void kill(int sig) {
    if (pid_ > 0) ::kill(pid_, sig);
  }
  // Waits up to `timeout_s` for the process to exit; its exit code, -1 when killed by a signal,
  // -2 when it is still running.
  int wait_exit(double timeout_s) {
    if (pid_ <= 0) return exit_code_;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    while (pid_ > 0) {
      int status;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        return exit_code_;
      }
      if (std::chrono::steady_clock::now() > deadline) return -2;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return exit_code_;
  }

 private:
  pid_t pid_ = -1;
  std::string log_path_;
  std::string address_;
  int exit_code_ = -1;  // once reaped
};

}  // namespace kiln::testing
