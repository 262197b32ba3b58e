#include "common/worker_process.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <vector>

#include "common/wire.h"

namespace kiln {

namespace {

// An AddressSanitizer build reserves terabytes of shadow memory when it starts: under any
// RLIMIT_AS a program could live with, the exec'd child dies before main. Such a build (the test
// suite's `make asan`) runs its children without that one limit.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kAddressSpaceLimitWorks = false;
#else
constexpr bool kAddressSpaceLimitWorks = true;
#endif

// Closes every descriptor of the child but stdin/out/err and the two it serves on.
void close_inherited_fds(int keep_a, int keep_b) {
  std::vector<int> fds;
  if (DIR* dir = opendir("/proc/self/fd")) {
    while (dirent* e = readdir(dir)) {
      int fd = std::atoi(e->d_name);
      if (fd > 2 && fd != keep_a && fd != keep_b && fd != dirfd(dir)) fds.push_back(fd);
    }
    closedir(dir);
  }
  for (int fd : fds) close(fd);
}

std::string describe_status(int status) {
  if (WIFSIGNALED(status)) {
    return std::string("killed by signal ") + std::to_string(WTERMSIG(status)) + " (" +
           strsignal(WTERMSIG(status)) + ")";
  }
  if (WIFEXITED(status)) return "exited with code " + std::to_string(WEXITSTATUS(status));
  return "ended";
}

}  // namespace

Result<std::unique_ptr<WorkerProcess>> WorkerProcess::spawn(
    const std::function<void(int, int)>& serve) {
  int to_child[2], from_child[2];
  if (pipe2(to_child, O_CLOEXEC) != 0) return IoError(std::string("pipe: ") + strerror(errno));
  if (pipe2(from_child, O_CLOEXEC) != 0) {
    close(to_child[0]);
    close(to_child[1]);
    return IoError(std::string("pipe: ") + strerror(errno));
  }
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) {
    for (int fd : {to_child[0], to_child[1], from_child[0], from_child[1]}) close(fd);
    return IoError(std::string("fork: ") + strerror(errno));
  }
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(1);  // the parent died before prctl took effect
    signal(SIGPIPE, SIG_IGN);
    // A terminal's Ctrl-C (or a SIGTERM to the process group) is the parent's to handle: it
    // finishes and commits what is in flight, then stops its workers. A worker that died of it
    // would turn the config it was building or running into a false failure.
    signal(SIGINT, SIG_IGN);
    signal(SIGTERM, SIG_IGN);
    close_inherited_fds(to_child[0], from_child[1]);
    serve(to_child[0], from_child[1]);
    _exit(0);
  }
  close(to_child[0]);
  close(from_child[1]);
  return std::unique_ptr<WorkerProcess>(new WorkerProcess(pid, to_child[1], from_child[0]));
}

Result<std::unique_ptr<WorkerProcess>> WorkerProcess::spawn_exec(
    const std::vector<std::string>& argv, const Limits& limits) {
  if (argv.empty()) return InvalidArgument("spawn_exec: empty argv");
  // Everything the child needs is prepared here: after fork it may not allocate.
  std::vector<std::string> args = argv;
  std::vector<char*> cargv;
  for (std::string& a : args) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  std::string scratch;
  if (!limits.scratch_parent.empty()) {
    std::string tmpl = limits.scratch_parent + "/kiln-measure-XXXXXX";
    if (mkdtemp(tmpl.data()) == nullptr) {
      return IoError("cannot create a scratch directory under " + limits.scratch_parent + ": " +
                     strerror(errno));
    }
    scratch = tmpl;
  }
  auto remove_scratch = [&] {
    std::error_code ec;
    if (!scratch.empty()) std::filesystem::remove_all(scratch, ec);
  };
  int to_child[2], from_child[2];
  if (pipe2(to_child, O_CLOEXEC) != 0) {
    remove_scratch();
    return IoError(std::string("pipe: ") + strerror(errno));
  }
  if (pipe2(from_child, O_CLOEXEC) != 0) {
    close(to_child[0]);
    close(to_child[1]);
    remove_scratch();
    return IoError(std::string("pipe: ") + strerror(errno));
  }
  const pid_t parent = getpid();
  const rlimit as{limits.address_space_bytes, limits.address_space_bytes};
  const rlimit cpu{limits.cpu_seconds, limits.cpu_seconds};
  pid_t pid = fork();
  if (pid < 0) {
    for (int fd : {to_child[0], to_child[1], from_child[0], from_child[1]}) close(fd);
    remove_scratch();
    return IoError(std::string("fork: ") + strerror(errno));
  }
  if (pid == 0) {
    // Async-signal-safe calls only until execv.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(1);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    signal(SIGPIPE, SIG_IGN);
    signal(SIGINT, SIG_IGN);
    signal(SIGTERM, SIG_IGN);
    // Move the pipe ends above the target numbers first, so dup2 cannot clobber one.
    int req = fcntl(to_child[0], F_DUPFD, 10);
    int resp = fcntl(from_child[1], F_DUPFD, 10);
    if (req < 0 || resp < 0) _exit(126);
    if (dup2(req, kExecRequestFd) < 0 || dup2(resp, kExecResponseFd) < 0) _exit(126);
    // Everything above 4 goes: the parent's sockets, files and other workers' pipes.
    if (syscall(SYS_close_range, kExecResponseFd + 1, ~0U, 0) != 0) {
      rlimit nofile{};
      getrlimit(RLIMIT_NOFILE, &nofile);
      for (int fd = kExecResponseFd + 1; fd < static_cast<int>(nofile.rlim_cur); ++fd) close(fd);
    }
    if (kAddressSpaceLimitWorks && limits.address_space_bytes > 0 && setrlimit(RLIMIT_AS, &as) != 0)
      _exit(126);
    if (limits.cpu_seconds > 0 && setrlimit(RLIMIT_CPU, &cpu) != 0) _exit(126);
    if (!scratch.empty() && chdir(scratch.c_str()) != 0) _exit(126);
    execv(cargv[0], cargv.data());
    _exit(127);
  }
  close(to_child[0]);
  close(from_child[1]);
  auto worker = std::unique_ptr<WorkerProcess>(new WorkerProcess(pid, to_child[1], from_child[0]));
  worker->scratch_dir_ = scratch;
  return worker;
}

WorkerProcess::~WorkerProcess() {
  kill_and_reap();
  close(request_fd_);
  close(response_fd_);
  if (!scratch_dir_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(scratch_dir_, ec);
  }
}

Status WorkerProcess::send(std::string_view payload) {
  return wire::write_frame(request_fd_, payload);
}

WorkerProcess::Outcome WorkerProcess::receive(double timeout_s, std::string* reply,
                                              std::string* why) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (true) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                    deadline - std::chrono::steady_clock::now())
                    .count();
    if (left <= 0) return Outcome::kTimeout;
    pollfd p{response_fd_, POLLIN, 0};
    int r = poll(&p, 1, static_cast<int>(std::min<int64_t>(left, 1 << 30)));
    if (r < 0 && errno == EINTR) continue;
    if (r == 0) return Outcome::kTimeout;
    return read_ready(reply, why);
  }
}

WorkerProcess::Outcome WorkerProcess::read_ready(std::string* reply, std::string* why) {
  Result<std::string> frame = wire::read_frame(response_fd_);
  if (frame.ok()) {
    *reply = std::move(frame).value();
    return Outcome::kReply;
  }
  *why = reap();
  return Outcome::kDied;
}

std::string WorkerProcess::reap() {
  if (reaped_) return "ended";
  int status = 0;
  pid_t r;
  do {
    r = waitpid(pid_, &status, 0);
  } while (r < 0 && errno == EINTR);
  reaped_ = true;
  return r == pid_ ? describe_status(status) : "ended";
}

std::string WorkerProcess::kill_and_reap() {
  if (reaped_) return "ended";
  ::kill(pid_, SIGKILL);
  return reap();
}

}  // namespace kiln
