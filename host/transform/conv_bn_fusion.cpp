// Conv followed by BatchNormalization (inference) folds into the Conv: per output channel m,
//   s = scale[m] / sqrt(var[m] + epsilon),  W'[m] = W[m] * s,  B'[m] = (B[m] - mean[m]) * s + bias[m].
// One full pass over the activations saved per pair (35 pairs in PP-OCR's classifier), as ONNX
// Runtime's ConvBNFusion does. Main graph only; every parameter must be a constant float initializer.
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "model/loader.h"
#include "transform/pass.h"
#include "transform/proto_util.h"

namespace ephost {
namespace {

using namespace transform_detail;

class ConvBatchNormFusion final : public GraphPass {
 public:
  std::string name() const override { return "ConvBatchNormFusion"; }
  int min_level() const override { return 2; }

  size_t apply(onnx::ModelProto& model, TransformContext&) override {
    onnx::GraphProto& g = *model.mutable_graph();
    std::unordered_map<std::string, onnx::TensorProto*> constants;
    for (auto& init : *g.mutable_initializer()) constants[init.name()] = &init;
    for (const auto& in : g.input()) constants.erase(in.name());  // overridable defaults are not constant
    std::unordered_map<std::string, int> uses, producer;
    for (int i = 0; i < g.node_size(); ++i) {
      for (const auto& in : g.node(i).input()) uses[in]++;
      for (const auto& out : g.node(i).output()) producer[out] = i;
    }
    for (const auto& name : names_read_by_subgraphs(g)) uses[name] += 2;
    for (const auto& out : g.output()) uses[out.name()] += 2;

    std::vector<bool> removed(static_cast<size_t>(g.node_size()), false);
    std::unordered_set<std::string> vanished;
    size_t fused = 0;
    for (int i = 0; i < g.node_size(); ++i) {
      const onnx::NodeProto& bn = g.node(i);
      if (bn.op_type() != "BatchNormalization" || !is_default_domain(bn.domain()) || bn.input_size() != 5) continue;
      if (!only_first_output(bn) || attr_int(bn, "training_mode", 0) != 0 || attr_int(bn, "spatial", 1) != 1) continue;
      auto p = producer.find(bn.input(0));
      if (p == producer.end() || removed[p->second] || uses[bn.input(0)] != 1) continue;
      onnx::NodeProto& conv = *g.mutable_node(p->second);
      if (conv.op_type() != "Conv" || !is_default_domain(conv.domain()) || conv.input_size() < 2) continue;
      std::vector<const onnx::TensorProto*> params;
      for (int k = 1; k < 5; ++k) params.push_back(constant(constants, bn.input(k)));
      const onnx::TensorProto* w = constant(constants, conv.input(1));
      const onnx::TensorProto* b = conv.input_size() > 2 && !conv.input(2).empty() ? constant(constants, conv.input(2)) : nullptr;
      bool has_bias = conv.input_size() > 2 && !conv.input(2).empty();
      if (!w || (has_bias && !b) || std::find(params.begin(), params.end(), nullptr) != params.end()) continue;
      if (!fold(g, conv, bn, *w, b, params, &constants)) continue;
      vanished.insert(conv.output(0));
      conv.set_output(0, bn.output(0));
      removed[static_cast<size_t>(i)] = true;
      ++fused;
    }
    if (fused) {
      remove_nodes(g, removed);
      remove_value_info(g, vanished);
    }
    return fused;
  }

 private:
  static bool only_first_output(const onnx::NodeProto& n) {
    for (int k = 1; k < n.output_size(); ++k)
      if (!n.output(k).empty()) return false;
    return n.output_size() >= 1;
  }
  static int64_t attr_int(const onnx::NodeProto& n, const char* name, int64_t def) {
    for (const auto& a : n.attribute())
      if (a.name() == name) return a.i();
    return def;
  }
  static float attr_float(const onnx::NodeProto& n, const char* name, float def) {
    for (const auto& a : n.attribute())
      if (a.name() == name) return a.f();
    return def;
  }
  static const onnx::TensorProto* constant(const std::unordered_map<std::string, onnx::TensorProto*>& c,
                                           const std::string& name) {
    auto it = c.find(name);
    return it == c.end() || it->second->data_type() != onnx::TensorProto::FLOAT ? nullptr : it->second;
  }

  // Writes the fused weights as new initializers and points the Conv at them. False (nothing changed)
  // when the shapes do not fit the pattern.
  static bool fold(onnx::GraphProto& g, onnx::NodeProto& conv, const onnx::NodeProto& bn, const onnx::TensorProto& wp,
                   const onnx::TensorProto* bp, const std::vector<const onnx::TensorProto*>& params,
                   std::unordered_map<std::string, onnx::TensorProto*>* constants) {
    Tensor w = tensor_from_proto(wp);
    if (w.shape().size() < 3) return false;
    const int64_t m = w.shape()[0];
    std::vector<Tensor> p;  // scale, bias, mean, var
    for (const auto* t : params) {
      p.push_back(tensor_from_proto(*t));
      if (p.back().element_count() != m) return false;
    }
    Tensor b;
    if (bp) {
      b = tensor_from_proto(*bp);
      if (b.element_count() != m) return false;
    }
    const float eps = attr_float(bn, "epsilon", 1e-5f);
    Tensor wf = w.clone(), bf = Tensor::allocate(EPHOST_ELEMENT_FLOAT, {m});
    const int64_t per_channel = w.element_count() / m;
    for (int64_t c = 0; c < m; ++c) {
      const float s = p[0].data_as<float>()[c] / std::sqrt(p[3].data_as<float>()[c] + eps);
      float* row = wf.data_as<float>() + c * per_channel;
      for (int64_t k = 0; k < per_channel; ++k) row[k] *= s;
      const float bias0 = bp ? b.data_as<float>()[c] : 0.0f;
      bf.data_as<float>()[c] = (bias0 - p[2].data_as<float>()[c]) * s + p[1].data_as<float>()[c];
    }
    std::string base = (conv.name().empty() ? conv.output(0) : conv.name()) + "_bn_fused";
    std::string wname = unique_name(*constants, base + "_W"), bname = unique_name(*constants, base + "_B");
    tensor_to_proto(wf, wname, g.add_initializer());
    tensor_to_proto(bf, bname, g.add_initializer());
    // add_initializer may move earlier initializers: rebuild the pointers.
    constants->clear();
    for (auto& init : *g.mutable_initializer()) (*constants)[init.name()] = &init;
    for (const auto& in : g.input()) constants->erase(in.name());
    conv.set_input(1, wname);
    if (conv.input_size() > 2)
      conv.set_input(2, bname);
    else
      conv.add_input(bname);
    return true;
  }
  static std::string unique_name(const std::unordered_map<std::string, onnx::TensorProto*>& taken, std::string name) {
    for (int k = 1; taken.count(name); ++k) name += "_" + std::to_string(k);
    return name;
  }
};

}  // namespace

std::unique_ptr<GraphPass> make_conv_batchnorm_fusion_pass() { return std::make_unique<ConvBatchNormFusion>(); }

}  // namespace ephost
