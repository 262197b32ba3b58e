// Runs the real `kiln` binary (KILN_BINARY, set by CMake) as a child process, for end-to-end tests.
#pragma once

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

namespace kiln::testing {

struct CommandResult {
  int exit_code;       // -1 if the command could not run or was killed by a signal
  std::string output;  // stdout and stderr, interleaved
};

// Runs a shell command line, its stderr with its stdout.
inline CommandResult run_shell(const std::string& command_line) {
  std::string command = command_line + " 2>&1";
  CommandResult r{-1, ""};
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return r;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) r.output.append(buf.data(), n);
  int status = pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

inline CommandResult run_kiln(const std::string& args) {
  return run_shell(std::string(KILN_BINARY) + " " + args);
}

}  // namespace kiln::testing
