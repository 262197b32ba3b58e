// ONNX's backend node tests (../shared/onnx-node-tests: one directory per test, `model.onnx` and
// test_data_set_0/{input,output}_N.pb) run end to end through kiln: import, compile (host
// target, fallback configs), execute, compare. Shared by the parameterized GoogleTest suite
// (onnx_node_conformance_test.cc) and the summary program (onnx_node_report.cc).
//
// Outcomes:
//   passed   every output has the reference's shape and every element is within ONNX's backend
//            tolerance, |y - ref| <= atol + rtol * |ref| (rtol 1e-3, atol 1e-7; NaN matches NaN);
//   not run  the importer or the compiler reports kUnimplemented: the model is valid ONNX using
//            something kiln does not support (an operator, a dtype, a shape only known at run
//            time), and the reason is kiln's message. Decided by that status code alone, so that
//            a test kiln gets wrong can never be filed as unsupported;
//   failed   anything else: a wrong or misshapen output, any other import / compile / load error,
//            or a test directory that cannot be read.
#pragma once

#include <string>
#include <vector>

namespace kiln::testing {

inline constexpr double kNodeTestRtol = 1e-3;
inline constexpr double kNodeTestAtol = 1e-7;

// The test names (directory names holding a model.onnx) under `root`, sorted; empty when `root`
// does not exist.
std::vector<std::string> find_node_tests(const std::string& root);

struct NodeTestOutcome {
  enum class Kind { kPassed, kFailed, kNotRun };
  Kind kind = Kind::kFailed;
  std::string detail;          // why it failed or was not run; for a pass, what was compared
  double compile_seconds = 0;  // compile_model's wall time (0 when it did not get that far)
};

// Runs test `dir` (a directory under the root) with `threads` executor threads.
NodeTestOutcome run_node_test(const std::string& dir, int threads = 1);

// Element-wise check of `y` against `ref` with ONNX's tolerance: "" when they match, else how
// many elements differ and the worst one (index, value, reference).
std::string compare_with_tolerance(const std::vector<float>& y, const std::vector<double>& ref,
                                   double rtol = kNodeTestRtol, double atol = kNodeTestAtol);

}  // namespace kiln::testing
