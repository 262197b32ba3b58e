// The ONNX node conformance tally: runs every backend node test (tests/onnx_node_suite.h) and
// prints "N passed, M failed, K not run", every failure and every test not run with its reason,
// and how long compiling took. Exit status 1 when a test failed (ctest runs it), 2 on bad usage.
// Each test runs in a child process of its own, so that a crash or a hang (killed after
// --timeout seconds, default 300) counts as that test's failure instead of ending the tally.
//
//   onnx_node_report [ROOT] [--threads T] [--timeout S] [--verbose]
//
// ROOT defaults to KILN_SHARED_DIR/onnx-node-tests; without it the program says so and exits 0
// (the shared data is not part of the repository).
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "tests/onnx_node_suite.h"

namespace {

using kiln::testing::NodeTestOutcome;

int usage() {
  std::fprintf(stderr, "usage: onnx_node_report [ROOT] [--threads T] [--timeout S] [--verbose]\n");
  return 2;
}

// Writes all of `text` to `fd` (a pipe).
void write_all(int fd, const std::string& text) {
  for (size_t done = 0; done < text.size();) {
    ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

// The last line of what `file` holds (a crashed child's stderr: KILN_CHECK's message).
std::string last_line(std::FILE* file) {
  std::string text, line;
  std::rewind(file);
  for (int c; (c = std::fgetc(file)) != EOF;) text += static_cast<char>(c);
  while (!text.empty() && text.back() == '\n') text.pop_back();
  size_t eol = text.rfind('\n');
  return eol == std::string::npos ? text : text.substr(eol + 1);
}

// Runs one test in a child process. The child sends "<kind> <compile seconds>\n<detail>"
// through a pipe; a child that dies without exiting 0 is a failure saying how it ended and
// what it last wrote to stderr.
NodeTestOutcome run_isolated(const std::string& dir, int threads, int timeout_s) {
  std::FILE* errors = std::tmpfile();
  if (errors == nullptr) {
    return {NodeTestOutcome::Kind::kFailed, "tmpfile: " + std::string(strerror(errno))};
  }
  int fds[2];
  if (pipe(fds) != 0)
    return {NodeTestOutcome::Kind::kFailed, "pipe: " + std::string(strerror(errno))};
  std::fflush(stdout);
  pid_t pid = fork();
  if (pid < 0) return {NodeTestOutcome::Kind::kFailed, "fork: " + std::string(strerror(errno))};
  if (pid == 0) {
    close(fds[0]);
    dup2(fileno(errors), STDERR_FILENO);
    alarm(static_cast<unsigned>(timeout_s));
    NodeTestOutcome r = kiln::testing::run_node_test(dir, threads);
    write_all(fds[1], std::to_string(static_cast<int>(r.kind)) + " " +
                          std::to_string(r.compile_seconds) + "\n" + r.detail);
    close(fds[1]);
    _exit(0);
  }
  close(fds[1]);
  std::string text;
  char buffer[4096];
  for (ssize_t n; (n = read(fds[0], buffer, sizeof buffer)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    text.append(buffer, static_cast<size_t>(n));
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  const std::string stderr_tail = last_line(errors);
  std::fclose(errors);
  if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    return {NodeTestOutcome::Kind::kFailed,
            (sig == SIGALRM ? "timed out after " + std::to_string(timeout_s) + " s"
                            : "crashed: " + std::string(strsignal(sig))) +
                (stderr_tail.empty() ? "" : " (stderr: " + stderr_tail + ")")};
  }
  size_t eol = text.find('\n');
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || eol == std::string::npos) {
    return {NodeTestOutcome::Kind::kFailed,
            "the test process exited with status " + std::to_string(WEXITSTATUS(status))};
  }
  NodeTestOutcome r;
  r.kind = static_cast<NodeTestOutcome::Kind>(std::atoi(text.c_str()));
  r.compile_seconds = std::atof(text.c_str() + text.find(' ') + 1);
  r.detail = text.substr(eol + 1);
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  std::string root = std::string(KILN_SHARED_DIR) + "/onnx-node-tests";
  int threads = 1;
  int timeout_s = 300;
  bool verbose = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--threads" && i + 1 < argc) {
      threads = std::atoi(argv[++i]);
      if (threads < 1) return usage();
    } else if (arg == "--timeout" && i + 1 < argc) {
      timeout_s = std::atoi(argv[++i]);
      if (timeout_s < 1) return usage();
    } else if (arg == "--verbose") {
      verbose = true;
    } else if (!arg.empty() && arg[0] != '-') {
      root = arg;
    } else {
      return usage();
    }
  }

  const std::vector<std::string> names = kiln::testing::find_node_tests(root);
  if (names.empty()) {
    std::printf("no ONNX node tests under %s: nothing run\n", root.c_str());
    return 0;
  }

  std::vector<std::pair<std::string, std::string>> failed, not_run;
  std::vector<std::pair<double, std::string>> compile_times;
  int passed = 0;
  double compile_total = 0;
  const auto start = std::chrono::steady_clock::now();
  for (const std::string& name : names) {
    const std::string dir = root + "/" + name;
    NodeTestOutcome r = run_isolated(dir, threads, timeout_s);
    // Messages name the model file; within its own test's line the directory is noise, and so
    // is the importer's list of supported operators after an unsupported one.
    for (size_t at; (at = r.detail.find(dir + "/")) != std::string::npos;) {
      r.detail.erase(at, dir.size() + 1);
    }
    if (size_t list = r.detail.find("; kiln supports: "); list != std::string::npos) {
      r.detail.erase(list);
    }
    compile_total += r.compile_seconds;
    if (r.compile_seconds > 0) compile_times.emplace_back(r.compile_seconds, name);
    const char* word = "passed";
    switch (r.kind) {
      case NodeTestOutcome::Kind::kPassed:
        ++passed;
        break;
      case NodeTestOutcome::Kind::kFailed:
        failed.emplace_back(name, r.detail);
        word = "FAILED";
        break;
      case NodeTestOutcome::Kind::kNotRun:
        not_run.emplace_back(name, r.detail);
        word = "not run";
        break;
    }
    if (verbose)
      std::printf("%-60s %-8s %.2f s  %s\n", name.c_str(), word, r.compile_seconds,
                  r.detail.c_str());
  }
  const double total =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  if (!failed.empty()) {
    std::printf("\nFailed (%zu):\n", failed.size());
    for (const auto& [name, why] : failed) std::printf("  %s: %s\n", name.c_str(), why.c_str());
  }
  if (!not_run.empty()) {
    std::printf("\nNot run (%zu), kiln does not support:\n", not_run.size());
    for (const auto& [name, why] : not_run) std::printf("  %s: %s\n", name.c_str(), why.c_str());
  }
  std::sort(compile_times.rbegin(), compile_times.rend());
  std::printf("\nTime: %.1f s in all, %.1f s compiling %zu models (mean %.2f s)", total,
              compile_total, compile_times.size(),
              compile_times.empty() ? 0.0 : compile_total / compile_times.size());
  if (!compile_times.empty()) {
    std::printf("; slowest compile: %s %.2f s", compile_times.front().second.c_str(),
                compile_times.front().first);
  }
  std::printf("\n\nONNX node tests: %d passed, %zu failed, %zu not run (of %zu)\n", passed,
              failed.size(), not_run.size(), names.size());
  return failed.empty() ? 0 : 1;
}
