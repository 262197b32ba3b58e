// The last step of compiling a model: kernels over model values -> a ModelArtifact.
//
//   build every kernel (LLVM, in parallel) and link them into one shared object
//   -> run now every stage that reads only constants and is the only writer of what it writes
//      (weight packing, constant operands): its outputs become constants, the stage no step
//   -> keep the values the remaining steps, the inputs and the outputs use; constants go into the
//      blob, each 64-byte aligned; a step passes -1 for a kernel buffer its stage does not touch.
#pragma once

#include <string>
#include <vector>

#include "builder/target.h"
#include "common/status.h"
#include "ir/ir.h"
#include "runtime/model_artifact.h"

namespace kiln::compiler {

// One kernel of the model: a program and the model value behind each of its buffers.
struct Kernel {
  ir::Program program;
  std::vector<int> values;
  std::string label;
  std::string config_source;  // a tuned operator's kernel: "tuned", "predicted" or "default"
  double flop = 0;            // a tuned operator's kernel: its template's flop (ModelStep)
};

struct KernelGraph {
  std::vector<ModelValue> values;
  std::vector<std::vector<float>> constant_data;  // by value id; a constant's data
  std::vector<Kernel> kernels;                    // in execution order
  std::vector<int> inputs, outputs;               // value ids, in graph order
};

// `text` with every character that cannot appear in a C symbol replaced by '_' (kernel and
// stage names come from tensor names).
std::string symbol_safe(const std::string& text);

// Fills `model`'s shared object, values, inputs, outputs, steps and constants (the caller sets
// its version, target and CPU features). kCompile naming the kernel for code that does not build.
Status assemble_model(KernelGraph graph, const Target& target, int jobs, ModelArtifact* model);

}  // namespace kiln::compiler
