#include "capability.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "lowering.h"

namespace ephost_opencl {
namespace {

using ephost::sdk::Node;
using ephost::sdk::Value;

bool is_constant(const Value& v) {
  if (v.is_constant()) return true;
  const Node p = v.producer();
  return p.valid() && p.op_type() == "Constant" && p.has_attr("value");
}

struct Probe {
  std::vector<bool> supported, device_work;
};

// Every node, in order, into one scratch program. A node's outputs become known to later nodes only when it
// lowered whole; the inputs of a node that are not known are added from the graph's types (where a partly
// lowered producer left a value of that name, the input shadows it).
Probe probe_in_order(const std::vector<Node>& nodes) {
  Probe probe;
  probe.supported.assign(nodes.size(), false);
  probe.device_work.assign(nodes.size(), false);
  Program scratch;
  Lowering lowering(scratch);
  std::set<std::string> known;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Node& node = nodes[i];
    const size_t ops_before = scratch.ops.size();
    try {
      if (node.num_implicit_inputs() > 0) ephost::sdk::fail(EPHOST_NOT_IMPLEMENTED, "nodes with subgraphs are not implemented");
      for (size_t k = 0; k < node.num_inputs(); ++k) {
        if (!node.has_input(k)) continue;
        const Value v = node.input(k);
        if (is_constant(v) || known.count(v.name())) continue;
        lowering.add_input(v);
        known.insert(v.name());
      }
      lowering.lower(node);
    } catch (const ephost::sdk::Error& e) {
      ephost::sdk::log(EPHOST_LOG_VERBOSE, "opencl leaves " + node.op_type() + " node '" + node.name() + "': " + e.what());
      continue;
    }
    probe.supported[i] = true;
    for (size_t o = ops_before; o < scratch.ops.size(); ++o) probe.device_work[i] = probe.device_work[i] || scratch.ops[o].kind < OpKind::kView;
    for (size_t k = 0; k < node.num_outputs(); ++k)
      if (node.has_output(k)) known.insert(node.output(k).name());
  }
  return probe;
}

// Lowers the nodes at `positions` (ascending) as compile lowers a group: inputs from the graph's types, the
// values read outside the group kept. Returns the position of the first node that fails, or -1.
long first_failing(const std::vector<Node>& nodes, const std::map<size_t, size_t>& position_of,
                   const std::vector<size_t>& positions, std::string* why) {
  const std::set<size_t> in_group(positions.begin(), positions.end());
  std::set<std::string> produced;
  for (size_t i : positions)
    for (size_t k = 0; k < nodes[i].num_outputs(); ++k)
      if (nodes[i].has_output(k)) produced.insert(nodes[i].output(k).name());
  Program program;
  Lowering lowering(program);
  std::set<std::string> added;
  std::vector<std::pair<std::string, size_t>> outputs;  // value read outside, its producer's position
  for (size_t i : positions) {
    const Node& node = nodes[i];
    try {
      for (size_t k = 0; k < node.num_inputs(); ++k) {
        if (!node.has_input(k)) continue;
        const Value v = node.input(k);
        if (is_constant(v) || produced.count(v.name()) || !added.insert(v.name()).second) continue;
        lowering.add_input(v);
      }
      for (size_t k = 0; k < node.num_outputs(); ++k) {
        if (!node.has_output(k)) continue;
        const Value v = node.output(k);
        bool read_outside = v.is_graph_output();
        for (const Node& consumer : v.consumers()) {
          auto it = position_of.find(consumer.id());
          read_outside = read_outside || it == position_of.end() || !in_group.count(it->second);
        }
        if (read_outside) {
          lowering.keep(v.name());
          outputs.emplace_back(v.name(), i);
        }
      }
      lowering.lower(node);
    } catch (const ephost::sdk::Error& e) {
      *why = e.what();
      return static_cast<long>(i);
    }
  }
  for (const auto& [name, producer] : outputs) {
    try {
      lowering.find(name);
    } catch (const ephost::sdk::Error& e) {
      *why = e.what();
      return static_cast<long>(producer);
    }
  }
  return -1;
}

}  // namespace

std::vector<std::vector<Node>> find_groups(const ephost::sdk::Graph& graph) {
  const ephost::sdk::NodeDependencies dependencies(graph);
  const std::vector<Node>& nodes = dependencies.nodes();
  std::map<size_t, size_t> position_of;
  for (size_t i = 0; i < nodes.size(); ++i) position_of[nodes[i].id()] = i;
  Probe probe = probe_in_order(nodes);
  std::vector<bool> wanted = probe.supported;
  // Each round drops at least one node, so this ends.
  for (;;) {
    std::vector<std::vector<size_t>> groups;
    for (auto& group : ephost::sdk::acyclic_groups(dependencies, wanted)) {
      bool works = false;
      for (size_t i : group) works = works || probe.device_work[i];
      if (works) groups.push_back(std::move(group));
    }
    bool dropped = false;
    for (auto& group : groups) {
      std::sort(group.begin(), group.end());
      std::string why;
      const long bad = first_failing(nodes, position_of, group, &why);
      if (bad < 0) continue;
      const Node& node = nodes[static_cast<size_t>(bad)];
      ephost::sdk::log(EPHOST_LOG_VERBOSE, "opencl leaves " + node.op_type() + " node '" + node.name() +
                                               "': it does not lower within its group: " + why);
      wanted[static_cast<size_t>(bad)] = false;
      dropped = true;
    }
    if (dropped) continue;
    std::vector<std::vector<Node>> out;
    for (const auto& group : groups) out.push_back(dependencies.nodes_at(group));
    return out;
  }
}

}  // namespace ephost_opencl
