#include "cli/untuned_build.h"

#include <thread>

#include "cli/common.h"
#include "compiler/compile_model.h"
#include "frontend/onnx_import.h"

namespace kiln::cli {

ModelArtifact untuned_build(const std::string& onnx, const std::string& target,
                            const std::vector<std::string>& input_shapes) {
  resolve_target(target);
  frontend::Graph graph = value_or_exit(frontend::import_onnx(onnx, import_options(input_shapes)));
  compiler::CompileOptions options;
  options.target = target;
  options.jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  compiler::CompileReport report;
  return value_or_exit(compiler::compile_model(graph, options, &report));
}

}  // namespace kiln::cli
