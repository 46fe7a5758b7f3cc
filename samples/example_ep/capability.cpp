#include "capability.h"

#include "program.h"

namespace example_ep {
namespace {

using ephost::sdk::Node;
using ephost::sdk::Value;

bool is_float(const Value& v) { return v.valid() && v.elem_type() == EPHOST_ELEMENT_FLOAT; }

constexpr int64_t kAnyRank = -1;

// Input `i` is present and a float tensor, of a rank within [min_rank, max_rank] when the graph knows
// it. (A rank shape inference could not find is checked per run by the interpreter instead.)
std::string float_input(const Node& node, size_t i, int64_t min_rank = kAnyRank, int64_t max_rank = kAnyRank) {
  if (!node.has_input(i)) return "input " + std::to_string(i) + " is missing";
  Value v = node.input(i);
  if (!is_float(v)) return "input '" + v.name() + "' is not float";
  const int64_t rank = v.rank();
  if (rank >= 0 && ((min_rank != kAnyRank && rank < min_rank) || (max_rank != kAnyRank && rank > max_rank)))
    return "input '" + v.name() + "' has rank " + std::to_string(rank);
  return "";
}

// Input `i` is a constant initializer of `elem_type` and rank `rank` (-1: any).
std::string constant_input(const Node& node, size_t i, int32_t elem_type, int64_t rank) {
  if (!node.has_input(i)) return "input " + std::to_string(i) + " is missing";
  Value v = node.input(i);
  if (!v.is_constant()) return "input '" + v.name() + "' is not a constant initializer";
  ephost::sdk::Tensor t = v.constant();
  if (t.elem_type() != elem_type) return "constant '" + v.name() + "' has element type " + EphostElementTypeName(t.elem_type());
  if (rank >= 0 && static_cast<int64_t>(t.rank()) != rank) return "constant '" + v.name() + "' has rank " + std::to_string(t.rank());
  return "";
}

// auto_pad, pads, strides and dilations of a 2-D window (Conv, MaxPool).
std::string window_attributes(const Node& node) {
  const std::string auto_pad = node.attr_string("auto_pad", "NOTSET");
  if (auto_pad != "NOTSET" && auto_pad != "VALID") return "auto_pad " + auto_pad + " is not implemented";
  if (node.has_attr("pads") && node.attr_ints("pads").size() != 4) return "pads must have 4 values";
  for (const char* name : {"strides", "dilations"})
    if (node.has_attr(name) && node.attr_ints(name).size() != 2) return std::string(name) + " must have 2 values";
  for (const char* name : {"pads", "strides", "dilations"}) {
    const int64_t minimum = std::string(name) == "pads" ? 0 : 1;
    for (int64_t v : node.attr_ints(name))
      if (v < minimum || v > kMaxWindowParameter) return std::string(name) + " out of range";
  }
  return "";
}

std::string conv_reason(const Node& node) {
  std::string why = float_input(node, 0, 4, 4);
  if (why.empty()) why = constant_input(node, 1, EPHOST_ELEMENT_FLOAT, 4);
  if (why.empty() && node.has_input(2)) why = constant_input(node, 2, EPHOST_ELEMENT_FLOAT, 1);
  if (why.empty()) why = window_attributes(node);
  if (!why.empty()) return why;
  const std::vector<int64_t> w = node.input(1).constant().shape();
  const int64_t group = node.attr_int("group", 1);
  if (group < 1 || w[0] % group != 0) return "group " + std::to_string(group) + " does not divide " + std::to_string(w[0]) + " filters";
  if (node.has_input(2) && node.input(2).constant().dim(0) != w[0]) return "bias size differs from the filter count";
  if (node.has_attr("kernel_shape") && node.attr_ints("kernel_shape") != std::vector<int64_t>{w[2], w[3]})
    return "kernel_shape differs from the weights";
  const std::vector<int64_t> x = node.input(0).dims();
  if (x.size() == 4 && x[1] >= 0 && x[1] != w[1] * group) return "input channels do not match the weights";
  return "";
}

std::string max_pool_reason(const Node& node) {
  std::string why = float_input(node, 0, 4, 4);
  if (why.empty()) why = window_attributes(node);
  if (!why.empty()) return why;
  if (node.attr_ints("kernel_shape").size() != 2) return "kernel_shape must have 2 values";
  for (int64_t k : node.attr_ints("kernel_shape"))
    if (k < 1 || k > kMaxWindowParameter) return "kernel_shape out of range";
  return "";
}

std::string clip_reason(const Node& node) {
  std::string why = float_input(node, 0);
  if (!why.empty() || node.opset() < 11) return why;  // before opset 11 the bounds are attributes
  for (size_t i = 1; i <= 2; ++i) {
    if (!node.has_input(i)) continue;
    why = constant_input(node, i, EPHOST_ELEMENT_FLOAT, -1);
    if (!why.empty()) return why;
    if (node.input(i).constant().size() != 1) return "bound '" + node.input(i).name() + "' is not a scalar";
  }
  return "";
}

std::string batch_norm_reason(const Node& node) {
  std::string why = float_input(node, 0, 2);
  for (size_t i = 1; i <= 4 && why.empty(); ++i) why = constant_input(node, i, EPHOST_ELEMENT_FLOAT, 1);
  if (!why.empty()) return why;
  const int64_t channels = node.input(1).constant().dim(0);
  for (size_t i = 2; i <= 4; ++i)
    if (node.input(i).constant().dim(0) != channels) return "parameter sizes differ";
  if (node.attr_int("training_mode", 0) != 0) return "training mode";
  return "";
}

std::string reshape_reason(const Node& node) {
  if (node.opset() < 5) return "Reshape before opset 5 is not implemented";
  std::string why = float_input(node, 0);
  if (why.empty()) why = constant_input(node, 1, EPHOST_ELEMENT_INT64, 1);
  if (why.empty() && node.attr_int("allowzero", 0) != 0) why = "allowzero=1 is not implemented";
  if (!why.empty()) return why;
  ephost::sdk::Tensor shape = node.input(1).constant();
  int inferred = 0;
  for (int64_t i = 0; i < shape.size(); ++i) {
    if (shape.data<int64_t>()[i] < -1) return "invalid target shape";
    inferred += shape.data<int64_t>()[i] == -1;
  }
  return inferred > 1 ? "invalid target shape" : "";
}

// The per-op checks, after the common ones (domain, one float output).
std::string op_reason(const Node& node, const std::string& op) {
  if (op == "Conv") return conv_reason(node);
  if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div") {
    std::string why = float_input(node, 0);
    return why.empty() ? float_input(node, 1) : why;
  }
  if (op == "Relu" || op == "Sigmoid" || op == "HardSigmoid" || op == "Softmax" || op == "Flatten")
    return float_input(node, 0, op == "Softmax" ? 1 : kAnyRank);
  if (op == "Clip") return clip_reason(node);
  if (op == "GlobalAveragePool") return float_input(node, 0, 3);
  if (op == "MaxPool") return max_pool_reason(node);
  if (op == "MatMul") {
    std::string why = float_input(node, 0, 1);
    return why.empty() ? constant_input(node, 1, EPHOST_ELEMENT_FLOAT, 2) : why;
  }
  if (op == "BatchNormalization") return batch_norm_reason(node);
  if (op == "Reshape") return reshape_reason(node);
  return "not implemented";
}

}  // namespace

const std::set<std::string>& supported_op_types() {
  static const std::set<std::string> ops = {"Add", "BatchNormalization", "Clip", "Conv", "Div", "Flatten",
                                            "GlobalAveragePool", "HardSigmoid", "MatMul", "MaxPool", "Mul",
                                            "Relu", "Reshape", "Sigmoid", "Softmax", "Sub"};
  return ops;
}

std::string unsupported_reason(const Node& node) {
  const std::string op = node.op_type(), domain = node.domain();
  if (!domain.empty() && domain != "ai.onnx") return "domain " + domain;
  if (!supported_op_types().count(op)) return "op type " + op + " is not implemented";
  // One float result; optional extra outputs (MaxPool's Indices, BatchNormalization's training
  // statistics) must be absent.
  if (!node.has_output(0) || !is_float(node.output(0))) return "its output is not float";
  for (size_t i = 1; i < node.num_outputs(); ++i)
    if (node.has_output(i)) return "output " + std::to_string(i) + " is not implemented";
  return op_reason(node, op);
}

std::vector<std::vector<Node>> find_groups(const ephost::sdk::Graph& graph, const std::set<std::string>& claim) {
  const ephost::sdk::NodeDependencies dependencies(graph);
  const std::vector<Node>& nodes = dependencies.nodes();  // topological order
  std::vector<bool> claimed(nodes.size(), false);
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (!claim.count(nodes[i].op_type())) continue;
    std::string why = unsupported_reason(nodes[i]);
    claimed[i] = why.empty();
    if (!claimed[i])
      ephost::sdk::log(EPHOST_LOG_VERBOSE, "example EP leaves " + nodes[i].op_type() + " node '" + nodes[i].name() + "': " + why);
  }
  std::vector<std::vector<Node>> groups;
  for (const auto& group : ephost::sdk::acyclic_groups(dependencies, claimed))
    groups.push_back(dependencies.nodes_at(group));
  return groups;
}

}  // namespace example_ep
