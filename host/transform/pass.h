// Graph transforms (ONNX Runtime's TransformGraph stage): a pipeline of passes run on the IR before
// partitioning, each editing it through a GraphEditor (graph/graph_editor.h): what an edit adds is typed
// locally, so neither the model is inferred again nor the IR rebuilt. The ModelProto is not touched.
// Others extend the pipeline by adding passes; each pass declares the optimization level at which it
// starts to run (session option / EphostGraphOptimizationLevel).
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace onnx {
class ModelProto;
class NodeProto;
}  // namespace onnx

namespace ephost {

class Graph;

// Evaluates one node on constant inputs (used by constant folding). Supplied by the session, which
// runs the node on the built-in CPU plugin. `opset` is the model's opset for the node's domain.
using NodeEvaluator =
    std::function<std::vector<Tensor>(const onnx::NodeProto& node, const std::vector<const Tensor*>& inputs,
                                      const onnx::ModelProto& model)>;

struct TransformContext {
  int level = 99;            // EphostGraphOptimizationLevel
  NodeEvaluator evaluate;    // may be empty: constant folding is then skipped
  // The same, callable for the session's lifetime (no creation deadline): what computes precomputed
  // values on first request (graph/precomputed_value.h). May be empty: nothing is precomputed then.
  NodeEvaluator evaluate_later;
};

class GraphPass {
 public:
  virtual ~GraphPass() = default;
  virtual std::string name() const = 0;
  // Lowest optimization level at which the pass runs (1 = basic).
  virtual int min_level() const = 0;
  // Edits `main` (a main graph, not frozen) and commits its edits; returns how many rewrites it made
  // (0 = unchanged).
  virtual size_t apply(Graph& main, TransformContext& context) = 0;
};

struct PassResult {
  std::string pass;
  size_t rewrites = 0;
};

class PassPipeline {
 public:
  void add(std::unique_ptr<GraphPass> pass);
  // Runs every pass whose min_level <= context.level, repeating the pipeline until nothing changes
  // (at most a few rounds). Returns what each pass did.
  std::vector<PassResult> run(Graph& main, TransformContext& context) const;

 private:
  std::vector<std::unique_ptr<GraphPass>> passes_;
};

// The default pipeline, in this order: no-op elimination, the shape-source rewrite and constant folding
// (level 1), Conv +
// BatchNormalization fusion (level 2), unused-initializer elimination (level 1).
PassPipeline default_pipeline();

// Constant folding does not fold (or precompute) a node whose output would be larger than this: a
// folded value is held for the session, beside the inputs it was made from when something else still
// reads them. 64 MiB is what the CPU plugin's own folding allowed before the host's became the only one
// (a 16 MiB limit left the 16-64 MiB weights of large models, e.g. a transposed or dequantized
// 4096 x 4096 float matrix, to be computed again on every run); above it a value is computed per run.
constexpr size_t kMaxFoldedTensorBytes = size_t(64) << 20;

// The built-in passes, for tests and for pipelines that assemble their own.
// Removes Identity, inference Dropout (mask unused), Cast to the same type, and Reshape/Expand/Flatten
// whose output shape equals the input shape (static and known; for Reshape also a constant shape
// input that keeps the input's static shape), rewiring consumers to the input. Nodes producing graph
// outputs, or values that subgraphs read, are kept. Works in the main graph and in subgraphs (only for
// values local to each graph).
std::unique_ptr<GraphPass> make_noop_elimination_pass();
// Level 1: Shape(DequantizeLinear(x)) reads x instead (same shape, an exact rewrite), so a quantized
// model's Reshape/Transpose chains need not keep a float copy for a Shape; a DequantizeLinear left
// without readers is removed. Main graph and subgraphs, for a Shape and the DequantizeLinear in the
// same graph.
std::unique_ptr<GraphPass> make_shape_source_rewrite_pass();
// Turns Constant nodes into initializers, folds Shape/Size of statically shaped values, and evaluates
// deterministic ai.onnx nodes whose inputs are all constant initializers (context.evaluate; skipped
// when empty), in the main graph and in every subgraph (a subgraph's node may read constants of the
// graphs around it). DequantizeLinear of constants, and what reads it, is precomputed and kept
// (GraphEditor::precompute) for QDQ fusion. The one constant folding: plugins see the folded graph.
std::unique_ptr<GraphPass> make_constant_folding_pass();
// Level 1: a DequantizeLinear of a non-constant input whose readers belong to several operators gets a
// copy per further operator (ONNX Runtime's EnsureUniqueDQForNodeUnit; readers of one decomposed operator,
// which reach each other within a few nodes, keep sharing one), so a provider can fuse each operator with
// its own DequantizeLinear and read the bytes. Main graph only.
std::unique_ptr<GraphPass> make_unique_dequantize_pass();
// Removes initializers (not graph inputs) that no node, graph output or subgraph reads, in every graph.
std::unique_ptr<GraphPass> make_unused_initializer_elimination_pass();
// Level 2: Conv followed by inference BatchNormalization becomes one Conv with folded weights.
std::unique_ptr<GraphPass> make_conv_batchnorm_fusion_pass();

}  // namespace ephost
