// Constant folding, in the main graph and in every subgraph: the host's one constant folding (the
// plugins see the folded graph and fold nothing themselves).
//
// In topological order, so chains fold in one application:
//  - Constant nodes become initializers (no evaluator needed);
//  - Shape and Size of a value with a fully static, known shape become int64 initializers;
//  - any other deterministic ai.onnx node without subgraphs whose inputs are all constants (constant
//    initializers, not graph inputs; in a subgraph, also those of the graphs around it) or absent is
//    run with context.evaluate and replaced by initializers holding its outputs (skipped when the
//    evaluator is empty, fails, or an output is larger than kMaxFoldedTensorBytes).
// DequantizeLinear of constants is a QDQ model's quantized weight: it is precomputed, not folded
// (GraphEditor::precompute): its output holds the float values, so providers see a constant (a float
// kernel packs it once), and the node stays, so a provider can fuse it and run the product in int8 on
// the quantized values (as ONNX Runtime's QDQ transformer sees it). A node reading a precomputed value
// (and otherwise constants) is precomputed too: the chain stays as the model wrote it. After
// partitioning, the precomputed nodes no fused group took run in no step: their values become
// initializers (partition/precomputed_steps.h). A precomputed node whose outputs nobody reads any more
// is removed.
// Nodes whose outputs are graph outputs or are read by subgraphs (outer-scope values) are kept (a
// precomputed value may be read by subgraphs).
// Each fold is GraphEditor::fold: the outputs become initializers of the node's own graph.
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <functional>

#include "core/error.h"
#include "core/log.h"
#include "core/tensor.h"
#include "graph/graph_editor.h"
#include "model/tensor_proto.h"
#include "transform/ir_util.h"
#include "transform/pass.h"

namespace ephost {

namespace {

using namespace transform_detail;

bool is_nondeterministic(const std::string& op) {
  return op == "RandomNormal" || op == "RandomNormalLike" || op == "RandomUniform" || op == "RandomUniformLike" ||
         op == "Multinomial" || op == "Bernoulli";
}

// DequantizeLinear of a constant is a QDQ model's quantized weight: precomputed and kept, as ONNX
// Runtime's QDQ transformer keeps it, so that a provider can run the product in int8 on the quantized
// values (the CPU plugin's fusion/qdq_matmul.cpp).
bool is_quantized_weight(const std::string& op) { return op == "DequantizeLinear"; }

bool is_precomputed(const Value* v) {
  v = defining_value(v);
  return v && v->precomputed != nullptr;
}

// A node reading a precomputed value, or a quantized weight's DequantizeLinear: precomputed and kept,
// not folded.
// Shape and Size read no data: they fold.
bool keeps_node(const Node& node) {
  if (is_quantized_weight(node.op_type)) return true;
  if (node.op_type == "Shape" || node.op_type == "Size") return false;
  for (const Value* in : node.inputs)
    if (is_precomputed(in)) return true;
  return false;
}

// Its outputs are precomputed, and nothing reads them any more.
bool is_dead_precomputed(const Node& node) {
  bool precomputed = false;
  for (const Value* out : node.outputs) {
    if (!out) continue;
    if (!out->consumers.empty() || out->is_graph_output) return false;
    precomputed = precomputed || out->precomputed != nullptr;
  }
  return precomputed;
}

// The tensor a Constant node defines, or null when it is not a plain constant (sparse, ref_attr).
std::shared_ptr<Tensor> constant_value(const Node& node) {
  if (!node.proto || node.proto->attribute_size() != 1) return nullptr;
  const auto& a = node.proto->attribute(0);
  if (!a.ref_attr_name().empty()) return nullptr;
  const std::string& name = a.name();
  if (name == "value") {
    auto it = node.tensor_attributes.find(name);
    return it == node.tensor_attributes.end() ? nullptr : it->second;
  }
  onnx::TensorProto out;
  if (name == "value_float") {
    out.set_data_type(EPHOST_ELEMENT_FLOAT);
    out.add_float_data(a.f());
  } else if (name == "value_floats") {
    out.set_data_type(EPHOST_ELEMENT_FLOAT);
    out.add_dims(a.floats_size());
    for (float f : a.floats()) out.add_float_data(f);
  } else if (name == "value_int") {
    out.set_data_type(EPHOST_ELEMENT_INT64);
    out.add_int64_data(a.i());
  } else if (name == "value_ints") {
    out.set_data_type(EPHOST_ELEMENT_INT64);
    out.add_dims(a.ints_size());
    for (int64_t i : a.ints()) out.add_int64_data(i);
  } else if (name == "value_string") {
    out.set_data_type(EPHOST_ELEMENT_STRING);
    out.add_string_data(a.s());
  } else if (name == "value_strings") {
    out.set_data_type(EPHOST_ELEMENT_STRING);
    out.add_dims(a.strings_size());
    for (const auto& s : a.strings()) out.add_string_data(s);
  } else {
    return nullptr;  // sparse_value, or something the checker would have rejected
  }
  try {
    return std::make_shared<Tensor>(tensor_from_proto(out));
  } catch (const Error&) {
    return nullptr;
  }
}

// Shape or Size of a value whose shape is static and known.
std::shared_ptr<Tensor> shape_value(const Node& node) {
  const std::vector<int64_t>& dims = node.inputs[0]->type.dims;
  if (node.op_type == "Size") {
    int64_t count = 1;
    for (int64_t d : dims) count *= d;
    auto t = std::make_shared<Tensor>(Tensor::allocate(EPHOST_ELEMENT_INT64, {}));
    *t->data_as<int64_t>() = count;
    return t;
  }
  const int64_t rank = static_cast<int64_t>(dims.size());
  auto clamp = [rank](int64_t v) { return std::min(std::max(v < 0 ? v + rank : v, int64_t(0)), rank); };
  const int64_t start = clamp(attr_int(node, "start", 0));
  const int64_t end = clamp(attr_int(node, "end", rank));
  const int64_t len = std::max<int64_t>(end - start, 0);
  auto t = std::make_shared<Tensor>(Tensor::allocate(EPHOST_ELEMENT_INT64, {len}));
  for (int64_t k = 0; k < len; ++k) t->data_as<int64_t>()[k] = dims[static_cast<size_t>(start + k)];
  return t;
}

class ConstantFolding : public GraphPass {
 public:
  std::string name() const override { return "ConstantFolding"; }
  int min_level() const override { return 1; }

  size_t apply(Graph& main, TransformContext& context) override {
    GraphEditor editor(main);
    size_t rewrites = 0;
    for (Graph* g : graphs_of(main)) {
      // A snapshot: folding removes nodes (at commit) but never adds any.
      const std::vector<Node*> order = g->topological_order;
      for (Node* node : order)
        if (fold_node(editor, *node, *main.model, context)) ++rewrites;
      // After the folds, which may have been the last readers (a precomputed DequantizeLinear feeding a
      // folded Transpose); in reverse order so that a dead chain goes in one application.
      for (auto it = order.rbegin(); it != order.rend(); ++it)
        if (is_dead_precomputed(**it)) {
          editor.remove(**it);
          ++rewrites;
        }
    }
    editor.commit();
    return rewrites;
  }

 private:
  // The node's outputs, one per output slot (null where omitted), or empty when it does not fold.
  static std::vector<std::shared_ptr<Tensor>> evaluate(const Node& node, const Model& model, TransformContext& context) {
    const std::string& op = node.op_type;
    if (op == "Constant") {
      if (node.outputs.size() != 1) return {};
      auto t = constant_value(node);
      return t ? std::vector<std::shared_ptr<Tensor>>{t} : std::vector<std::shared_ptr<Tensor>>{};
    }
    if ((op == "Shape" || op == "Size") && node.inputs.size() == 1 && node.inputs[0] && node.outputs.size() == 1 &&
        node.inputs[0]->type.is_tensor() && is_static(node.inputs[0]->type))
      return {shape_value(node)};
    if (!context.evaluate || !node.proto) return {};
    std::vector<const Tensor*> inputs;
    for (const Value* in : node.inputs) {
      if (!in) {
        inputs.push_back(nullptr);
        continue;
      }
      // A precomputed input is not made here: only the nodes kept with it read it (precompute_node).
      const Tensor* t = constant_tensor(in);
      if (!t) return {};
      inputs.push_back(t);
    }
    std::vector<Tensor> outputs;
    try {
      outputs = context.evaluate(*node.proto, inputs, *model.proto);
    } catch (const std::exception& e) {
      // The session creation's deadline ends folding (and the creation), not just this node.
      if (const auto* error = dynamic_cast<const Error*>(&e); error && error->code() == EPHOST_DEADLINE_EXCEEDED)
        throw;
      log_verbose(fmt::format("ConstantFolding: not folding {} node '{}': {}", op, node.name, e.what()));
      return {};
    }
    std::vector<std::shared_ptr<Tensor>> values(node.outputs.size());
    for (size_t o = 0; o < node.outputs.size(); ++o) {
      if (!node.outputs[o]) continue;
      if (o >= outputs.size() || outputs[o].empty() || outputs[o].byte_size() > kMaxFoldedTensorBytes) {
        log_verbose(fmt::format("ConstantFolding: not folding {} node '{}': missing or too large outputs", op,
                                node.name));
        return {};
      }
      values[o] = std::make_shared<Tensor>(std::move(outputs[o]));
    }
    return values;
  }

  static bool fold_node(GraphEditor& editor, Node& node, const Model& model, TransformContext& context) {
    if (!is_default_domain(node.domain) || node.outputs.empty()) return false;
    const std::string& op = node.op_type;
    if (is_nondeterministic(op) || !node.subgraphs.empty()) return false;
    const bool keep = keeps_node(node);
    size_t live_outputs = 0;
    for (const Value* out : node.outputs) {
      if (!out) continue;
      ++live_outputs;
      if (out->precomputed) return false;  // an earlier round did it
      if (out->is_graph_output || (!keep && read_by_subgraph(*out))) return false;
    }
    if (live_outputs == 0) return false;
    if (keep) return precompute_node(editor, node, model, context);
    std::vector<std::shared_ptr<Tensor>> values = evaluate(node, model, context);
    if (values.empty()) return false;
    for (size_t o = 0; o < values.size(); ++o) {
      const Value* out = node.outputs[o];
      if (out && values[o] && out->type.elem_type != 0 && values[o]->elem_type() != out->type.elem_type) {
        log_verbose(fmt::format("ConstantFolding: not folding {} node '{}': output '{}' came out as element type "
                                "{}, declared {}", op, node.name, out->name, values[o]->elem_type(),
                                out->type.elem_type));
        return false;
      }
    }
    editor.fold(node, values);
    if (log_level() <= EPHOST_LOG_VERBOSE) log_verbose(fmt::format("ConstantFolding: folded {} node '{}'", op, node.name));
    return true;
  }

  // Records how to compute a kept node's outputs (GraphEditor::precompute) without computing them:
  // its inputs are all constant, its read outputs tensors of known static shapes within the size limit.
  // The data is made on first request (a provider reading it as a constant, or partitioning for a node
  // that runs alone), so a weight an int8 group fuses never gets a float copy.
  static bool precompute_node(GraphEditor& editor, Node& node, const Model& model, TransformContext& context) {
    if (!context.evaluate_later || !node.proto || !model.proto) return false;
    std::vector<std::function<std::shared_ptr<Tensor>()>> inputs;
    for (const Value* in : node.inputs) {
      const Value* v = defining_value(in);
      if (!in) {
        inputs.emplace_back();
      } else if (v && v->is_constant_initializer()) {
        inputs.emplace_back([t = v->initializer] {
          t->ensure_data();  // freed once the steps reading it packed it: read back
          return t;
        });
      } else if (v && v->precomputed) {
        inputs.emplace_back([p = v->precomputed] { return p->data(); });
      } else {
        return false;
      }
    }
    std::vector<TypeInfo> declared(node.outputs.size());
    for (size_t o = 0; o < node.outputs.size(); ++o) {
      const Value* out = node.outputs[o];
      if (!out || (out->consumers.empty() && !out->is_graph_output)) continue;
      const TypeInfo& t = out->type;
      if (!t.is_tensor() || !is_static(t) || !element_type_known(t.elem_type) || t.elem_type == EPHOST_ELEMENT_STRING)
        return false;
      if (byte_count(t.elem_type, t.dims) > kMaxFoldedTensorBytes) return false;
      declared[o] = t;
    }
    // What the computation needs, owned by it: the IR may be edited (and the model's protos released)
    // before anyone asks.
    auto proto = std::make_shared<onnx::NodeProto>(*node.proto);
    auto opsets = std::make_shared<onnx::ModelProto>();
    opsets->set_ir_version(model.proto->ir_version());
    *opsets->mutable_opset_import() = model.proto->opset_import();
    NodeEvaluator evaluate = context.evaluate_later;
    auto compute = [proto, opsets, evaluate, inputs, declared]() {
      std::vector<std::shared_ptr<Tensor>> held;
      std::vector<const Tensor*> in;
      for (const auto& input : inputs) {
        held.push_back(input ? input() : nullptr);
        in.push_back(held.back().get());
      }
      std::vector<Tensor> outputs = evaluate(*proto, in, *opsets);
      std::vector<std::shared_ptr<Tensor>> values(declared.size());
      for (size_t o = 0; o < declared.size(); ++o) {
        if (declared[o].elem_type == 0) continue;
        if (o >= outputs.size() || outputs[o].elem_type() != declared[o].elem_type ||
            outputs[o].shape() != declared[o].dims)
          fail(EPHOST_FAIL, "{} node '{}': output {} was not the {} tensor of shape {} shape inference declared",
               proto->op_type(), proto->name(), o, element_type_name(declared[o].elem_type),
               shape_to_string(declared[o].dims));
        values[o] = std::make_shared<Tensor>(std::move(outputs[o]));
      }
      return values;
    };
    editor.precompute(node, std::make_shared<PrecomputedNode>(std::move(compute)));
    if (log_level() <= EPHOST_LOG_VERBOSE)
      log_verbose(fmt::format("ConstantFolding: precomputed (on first request) {} node '{}'", node.op_type, node.name));
    return true;
  }
};

}  // namespace

std::unique_ptr<GraphPass> make_constant_folding_pass() { return std::make_unique<ConstantFolding>(); }

}  // namespace ephost
