#include "plan/plan_input.h"

#include "core/error.h"
#include "core/tensor.h"

namespace ephost {
namespace {

// Byte size known before running, or -1.
int64_t static_bytes(const Value& v) {
  if (!v.type.has_shape || element_size(v.type.elem_type) == 0 || v.type.elem_type == EPHOST_ELEMENT_STRING) return -1;
  for (int64_t d : v.type.dims)
    if (d < 0) return -1;
  try {
    return static_cast<int64_t>(byte_count(v.type.elem_type, v.type.dims));
  } catch (const Error&) {
    return -1;  // too large to count: it fails when it is allocated, with that reason
  }
}

// Equal keys mean equal sizes even when dims are symbolic ("N" in both).
std::string shape_key(const Value& v) {
  if (!v.type.has_shape || v.type.elem_type == 0 || v.type.elem_type == EPHOST_ELEMENT_STRING) return {};
  std::string key = std::to_string(v.type.elem_type) + ":";
  for (size_t i = 0; i < v.type.dims.size(); ++i) {
    if (v.type.dims[i] >= 0)
      key += std::to_string(v.type.dims[i]);
    else if (i < v.type.dim_params.size() && !v.type.dim_params[i].empty())
      key += "$" + v.type.dim_params[i];
    else
      return {};
    key += ",";
  }
  return key;
}

int id(const Value* v) { return v ? static_cast<int>(v->index) : -1; }

}  // namespace

plan::PlanGraph make_plan_graph(const Graph& graph, const std::vector<PartitionGroup>& groups) {
  plan::PlanGraph pg;
  pg.values.resize(graph.values.size());
  for (const auto& v : graph.values) {
    plan::PlanValue& pv = pg.values[v->index];
    pv.static_bytes = static_bytes(*v);
    pv.shape_key = shape_key(*v);
    pv.is_graph_input = v->is_graph_input;
    pv.is_initializer = v->is_initializer();
    pv.is_graph_output = v->is_graph_output;
    pv.is_outer_scope = v->is_outer_scope();
    pv.name = v->name;
  }
  pg.steps.reserve(groups.size());
  for (const PartitionGroup& group : groups) {
    plan::PlanStep ps;
    ps.name = group.name;
    if (group.fused) {
      for (const Value* v : group.view->inputs) ps.inputs.push_back(id(v));
      for (const Value* v : group.view->outputs) ps.outputs.push_back(id(v));
    } else {
      const Node* node = group.nodes.front();
      for (const Value* v : node->inputs) ps.inputs.push_back(id(v));
      // Subgraphs read these: they must stay alive until the node has run.
      for (const Value* v : node->implicit_inputs) ps.inputs.push_back(id(v));
      for (const Value* v : node->outputs) ps.outputs.push_back(id(v));
    }
    pg.steps.push_back(std::move(ps));
  }
  return pg;
}

}  // namespace ephost

namespace ephost {

GraphPlan plan_partitioned_graph(const Graph& graph, const GraphPartition& partition, bool enable_mem_reuse) {
  GraphPlan p;
  p.graph = make_plan_graph(graph, partition.groups);
  p.execution = plan::make_execution_plan(p.graph);
  p.allocation = plan::make_allocation_plan(p.graph, p.execution, enable_mem_reuse);
  return p;
}

}  // namespace ephost
