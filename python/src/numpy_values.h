// numpy arrays (and Python lists and None) to ephost values and back, as ONNX Runtime's Python package
// takes and returns them: tensors as numpy arrays, sequences as lists of arrays, an empty optional as
// None.
//
// Inputs are not copied when they are already C-contiguous arrays of the declared element type: the
// C API tensor is made over the array's own buffer (CreateTensorWithData), and the array is kept alive
// for the run. Outputs are not copied either: the returned array is a view of the library's buffer
// that keeps the library's tensor alive.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <deque>
#include <string>
#include <vector>

#include "ephost/ephost_cxx_api.h"

namespace ephost_python {

// What a model declares for one input or output (SessionGetInputKind and SessionGetInputType).
struct DeclaredValue {
  std::string name;
  EphostValueKind kind = EPHOST_VALUE_UNDEFINED;           // TENSOR, SEQUENCE, OPTIONAL or UNDEFINED
  EphostValueKind optional_kind = EPHOST_VALUE_UNDEFINED;  // for OPTIONAL: what it holds
  int32_t elem_type = EPHOST_ELEMENT_UNDEFINED;            // of the tensor(s) it is or holds
};

// ONNX's type string of a declared value, as ONNX Runtime's NodeArg.type: "tensor(float)",
// "seq(tensor(int64))", "optional(tensor(float))".
std::string onnx_type_string(const DeclaredValue& value);

// Everything the C API tensors of one run point into: it must outlive the run.
class InputBuffers {
 public:
  // The value to feed `declared` from `object`: a numpy array (or anything numpy.asarray takes) for a
  // tensor, a list or tuple of them for a sequence, None for an empty optional. InvalidArgument
  // naming the input when the object does not fit the declaration.
  Ephost::Tensor value_for(const DeclaredValue& declared, pybind11::handle object);
  // A tensor of whatever element type the array has (OrtValue.ortvalue_from_numpy).
  Ephost::Tensor any_tensor(pybind11::handle object) {
    return tensor_for("value", EPHOST_ELEMENT_UNDEFINED, object);
  }

 private:
  Ephost::Tensor tensor_for(const std::string& name, int32_t elem_type, pybind11::handle object);
  Ephost::Tensor string_tensor_for(const std::string& name, const pybind11::array& array);

  std::vector<pybind11::array> arrays_;              // buffers the tensors were made over
  std::deque<std::vector<std::string>> strings_;     // string tensors' text ...
  std::deque<std::vector<const char*>> string_ptrs_;  // ... and the pointer arrays the C API reads
};

// The numpy dtype of an element type (bfloat16 as uint16: numpy has no bfloat16, and ONNX's own test
// data stores bfloat16 so). The narrow types of opsets 19 to 25, which numpy has no dtype for, are
// held one element per byte, in an array of the tensor's shape: the float8 types (float8e4m3fn,
// float8e4m3fnuz, float8e5m2, float8e5m2fnuz, float8e8m0) and float4e2m1 as uint8 codes (their bit
// patterns: numpy's view(...) of ml_dtypes, where installed, reads them); int4 and int2 as int8
// values; uint4 and uint2 as uint8 values. The packed types (int4, uint4, float4e2m1, int2, uint2) are
// unpacked into such arrays on the way out and packed from them on the way in (a copy; a value out
// of the type's range is refused). NotImplemented for an element type numpy cannot hold.
pybind11::dtype dtype_of(int32_t elem_type, const std::string& what);
// The element type of a numpy dtype, UNDEFINED for one ONNX has none for.
int32_t elem_type_of(const pybind11::dtype& dtype);

// A returned value as Python: a numpy array viewing the tensor's buffer (object array of str for
// strings), a list of arrays for a sequence, None for an empty optional.
pybind11::object to_python(const Ephost::Tensor& value);

// The address of the buffer a C API tensor made from `array` for `elem_type` would use: the array's
// own when no copy is needed. For tests of the no-copy promise.
uintptr_t input_buffer_address(pybind11::handle array, int32_t elem_type);

}  // namespace ephost_python
