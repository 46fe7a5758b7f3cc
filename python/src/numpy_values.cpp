#include "numpy_values.h"

#include <cstring>

#include "ephost/ephost_narrow.h"

namespace py = pybind11;

namespace ephost_python {
namespace {

[[noreturn]] void invalid_argument(const std::string& message) {
  throw Ephost::Exception(EPHOST_INVALID_ARGUMENT, message);
}

bool is_string_dtype(const py::dtype& dtype) {
  const char kind = dtype.kind();
  return kind == 'U' || kind == 'S' || kind == 'O';
}

std::vector<int64_t> shape_of(const py::array& array) {
  return std::vector<int64_t>(array.shape(), array.shape() + array.ndim());
}

py::object numpy() { return py::module_::import("numpy"); }

bool is_packed(int32_t elem_type) {
  const size_t bits = EphostElementBits(elem_type);
  return bits != 0 && bits < 8;
}

bool is_signed_packed(int32_t elem_type) { return elem_type == EPHOST_ELEMENT_INT4 || elem_type == EPHOST_ELEMENT_INT2; }

// Packs an array of one element per byte (int8 values for int4/int2, uint8 values or codes for the
// others) into a new uint8 array of the tensor's packed bytes; InvalidArgument naming the input for a
// value the type cannot hold.
py::array pack(const std::string& name, int32_t elem_type, const py::array& array) {
  const size_t n = static_cast<size_t>(array.size());
  const size_t per_byte = EphostElementsPerByte(elem_type), bits = 8 / per_byte;
  py::array_t<uint8_t> packed(static_cast<py::ssize_t>(EphostTensorDataSize(elem_type, n)));
  uint8_t* out = packed.mutable_data();
  std::memset(out, 0, static_cast<size_t>(packed.size()));
  const bool is_signed = is_signed_packed(elem_type);
  const int lo = is_signed ? -(1 << (bits - 1)) : 0, hi = is_signed ? (1 << (bits - 1)) - 1 : (1 << bits) - 1;
  for (size_t i = 0; i < n; ++i) {
    const int v = is_signed ? static_cast<const int8_t*>(array.data())[i] : static_cast<const uint8_t*>(array.data())[i];
    if (v < lo || v > hi)
      invalid_argument("input '" + name + "': element " + std::to_string(i) + " is " + std::to_string(v) + ", outside " +
                       EphostElementTypeName(elem_type) + "'s " + std::to_string(lo) + " to " + std::to_string(hi));
    out[i / per_byte] = static_cast<uint8_t>(out[i / per_byte] | ((v & ((1 << bits) - 1)) << (bits * (i % per_byte))));
  }
  return std::move(packed);
}

// The packed elements of a tensor, one per byte, in a new array of its shape (see dtype_of).
py::array unpack(int32_t elem_type, const void* data, size_t n, const std::vector<py::ssize_t>& dims) {
  py::array out(dtype_of(elem_type, "output"), dims);
  auto* bytes = static_cast<uint8_t*>(out.mutable_data());
  const bool is_signed = is_signed_packed(elem_type);
  for (size_t i = 0; i < n; ++i) {
    const uint32_t code = EphostNarrowCode(elem_type, data, i);
    bytes[i] = is_signed ? static_cast<uint8_t>(static_cast<int8_t>(EphostNarrowCodeToDouble(elem_type, code)))
                         : static_cast<uint8_t>(code);
  }
  return out;
}

}  // namespace

std::string onnx_type_string(const DeclaredValue& value) {
  const std::string tensor = std::string("tensor(") + EphostElementTypeName(value.elem_type) + ")";
  switch (value.kind) {
    case EPHOST_VALUE_TENSOR: return tensor;
    case EPHOST_VALUE_SEQUENCE: return "seq(" + tensor + ")";
    case EPHOST_VALUE_OPTIONAL:
      return "optional(" + (value.optional_kind == EPHOST_VALUE_SEQUENCE ? "seq(" + tensor + ")" : tensor) + ")";
    default: return value.elem_type != EPHOST_ELEMENT_UNDEFINED ? tensor : "unknown";
  }
}

py::dtype dtype_of(int32_t elem_type, const std::string& what) {
  switch (elem_type) {
    case EPHOST_ELEMENT_FLOAT: return py::dtype("float32");
    case EPHOST_ELEMENT_UINT8: return py::dtype("uint8");
    case EPHOST_ELEMENT_INT8: return py::dtype("int8");
    case EPHOST_ELEMENT_UINT16: return py::dtype("uint16");
    case EPHOST_ELEMENT_INT16: return py::dtype("int16");
    case EPHOST_ELEMENT_INT32: return py::dtype("int32");
    case EPHOST_ELEMENT_INT64: return py::dtype("int64");
    case EPHOST_ELEMENT_STRING: return py::dtype("object");
    case EPHOST_ELEMENT_BOOL: return py::dtype("bool");
    case EPHOST_ELEMENT_FLOAT16: return py::dtype("float16");
    case EPHOST_ELEMENT_DOUBLE: return py::dtype("float64");
    case EPHOST_ELEMENT_UINT32: return py::dtype("uint32");
    case EPHOST_ELEMENT_UINT64: return py::dtype("uint64");
    case EPHOST_ELEMENT_COMPLEX64: return py::dtype("complex64");
    case EPHOST_ELEMENT_COMPLEX128: return py::dtype("complex128");
    case EPHOST_ELEMENT_BFLOAT16: return py::dtype("uint16");
    case EPHOST_ELEMENT_FLOAT8E4M3FN:
    case EPHOST_ELEMENT_FLOAT8E4M3FNUZ:
    case EPHOST_ELEMENT_FLOAT8E5M2:
    case EPHOST_ELEMENT_FLOAT8E5M2FNUZ:
    case EPHOST_ELEMENT_FLOAT8E8M0:
    case EPHOST_ELEMENT_FLOAT4E2M1:
    case EPHOST_ELEMENT_UINT4:
    case EPHOST_ELEMENT_UINT2: return py::dtype("uint8");
    case EPHOST_ELEMENT_INT4:
    case EPHOST_ELEMENT_INT2: return py::dtype("int8");
    default:
      throw Ephost::Exception(EPHOST_NOT_IMPLEMENTED, what + ": element type " + std::to_string(elem_type) +
                                                          " has no numpy equivalent");
  }
}

// The element type of a numpy dtype (by kind and size), UNDEFINED for one ONNX has no element type for.
int32_t elem_type_of(const py::dtype& dtype) {
  if (is_string_dtype(dtype)) return EPHOST_ELEMENT_STRING;
  const py::ssize_t size = dtype.itemsize();
  switch (dtype.kind()) {
    case 'b': return EPHOST_ELEMENT_BOOL;
    case 'f': return size == 2 ? EPHOST_ELEMENT_FLOAT16 : size == 4 ? EPHOST_ELEMENT_FLOAT
                   : size == 8 ? EPHOST_ELEMENT_DOUBLE : EPHOST_ELEMENT_UNDEFINED;
    case 'c': return size == 8 ? EPHOST_ELEMENT_COMPLEX64 : size == 16 ? EPHOST_ELEMENT_COMPLEX128
                   : EPHOST_ELEMENT_UNDEFINED;
    case 'i': return size == 1 ? EPHOST_ELEMENT_INT8 : size == 2 ? EPHOST_ELEMENT_INT16
                   : size == 4 ? EPHOST_ELEMENT_INT32 : size == 8 ? EPHOST_ELEMENT_INT64 : EPHOST_ELEMENT_UNDEFINED;
    case 'u': return size == 1 ? EPHOST_ELEMENT_UINT8 : size == 2 ? EPHOST_ELEMENT_UINT16
                   : size == 4 ? EPHOST_ELEMENT_UINT32 : size == 8 ? EPHOST_ELEMENT_UINT64 : EPHOST_ELEMENT_UNDEFINED;
    default: return EPHOST_ELEMENT_UNDEFINED;
  }
}

// `object` as an array ready to lend its buffer to a tensor of `elem_type` (UNDEFINED: whatever it is):
// the array itself when it is already C-contiguous, aligned and of that type; a contiguous copy when
// only the layout differs; InvalidArgument when the type differs (as ONNX Runtime refuses, rather than
// silently converting float64 to float32).
py::array lendable_array(const std::string& name, int32_t elem_type, py::handle object) {
  py::array array;
  if (py::isinstance<py::array>(object)) {
    array = py::reinterpret_borrow<py::array>(object);
  } else {
    // Lists and scalars: numpy picks the declared type, as ONNX Runtime does for them.
    py::object dtype = elem_type == EPHOST_ELEMENT_UNDEFINED ? py::object(py::none())
                                                            : py::object(dtype_of(elem_type, "input '" + name + "'"));
    array = numpy().attr("asarray")(object, dtype);
  }
  const int32_t found = elem_type_of(array.dtype());
  // ONNX's test data and numpy hold bfloat16 as uint16.
  const bool bfloat16_bits = elem_type == EPHOST_ELEMENT_BFLOAT16 && found == EPHOST_ELEMENT_UINT16;
  // The narrow types arrive as one element per byte (dtype_of).
  const bool narrow_bytes = elem_type >= EPHOST_ELEMENT_FLOAT8E4M3FN && EphostElementBits(elem_type) != 0 &&
                            found == elem_type_of(dtype_of(elem_type, "input"));
  if (elem_type != EPHOST_ELEMENT_UNDEFINED && found != elem_type && !bfloat16_bits && !narrow_bytes)
    invalid_argument("input '" + name + "': the model declares tensor(" + EphostElementTypeName(elem_type) +
                     "), got a numpy array of dtype " + py::str(array.dtype()).cast<std::string>());
  if (found == EPHOST_ELEMENT_UNDEFINED)
    invalid_argument("input '" + name + "': numpy dtype " + py::str(array.dtype()).cast<std::string>() +
                     " has no ONNX element type");
  // A copy only when the buffer cannot be lent as it is: strided, misaligned or byte-swapped.
  if (!array.dtype().attr("isnative").cast<bool>()) array = array.attr("astype")(array.dtype().attr("newbyteorder")("="));
  if (!(array.flags() & py::array::c_style) || !(array.flags() & py::detail::npy_api::NPY_ARRAY_ALIGNED_))
    array = numpy().attr("array")(array, py::arg("order") = "C");  // a new, aligned C-order copy
  return array;
}

Ephost::Tensor InputBuffers::string_tensor_for(const std::string& name, const py::array& array) {
  auto& text = strings_.emplace_back();
  auto& pointers = string_ptrs_.emplace_back();
  py::object flat = array.attr("ravel")();
  for (py::handle item : flat) {
    if (py::isinstance<py::bytes>(item))
      text.push_back(item.cast<std::string>());
    else if (py::isinstance<py::str>(item))
      text.push_back(item.cast<std::string>());
    else
      invalid_argument("input '" + name + "': a string tensor holds " +
                       py::str(py::type::of(item)).cast<std::string>() + " elements, not str or bytes");
  }
  for (const std::string& s : text) pointers.push_back(s.c_str());
  const std::vector<int64_t> shape = shape_of(array);
  EphostTensor* t = nullptr;
  Ephost::check(Ephost::api().CreateTensorWithData(EPHOST_ELEMENT_STRING, shape.data(), shape.size(), pointers.data(),
                                                   pointers.size() * sizeof(const char*), &t));
  return Ephost::Tensor(t);
}

Ephost::Tensor InputBuffers::tensor_for(const std::string& name, int32_t elem_type, py::handle object) {
  if (object.is_none()) invalid_argument("input '" + name + "' is a tensor: None is no value for it");
  if (elem_type == EPHOST_ELEMENT_STRING ||
      (py::isinstance<py::array>(object) && is_string_dtype(py::reinterpret_borrow<py::array>(object).dtype())))
    return string_tensor_for(name, numpy().attr("asarray")(object));
  py::array array = lendable_array(name, elem_type, object);
  const int32_t type = elem_type != EPHOST_ELEMENT_UNDEFINED ? elem_type : elem_type_of(array.dtype());
  const std::vector<int64_t> element_shape = shape_of(array);
  if (is_packed(type)) array = pack(name, type, array);
  arrays_.push_back(array);
  const std::vector<int64_t>& shape = element_shape;
  EphostTensor* t = nullptr;
  // The C API reads inputs only; the const_cast lends it read-only arrays too.
  Ephost::check(Ephost::api().CreateTensorWithData(static_cast<EphostElementType>(type), shape.data(), shape.size(),
                                                   const_cast<void*>(array.data()), static_cast<size_t>(array.nbytes()),
                                                   &t));
  return Ephost::Tensor(t);
}

Ephost::Tensor InputBuffers::value_for(const DeclaredValue& declared, py::handle object) {
  EphostValueKind kind = declared.kind;
  if (kind == EPHOST_VALUE_OPTIONAL) {
    if (object.is_none()) return Ephost::Tensor::none();
    kind = declared.optional_kind;
  }
  if (kind == EPHOST_VALUE_SEQUENCE) {
    if (!py::isinstance<py::list>(object) && !py::isinstance<py::tuple>(object))
      invalid_argument("input '" + declared.name + "' is " + onnx_type_string(declared) + ": pass a list of arrays, got " +
                       py::str(py::type::of(object)).cast<std::string>());
    std::vector<Ephost::Tensor> elements;
    size_t position = 0;
    for (py::handle item : object)
      elements.push_back(tensor_for(declared.name + "[" + std::to_string(position++) + "]", declared.elem_type, item));
    // CreateSequence copies the elements; their buffers may go after the call.
    return Ephost::Tensor::sequence(static_cast<EphostElementType>(declared.elem_type), elements);
  }
  return tensor_for(declared.name, declared.elem_type, object);
}

py::object to_python(const Ephost::Tensor& value) {
  if (!value) return py::none();
  switch (value.kind()) {
    case EPHOST_VALUE_NONE: return py::none();
    case EPHOST_VALUE_SEQUENCE: {
      py::list out;
      for (const Ephost::Tensor& element : value.elements()) out.append(to_python(element));
      return std::move(out);
    }
    default: break;
  }
  const int32_t type = value.type();
  const std::vector<int64_t> shape = value.shape();
  std::vector<py::ssize_t> dims(shape.begin(), shape.end());
  if (type == EPHOST_ELEMENT_STRING) {
    py::array out(py::dtype("object"), dims);
    const char* const* text = value.data<const char*>();
    py::object flat = out.attr("reshape")(-1);
    for (size_t i = 0; i < value.size(); ++i) flat[py::int_(i)] = py::str(text[i] ? text[i] : "");
    return std::move(out);
  }
  const py::dtype dtype = dtype_of(type, "output");
  if (value.size() == 0 || value.data<void>() == nullptr) return py::array(dtype, dims);
  if (is_packed(type)) return unpack(type, value.data<void>(), value.size(), dims);
  // The array views the library's buffer; the capsule keeps the library's tensor alive with it.
  auto* owner = new Ephost::Tensor(value);
  py::capsule keep(owner, [](void* p) { delete static_cast<Ephost::Tensor*>(p); });
  return py::array(dtype, dims, value.data<void>(), keep);
}

uintptr_t input_buffer_address(py::handle object, int32_t elem_type) {
  return reinterpret_cast<uintptr_t>(lendable_array("probe", elem_type, object).data());
}

}  // namespace ephost_python
