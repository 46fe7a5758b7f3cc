#include "core/runtime_value.h"

#include "core/error.h"

namespace ephost {

const char* value_kind_name(ValueKind kind) {
  switch (kind) {
    case ValueKind::kTensor: return "tensor";
    case ValueKind::kSequence: return "sequence";
    case ValueKind::kNone: return "none";
    case ValueKind::kUnset: break;
  }
  return "unset";
}

int32_t to_abi_kind(ValueKind kind) {
  switch (kind) {
    case ValueKind::kTensor: return EPHOST_VALUE_TENSOR;
    case ValueKind::kSequence: return EPHOST_VALUE_SEQUENCE;
    case ValueKind::kNone: return EPHOST_VALUE_NONE;
    case ValueKind::kUnset: break;
  }
  return EPHOST_VALUE_UNDEFINED;
}

RuntimeValue::RuntimeValue(Tensor tensor)
    : kind_(tensor.empty() ? ValueKind::kUnset : ValueKind::kTensor), tensor_(std::move(tensor)) {}

RuntimeValue RuntimeValue::sequence(std::shared_ptr<const TensorSequence> sequence) {
  if (!sequence) fail(EPHOST_INVALID_ARGUMENT, "a sequence value needs a sequence");
  RuntimeValue v;
  v.kind_ = ValueKind::kSequence;
  v.sequence_ = std::move(sequence);
  return v;
}

RuntimeValue RuntimeValue::none() {
  RuntimeValue v;
  v.kind_ = ValueKind::kNone;
  return v;
}

const Tensor& RuntimeValue::tensor(const char* what) const {
  if (kind_ != ValueKind::kTensor) fail(EPHOST_INVALID_ARGUMENT, "{} is a {}, not a tensor", what, describe());
  return tensor_;
}

Tensor& RuntimeValue::tensor(const char* what) {
  if (kind_ != ValueKind::kTensor) fail(EPHOST_INVALID_ARGUMENT, "{} is a {}, not a tensor", what, describe());
  return tensor_;
}

const TensorSequence& RuntimeValue::sequence(const char* what) const {
  if (kind_ != ValueKind::kSequence) fail(EPHOST_INVALID_ARGUMENT, "{} is a {}, not a sequence", what, describe());
  return *sequence_;
}

std::string RuntimeValue::describe() const {
  switch (kind_) {
    case ValueKind::kTensor:
      return fmt::format("{} tensor {}", element_type_name(tensor_.elem_type()), shape_to_string(tensor_.shape()));
    case ValueKind::kSequence:
      return fmt::format("sequence of {} {} tensor(s)", sequence_->elements.size(),
                         element_type_name(sequence_->elem_type));
    case ValueKind::kNone: return "none (empty optional)";
    case ValueKind::kUnset: break;
  }
  return "unset value";
}

RuntimeValue make_sequence(int32_t elem_type, std::vector<Tensor> elements) {
  if (!element_type_known(elem_type))
    fail(EPHOST_INVALID_ARGUMENT, "a sequence cannot hold tensors of element type {}", elem_type);
  for (size_t i = 0; i < elements.size(); ++i) {
    if (elements[i].elem_type() != elem_type)
      fail(EPHOST_INVALID_ARGUMENT, "sequence of {} tensors: element {} is a {} tensor", element_type_name(elem_type),
           i, element_type_name(elements[i].elem_type()));
  }
  auto seq = std::make_shared<TensorSequence>();
  seq->elem_type = elem_type;
  seq->elements = std::move(elements);
  return RuntimeValue::sequence(std::move(seq));
}

}  // namespace ephost
