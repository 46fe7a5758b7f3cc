// Shape-source rewrite: Shape(DequantizeLinear(x)) becomes Shape(x). DequantizeLinear returns a tensor
// of its input's shape (per-tensor, per-axis and blocked forms alike), so the rewrite is exact. A quantized model's Reshape often takes its target shape from a Shape of the
// same DequantizeLinear it reshapes (BERT's head split); while the Shape reads the float value, the
// DequantizeLinear has two consumers and a plugin cannot keep the Reshape/Transpose chain in int8.
// After the rewrite the Shape reads the quantized bytes' shape and a DequantizeLinear left without
// readers is removed. Shape(QuantizeLinear(x)) is left as it is: reading x would give the float value
// another reader and keep the op before the QuantizeLinear out of its int8 group.
//
// In the main graph and every subgraph, for a Shape and a producer in the same graph. The Shape is
// replaced by a copy of itself that names x (the IR's nodes and their NodeProtos agree). A Shape whose
// producer's output is a graph output or read by a subgraph is still rewritten; only the producer's
// removal then waits for it to have no reader at all.
#include <onnx/onnx_pb.h>

#include <fmt/format.h>

#include "core/log.h"
#include "graph/graph_editor.h"
#include "transform/ir_util.h"
#include "transform/pass.h"

namespace ephost {

namespace {

using namespace transform_detail;

bool is_dequantize(const Node& node) { return is_default_domain(node.domain) && node.op_type == "DequantizeLinear"; }

// The node whose first output `v` is, when it is a local value of `graph`; null otherwise.
Node* local_producer(const Value* v, const Graph& graph) {
  if (!v || v->outer || !v->producer || v->owner != &graph || v->producer_output != 0) return nullptr;
  return v->producer;
}

class ShapeSourceRewrite : public GraphPass {
 public:
  std::string name() const override { return "ShapeSourceRewrite"; }
  int min_level() const override { return 1; }

  size_t apply(Graph& main, TransformContext&) override {
    GraphEditor editor(main);
    size_t rewrites = 0;
    for (Graph* g : graphs_of(main)) rewrites += rewrite(editor, *g);
    editor.commit();
    return rewrites;
  }

 private:
  size_t rewrite(GraphEditor& editor, Graph& g) {
    size_t rewrites = 0;
    const std::vector<Node*> order = g.topological_order;
    for (Node* shape : order) {
      if (shape->op_type != "Shape" || !is_default_domain(shape->domain) || !shape->proto || shape->inputs.empty())
        continue;
      Node* producer = local_producer(shape->inputs[0], g);
      if (!producer || !is_dequantize(*producer) || producer->inputs.empty() || !producer->inputs[0]) continue;
      Value* quantized_side = producer->inputs[0];
      Value* skipped = shape->inputs[0];

      onnx::NodeProto copy = *shape->proto;
      copy.set_name(shape->name);
      copy.set_input(0, quantized_side->name);
      editor.replace(*shape, {std::move(copy)});
      ++rewrites;
      if (log_level() <= EPHOST_LOG_VERBOSE)
        log_verbose(fmt::format("ShapeSourceRewrite: Shape '{}' reads '{}' instead of {} output '{}'", shape->name,
                                quantized_side->name, producer->op_type, skipped->name));
      if (skipped->consumers.empty() && !skipped->is_graph_output && producer->outputs.size() == 1)
        editor.remove(*producer);
    }
    return rewrites;
  }
};

}  // namespace

std::unique_ptr<GraphPass> make_shape_source_rewrite_pass() { return std::make_unique<ShapeSourceRewrite>(); }

}  // namespace ephost
