#include "builder/llvm_init.h"

#include <llvm/Support/CommandLine.h>
#include <llvm/Support/ErrorHandling.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <unistd.h>

#include <cstring>
#include <mutex>

namespace kiln::builder {

namespace {

// Must not return (LLVM would then exit on its own) and must not allocate much: it may run
// after an allocation failure. write(2) and _exit(2) are async-signal-safe.
void on_llvm_fatal_error(void*, const char* reason, bool) {
  const char prefix[] = "kiln: LLVM error: ";
  ssize_t ignored = write(STDERR_FILENO, prefix, sizeof prefix - 1);
  ignored = write(STDERR_FILENO, reason, std::strlen(reason));
  ignored = write(STDERR_FILENO, "\n", 1);
  (void)ignored;
  _exit(kLlvmFatalExitCode);
}

}  // namespace

void initialize_llvm() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::install_fatal_error_handler(on_llvm_fatal_error, nullptr);
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    llvm::InitializeNativeTargetAsmParser();
    // Cross-compilation for the farm's ARM boards (`-mtriple=aarch64-linux-gnu`); the host's own
    // target is initialized above whatever it is (llvm/Support/TargetSelect.h declares both).
    LLVMInitializeAArch64TargetInfo();
    LLVMInitializeAArch64Target();
    LLVMInitializeAArch64TargetMC();
    LLVMInitializeAArch64AsmPrinter();
    // Dead-store elimination walks up to 90 MemorySSA definitions per store by default; over the
    // hundreds of stores of an unrolled write-back that quadratic walk took 40 % of O3. The
    // templates' dead stores are next to their killers (and codegen drops most of them itself),
    // so a short walk finds the same ones: identical optimized IR on the dense templates.
    const char* args[] = {"kiln", "-dse-memoryssa-walklimit=10"};
    llvm::cl::ParseCommandLineOptions(2, args, "", &llvm::nulls());
  });
}

}  // namespace kiln::builder
