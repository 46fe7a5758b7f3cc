// The Python exception classes of the ephost package: one per status code, named as ONNX Runtime's
// Python package names them (InvalidArgument, NoSuchFile, InvalidGraph, ...), all derived from
// ephost.EphostError (itself a RuntimeError, as ONNX Runtime's are), each carrying the message;
// NotImplemented is also a NotImplementedError.
#pragma once

#include <pybind11/pybind11.h>

#include "ephost/ephost_types.h"

namespace ephost_python {

// Creates the classes as attributes of `module` and translates every Ephost::Exception that leaves a
// binding into the class of its status code.
void register_errors(pybind11::module_& module);

}  // namespace ephost_python
