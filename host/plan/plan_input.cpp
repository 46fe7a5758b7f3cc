#include "plan/plan_input.h"

#include "core/error.h"
#include <map>

#include "core/device.h"
#include "core/tensor.h"

namespace ephost {
namespace {

// Byte size known before running, or -1.
int64_t static_bytes(const Value& v) {
  if (!v.type.has_shape || !element_type_known(v.type.elem_type) || v.type.elem_type == EPHOST_ELEMENT_STRING) return -1;
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

namespace {

// The inputs a group's step reads, in kernel-context order.
std::vector<const Value*> step_input_values(const PartitionGroup& group) {
  if (group.fused) return std::vector<const Value*>(group.view->inputs.begin(), group.view->inputs.end());
  const Node* node = group.nodes.front();
  return std::vector<const Value*>(node->inputs.begin(), node->inputs.end());
}

int32_t device_id(std::vector<const Device*>& devices, const Device* device) {
  for (size_t i = 0; i < devices.size(); ++i)
    if (devices[i] == device) return static_cast<int32_t>(i);
  devices.push_back(device);
  return static_cast<int32_t>(devices.size() - 1);
}

}  // namespace

GraphPlan plan_partitioned_graph(const Graph& graph, const GraphPartition& partition,
                                 const std::vector<const Device*>& step_devices, bool enable_mem_reuse,
                                 const std::vector<std::vector<plan::InPlacePair>>& step_in_place) {
  GraphPlan p;
  p.graph = make_plan_graph(graph, partition.groups);
  for (size_t s = 0; s < step_in_place.size() && s < p.graph.steps.size(); ++s)
    p.graph.steps[s].in_place = step_in_place[s];
  p.devices = {nullptr};
  const auto& groups = partition.groups;
  p.copy_of_step.assign(groups.size(), -1);

  // Where each IR value is made: its producing step's device (host for everything else).
  std::vector<int32_t> home(graph.values.size(), 0);
  for (size_t s = 0; s < groups.size(); ++s) {
    const Device* d = s < step_devices.size() ? step_devices[s] : nullptr;
    if (!d) continue;
    const int32_t id = device_id(p.devices, d);
    for (int v : p.graph.steps[s].outputs)
      if (v >= 0 && graph.values[static_cast<size_t>(v)]->type.is_tensor()) {
        home[static_cast<size_t>(v)] = id;
        p.graph.values[static_cast<size_t>(v)].device = id;
      }
  }

  std::map<std::pair<int, int32_t>, int> copy_index;  // (value, device) -> copy
  p.step_inputs.resize(groups.size());
  for (size_t s = 0; s < groups.size(); ++s) {
    const int32_t at = step_devices.size() > s && step_devices[s] ? device_id(p.devices, step_devices[s]) : 0;
    for (const Value* v : step_input_values(groups[s])) {
      int read = id(v);
      // Sequences and optionals never leave host memory; a device step sees them there.
      if (v && v->type.is_tensor() && home[v->index] != at) {
        auto [it, fresh] = copy_index.emplace(std::make_pair(read, at), static_cast<int>(p.copies.size()));
        if (fresh) {
          PlannedCopy c;
          c.source = read;
          c.device = at;
          c.target = static_cast<int>(p.graph.values.size());
          plan::PlanValue copy = p.graph.values[v->index];
          copy.name = v->name + "@" + (p.devices[static_cast<size_t>(at)] ? p.devices[static_cast<size_t>(at)]->label()
                                                                           : std::string("host"));
          copy.device = at;
          copy.is_graph_input = copy.is_graph_output = copy.is_outer_scope = false;
          // A constant initializer is uploaded once: the copy is as static as the initializer.
          copy.is_initializer = v->is_constant_initializer();
          p.graph.values.push_back(copy);
          if (!v->is_constant_initializer()) {
            c.step = static_cast<int>(p.graph.steps.size());
            plan::PlanStep step;
            step.name = "copy " + copy.name;
            step.inputs = {read};
            step.outputs = {c.target};
            p.graph.steps.push_back(step);
            p.copy_of_step.push_back(static_cast<int>(p.copies.size()));
          }
          p.copies.push_back(c);
        }
        PlannedCopy& c = p.copies[static_cast<size_t>(it->second)];
        c.consumers.push_back(groups[s].name);
        read = c.target;
      }
      p.step_inputs[s].push_back(read);
    }
  }
  // The steps read the copies instead of the originals (implicit inputs of single nodes stay).
  for (size_t s = 0; s < groups.size(); ++s) {
    auto& inputs = p.graph.steps[s].inputs;
    for (size_t i = 0; i < p.step_inputs[s].size() && i < inputs.size(); ++i) inputs[i] = p.step_inputs[s][i];
  }
  p.execution = plan::make_execution_plan(p.graph);
  p.allocation = plan::make_allocation_plan(p.graph, p.execution, enable_mem_reuse);
  return p;
}

}  // namespace ephost
