// The extension's parts, each adding its functions and classes to the module.
#pragma once

#include <pybind11/pybind11.h>

namespace kiln::python {

// Targets, ONNX import, tasks and config spaces, compiling, compiled models and their executor.
void add_model_bindings(pybind11::module_& m);
// Tuning one task (AutoTVM's Tuner.tune) or a whole model (kiln's scheduler), log lines.
void add_tune_bindings(pybind11::module_& m);

}  // namespace kiln::python
