// Conv followed by BatchNormalization (inference) folds into the Conv: per output channel m,
//   s = scale[m] / sqrt(var[m] + epsilon),  W'[m] = W[m] * s,  B'[m] = (B[m] - mean[m]) * s + bias[m].
// One full pass over the activations saved per pair (35 pairs in PP-OCR's classifier), as ONNX
// Runtime's ConvBNFusion does. Main graph only; every parameter must be a constant float initializer.
// The BatchNormalization is replaced by a Conv reading the fused weights (new initializers) and
// producing its output; the Conv it read is removed.
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>

#include "graph/graph_editor.h"
#include "transform/ir_util.h"
#include "transform/pass.h"

namespace ephost {
namespace {

using namespace transform_detail;

bool only_first_output(const Node& n) {
  for (size_t k = 1; k < n.outputs.size(); ++k)
    if (n.outputs[k]) return false;
  return !n.outputs.empty() && n.outputs[0];
}

// A constant float initializer of the main graph, or null.
const Tensor* float_constant(const Value* v) {
  const Tensor* t = v ? constant_tensor(v) : nullptr;
  return t && t->elem_type() == EPHOST_ELEMENT_FLOAT ? t : nullptr;
}

class ConvBatchNormFusion final : public GraphPass {
 public:
  std::string name() const override { return "ConvBatchNormFusion"; }
  int min_level() const override { return 2; }

  size_t apply(Graph& g, TransformContext&) override {
    GraphEditor editor(g);
    size_t fused = 0;
    const std::vector<Node*> order = g.topological_order;
    for (Node* bn : order) {
      if (bn->op_type != "BatchNormalization" || !is_default_domain(bn->domain) || bn->inputs.size() != 5) continue;
      if (!only_first_output(*bn) || attr_int(*bn, "training_mode", 0) != 0 || attr_int(*bn, "spatial", 1) != 1) continue;
      const Value* x = bn->inputs[0];
      if (!x || !x->producer || x->consumers.size() != 1 || x->is_graph_output) continue;
      Node* conv = x->producer;
      if (conv->op_type != "Conv" || !is_default_domain(conv->domain) || conv->inputs.size() < 2 || !conv->proto ||
          conv->outputs.size() != 1)
        continue;
      std::vector<const Tensor*> params;  // scale, bias, mean, var
      for (size_t k = 1; k < 5; ++k) params.push_back(float_constant(bn->inputs[k]));
      const Tensor* w = float_constant(conv->inputs[1]);
      const bool has_bias = conv->inputs.size() > 2 && conv->inputs[2];
      const Tensor* b = has_bias ? float_constant(conv->inputs[2]) : nullptr;
      if (!w || (has_bias && !b) || std::find(params.begin(), params.end(), nullptr) != params.end()) continue;
      if (fuse(editor, g, *conv, *bn, *w, b, params)) ++fused;
    }
    editor.commit();
    return fused;
  }

 private:
  // Replaces `bn` by a Conv with the fused weights and removes `conv`. False (nothing changed) when the
  // shapes do not fit the pattern.
  static bool fuse(GraphEditor& editor, Graph& g, Node& conv, Node& bn, const Tensor& w, const Tensor* b,
                   const std::vector<const Tensor*>& p) {
    if (w.shape().size() < 3) return false;
    const int64_t m = w.shape()[0];
    for (const Tensor* t : p)
      if (t->element_count() != m) return false;
    if (b && b->element_count() != m) return false;
    const float eps = attr_float(bn, "epsilon", 1e-5f);
    auto wf = std::make_shared<Tensor>(w.clone());
    auto bf = std::make_shared<Tensor>(Tensor::allocate(EPHOST_ELEMENT_FLOAT, {m}));
    const int64_t per_channel = w.element_count() / m;
    for (int64_t c = 0; c < m; ++c) {
      const float s = p[0]->data_as<float>()[c] / std::sqrt(p[3]->data_as<float>()[c] + eps);
      float* row = wf->data_as<float>() + c * per_channel;
      for (int64_t k = 0; k < per_channel; ++k) row[k] *= s;
      const float bias0 = b ? b->data_as<float>()[c] : 0.0f;
      bf->data_as<float>()[c] = (bias0 - p[2]->data_as<float>()[c]) * s + p[1]->data_as<float>()[c];
    }
    const std::string base = (conv.proto->name().empty() ? conv.outputs[0]->name : conv.proto->name()) + "_bn_fused";
    const Value* wv = editor.add_initializer(g, unique_name(g, base + "_W"), wf);
    const Value* bv = editor.add_initializer(g, unique_name(g, base + "_B"), bf);
    onnx::NodeProto fused = *conv.proto;
    fused.set_name(conv.name);
    fused.set_input(1, wv->name);
    if (fused.input_size() > 2)
      fused.set_input(2, bv->name);
    else
      fused.add_input(bv->name);
    fused.set_output(0, bn.outputs[0]->name);
    editor.replace(bn, {std::move(fused)});
    editor.remove(conv);
    return true;
  }
  static std::string unique_name(const Graph& g, std::string name) {
    for (int k = 1; g.find(name); ++k) name += "_" + std::to_string(k);
    return name;
  }
};

}  // namespace

std::unique_ptr<GraphPass> make_conv_batchnorm_fusion_pass() { return std::make_unique<ConvBatchNormFusion>(); }

}  // namespace ephost
