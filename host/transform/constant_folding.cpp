// Constant folding (main graph only; subgraphs are left untouched).
//
// In node order (the loader sorted the graph), so chains fold in one application:
//  - Constant nodes become initializers (no evaluator needed);
//  - Shape and Size of a value with a fully static, known shape become int64 initializers;
//  - any other deterministic ai.onnx node without subgraphs whose inputs are all constant
//    initializers (not graph inputs) or absent is run with context.evaluate and replaced by
//    initializers holding its outputs (skipped when the evaluator is empty, fails, or an output is
//    larger than kMaxFoldedTensorBytes); DequantizeLinear excepted (quantized weights stay quantized).
// Nodes whose outputs are graph outputs or are read by subgraphs (outer-scope values) are kept.
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <unordered_map>

#include "core/error.h"
#include "core/log.h"
#include "model/loader.h"
#include "transform/pass.h"
#include "transform/proto_util.h"

namespace ephost {

namespace {

using namespace transform_detail;

bool is_nondeterministic(const std::string& op) {
  return op == "RandomNormal" || op == "RandomNormalLike" || op == "RandomUniform" || op == "RandomUniformLike" ||
         op == "Multinomial" || op == "Bernoulli";
}

// DequantizeLinear of a constant is a QDQ model's quantized weight: kept, as ONNX Runtime's QDQ
// transformer keeps it, so that a provider can run the product in int8 on the quantized values (the CPU
// plugin's fusion/qdq_matmul.cpp). A provider that does not fuse it folds it itself (the CPU plugin:
// const_eval.h) or runs it.
bool is_quantized_weight(const std::string& op) { return op == "DequantizeLinear"; }

// The tensor a Constant node defines, or false when it is not a plain constant (sparse, ref_attr).
bool constant_value(const onnx::NodeProto& node, onnx::TensorProto* out) {
  if (node.attribute_size() != 1) return false;
  const auto& a = node.attribute(0);
  if (!a.ref_attr_name().empty()) return false;
  out->Clear();
  const std::string& name = a.name();
  if (name == "value" && a.has_t()) {
    *out = a.t();
    return true;
  }
  if (name == "value_float") {
    out->set_data_type(EPHOST_ELEMENT_FLOAT);
    out->add_float_data(a.f());
  } else if (name == "value_floats") {
    out->set_data_type(EPHOST_ELEMENT_FLOAT);
    out->add_dims(a.floats_size());
    for (float f : a.floats()) out->add_float_data(f);
  } else if (name == "value_int") {
    out->set_data_type(EPHOST_ELEMENT_INT64);
    out->add_int64_data(a.i());
  } else if (name == "value_ints") {
    out->set_data_type(EPHOST_ELEMENT_INT64);
    out->add_dims(a.ints_size());
    for (int64_t i : a.ints()) out->add_int64_data(i);
  } else if (name == "value_string") {
    out->set_data_type(EPHOST_ELEMENT_STRING);
    out->add_string_data(a.s());
  } else if (name == "value_strings") {
    out->set_data_type(EPHOST_ELEMENT_STRING);
    out->add_dims(a.strings_size());
    for (const auto& s : a.strings()) out->add_string_data(s);
  } else {
    return false;  // sparse_value, or something the checker would have rejected
  }
  return true;
}

int64_t attr_int(const onnx::NodeProto& node, const std::string& name, int64_t fallback) {
  for (const auto& a : node.attribute())
    if (a.name() == name && a.type() == onnx::AttributeProto::INT) return a.i();
  return fallback;
}

class ConstantFolding : public GraphPass {
 public:
  std::string name() const override { return "ConstantFolding"; }
  int min_level() const override { return 1; }

  size_t apply(onnx::ModelProto& model, TransformContext& context) override {
    onnx::GraphProto& g = *model.mutable_graph();
    TypeTable types(g, nullptr);
    std::unordered_set<std::string> keep = names_read_by_subgraphs(g);
    for (const auto& o : g.output()) keep.insert(o.name());
    std::unordered_set<std::string> graph_inputs;
    for (const auto& in : g.input()) graph_inputs.insert(in.name());
    // Constant initializers by name -> index in g.initializer (stable: only appended to below).
    std::unordered_map<std::string, int> constants;
    for (int i = 0; i < g.initializer_size(); ++i)
      if (!graph_inputs.count(g.initializer(i).name())) constants.emplace(g.initializer(i).name(), i);
    std::unordered_map<std::string, std::shared_ptr<Tensor>> materialized;

    std::vector<bool> removed(static_cast<size_t>(g.node_size()), false);
    std::unordered_set<std::string> folded_names;
    size_t rewrites = 0;
    const int n = g.node_size();
    for (int i = 0; i < n; ++i) {
      const onnx::NodeProto& node = g.node(i);
      if (!is_default_domain(node.domain()) || node.output_size() == 0) continue;
      const std::string& op = node.op_type();
      if (is_nondeterministic(op) || has_subgraph(node) || is_quantized_weight(op)) continue;
      bool blocked = false;
      int live_outputs = 0;
      for (const auto& o : node.output()) {
        if (o.empty()) continue;
        ++live_outputs;
        if (keep.count(o)) blocked = true;
      }
      if (blocked || live_outputs == 0) continue;

      std::vector<onnx::TensorProto> results;  // one per output slot (unnamed outputs skipped later)
      if (op == "Constant") {
        if (node.output_size() != 1) continue;
        onnx::TensorProto t;
        if (!constant_value(node, &t)) continue;
        results.push_back(std::move(t));
      } else if ((op == "Shape" || op == "Size") && node.input_size() == 1 && node.output_size() == 1 &&
                 is_static(types.find(node.input(0)))) {
        const std::vector<int64_t>& dims = types.find(node.input(0))->dims;
        onnx::TensorProto t;
        t.set_data_type(EPHOST_ELEMENT_INT64);
        if (op == "Size") {
          int64_t count = 1;
          for (int64_t d : dims) count *= d;
          t.add_int64_data(count);
        } else {
          const int64_t rank = static_cast<int64_t>(dims.size());
          auto clamp = [rank](int64_t v) { return std::min(std::max(v < 0 ? v + rank : v, int64_t(0)), rank); };
          int64_t start = clamp(attr_int(node, "start", 0));
          int64_t end = clamp(attr_int(node, "end", rank));
          int64_t len = std::max<int64_t>(end - start, 0);
          t.add_dims(len);
          for (int64_t k = start; k < start + len; ++k) t.add_int64_data(dims[static_cast<size_t>(k)]);
        }
        results.push_back(std::move(t));
      } else {
        if (!context.evaluate) continue;
        std::vector<const Tensor*> inputs;
        bool all_constant = true;
        for (const auto& in : node.input()) {
          if (in.empty()) {
            inputs.push_back(nullptr);
            continue;
          }
          auto it = constants.find(in);
          if (it == constants.end()) {
            all_constant = false;
            break;
          }
          auto& slot = materialized[in];
          if (!slot) {
            try {
              slot = std::make_shared<Tensor>(tensor_from_proto(g.initializer(it->second)));
            } catch (const std::exception&) {
              all_constant = false;
              break;
            }
          }
          inputs.push_back(slot.get());
        }
        if (!all_constant) continue;
        std::vector<Tensor> outputs;
        try {
          outputs = context.evaluate(node, inputs, model);
        } catch (const std::exception& e) {
          // The session creation's deadline ends folding (and the creation), not just this node.
          if (const auto* error = dynamic_cast<const Error*>(&e); error && error->code() == EPHOST_DEADLINE_EXCEEDED)
            throw;
          log_verbose(fmt::format("ConstantFolding: not folding {} node '{}': {}", op, node.name(), e.what()));
          continue;
        }
        bool ok = outputs.size() >= static_cast<size_t>(node.output_size());
        for (int o = 0; ok && o < node.output_size(); ++o) {
          if (node.output(o).empty()) continue;
          const Tensor& t = outputs[static_cast<size_t>(o)];
          if (t.empty() || t.byte_size() > kMaxFoldedTensorBytes) ok = false;
        }
        if (!ok) {
          log_verbose(fmt::format("ConstantFolding: not folding {} node '{}': missing or too large outputs", op,
                                  node.name()));
          continue;
        }
        for (int o = 0; o < node.output_size(); ++o) {
          onnx::TensorProto t;
          if (!node.output(o).empty()) tensor_to_proto(outputs[static_cast<size_t>(o)], node.output(o), &t);
          results.push_back(std::move(t));
        }
      }

      for (int o = 0; o < node.output_size(); ++o) {
        const std::string& name = node.output(o);
        if (name.empty()) continue;
        onnx::TensorProto* init = g.add_initializer();
        *init = std::move(results[static_cast<size_t>(o)]);
        init->set_name(name);
        constants[name] = g.initializer_size() - 1;
        folded_names.insert(name);
      }
      removed[static_cast<size_t>(i)] = true;
      ++rewrites;
      if (log_level() <= EPHOST_LOG_VERBOSE)
        log_verbose(fmt::format("ConstantFolding: folded {} node '{}'", op, node.name()));
    }
    if (rewrites) {
      remove_nodes(g, removed);
      remove_value_info(g, folded_names);  // initializers carry their own type
    }
    return rewrites;
  }
};

}  // namespace

std::unique_ptr<GraphPass> make_constant_folding_pass() { return std::make_unique<ConstantFolding>(); }

}  // namespace ephost
