#include "python/src/status_error.h"

namespace kiln::python {

const char* error_class(StatusCode code) {
  switch (code) {
    case StatusCode::kInvalidArgument:
    case StatusCode::kInstantiation:
      return "InvalidInputError";
    case StatusCode::kUnimplemented:
      return "UnsupportedError";
    case StatusCode::kCompile:
    case StatusCode::kRuntime:
      return "MeasureError";
    case StatusCode::kIo:
      return "KilnIOError";
    default:
      return "InternalError";
  }
}

namespace {

void set_python_error(const StatusError& e) {
  pybind11::object cls = pybind11::module_::import("kiln.errors").attr(error_class(e.code));
  PyErr_SetString(cls.ptr(), e.message.c_str());
}

}  // namespace

pybind11::error_already_set as_python_error(const StatusError& e) {
  set_python_error(e);
  return pybind11::error_already_set();
}

void register_status_errors() {
  pybind11::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const StatusError& e) {
      set_python_error(e);
    }
  });
}

}  // namespace kiln::python
