// AutoTVM's MeasureErrorNo (reference/autotvm.md §3): the outcome of one trial. The values are
// stored in records and in TVM logs: never change them.
#pragma once

namespace kiln {

enum class MeasureError : int {
  kNoError = 0,
  kInstantiationError = 1,  // the template cannot realize the config
  kCompileHost = 2,         // LLVM or the linker failed, or the builder crashed
  kCompileDevice = 3,       // never produced by kiln; accepted from TVM logs
  kRuntimeDevice = 4,       // loading or running the kernel failed (e.g. it crashed)
  kWrongAnswer = 5,         // the output differs from the reference implementation's
  kBuildTimeout = 6,
  kRunTimeout = 7,
  kUnknownError = 8,
};

constexpr int kMaxMeasureError = 8;

inline const char* measure_error_name(MeasureError e) {
  switch (e) {
    case MeasureError::kNoError:
      return "NO_ERROR";
    case MeasureError::kInstantiationError:
      return "INSTANTIATION_ERROR";
    case MeasureError::kCompileHost:
      return "COMPILE_HOST";
    case MeasureError::kCompileDevice:
      return "COMPILE_DEVICE";
    case MeasureError::kRuntimeDevice:
      return "RUNTIME_DEVICE";
    case MeasureError::kWrongAnswer:
      return "WRONG_ANSWER";
    case MeasureError::kBuildTimeout:
      return "BUILD_TIMEOUT";
    case MeasureError::kRunTimeout:
      return "RUN_TIMEOUT";
    case MeasureError::kUnknownError:
      return "UNKNOWN_ERROR";
  }
  return "UNKNOWN_ERROR";
}

}  // namespace kiln
