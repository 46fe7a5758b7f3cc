// Tensors on the CLI side: HostTensor owns its data; it converts from/to ONNX TensorProto files
// (input_N.pb / output_N.pb, the ONNX backend test layout) and from/to Ephost::Tensor (the C++ wrapper).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ephost/ephost_cxx_api.h"
#include "tool_errors.h"

namespace onnx {
class TensorProto;
}

namespace ephost_cli {

// "float", "int64", ... (EphostElementTypeName), as a string for messages.
inline std::string element_type_name(int32_t elem_type) { return EphostElementTypeName(elem_type); }

struct AlignedFree { void operator()(void* p) const; };

class HostTensor {
 public:
  HostTensor() = default;
  // Zero-filled (strings empty).
  HostTensor(std::string name, int32_t elem_type, std::vector<int64_t> shape);
  HostTensor(HostTensor&&) = default;
  HostTensor& operator=(HostTensor&&) = default;

  const std::string& name() const { return name_; }
  void set_name(std::string n) { name_ = std::move(n); }
  int32_t elem_type() const { return elem_type_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  size_t element_count() const { return count_; }
  size_t byte_size() const { return EphostTensorDataSize(elem_type_, count_); }  // packed types too

  // Non-string data (byte_size() bytes, 64-byte aligned).
  void* data() { return data_.get(); }
  const void* data() const { return data_.get(); }
  template <typename T> T* as() { return static_cast<T*>(data()); }
  template <typename T> const T* as() const { return static_cast<const T*>(data()); }
  // String data.
  std::vector<std::string>& strings() { return strings_; }
  const std::vector<std::string>& strings() const { return strings_; }

  // Reinterprets the elements as another type of the same size (e.g. uint16 bit patterns as bfloat16).
  void reinterpret_as(int32_t elem_type);

  // A tensor of the C API viewing this tensor's buffer: this HostTensor must outlive it and must not
  // be modified meanwhile (strings are passed as pointers into strings()).
  Ephost::Tensor view() const;

 private:
  std::string name_;
  int32_t elem_type_ = EPHOST_ELEMENT_UNDEFINED;
  std::vector<int64_t> shape_;
  size_t count_ = 0;
  std::unique_ptr<unsigned char, AlignedFree> data_;
  std::vector<std::string> strings_;
  mutable std::vector<const char*> string_ptrs_;
};

// "[1,3,640,640]".
std::string shape_string(const std::vector<int64_t>& shape);
// Product of dims (1 for a scalar); throws Ephost::Exception for negative dims or overflow.
size_t element_count(const std::vector<int64_t>& shape);

// A deep copy of a tensor of the C API.
HostTensor from_ephost(const Ephost::Tensor& tensor, std::string name);

// TensorProto <-> HostTensor. from_proto throws Ephost::Exception (INVALID_PROTOBUF) for inconsistent data;
// `base_dir` resolves external data.
HostTensor from_proto(const onnx::TensorProto& proto, const std::string& base_dir = {});
void to_proto(const HostTensor& tensor, onnx::TensorProto* proto);

// Result of reading one .pb file of a test case.
struct LoadedValue {
  std::optional<HostTensor> tensor;  // set when the file is a usable TensorProto
  std::string unsupported;           // otherwise why not (e.g. "a SequenceProto"), for skipping
};
// Reads a .pb file as a tensor. Throws Ephost::Exception (NO_SUCHFILE) when it cannot be read; a file that is
// not a usable TensorProto (sequence, optional or map protos; segmented tensors) is returned with
// `unsupported` set rather than thrown. Files of sequences and optionals: host_value.h.
LoadedValue load_value_file(const std::string& path);
HostTensor load_tensor_file(const std::string& path);  // throws for anything but a usable tensor
void save_tensor_file(const HostTensor& tensor, const std::string& path);

// Files named <prefix><N>.pb in `dir`, ordered by N (input_0.pb, input_1.pb, ..., input_10.pb).
std::vector<std::string> numbered_files(const std::string& dir, const std::string& prefix);

}  // namespace ephost_cli
