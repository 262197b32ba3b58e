// A compiled kernel artifact (a shared object, see kernel_abi.h) loaded into this process.
//
// Artifacts arrive as bytes (from the builder, or over the network from a remote builder). They
// are loaded from an anonymous in-memory file (memfd), never from a temporary file, so a crash
// or kill at any point leaves nothing behind on disk.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "common/status.h"
#include "runtime/kernel_abi.h"

namespace kiln {

class Artifact {
 public:
  // Loads a shared object from its bytes, with RTLD_NOW | RTLD_LOCAL so that unresolved symbols
  // fail here rather than mid-measurement, and two artifacts exporting the same stage names do
  // not interfere. `label` names the artifact in error messages and in /proc/self/maps
  // ("/memfd:<label>"). Errors: kInvalidArgument for empty bytes, kIo if the memfd cannot be
  // created or written, kRuntime if the bytes are not a shared object of this machine's
  // architecture (runtime/elf_machine.h) or the dynamic loader rejects them (its message included).
  // Loading runs the object's static constructors: only load bytes you trust.
  static Result<std::unique_ptr<Artifact>> load_from_bytes(std::string_view so_bytes,
                                                           std::string label);
  // Reads the shared object at `path` and loads its bytes as load_from_bytes does, labelled by
  // the path; kIo if the file cannot be read. Later changes to the file do not affect it.
  static Result<std::unique_ptr<Artifact>> load_from_file(const std::string& path);

  // Unloads the object (dlclose) and closes its memfd. Every kiln_stage_fn obtained from this
  // artifact dangles afterwards.
  ~Artifact();

  Artifact(const Artifact&) = delete;
  Artifact& operator=(const Artifact&) = delete;

  // The exported stage function `symbol`; kRuntime naming the symbol and the label if absent.
  // The pointer is valid while this artifact lives.
  Result<kiln_stage_fn> stage(std::string_view symbol) const;
  // The stage's buffer table (kernel_abi.h: the buffer count, then the floats touched per
  // buffer), or null for an object without one (code built by an older kiln).
  const uint64_t* buffer_table(std::string_view symbol) const;

  const std::string& label() const { return label_; }

 private:
  Artifact(void* handle, int fd, std::string label);

  void* handle_;  // from dlopen
  int fd_;        // the memfd backing the object
  std::string label_;
};

}  // namespace kiln
