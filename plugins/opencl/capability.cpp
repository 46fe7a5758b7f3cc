#include "capability.h"

#include "lowering.h"

namespace ephost_opencl {
namespace {

using ephost::sdk::Node;

struct Probe {
  bool supported = false;
  bool device_work = false;  // it becomes a kernel or part of one
  std::string reason;
};

bool is_constant(const ephost::sdk::Value& v) {
  if (v.is_constant()) return true;
  const Node p = v.producer();
  return p.valid() && p.op_type() == "Constant" && p.has_attr("value");
}

// Lowers `node` alone, its non-constant inputs standing for values computed at run time.
Probe probe(const Node& node) {
  Probe result;
  try {
    if (node.num_implicit_inputs() > 0) ephost::sdk::fail(EPHOST_NOT_IMPLEMENTED, "nodes with subgraphs are not implemented");
    Program scratch;
    Lowering lowering(scratch);
    for (size_t i = 0; i < node.num_inputs(); ++i)
      if (node.has_input(i) && !is_constant(node.input(i))) lowering.add_input(node.input(i));
    lowering.lower(node);
    result.supported = true;
    for (const Op& op : scratch.ops) result.device_work = result.device_work || op.kind < OpKind::kView;
  } catch (const ephost::sdk::Error& e) {
    result.reason = e.what();
  }
  return result;
}

}  // namespace

std::vector<std::vector<Node>> find_groups(const ephost::sdk::Graph& graph) {
  const ephost::sdk::NodeDependencies dependencies(graph);
  const std::vector<Node>& nodes = dependencies.nodes();
  std::vector<bool> wanted(nodes.size(), false), device_work(nodes.size(), false);
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Probe p = probe(nodes[i]);
    wanted[i] = p.supported;
    device_work[i] = p.device_work;
    if (!p.supported)
      ephost::sdk::log(EPHOST_LOG_VERBOSE, "opencl leaves " + nodes[i].op_type() + " node '" + nodes[i].name() + "': " + p.reason);
  }
  std::vector<std::vector<Node>> groups;
  for (const auto& group : ephost::sdk::acyclic_groups(dependencies, wanted)) {
    bool works = false;
    for (size_t i : group) works = works || device_work[i];
    if (works) groups.push_back(dependencies.nodes_at(group));
  }
  return groups;
}

}  // namespace ephost_opencl
