// No-op elimination: nodes whose output is their (first) input are removed and their consumers read
// the input instead.
//
// Subgraphs: the pass recurses into them, but only rewires names local to each graph. A node is kept
// when its output is a graph output (renaming graph outputs is not safe), or when any subgraph reads
// the output as an outer-scope value (the subgraph could shadow the input's name, so rewiring it
// there is not attempted). The input itself may be an outer-scope value of the graph: consumers in
// the same graph can read it directly.
#include <onnx/onnx_pb.h>

#include <unordered_map>
#include <utility>

#include <fmt/format.h>

#include "core/log.h"
#include "model/loader.h"
#include "transform/pass.h"
#include "transform/proto_util.h"

namespace ephost {

namespace {

using namespace transform_detail;

int64_t attr_int(const onnx::NodeProto& node, const std::string& name, int64_t fallback) {
  for (const auto& a : node.attribute())
    if (a.name() == name && a.type() == onnx::AttributeProto::INT) return a.i();
  return fallback;
}

// Whether Reshape(data of shape `dims`, shape) returns `dims` unchanged.
bool reshape_keeps_shape(const std::vector<int64_t>& dims, const onnx::TensorProto& shape_proto, bool allowzero) {
  Tensor shape;
  try {
    shape = tensor_from_proto(shape_proto);
  } catch (const std::exception&) {
    return false;
  }
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

bool same_static_shape(const TypeInfo* a, const TypeInfo* b) {
  return is_static(a) && is_static(b) && a->dims == b->dims;
}

class NoopElimination : public GraphPass {
 public:
  std::string name() const override { return "NoopElimination"; }
  int min_level() const override { return 1; }

  size_t apply(onnx::ModelProto& model, TransformContext& context) override {
    int64_t opset = 0;  // the model's ai.onnx opset (0: none imported)
    for (const auto& op : model.opset_import())
      if (is_default_domain(op.domain())) opset = op.version();
    return eliminate(*model.mutable_graph(), nullptr, opset);
  }

 private:
  using Uses = std::unordered_map<std::string, std::vector<std::pair<int, int>>>;  // name -> (node, input)

  static size_t eliminate(onnx::GraphProto& g, const TypeTable* parent_types, int64_t opset) {
    TypeTable types(g, parent_types);
    size_t rewrites = 0;
    for (auto& node : *g.mutable_node())
      for (auto& a : *node.mutable_attribute())
        if (a.has_g()) rewrites += eliminate(*a.mutable_g(), &types, opset);

    bool any_candidate = false;
    for (const auto& node : g.node())
      if (is_candidate_op(node)) {
        any_candidate = true;
        break;
      }
    if (!any_candidate) return rewrites;

    std::unordered_set<std::string> protect = names_read_by_subgraphs(g);
    for (const auto& o : g.output()) protect.insert(o.name());
    std::unordered_map<std::string, const onnx::TensorProto*> initializers;
    for (const auto& init : g.initializer()) initializers.emplace(init.name(), &init);
    std::unordered_set<std::string> graph_inputs;
    for (const auto& in : g.input()) graph_inputs.insert(in.name());

    Uses uses;
    for (int i = 0; i < g.node_size(); ++i)
      for (int k = 0; k < g.node(i).input_size(); ++k)
        if (!g.node(i).input(k).empty()) uses[g.node(i).input(k)].emplace_back(i, k);

    std::vector<bool> removed(static_cast<size_t>(g.node_size()), false);
    std::unordered_set<std::string> dead_names;
    for (int i = 0; i < g.node_size(); ++i) {
      const onnx::NodeProto& node = g.node(i);
      if (!is_default_domain(node.domain()) || node.input_size() < 1 || node.output_size() < 1) continue;
      const std::string& x = node.input(0);
      const std::string& y = node.output(0);
      if (x.empty() || y.empty() || protect.count(y) || !is_candidate_op(node)) continue;
      if (!is_noop(node, opset, types, initializers, graph_inputs, uses, protect)) continue;

      // Rewire every reader of y to x.
      auto it = uses.find(y);
      if (it != uses.end()) {
        auto readers = std::move(it->second);
        uses.erase(it);
        auto& xs = uses[x];
        for (const auto& [j, k] : readers) {
          g.mutable_node(j)->set_input(k, x);
          xs.emplace_back(j, k);
        }
      }
      removed[static_cast<size_t>(i)] = true;
      for (const auto& o : node.output())
        if (!o.empty()) dead_names.insert(o);
      ++rewrites;
      if (log_level() <= EPHOST_LOG_VERBOSE)
        log_verbose(
            fmt::format("NoopElimination: removed {} node '{}' ({} -> {})", node.op_type(), node.name(), x, y));
    }
    if (!dead_names.empty()) {
      remove_nodes(g, removed);
      remove_value_info(g, dead_names);
    }
    return rewrites;
  }

  static bool is_candidate_op(const onnx::NodeProto& node) {
    if (!is_default_domain(node.domain())) return false;
    const std::string& op = node.op_type();
    return op == "Identity" || op == "Dropout" || op == "Cast" || op == "Reshape" || op == "Expand" ||
           op == "Flatten";
  }

  static bool unused(const std::string& name, const Uses& uses, const std::unordered_set<std::string>& protect) {
    if (name.empty()) return true;
    auto it = uses.find(name);
    return (it == uses.end() || it->second.empty()) && !protect.count(name);
  }

  static bool is_noop(const onnx::NodeProto& node, int64_t opset, const TypeTable& types,
                      const std::unordered_map<std::string, const onnx::TensorProto*>& initializers,
                      const std::unordered_set<std::string>& graph_inputs, const Uses& uses,
                      const std::unordered_set<std::string>& protect) {
    const std::string& op = node.op_type();
    const std::string& x = node.input(0);
    const std::string& y = node.output(0);
    if (op == "Identity") return node.output_size() == 1;
    if (op == "Dropout") {
      // Before opset 7 the is_test attribute chose the mode, and its default (0) is training.
      if (opset < 7 && attr_int(node, "is_test", 0) == 0) return false;
      // Only in inference: training_mode (opset 12+, input 2) absent or a constant false.
      if (node.input_size() > 2 && !node.input(2).empty()) {
        const std::string& tm = node.input(2);
        auto it = initializers.find(tm);
        if (it == initializers.end() || graph_inputs.count(tm)) return false;
        try {
          Tensor t = tensor_from_proto(*it->second);
          if (t.elem_type() != EPHOST_ELEMENT_BOOL || t.element_count() != 1 || t.data_as<uint8_t>()[0] != 0)
            return false;
        } catch (const std::exception&) {
          return false;
        }
      }
      for (int o = 1; o < node.output_size(); ++o)
        if (!unused(node.output(o), uses, protect)) return false;
      return true;
    }
    if (node.output_size() != 1) return false;
    if (op == "Cast") {
      const TypeInfo* in = types.find(x);
      int64_t to = attr_int(node, "to", -1);
      return in && in->elem_type != 0 && to == in->elem_type;
    }
    if (op == "Reshape") {
      const TypeInfo* in = types.find(x);
      if (same_static_shape(in, types.find(y))) return true;
      // The output shape may be unknown when the shape input was only folded this round: compare it.
      if (!is_static(in) || node.input_size() < 2) return false;
      auto it = initializers.find(node.input(1));
      if (it == initializers.end() || graph_inputs.count(node.input(1))) return false;
      return reshape_keeps_shape(in->dims, *it->second, attr_int(node, "allowzero", 0) != 0);
    }
    if (op == "Expand") return same_static_shape(types.find(x), types.find(y));
    if (op == "Flatten") {
      const TypeInfo* in = types.find(x);
      return in && in->dims.size() == 2 && same_static_shape(in, types.find(y));
    }
    return false;
  }
};

}  // namespace

std::unique_ptr<GraphPass> make_noop_elimination_pass() { return std::make_unique<NoopElimination>(); }

}  // namespace ephost
