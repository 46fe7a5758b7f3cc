// No-op elimination: nodes whose output is their (first) input are removed and their consumers read
// the input instead (each consumer is replaced by a copy of itself that names the input: the IR's nodes
// and their NodeProtos agree, graph/graph_writer.h writes them as they are).
//
// In the main graph and every subgraph, for values local to each graph. A node is kept when its output
// is a graph output (renaming graph outputs is not safe), when any subgraph reads the output as an
// outer-scope value (the subgraph could shadow the input's name, so rewiring it there is not
// attempted), or when a node holding subgraphs reads it (a copy of that node would rebuild its
// subgraphs). The input itself may be an outer-scope value of the graph: consumers in the same graph
// can read it directly.
#include <onnx/onnx_pb.h>

#include <unordered_map>

#include <fmt/format.h>

#include "core/log.h"
#include "graph/graph_editor.h"
#include "transform/ir_util.h"
#include "transform/pass.h"

namespace ephost {

namespace {

using namespace transform_detail;

// Whether Reshape(data of shape `dims`, shape) returns `dims` unchanged.
bool reshape_keeps_shape(const std::vector<int64_t>& dims, const Tensor& shape, bool allowzero) {
  if (shape.elem_type() != EPHOST_ELEMENT_INT64 || shape.shape().size() != 1 ||
      shape.element_count() != static_cast<int64_t>(dims.size()))
    return false;
  const int64_t* v = shape.data_as<int64_t>();
  int inferred = 0;
  bool has_zero_dim = false;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == 0) has_zero_dim = true;
    if (v[i] == dims[i]) continue;
    if (v[i] == 0 && !allowzero) continue;  // copies dims[i]
    if (v[i] == -1 && ++inferred == 1) continue;  // every other dim matches, so it infers dims[i]
    return false;
  }
  return !(inferred && has_zero_dim);  // -1 next to a zero-sized dim is ambiguous
}

bool same_static_shape(const Value* a, const Value* b) {
  return a && b && is_static(a->type) && is_static(b->type) && a->type.dims == b->type.dims;
}

bool unused(const Value* v) { return !v || (v->consumers.empty() && !v->is_graph_output); }

bool is_candidate_op(const Node& node) {
  if (!is_default_domain(node.domain)) return false;
  const std::string& op = node.op_type;
  return op == "Identity" || op == "Dropout" || op == "Cast" || op == "Reshape" || op == "Expand" || op == "Flatten";
}

bool is_noop(const Node& node, int64_t opset) {
  const std::string& op = node.op_type;
  const Value* x = node.inputs[0];
  const Value* y = node.outputs[0];
  if (op == "Identity") return node.outputs.size() == 1;
  if (op == "Dropout") {
    // Before opset 7 the is_test attribute chose the mode, and its default (0) is training.
    if (opset < 7 && attr_int(node, "is_test", 0) == 0) return false;
    // Only in inference: training_mode (opset 12+, input 2) absent or a constant false.
    if (node.inputs.size() > 2 && node.inputs[2]) {
      const Tensor* t = constant_tensor(node.inputs[2]);
      if (!t || t->elem_type() != EPHOST_ELEMENT_BOOL || t->element_count() != 1 || t->data_as<uint8_t>()[0] != 0)
        return false;
    }
    for (size_t o = 1; o < node.outputs.size(); ++o)
      if (!unused(node.outputs[o])) return false;
    return true;
  }
  if (node.outputs.size() != 1) return false;
  if (op == "Cast") {
    const int64_t to = attr_int(node, "to", -1);
    return x->type.elem_type != 0 && to == x->type.elem_type;
  }
  if (op == "Reshape") {
    if (same_static_shape(x, y)) return true;
    // The output shape may be unknown when the shape input was folded: compare it.
    if (!is_static(x->type) || node.inputs.size() < 2 || !node.inputs[1]) return false;
    const Tensor* shape = constant_tensor(node.inputs[1]);
    return shape && reshape_keeps_shape(x->type.dims, *shape, attr_int(node, "allowzero", 0) != 0);
  }
  if (op == "Expand") return same_static_shape(x, y);
  if (op == "Flatten") return x->type.dims.size() == 2 && same_static_shape(x, y);
  return false;
}

class NoopElimination : public GraphPass {
 public:
  std::string name() const override { return "NoopElimination"; }
  int min_level() const override { return 1; }

  size_t apply(Graph& main, TransformContext&) override {
    const int64_t opset = main.model ? std::max<int64_t>(main.model->opset(""), 0) : 0;
    GraphEditor editor(main);
    size_t rewrites = 0;
    for (Graph* g : graphs_of(main)) rewrites += eliminate(editor, *g, opset);
    editor.commit();
    return rewrites;
  }

 private:
  // A consumer rewired earlier in this application is replaced by its copy: later rewiring edits
  // the copy.
  std::unordered_map<const Node*, Node*> replaced_;

  Node* latest(Node* n) const {
    for (auto it = replaced_.find(n); it != replaced_.end(); it = replaced_.find(n)) n = it->second;
    return n;
  }

  size_t eliminate(GraphEditor& editor, Graph& g, int64_t opset) {
    replaced_.clear();
    size_t rewrites = 0;
    const std::vector<Node*> order = g.topological_order;
    for (Node* original : order) {
      Node* node = latest(original);
      if (!is_candidate_op(*node) || node->inputs.empty() || node->outputs.empty()) continue;
      Value* x = node->inputs[0];
      Value* y = node->outputs[0];
      if (!x || !y || y->is_graph_output || read_by_subgraph(*y)) continue;
      bool rewirable = true;
      for (const Node* c : y->consumers)
        if (!c->subgraphs.empty() || !c->proto) rewirable = false;
      if (!rewirable || !is_noop(*node, opset)) continue;

      const std::vector<Node*> readers = y->consumers;
      for (Node* c : readers) {
        if (std::find(y->consumers.begin(), y->consumers.end(), c) == y->consumers.end()) continue;  // done
        onnx::NodeProto copy = *c->proto;
        copy.set_name(c->name);
        for (auto& in : *copy.mutable_input())
          if (in == y->name) in = x->name;
        Node* rewired = editor.replace(*c, {std::move(copy)}).front();
        replaced_[c] = rewired;
      }
      const std::string from = x->name, to = y->name;
      editor.remove(*node);
      ++rewrites;
      if (log_level() <= EPHOST_LOG_VERBOSE)
        log_verbose(fmt::format("NoopElimination: removed {} node '{}' ({} -> {})", node->op_type, node->name, from, to));
    }
    return rewrites;
  }
};

}  // namespace

std::unique_ptr<GraphPass> make_noop_elimination_pass() { return std::make_unique<NoopElimination>(); }

}  // namespace ephost
