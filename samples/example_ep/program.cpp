#include "program.h"

#include <limits>
#include <set>

#include "ephost/sdk/plugin.hpp"

namespace example_ep {
namespace {

// How many inputs and parameters each kind takes (-1: any number).
struct Signature {
  OpKind kind;
  const char* name;
  size_t min_inputs, max_inputs;
  int ints, floats;
};

constexpr Signature kSignatures[] = {
    {OpKind::kConv, "Conv", 2, 3, 9, 0},
    {OpKind::kAdd, "Add", 2, 2, 0, 0},
    {OpKind::kSub, "Sub", 2, 2, 0, 0},
    {OpKind::kMul, "Mul", 2, 2, 0, 0},
    {OpKind::kDiv, "Div", 2, 2, 0, 0},
    {OpKind::kRelu, "Relu", 1, 1, 0, 0},
    {OpKind::kSigmoid, "Sigmoid", 1, 1, 0, 0},
    {OpKind::kClip, "Clip", 1, 1, 0, 2},
    {OpKind::kHardSigmoid, "HardSigmoid", 1, 1, 0, 2},
    {OpKind::kGlobalAveragePool, "GlobalAveragePool", 1, 1, 0, 0},
    {OpKind::kMaxPool, "MaxPool", 1, 1, 11, 0},
    {OpKind::kMatMul, "MatMul", 2, 2, 0, 0},
    {OpKind::kSoftmax, "Softmax", 1, 1, 2, 0},
    {OpKind::kChannelAffine, "ChannelAffine", 3, 3, 0, 0},
    {OpKind::kReshape, "Reshape", 1, 1, -1, 0},
    {OpKind::kFlatten, "Flatten", 1, 1, 1, 0},
};

const Signature* signature_of(OpKind kind) {
  for (const Signature& s : kSignatures)
    if (s.kind == kind) return &s;
  return nullptr;
}

[[noreturn]] void invalid(const std::string& what) { ephost::sdk::fail(EPHOST_INVALID_ARGUMENT, "invalid program: " + what); }

// Checks over one op, with the program around it for the weights it names.
class OpChecker {
 public:
  OpChecker(const Program& program, const Op& op, size_t index) : program_(program), op_(op) {
    where_ = "op " + std::to_string(index) + " (" + std::string(op_kind_name(op.kind)) + " '" + op.name + "')";
  }

  // The weight in input `i`, which must be one of rank `rank`.
  const Weight& weight(size_t i, size_t rank) const {
    uint32_t slot = op_.inputs[i];
    if (slot < program_.first_weight_slot() || slot >= program_.first_op_slot())
      fail("input " + std::to_string(i) + " must be a weight");
    const Weight& w = program_.weights[slot - program_.first_weight_slot()];
    if (w.shape.size() != rank) fail("weight input " + std::to_string(i) + " must have rank " + std::to_string(rank));
    return w;
  }
  // Parameters [first, first + count) lie in [minimum, kMaxWindowParameter].
  void in_range(size_t first, size_t count, int64_t minimum) const {
    for (size_t i = first; i < first + count; ++i)
      if (op_.ints[i] < minimum || op_.ints[i] > kMaxWindowParameter)
        fail("parameter " + std::to_string(i) + " is " + std::to_string(op_.ints[i]));
  }
  [[noreturn]] void fail(const std::string& what) const { invalid(where_ + ": " + what); }

 private:
  const Program& program_;
  const Op& op_;
  std::string where_;
};

void check_parameters(const Program& program, const Op& op, size_t index) {
  OpChecker check(program, op, index);
  switch (op.kind) {
    case OpKind::kConv: {
      const Weight& w = check.weight(1, 4);
      if (op.ints[0] < 1) check.fail("group must be positive");
      check.in_range(1, 4, 0);  // pads
      check.in_range(5, 4, 1);  // strides, dilations
      if (w.shape[0] % op.ints[0] != 0) check.fail("group does not divide the output channels");
      if (op.inputs.size() == 3 && check.weight(2, 1).shape[0] != w.shape[0])
        check.fail("bias size differs from the output channels");
      break;
    }
    case OpKind::kMaxPool:
      check.in_range(0, 2, 1);  // kernel
      check.in_range(2, 4, 0);  // pads
      check.in_range(6, 4, 1);  // strides, dilations
      if (op.ints[10] != 0 && op.ints[10] != 1) check.fail("ceil_mode must be 0 or 1");
      break;
    case OpKind::kMatMul:
      check.weight(1, 2);
      break;
    case OpKind::kSoftmax:
      if (op.ints[1] != 0 && op.ints[1] != 1) check.fail("legacy must be 0 or 1");
      break;
    case OpKind::kChannelAffine:
      if (check.weight(1, 1).shape != check.weight(2, 1).shape) check.fail("scale and shift differ in size");
      break;
    case OpKind::kReshape: {
      int inferred = 0;
      for (int64_t d : op.ints) {
        if (d < -1) check.fail("target dimension " + std::to_string(d));
        inferred += d == -1;
      }
      if (inferred > 1) check.fail("more than one inferred (-1) dimension");
      break;
    }
    default:
      break;
  }
}

}  // namespace

const char* op_kind_name(OpKind kind) {
  const Signature* s = signature_of(kind);
  return s ? s->name : nullptr;
}

void validate(const Program& program) {
  for (size_t i = 0; i < program.weights.size(); ++i) {
    const Weight& w = program.weights[i];
    uint64_t count = 1;
    for (int64_t d : w.shape) {
      if (d < 0) invalid("weight " + std::to_string(i) + " has a negative dimension");
      if (d != 0 && count > std::numeric_limits<uint64_t>::max() / static_cast<uint64_t>(d))
        invalid("weight " + std::to_string(i) + " has too many elements");
      count *= static_cast<uint64_t>(d);
    }
    if (count != w.data.size())
      invalid("weight " + std::to_string(i) + " holds " + std::to_string(w.data.size()) + " values, its shape " +
              std::to_string(count));
  }
  for (size_t i = 0; i < program.ops.size(); ++i) {
    const Op& op = program.ops[i];
    const Signature* s = signature_of(op.kind);
    if (s == nullptr) invalid("op " + std::to_string(i) + " has unknown kind " + std::to_string(static_cast<uint32_t>(op.kind)));
    if (op.inputs.size() < s->min_inputs || op.inputs.size() > s->max_inputs)
      invalid("op " + std::to_string(i) + " (" + s->name + ") has " + std::to_string(op.inputs.size()) + " inputs");
    if ((s->ints >= 0 && op.ints.size() != static_cast<size_t>(s->ints)) ||
        (s->floats >= 0 && op.floats.size() != static_cast<size_t>(s->floats)))
      invalid("op " + std::to_string(i) + " (" + s->name + ") has the wrong number of parameters");
    const uint32_t own_slot = program.first_op_slot() + static_cast<uint32_t>(i);
    for (uint32_t slot : op.inputs)
      if (slot >= own_slot) invalid("op " + std::to_string(i) + " reads slot " + std::to_string(slot) + " before it is defined");
    check_parameters(program, op, i);
  }
  if (program.outputs.size() != program.output_names.size()) invalid("output names do not match the outputs");
  std::set<uint32_t> seen;
  for (uint32_t slot : program.outputs) {
    if (slot < program.first_op_slot() || slot >= program.num_slots())
      invalid("output slot " + std::to_string(slot) + " is not an op result");
    if (!seen.insert(slot).second) invalid("output slot " + std::to_string(slot) + " is listed twice");
  }
}

}  // namespace example_ep
