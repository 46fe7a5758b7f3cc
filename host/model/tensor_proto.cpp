// TensorProto <-> Tensor.
#include <onnx/onnx_pb.h>

#include <cstring>
#include <limits>

#include "core/error.h"
#include "model/tensor_proto.h"

namespace ephost {

namespace {

const char* tensor_label(const onnx::TensorProto& p) { return p.name().empty() ? "<unnamed>" : p.name().c_str(); }

// Copies `src` (a repeated numeric field) into `dst`, converting each element to T.
template <typename T, typename Field>
void copy_field(const Field& src, void* dst) {
  T* out = static_cast<T*>(dst);
  const int n = src.size();
  for (int i = 0; i < n; ++i) out[i] = static_cast<T>(src.Get(i));
}

// Entries of int32_data that `count` elements of `type` take: one per element, except for the packed
// sub-byte types, whose int32_data holds one packed byte (two 4-bit or four 2-bit elements) per entry.
int64_t packed_int32_entries(int32_t type, int64_t count) {
  return EphostElementBits(type) < 8 ? static_cast<int64_t>(data_bytes(type, count)) : count;
}

bool uses_raw_data(const onnx::TensorProto& p) {
  return p.has_raw_data() && (!p.raw_data().empty() || p.data_type() != EPHOST_ELEMENT_STRING);
}

void check_count(const onnx::TensorProto& p, int64_t have, int64_t need, const char* field) {
  if (have != need) {
    std::vector<int64_t> dims(p.dims().begin(), p.dims().end());
    fail(EPHOST_INVALID_GRAPH, "tensor '{}' ({}, shape {}) has {} values in {} but its shape needs {}",
         tensor_label(p), element_type_name(p.data_type()), shape_to_string(dims), have, field, need);
  }
}

// Checks p's type, shape and data size; returns its element count.
int64_t check_tensor_proto(const onnx::TensorProto& p) {
  const char* label = tensor_label(p);
  if (p.data_location() == onnx::TensorProto::EXTERNAL)
    fail(EPHOST_INVALID_GRAPH, "tensor '{}' has external data that was not resolved by the loader", label);
  if (p.has_segment())
    fail(EPHOST_INVALID_GRAPH, "tensor '{}' is segmented (TensorProto.segment), which is not supported", label);
  const int32_t type = p.data_type();
  if (type == EPHOST_ELEMENT_UNDEFINED || !element_type_known(type))
    fail(EPHOST_INVALID_GRAPH, "tensor '{}' has unsupported element type {}", label, type);

  std::vector<int64_t> dims(p.dims().begin(), p.dims().end());
  int64_t count = 0;
  try {
    count = element_count(dims);
  } catch (const Error& e) {
    fail(EPHOST_INVALID_GRAPH, "tensor '{}': {}", label, e.what());
  }
  if (static_cast<uint64_t>(count) > std::numeric_limits<uint64_t>::max() / 16 / 16)
    fail(EPHOST_INVALID_GRAPH, "tensor '{}' shape {} is too large", label, shape_to_string(dims));
  const uint64_t bytes = data_bytes(type, count);

  if (uses_raw_data(p)) {
    if (type == EPHOST_ELEMENT_STRING)
      fail(EPHOST_INVALID_GRAPH, "string tensor '{}' uses raw_data; strings must be in string_data", label);
    if (p.raw_data().size() != bytes)
      fail(EPHOST_INVALID_GRAPH, "tensor '{}' ({}, shape {}) has {} bytes of raw_data but its shape needs {}",
           label, element_type_name(type), shape_to_string(dims), p.raw_data().size(), bytes);
    return count;
  }
  switch (type) {
    case EPHOST_ELEMENT_FLOAT: check_count(p, p.float_data_size(), count, "float_data"); break;
    case EPHOST_ELEMENT_COMPLEX64: check_count(p, p.float_data_size(), count * 2, "float_data"); break;
    case EPHOST_ELEMENT_DOUBLE: check_count(p, p.double_data_size(), count, "double_data"); break;
    case EPHOST_ELEMENT_COMPLEX128: check_count(p, p.double_data_size(), count * 2, "double_data"); break;
    case EPHOST_ELEMENT_INT64: check_count(p, p.int64_data_size(), count, "int64_data"); break;
    case EPHOST_ELEMENT_UINT32:
    case EPHOST_ELEMENT_UINT64: check_count(p, p.uint64_data_size(), count, "uint64_data"); break;
    case EPHOST_ELEMENT_STRING: check_count(p, p.string_data_size(), count, "string_data"); break;
    // ONNX packs the sub-byte types in int32_data too: one packed byte per entry.
    default: check_count(p, p.int32_data_size(), packed_int32_entries(type, count), "int32_data"); break;
  }
  return count;
}

}  // namespace

void validate_tensor_proto(const onnx::TensorProto& proto) { check_tensor_proto(proto); }

Tensor tensor_from_proto(const onnx::TensorProto& p) {
  check_tensor_proto(p);
  const int32_t type = p.data_type();
  std::vector<int64_t> dims(p.dims().begin(), p.dims().end());
  if (uses_raw_data(p)) {
    Tensor t = Tensor::allocate(type, std::move(dims));
    // little-endian host, as ONNX stores raw_data
    if (!p.raw_data().empty()) std::memcpy(t.data(), p.raw_data().data(), p.raw_data().size());
    return t;
  }
  Tensor t = Tensor::allocate(type, std::move(dims));
  switch (type) {
    case EPHOST_ELEMENT_FLOAT:
    case EPHOST_ELEMENT_COMPLEX64: copy_field<float>(p.float_data(), t.data()); break;
    case EPHOST_ELEMENT_DOUBLE:
    case EPHOST_ELEMENT_COMPLEX128: copy_field<double>(p.double_data(), t.data()); break;
    case EPHOST_ELEMENT_INT64: copy_field<int64_t>(p.int64_data(), t.data()); break;
    case EPHOST_ELEMENT_UINT32: copy_field<uint32_t>(p.uint64_data(), t.data()); break;
    case EPHOST_ELEMENT_UINT64: copy_field<uint64_t>(p.uint64_data(), t.data()); break;
    case EPHOST_ELEMENT_STRING:
      for (int i = 0; i < p.string_data_size(); ++i) t.set_string(static_cast<size_t>(i), p.string_data(i));
      break;
    default:
      switch (type) {
        case EPHOST_ELEMENT_INT32: copy_field<int32_t>(p.int32_data(), t.data()); break;
        case EPHOST_ELEMENT_INT16: copy_field<int16_t>(p.int32_data(), t.data()); break;
        case EPHOST_ELEMENT_INT8: copy_field<int8_t>(p.int32_data(), t.data()); break;
        case EPHOST_ELEMENT_UINT8:
        // float8 bit patterns, and the packed bytes of the 4-bit and 2-bit types (as ONNX writes them)
        case EPHOST_ELEMENT_FLOAT8E4M3FN:
        case EPHOST_ELEMENT_FLOAT8E4M3FNUZ:
        case EPHOST_ELEMENT_FLOAT8E5M2:
        case EPHOST_ELEMENT_FLOAT8E5M2FNUZ:
        case EPHOST_ELEMENT_FLOAT8E8M0:
        case EPHOST_ELEMENT_UINT4:
        case EPHOST_ELEMENT_INT4:
        case EPHOST_ELEMENT_FLOAT4E2M1:
        case EPHOST_ELEMENT_UINT2:
        case EPHOST_ELEMENT_INT2: copy_field<uint8_t>(p.int32_data(), t.data()); break;
        case EPHOST_ELEMENT_BOOL: {
          auto* out = t.data_as<uint8_t>();
          for (int i = 0; i < p.int32_data_size(); ++i) out[i] = p.int32_data(i) != 0 ? 1 : 0;
          break;
        }
        default:  // uint16, float16 and bfloat16 bits
          copy_field<uint16_t>(p.int32_data(), t.data());
          break;
      }
      break;
  }
  return t;
}

void move_new_type_fields_to_raw_data(onnx::TensorProto& p) {
  if (p.data_type() < EPHOST_ELEMENT_FLOAT8E4M3FN || uses_raw_data(p)) return;
  std::string raw(static_cast<size_t>(p.int32_data_size()), '\0');
  for (int i = 0; i < p.int32_data_size(); ++i) raw[static_cast<size_t>(i)] = static_cast<char>(p.int32_data(i));
  p.clear_int32_data();
  p.set_raw_data(std::move(raw));
}

void tensor_to_proto(const Tensor& tensor, const std::string& name, onnx::TensorProto* out) {
  if (tensor.empty()) fail(EPHOST_INVALID_ARGUMENT, "tensor_to_proto: tensor '{}' is empty", name);
  out->Clear();
  out->set_name(name);
  out->set_data_type(tensor.elem_type());
  for (int64_t d : tensor.shape()) out->add_dims(d);
  if (tensor.elem_type() == EPHOST_ELEMENT_STRING) {
    const auto* strings = tensor.data_as<const char*>();
    for (int64_t i = 0; i < tensor.element_count(); ++i) out->add_string_data(strings[i] ? strings[i] : "");
    return;
  }
  out->set_raw_data(tensor.data(), tensor.byte_size());
}

}  // namespace ephost
