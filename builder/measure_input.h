// What the builder and the runner exchange: a trial to measure (MeasureInput) and the built
// kernel or the reason there is none (BuildResult), following DESIGN.md's contracts.
#pragma once

#include <string>
#include <vector>

#include "builder/target.h"
#include "common/measure_error.h"
#include "common/wire.h"
#include "ir/ir.h"
#include "ops/template.h"

namespace kiln::builder {

struct MeasureInput {
  const ops::Template* tmpl = nullptr;
  ops::Workload workload;  // normalized by tmpl
  ConfigEntity config;
  Target target;
};

// What a runner needs to call an artifact: its buffers and stages (the Program minus its code).
struct KernelManifest {
  std::string name;
  std::vector<int64_t> buffer_elements;  // per program buffer: inputs, outputs, workspace
  int num_inputs = 0;
  int num_outputs = 0;
  std::vector<std::string> stages;  // exported symbols, in execution order
  std::vector<bool> stage_timed;

  static KernelManifest of(const ir::Program& program);
  void encode(wire::Writer& w) const;
  static KernelManifest decode(wire::Reader& r);
};

struct BuildResult {
  MeasureError error = MeasureError::kNoError;
  std::string message;        // why the build failed; empty on success
  std::string shared_object;  // the artifact (ELF .so bytes) on success
  KernelManifest manifest;
  double build_seconds = 0;

  void encode(wire::Writer& w) const;
  static BuildResult decode(wire::Reader& r);
};

// Instantiates and builds one input in this process. Never fails: an invalid config is
// kInstantiationError, anything else that goes wrong kCompileHost.
BuildResult build_measure_input(const MeasureInput& input);

}  // namespace kiln::builder
