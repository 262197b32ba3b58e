#include "tests/onnx_node_suite.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <span>
#include <sstream>

#include "common/status.h"
#include "compiler/compile_model.h"
#include "frontend/graph.h"
#include "frontend/onnx_import.h"
#include "frontend/tensor_file.h"
#include "runtime/graph_executor.h"

namespace kiln::testing {

namespace fs = std::filesystem;

namespace {

NodeTestOutcome outcome(NodeTestOutcome::Kind kind, std::string detail, double seconds = 0) {
  return NodeTestOutcome{kind, std::move(detail), seconds};
}

// An importer or compiler error: not run for kUnimplemented, else a failure.
NodeTestOutcome from_error(const std::string& stage, const Status& status, double seconds = 0) {
  return outcome(status.code() == StatusCode::kUnimplemented ? NodeTestOutcome::Kind::kNotRun
                                                             : NodeTestOutcome::Kind::kFailed,
                 stage + ": " + status.message(), seconds);
}

NodeTestOutcome failed(std::string detail, double seconds = 0) {
  return outcome(NodeTestOutcome::Kind::kFailed, std::move(detail), seconds);
}

// The data set's tensors named `prefix`_0.pb, _1.pb, ... in order, stopping at the first index
// that has no file.
// The graph's inputs that are not initializers, in order, read from the file itself (so that a
// model kiln cannot import still pairs its inputs with the test data).
Result<std::vector<std::string>> graph_input_names(const std::string& model_path) {
  std::ifstream in(model_path, std::ios::binary);
  onnx::ModelProto model;
  if (!in || !model.ParseFromIstream(&in)) return InvalidArgument(model_path + ": not readable");
  std::set<std::string> initializers;
  for (const onnx::TensorProto& t : model.graph().initializer()) initializers.insert(t.name());
  std::vector<std::string> names;
  for (const onnx::ValueInfoProto& v : model.graph().input()) {
    if (!initializers.count(v.name())) names.push_back(v.name());
  }
  return names;
}

Result<std::vector<frontend::Tensor>> read_tensors(const fs::path& data_set,
                                                   const std::string& prefix) {
  std::vector<frontend::Tensor> tensors;
  for (int i = 0;; ++i) {
    fs::path file = data_set / (prefix + "_" + std::to_string(i) + ".pb");
    if (!fs::exists(file)) break;
    KILN_ASSIGN_OR_RETURN(frontend::Tensor t, frontend::read_tensor_proto_file(file.string()));
    tensors.push_back(std::move(t));
  }
  return tensors;
}

// A reference tensor's values as doubles (float32 or int64 data; other dtypes have none).
Result<std::vector<double>> reference_values(const frontend::Tensor& t, const std::string& file) {
  if (t.dtype == frontend::DType::kFloat32) return std::vector<double>(t.f32.begin(), t.f32.end());
  if (t.dtype == frontend::DType::kInt64) return std::vector<double>(t.i64.begin(), t.i64.end());
  return InvalidArgument(file + " is " + frontend::dtype_name(t.dtype) +
                         ", which the comparison does not read");
}

}  // namespace

std::vector<std::string> find_node_tests(const std::string& root) {
  std::vector<std::string> names;
  std::error_code ec;
  if (!fs::is_directory(root, ec)) return names;
  for (const fs::directory_entry& e : fs::directory_iterator(root, ec)) {
    if (e.is_directory() && fs::exists(e.path() / "model.onnx")) {
      names.push_back(e.path().filename().string());
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string compare_with_tolerance(const std::vector<float>& y, const std::vector<double>& ref,
                                   double rtol, double atol) {
  if (y.size() != ref.size()) {
    return std::to_string(y.size()) + " elements, the reference has " + std::to_string(ref.size());
  }
  size_t bad = 0, worst = 0;
  double worst_excess = -1;
  for (size_t i = 0; i < y.size(); ++i) {
    const double v = y[i], r = ref[i];
    if (std::isnan(v) && std::isnan(r)) continue;
    if (std::isinf(r) && v == r) continue;  // inf - inf is NaN: equal infinities match
    const double excess = std::abs(v - r) - (atol + rtol * std::abs(r));
    if (excess <= 0) continue;  // NaN on either side alone fails: NaN <= 0 is false
    ++bad;
    if (!(excess <= worst_excess)) {  // NaN excess ranks worst
      worst_excess = excess;
      worst = i;
    }
  }
  if (bad == 0) return "";
  std::ostringstream out;
  out.precision(9);
  out << bad << " of " << y.size() << " elements out of tolerance (rtol " << rtol << ", atol "
      << atol << "); worst at index " << worst << ": " << y[worst] << ", expected " << ref[worst];
  return out.str();
}

NodeTestOutcome run_node_test(const std::string& dir, int threads) {
  const fs::path root(dir);
  const fs::path data_set = root / "test_data_set_0";
  const std::string model_path = (root / "model.onnx").string();

  Result<std::vector<frontend::Tensor>> inputs = read_tensors(data_set, "input");
  if (!inputs.ok()) return failed("reading the test data: " + inputs.status().message());
  Result<std::vector<frontend::Tensor>> refs = read_tensors(data_set, "output");
  if (!refs.ok()) return failed("reading the test data: " + refs.status().message());
  if (refs->empty()) return failed(data_set.string() + " has no output_0.pb");

  // kiln computes in float32; an int64 input (a shape, axes, indices, pads) is a parameter it
  // needs at compile time, so it is bound to the test's value, as TVM's freeze_params would.
  // ONNX's test data feed the graph's inputs in order (the node tests have no initializers).
  frontend::ImportOptions import_options;
  Result<std::vector<std::string>> names = graph_input_names(model_path);
  if (!names.ok()) return failed(names.status().message());
  if (names->size() != inputs->size()) {
    return failed("the model has " + std::to_string(names->size()) + " inputs, the test data " +
                  std::to_string(inputs->size()));
  }
  std::vector<std::pair<std::string, const frontend::Tensor*>> fed;
  for (size_t i = 0; i < inputs->size(); ++i) {
    if ((*inputs)[i].dtype == frontend::DType::kInt64) {
      import_options.bound_inputs[(*names)[i]] = (*inputs)[i];
    } else {
      fed.push_back({(*names)[i], &(*inputs)[i]});
    }
  }
  Result<frontend::Graph> graph = frontend::import_onnx(model_path, import_options);
  if (!graph.ok()) return from_error("import", graph.status());
  if (fed.size() != graph->inputs.size() || refs->size() != graph->outputs.size()) {
    return failed("the model has " + std::to_string(graph->inputs.size()) + " inputs and " +
                  std::to_string(graph->outputs.size()) + " outputs, the test data " +
                  std::to_string(fed.size()) + " and " + std::to_string(refs->size()));
  }

  compiler::CompileOptions options;  // host target, no store: fallback configs
  const auto start = std::chrono::steady_clock::now();
  Result<ModelArtifact> artifact = compiler::compile_model(*graph, options);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!artifact.ok()) return from_error("compile", artifact.status(), seconds);

  Result<std::unique_ptr<GraphExecutor>> executor =
      GraphExecutor::create(std::move(*artifact), threads, model_path);
  if (!executor.ok()) return failed("load: " + executor.status().message(), seconds);
  GraphExecutor& ex = **executor;
  if (ex.num_inputs() != static_cast<int>(fed.size()) ||
      ex.num_outputs() != static_cast<int>(refs->size())) {
    return failed("the compiled model has " + std::to_string(ex.num_inputs()) + " inputs and " +
                      std::to_string(ex.num_outputs()) + " outputs, the graph " +
                      std::to_string(fed.size()) + " and " + std::to_string(refs->size()),
                  seconds);
  }

  for (size_t i = 0; i < fed.size(); ++i) {
    const frontend::Tensor& x = *fed[i].second;
    const std::string& name = fed[i].first;
    // The compiler accepted the model, so every input it kept is data kiln computes on: a
    // non-float32 one here is a compiler bug, not an unsupported feature.
    if (x.dtype != frontend::DType::kFloat32) {
      return failed("input '" + name + "' is " + frontend::dtype_name(x.dtype) +
                        ", yet the model compiled (float32 inputs only)",
                    seconds);
    }
    const TensorInfo& info = ex.input_info(static_cast<int>(i));
    if (info.name != name || info.shape != x.shape) {
      return failed("compiled input " + std::to_string(i) + " is '" + info.name + "' " +
                        frontend::dims_text(info.shape) + ", the graph's '" + name + "' " +
                        frontend::dims_text(x.shape),
                    seconds);
    }
    Status set = ex.set_input(name, x.f32);
    if (!set.ok()) return failed("set_input: " + set.message(), seconds);
  }
  ex.run();

  int compared = 0;
  for (size_t k = 0; k < refs->size(); ++k) {
    const frontend::Tensor& ref = (*refs)[k];
    const std::string file = (data_set / ("output_" + std::to_string(k) + ".pb")).string();
    const TensorInfo& info = ex.output_info(static_cast<int>(k));
    const std::string where = "output " + std::to_string(k) + " '" + graph->outputs[k] + "'";
    if (info.shape != ref.shape) {
      return failed(where + " has shape " + frontend::dims_text(info.shape) + ", expected " +
                        frontend::dims_text(ref.shape),
                    seconds);
    }
    Result<std::vector<double>> expected = reference_values(ref, file);
    if (!expected.ok()) return failed(expected.status().message(), seconds);
    if ((info.dtype == ModelDType::kInt64) != (ref.dtype == frontend::DType::kInt64)) {
      return failed(where + " has another element type than the reference", seconds);
    }
    if (info.dtype == ModelDType::kInt64) {
      // Integers compare exactly.
      std::span<const int64_t> y = ex.get_output_int64(static_cast<int>(k));
      if (!std::equal(y.begin(), y.end(), ref.i64.begin(), ref.i64.end())) {
        return failed(where + ": int64 values differ from the reference", seconds);
      }
      compared += static_cast<int>(y.size());
      continue;
    }
    std::span<const float> y = ex.get_output(static_cast<int>(k));
    std::string mismatch = compare_with_tolerance({y.begin(), y.end()}, *expected);
    if (!mismatch.empty()) return failed(where + ": " + mismatch, seconds);
    compared += static_cast<int>(y.size());
  }
  return outcome(NodeTestOutcome::Kind::kPassed,
                 std::to_string(refs->size()) + " output(s), " + std::to_string(compared) +
                     " elements within tolerance",
                 seconds);
}

}  // namespace kiln::testing
