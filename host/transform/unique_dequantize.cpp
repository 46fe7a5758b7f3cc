// One DequantizeLinear per quantized operator: ONNX Runtime's EnsureUniqueDQForNodeUnit, narrowed to
// the readers that belong to different operators.
//
// A QDQ quantizer writes QuantizeLinear -> DequantizeLinear once per tensor, and every reader reads that
// one DequantizeLinear's float output. A provider fuses an int8 operator together with the
// DequantizeLinear of its input (reading the bytes), which it can only do where that DequantizeLinear
// has no reader outside the group: BERT's LayerNorm output feeds the query, key and value MatMuls and
// the residual Add; ViT's residual stream feeds the next LayerNorm and the next residual Add. With one
// shared DequantizeLinear, it runs on its own (a float tensor written and read again by each reader),
// and every int8 group re-quantizes it.
//
// Here a DequantizeLinear of a non-constant input gets a copy for each further group of its readers, so
// that each group reads its own. ONNX Runtime gives every reader its own copy; readers of one
// operator written as several nodes stay together here instead: a decomposed LayerNorm's ReduceMean
// and Sub, GELU's Div and Mul, SiLU's Sigmoid and Mul read one value on purpose, and the providers'
// matchers expect them to (a group reads the bytes once, as one table or one pass per row). Two readers
// belong together when one is reached from the other within kUnitReach nodes: the paths inside such
// decompositions are a handful of nodes (GELU's Div reaches its Mul in 7, through two Q/DQ pairs),
// while operators that read one tensor and meet again only after a whole transformer block (the residual
// Add after attention or the MLP: 15 nodes and more) get copies. Slices of one tensor stay together too: they are a Split as
// exporters write it (ViT's query/key/value), which a provider reads once for all of them.
//
// The copies compute what the original computes (the same inputs and attributes), so outputs are
// unchanged; a reader no provider fuses costs one more dequantization. Not copied: a DequantizeLinear
// of a constant (a quantized weight: the host precomputes it, and a copy would precompute it twice) or
// of a blocked form, one whose output a subgraph reads, one in a subgraph's body, and one that a
// convolution reads: convolutional nets share their block inputs between a conv and a residual Add or a
// projection conv, which the CPU plugin's conv groups already handle by reading the bytes and handing
// the float tensor on (qdq_conv.cpp), and whose chains end in that Add; copies there were not measured to
// gain anything and would change how those chains form.
#include <onnx/onnx_pb.h>

#include <fmt/format.h>

#include <algorithm>
#include <numeric>
#include <unordered_set>

#include "core/log.h"
#include "graph/graph_editor.h"
#include "transform/ir_util.h"
#include "transform/pass.h"

namespace ephost {

namespace {

using namespace transform_detail;

// How far (in nodes, along the data flow) one reader may reach another and still be one operator.
constexpr int kUnitReach = 10;
// At most this many nodes are visited from one reader (the reach is cut short in wide graphs).
constexpr size_t kReachBudget = 256;

bool is_activation_dequantize(const Node& node) {
  if (!is_default_domain(node.domain) || node.op_type != "DequantizeLinear" || !node.proto) return false;
  if (node.inputs.empty() || !node.inputs[0] || node.outputs.size() != 1 || !node.outputs[0]) return false;
  if (attr_int(node, "block_size", 0) != 0) return false;
  return !node.inputs[0]->is_constant();
}

bool is_slice(const Node& node) { return is_default_domain(node.domain) && node.op_type == "Slice"; }

bool is_convolution(const Node* node) {
  return is_default_domain(node->domain) && (node->op_type == "Conv" || node->op_type == "ConvTranspose");
}

// The distinct nodes that read v explicitly, in first-read order.
std::vector<Node*> distinct_readers(const Value& v) {
  std::vector<Node*> readers;
  for (Node* n : v.consumers)
    if (std::find(readers.begin(), readers.end(), n) == readers.end()) readers.push_back(n);
  return readers;
}

// The nodes reached from `from`'s outputs within kUnitReach nodes, in from's graph.
std::unordered_set<const Node*> reach(const Node& from) {
  std::unordered_set<const Node*> seen;
  std::vector<const Node*> frontier{&from};
  for (int depth = 0; depth < kUnitReach && !frontier.empty() && seen.size() < kReachBudget; ++depth) {
    std::vector<const Node*> next;
    for (const Node* n : frontier)
      for (const Value* out : n->outputs) {
        if (!out) continue;
        for (const Node* c : out->consumers)
          if (seen.insert(c).second) next.push_back(c);
      }
    frontier = std::move(next);
  }
  return seen;
}

// Readers grouped by operator: a reader joins the group of any reader it reaches or is reached from.
// Groups in the order of their first reader.
std::vector<std::vector<Node*>> group_readers(const std::vector<Node*>& readers) {
  const size_t n = readers.size();
  std::vector<size_t> group(n);
  std::iota(group.begin(), group.end(), 0);
  auto root = [&](size_t i) {
    while (group[i] != i) i = group[i];
    return i;
  };
  auto join = [&](size_t i, size_t j) {
    const size_t a = root(i), b = root(j);
    group[std::max(a, b)] = std::min(a, b);
  };
  for (size_t i = 0; i < n; ++i) {
    const std::unordered_set<const Node*> reached = reach(*readers[i]);
    for (size_t j = 0; j < n; ++j)
      if (j != i && (reached.count(readers[j]) || (is_slice(*readers[i]) && is_slice(*readers[j])))) join(i, j);
  }
  std::vector<std::vector<Node*>> groups;
  std::vector<size_t> slot(n, n);
  for (size_t i = 0; i < n; ++i) {
    const size_t r = root(i);
    if (slot[r] == n) {
      slot[r] = groups.size();
      groups.emplace_back();
    }
    groups[slot[r]].push_back(readers[i]);
  }
  return groups;
}

// A value name `graph` (and the graphs around it) does not define yet.
std::string fresh_name(const Graph& graph, const std::string& base) {
  for (int k = 1;; ++k) {
    const std::string name = fmt::format("{}_unique_dq{}", base, k);
    bool taken = false;
    for (const Graph* g = &graph; g && !taken; g = g->parent_graph) taken = g->find(name) != nullptr;
    if (!taken) return name;
  }
}

class UniqueDequantize : public GraphPass {
 public:
  std::string name() const override { return "UniqueDequantize"; }
  int min_level() const override { return 1; }

  size_t apply(Graph& main, TransformContext&) override {
    GraphEditor editor(main);
    size_t rewrites = 0;
    const std::vector<Node*> order = main.topological_order;
    for (Node* dq : order) {
      if (!is_activation_dequantize(*dq)) continue;
      const Value& out = *dq->outputs[0];
      if (read_by_subgraph(out)) continue;
      const std::vector<Node*> readers = distinct_readers(out);
      if (readers.size() < 2 || std::any_of(readers.begin(), readers.end(), is_convolution)) continue;
      const std::vector<std::vector<Node*>> groups = group_readers(readers);
      // The first group keeps the original (and so does a graph output); each other group gets a copy.
      for (size_t g = 1; g < groups.size(); ++g) {
        rewrites += copy_for(editor, main, *dq, groups[g]);
      }
    }
    editor.commit();
    return rewrites;
  }

 private:
  size_t copy_for(GraphEditor& editor, Graph& graph, const Node& dq, const std::vector<Node*>& readers) {
    const std::string old_name = dq.outputs[0]->name;
    const std::string new_name = fresh_name(graph, old_name);
    onnx::NodeProto copy = *dq.proto;
    copy.set_name(fresh_name(graph, dq.name));
    copy.set_output(0, new_name);
    editor.splice(graph, {std::move(copy)});
    for (Node* reader : readers) {
      onnx::NodeProto rewired = *reader->proto;
      rewired.set_name(reader->name);
      for (int i = 0; i < rewired.input_size(); ++i)
        if (rewired.input(i) == old_name) rewired.set_input(i, new_name);
      editor.replace(*reader, {std::move(rewired)});
    }
    if (log_level() <= EPHOST_LOG_VERBOSE)
      log_verbose(fmt::format("UniqueDequantize: {} reader(s) of '{}' read its copy '{}'", readers.size(), old_name,
                              new_name));
    return 1;
  }
};

}  // namespace

std::unique_ptr<GraphPass> make_unique_dequantize_pass() { return std::make_unique<UniqueDequantize>(); }

}  // namespace ephost
