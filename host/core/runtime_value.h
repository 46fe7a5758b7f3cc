// RuntimeValue: what one slot of an executing graph holds. ONNX values are tensors, sequences of
// tensors, or optionals; at run time an optional that holds something is just that tensor or
// sequence, and an empty one is "none" (as in ONNX Runtime), so a slot holds one of: a tensor, a
// sequence, none, or nothing yet (unset).
//
// Copies are cheap and share data: a Tensor shares its buffer, a sequence is immutable and shared.
// Every element of a sequence owns its buffer (never memory the executor plans, never a caller's
// buffer), so sequences can be passed through graphs, subgraphs and the ABIs without copying.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace ephost {

enum class ValueKind {
  kUnset,     // no value (a slot not written yet, or released)
  kTensor,
  kSequence,
  kNone,      // an empty optional
};

// "tensor", "sequence", "none", "unset"; for messages.
const char* value_kind_name(ValueKind kind);
// EPHOST_VALUE_TENSOR / _SEQUENCE / _NONE, EPHOST_VALUE_UNDEFINED for kUnset.
int32_t to_abi_kind(ValueKind kind);

// An immutable sequence of tensors of one element type. Build it with make_sequence.
struct TensorSequence {
  int32_t elem_type = 0;  // EphostElementType of every element (known even when empty)
  std::vector<Tensor> elements;
};

class RuntimeValue {
 public:
  RuntimeValue() = default;
  // A tensor; an empty Tensor() gives an unset value (so `slot = Tensor()` releases a slot).
  RuntimeValue(Tensor tensor);  // NOLINT(google-explicit-constructor): tensors are the common case
  static RuntimeValue sequence(std::shared_ptr<const TensorSequence> sequence);
  static RuntimeValue none();

  ValueKind kind() const { return kind_; }
  bool is_set() const { return kind_ != ValueKind::kUnset; }
  bool is_tensor() const { return kind_ == ValueKind::kTensor; }
  bool is_sequence() const { return kind_ == ValueKind::kSequence; }
  bool is_none() const { return kind_ == ValueKind::kNone; }

  // The tensor; throws INVALID_ARGUMENT (naming `what`) unless this is a tensor.
  const Tensor& tensor(const char* what = "value") const;
  Tensor& tensor(const char* what = "value");
  // The sequence; throws INVALID_ARGUMENT (naming `what`) unless this is a sequence.
  const TensorSequence& sequence(const char* what = "value") const;
  const std::shared_ptr<const TensorSequence>& shared_sequence() const { return sequence_; }

  // "float [2,3]", "sequence of 4 int64 tensors", "none".
  std::string describe() const;

 private:
  ValueKind kind_ = ValueKind::kUnset;
  Tensor tensor_;
  std::shared_ptr<const TensorSequence> sequence_;
};

// A sequence value over `elements`, which must all have `elem_type` and own their buffers (the
// caller clones borrowed or planner-placed tensors first). Throws INVALID_ARGUMENT on a type mismatch.
RuntimeValue make_sequence(int32_t elem_type, std::vector<Tensor> elements);

}  // namespace ephost
