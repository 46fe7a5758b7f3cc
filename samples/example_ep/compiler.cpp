#include "compiler.h"

#include <cmath>
#include <limits>
#include <map>

namespace example_ep {
namespace {

using ephost::sdk::Graph;
using ephost::sdk::Node;
using ephost::sdk::Tensor;
using ephost::sdk::Value;

// Builds a program while slot numbers are not final yet (weight and op slots depend on how many
// inputs and weights there are in the end): operands are remembered as (kind, index) until finish().
class ProgramBuilder {
 public:
  struct Ref {
    enum class Kind { kInput, kWeight, kOp } kind;
    uint32_t index;
  };

  void add_input(const std::string& name) {
    values_[name] = Ref{Ref::Kind::kInput, static_cast<uint32_t>(program_.input_names.size())};
    program_.input_names.push_back(name);
  }

  // The operand for value `v`: a group input, an earlier node's result, or a constant copied in as a
  // weight (once per name).
  Ref operand(const Value& v) {
    const std::string name = v.name();
    auto it = values_.find(name);
    if (it != values_.end()) return it->second;
    if (!v.is_constant())
      ephost::sdk::fail(EPHOST_EP_FAIL, "example EP compiler: value '" + name + "' is neither a group input nor made inside the group");
    Tensor t = v.constant();
    if (t.elem_type() != EPHOST_ELEMENT_FLOAT)
      ephost::sdk::fail(EPHOST_EP_FAIL, "example EP compiler: constant '" + name + "' is not float");
    Ref ref = add_weight(Weight{t.shape(), std::vector<float>(t.data<float>(), t.data<float>() + t.size())});
    values_[name] = ref;
    return ref;
  }

  Ref add_weight(Weight w) {
    program_.weights.push_back(std::move(w));
    return Ref{Ref::Kind::kWeight, static_cast<uint32_t>(program_.weights.size() - 1)};
  }

  // Appends an op computing node `node`'s output 0.
  void add_op(const Node& node, OpKind kind, std::vector<Ref> inputs, std::vector<int64_t> ints = {},
              std::vector<float> floats = {}) {
    Op op;
    op.kind = kind;
    op.name = node.name();
    op.ints = std::move(ints);
    op.floats = std::move(floats);
    program_.ops.push_back(std::move(op));
    op_inputs_.push_back(std::move(inputs));
    values_[node.output(0).name()] = Ref{Ref::Kind::kOp, static_cast<uint32_t>(program_.ops.size() - 1)};
  }

  Program finish(const Graph& group) {
    for (size_t i = 0; i < program_.ops.size(); ++i)
      for (const Ref& r : op_inputs_[i]) program_.ops[i].inputs.push_back(slot(r));
    for (size_t i = 0; i < group.num_outputs(); ++i) {
      const std::string name = group.output(i).name();
      auto it = values_.find(name);
      if (it == values_.end() || it->second.kind != Ref::Kind::kOp)
        ephost::sdk::fail(EPHOST_EP_FAIL, "example EP compiler: group output '" + name + "' is not made inside the group");
      program_.outputs.push_back(slot(it->second));
      program_.output_names.push_back(name);
    }
    validate(program_);
    return std::move(program_);
  }

 private:
  uint32_t slot(const Ref& r) const {
    switch (r.kind) {
      case Ref::Kind::kInput: return r.index;
      case Ref::Kind::kWeight: return program_.first_weight_slot() + r.index;
      case Ref::Kind::kOp: break;
    }
    return program_.first_op_slot() + r.index;
  }

  Program program_;
  std::vector<std::vector<Ref>> op_inputs_;
  std::map<std::string, Ref> values_;
};

using Ref = ProgramBuilder::Ref;

// pads (top, left, bottom, right), strides (h, w), dilations (h, w): ONNX's defaults, VALID = no pads.
std::vector<int64_t> window_ints(const Node& node) {
  std::vector<int64_t> pads = node.attr_ints("pads", {0, 0, 0, 0});
  if (node.attr_string("auto_pad", "NOTSET") == "VALID") pads = {0, 0, 0, 0};
  std::vector<int64_t> out = pads;
  for (int64_t v : node.attr_ints("strides", {1, 1})) out.push_back(v);
  for (int64_t v : node.attr_ints("dilations", {1, 1})) out.push_back(v);
  return out;
}

float scalar_constant(const Node& node, size_t i, float absent) {
  if (!node.has_input(i)) return absent;
  return node.input(i).constant().data<float>()[0];
}

void translate(const Node& node, ProgramBuilder& b) {
  const std::string op = node.op_type();
  auto in = [&](size_t i) { return b.operand(node.input(i)); };
  if (op == "Conv") {
    std::vector<Ref> inputs = {in(0), in(1)};
    if (node.has_input(2)) inputs.push_back(in(2));
    std::vector<int64_t> ints = {node.attr_int("group", 1)};
    for (int64_t v : window_ints(node)) ints.push_back(v);
    b.add_op(node, OpKind::kConv, inputs, ints);
  } else if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div") {
    const OpKind kind = op == "Add" ? OpKind::kAdd : op == "Sub" ? OpKind::kSub : op == "Mul" ? OpKind::kMul : OpKind::kDiv;
    b.add_op(node, kind, {in(0), in(1)});
  } else if (op == "Relu") {
    b.add_op(node, OpKind::kRelu, {in(0)});
  } else if (op == "Sigmoid") {
    b.add_op(node, OpKind::kSigmoid, {in(0)});
  } else if (op == "Clip") {
    const float lowest = std::numeric_limits<float>::lowest(), highest = std::numeric_limits<float>::max();
    const bool bounds_are_inputs = node.opset() >= 11;
    const float lo = bounds_are_inputs ? scalar_constant(node, 1, lowest) : node.attr_float("min", lowest);
    const float hi = bounds_are_inputs ? scalar_constant(node, 2, highest) : node.attr_float("max", highest);
    b.add_op(node, OpKind::kClip, {in(0)}, {}, {lo, hi});
  } else if (op == "HardSigmoid") {
    b.add_op(node, OpKind::kHardSigmoid, {in(0)}, {}, {node.attr_float("alpha", 0.2f), node.attr_float("beta", 0.5f)});
  } else if (op == "GlobalAveragePool") {
    b.add_op(node, OpKind::kGlobalAveragePool, {in(0)});
  } else if (op == "MaxPool") {
    std::vector<int64_t> ints = node.attr_ints("kernel_shape");
    for (int64_t v : window_ints(node)) ints.push_back(v);
    ints.push_back(node.attr_int("ceil_mode", 0));
    b.add_op(node, OpKind::kMaxPool, {in(0)}, ints);
  } else if (op == "MatMul") {
    b.add_op(node, OpKind::kMatMul, {in(0), in(1)});
  } else if (op == "Softmax") {
    const bool legacy = node.opset() < 13;
    b.add_op(node, OpKind::kSoftmax, {in(0)}, {node.attr_int("axis", legacy ? 1 : -1), legacy ? 1 : 0});
  } else if (op == "BatchNormalization") {
    // Inference-mode batch norm is a per-channel affine map: fold the four statistics into two weights.
    const Tensor gamma = node.input(1).constant(), beta = node.input(2).constant(), mean = node.input(3).constant(),
                 var = node.input(4).constant();
    const float epsilon = node.attr_float("epsilon", 1e-5f);
    const int64_t channels = gamma.size();
    Weight scale{{channels}, std::vector<float>(channels)}, shift{{channels}, std::vector<float>(channels)};
    for (int64_t c = 0; c < channels; ++c) {
      scale.data[c] = gamma.data<float>()[c] / std::sqrt(var.data<float>()[c] + epsilon);
      shift.data[c] = beta.data<float>()[c] - mean.data<float>()[c] * scale.data[c];
    }
    b.add_op(node, OpKind::kChannelAffine, {in(0), b.add_weight(std::move(scale)), b.add_weight(std::move(shift))});
  } else if (op == "Reshape") {
    const Tensor shape = node.input(1).constant();
    b.add_op(node, OpKind::kReshape, {in(0)}, std::vector<int64_t>(shape.data<int64_t>(), shape.data<int64_t>() + shape.size()));
  } else if (op == "Flatten") {
    b.add_op(node, OpKind::kFlatten, {in(0)}, {node.attr_int("axis", 1)});
  } else {
    ephost::sdk::fail(EPHOST_EP_FAIL, "example EP compiler: no translation for " + op + " node '" + node.name() + "'");
  }
}

}  // namespace

Program compile_group(const Graph& group) {
  ProgramBuilder builder;
  for (size_t i = 0; i < group.num_inputs(); ++i) {
    Value v = group.input(i);
    if (!v.is_constant()) builder.add_input(v.name());
  }
  for (const Node& node : group.nodes()) translate(node, builder);
  return builder.finish(group);
}

}  // namespace example_ep
