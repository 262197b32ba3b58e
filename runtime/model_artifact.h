// A compiled model (`kiln compile -o model.kiln`): its in-memory form and its file format.
//
// A model is a shared object (one kiln_stage_fn per step, runtime/kernel_abi.h), the float32
// constants the steps read (weights, pre-packed at compile time), and the graph that ties them
// together: values (tensors) and the steps to run in order, each naming the values it receives
// as its buffers. The executor (runtime/graph_executor.h) runs it; the compiler (compiler/)
// makes it.
//
// File format (little-endian):
//   "KILNMODL"  u32 format_version  u64 header_len  header (JSON text)
//   u64 so_len  so bytes  u64 constants_len (bytes)  constants (float32)
//   32 bytes: SHA-256 of everything before it
// Parsing checks the magic, the version, every length against the file size, the checksum
// (before it reads the header), and the header's consistency (validate_model); each failure is
// kInvalidArgument naming the file and what is wrong. The header is a JSON object with the
// fields of ModelArtifact; a value's kind is spelled "input", "output", "constant",
// "intermediate" or "view".
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace kiln {

// Version 2 added views at an offset (ModelValue::view_offset); version 1 files read as they are.
inline constexpr uint32_t kModelFormatVersion = 2;
inline constexpr uint32_t kOldestModelFormatVersion = 1;

enum class ModelValueKind : uint8_t {
  kInput,         // set by the user (set_input) before run()
  kOutput,        // a graph output: written by a step, read back with get_output
  kConstant,      // data in the artifact's constants blob
  kIntermediate,  // written and read by steps; storage planned by liveness
  kView,  // elements of value `view_of`'s storage from `view_offset` on, under its own shape:
          // all of them reshaped (Reshape, ...), or an input's share of an in-place Concat
};

// Element types of values. Kernels compute in float32; int64 is for constants a graph returns as
// they are (ONNX Shape outputs), stored in the constants blob two floats' bytes per element.
enum class ModelDType : uint8_t { kFloat32, kInt64 };

struct ModelValue {
  std::string name;
  std::vector<int64_t> shape;  // elements; {} is a scalar (1 element)
  ModelValueKind kind = ModelValueKind::kIntermediate;
  int64_t constant_offset = 0;  // kConstant: offset in floats into ModelArtifact::constants
  int view_of = -1;             // kView: the value whose storage it shares
  int64_t view_offset = 0;      // kView: its first element's index in view_of's elements
  ModelDType dtype = ModelDType::kFloat32;  // kInt64 only for constants
  int64_t num_elements() const;
  int64_t floats() const;  // floats of storage (int64: two per element)
};

struct ModelStep {
  std::string symbol;  // the stage function exported by the shared object
  // Value ids passed as the stage's buffers, in order; -1 for a buffer of the kernel's program
  // that this stage does not touch (it receives a null pointer).
  std::vector<int> buffers;
  std::string label;  // what it computes, for messages and profiles ("Conv conv1 + Relu")
  // A tuned operator's kernel: where its config came from, "tuned", "predicted" or "default"
  // (compiler/untuned_config.h); empty for every other step and in artifacts before it was kept.
  std::string config_source;
  // A tuned operator's kernel: its template's floating-point operations, on the kernel's last
  // step (the one that writes its output); 0 on every other step and in older artifacts.
  double flop = 0;
};

struct ModelArtifact {
  std::string kiln_version;
  std::string target;                     // the target string it was compiled for
  std::vector<std::string> cpu_features;  // features the code needs ("avx512f", "fma", ...)
  std::vector<ModelValue> values;
  std::vector<int> inputs;   // value ids of the graph inputs, in graph order
  std::vector<int> outputs;  // value ids of the graph outputs, in graph order
  std::vector<ModelStep> steps;
  std::string shared_object;     // ELF .so bytes
  std::vector<float> constants;  // the constants blob
};

// The header's consistency, as parse_model checks it (the executor checks it again, for models
// assembled in memory): value ids in range (inputs, outputs, step buffers, views), shapes
// positive, constants inside the blob, views inside another float32 value (an int64 one only
// whole) and no view cycles, graph inputs exactly the values of kind kInput, with distinct names.
// kInvalidArgument prefixed with `label`.
Status validate_model(const ModelArtifact& model, const std::string& label);

// Where value `id`'s elements live: the value with storage its chain of views ends at, and the
// index of its first element there. REQUIRES: `values` has no view cycle (validate_model).
struct ViewRoot {
  int value = -1;
  int64_t offset = 0;
};
ViewRoot resolve_view(const std::vector<ModelValue>& values, int id);

std::string serialize_model(const ModelArtifact& model);
// The header as JSON text: the graph (values, inputs, outputs, steps) and the target, without
// the code or the constants. What a Python library's get_graph_json() returns.
std::string model_graph_json(const ModelArtifact& model);
// `label` (the file name) prefixes every error message.
Result<ModelArtifact> parse_model(std::string_view bytes, const std::string& label);
Status write_model_file(const ModelArtifact& model, const std::string& path);  // kIo on failure
Result<ModelArtifact> read_model_file(const std::string& path);  // kIo unreadable, else parse

// Whether this machine can run code compiled for `features` (x86 or aarch64 feature names as
// LLVM spells them); the error names the first missing feature and the artifact's target.
// kInvalidArgument also for a feature name this kiln cannot check (not in
// checkable_cpu_features()) and for a target whose -mtriple is not this host's architecture
// (x86_64 or aarch64: a foreign target).
Status check_cpu_features(const std::vector<std::string>& features, const std::string& target);
// The feature names check_cpu_features knows, so that the compiler records only those (LLVM's
// feature strings also hold names like "cx16" that the CPU-detection builtins cannot test).
const std::vector<std::string>& checkable_cpu_features();

}  // namespace kiln
