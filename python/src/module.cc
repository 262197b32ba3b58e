// kiln._kiln: the C++ half of the Python module (kiln/ is the other): ONNX import, tasks and
// config spaces, tuning, compiling and running, in-process. Every long call releases the GIL.
#include <pybind11/pybind11.h>

#include "python/src/bindings.h"
#include "python/src/status_error.h"

PYBIND11_MODULE(_kiln, m) {
  m.doc() = "kiln's C++ libraries; use the kiln package, not this module";
  kiln::python::register_status_errors();
  kiln::python::add_model_bindings(m);
  kiln::python::add_tune_bindings(m);
}
