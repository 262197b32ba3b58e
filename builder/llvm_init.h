// One-time set-up of LLVM for this process: the native target, its assembly printer and parser,
// kiln's codegen options, and a fatal-error handler.
//
// LLVM reports some errors by aborting the process (report_fatal_error). kiln's handler prints
// "kiln: LLVM error: <reason>" on stderr and exits with kLlvmFatalExitCode instead of aborting
// with a core dump: in a builder worker that is a dead worker (COMPILE_HOST for its config), in
// the CLI a clear one-line failure. kiln validates targets when they are parsed
// (builder/target.h) so that user input does not reach such errors; the handler is the net
// under that.
#pragma once

namespace kiln::builder {

// Exit code of a process that LLVM stopped with a fatal error (EX_SOFTWARE of sysexits.h).
inline constexpr int kLlvmFatalExitCode = 70;

// Idempotent and thread-safe.
void initialize_llvm();

}  // namespace kiln::builder
