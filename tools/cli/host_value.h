// Model inputs and outputs on the CLI side: a tensor, a sequence of tensors, or none (an empty
// optional), as the C API's values (ephost_c_api.h, version 2). Converts from/to Ephost::Tensor and
// from/to ONNX's TensorProto, SequenceProto and OptionalProto files (input_N.pb / output_N.pb), and
// compares values for `ephost test`.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tensor_io.h"
#include "tensor_values.h"

namespace ephost_cli {

class HostValue {
 public:
  enum class Kind { kTensor, kSequence, kNone };

  HostValue() = default;
  explicit HostValue(HostTensor tensor);
  static HostValue sequence(std::string name, int32_t elem_type, std::vector<HostTensor> elements);
  static HostValue none(std::string name);
  HostValue(HostValue&&) = default;
  HostValue& operator=(HostValue&&) = default;

  Kind kind() const { return kind_; }
  const std::string& name() const { return name_; }
  void set_name(std::string name);

  // The tensor; throws Ephost::Exception unless this is a tensor.
  HostTensor& tensor();
  const HostTensor& tensor() const;
  // A sequence's element type and elements.
  int32_t sequence_elem_type() const { return elem_type_; }
  std::vector<HostTensor>& elements() { return elements_; }
  const std::vector<HostTensor>& elements() const { return elements_; }

  // "float [2,3]", "sequence of 3 float tensors", "none (empty optional)".
  std::string describe() const;

  // A C API value. A tensor views this value's buffer (this value must outlive it and stay
  // unchanged); a sequence is copied by the library; none is none.
  Ephost::Tensor to_ephost() const;

 private:
  Kind kind_ = Kind::kNone;
  std::string name_;
  HostTensor tensor_;
  int32_t elem_type_ = EPHOST_ELEMENT_UNDEFINED;
  std::vector<HostTensor> elements_;
};

// A deep copy of a C API value of any kind.
HostValue from_ephost_value(const Ephost::Tensor& value, std::string name);

// What a model declares for one input or output (SessionGetInputKind): EphostValueKind values.
struct DeclaredKind {
  int32_t kind = EPHOST_VALUE_UNDEFINED;           // TENSOR, SEQUENCE, OPTIONAL; UNDEFINED when not said
  int32_t optional_kind = EPHOST_VALUE_UNDEFINED;  // OPTIONAL: what it holds
  int32_t tensor_elem_type = EPHOST_ELEMENT_UNDEFINED;  // of the tensor(s) it is or holds
};

// Reads a .pb file as the value `declared` says: a SequenceProto for a sequence, an OptionalProto
// for an optional, a TensorProto otherwise. Throws Ephost::Exception (NO_SUCHFILE) when it cannot be read.
// A file that cannot be used (not of the declared kind, a map, a sparse tensor...) comes back
// with `unsupported` set, for skipping.
struct LoadedHostValue {
  std::optional<HostValue> value;
  std::string unsupported;
};
LoadedHostValue load_declared_value(const std::string& path, const DeclaredKind& declared);
// Writes a value as the proto of its kind (TensorProto, SequenceProto, or an empty OptionalProto).
void save_value_file(const HostValue& value, const std::string& path);

// ONNX backend test comparison of whole values: same kind; tensors with compare_tensors; sequences
// element by element (same length). nullopt when equal, else why not.
std::optional<std::string> compare_values(const HostValue& expected, const HostValue& got, const Tolerance& tol);

}  // namespace ephost_cli
