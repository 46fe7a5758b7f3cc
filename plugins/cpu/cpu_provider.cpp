#include "cpu_provider.h"

#include <map>
#include <string>
#include <thread>

#include "fusion.h"
#include "kernel_registry.h"
#include "math/parallel.h"

namespace ephost::cpu {

CpuProvider::CpuProvider(const sdk::Options& options) {
  const std::string threads = sdk::option(options, "intra_op_num_threads", "1");
  int n = 0;
  try {
    size_t used = 0;
    n = std::stoi(threads, &used);
    if (used != threads.size()) throw std::invalid_argument("trailing characters");
  } catch (const std::exception&) {
    sdk::fail(EPHOST_INVALID_ARGUMENT, "cpu provider: option intra_op_num_threads must be an integer, found '" +
                                           threads + "'");
  }
  if (n < 0)
    sdk::fail(EPHOST_INVALID_ARGUMENT,
              "cpu provider: option intra_op_num_threads must be >= 0, found " + std::to_string(n));
  // 0 means "as many as the machine has", as in ONNX Runtime.
  config_.default_threads = n == 0 ? std::max(1u, std::thread::hardware_concurrency()) : n;
  if (config_.default_threads > 1) math::limit_openmp_spinning();
  const std::string fuse = sdk::option(options, "fuse_elementwise", "1");
  if (fuse != "0" && fuse != "1")
    sdk::fail(EPHOST_INVALID_ARGUMENT, "cpu provider: option fuse_elementwise must be 0 or 1, found '" + fuse + "'");
  config_.fuse_elementwise = fuse == "1";
  config_.conv_layout = sdk::option(options, "conv_layout", config_.conv_layout);
  if (config_.conv_layout != "plain" && config_.conv_layout != "blocked" && config_.conv_layout != "auto")
    sdk::fail(EPHOST_INVALID_ARGUMENT,
              "cpu provider: option conv_layout must be plain, blocked or auto, found '" + config_.conv_layout + "'");
}

void CpuProvider::get_capability(const sdk::Graph& graph, sdk::Capability& capability) {
  const KernelRegistry& registry = KernelRegistry::instance();
  // Chains of pointwise float nodes become fused groups, claimed where their first node is.
  std::map<size_t, size_t> chain_of;  // node id -> chain index
  const std::vector<std::vector<sdk::Node>> chains =
      config_.fuse_elementwise ? find_elementwise_chains(graph) : std::vector<std::vector<sdk::Node>>{};
  for (size_t c = 0; c < chains.size(); ++c)
    for (const sdk::Node& node : chains[c]) chain_of[node.id()] = c;
  for (const sdk::Node& node : graph.nodes()) {
    if (auto it = chain_of.find(node.id()); it != chain_of.end()) {
      if (chains[it->second].front().id() == node.id()) capability.add_fused_group(chains[it->second]);
      continue;
    }
    const KernelDef* def = nullptr;
    try {
      def = registry.match(node);
    } catch (const std::exception& e) {
      // A malformed attribute makes one node unclaimable, not the whole graph.
      sdk::log(EPHOST_LOG_VERBOSE, "cpu: not claiming " + node.op_type() + " '" + node.name() + "': " + e.what());
      continue;
    }
    if (def != nullptr) {
      capability.add_node(node);
    } else {
      sdk::log(EPHOST_LOG_VERBOSE, "cpu: no kernel for " + node.op_type() + " '" + node.name() + "' (domain '" +
                                       node.domain() + "', opset " + std::to_string(node.opset()) + ")");
    }
  }
}

std::unique_ptr<sdk::Kernel> CpuProvider::create_kernel(const sdk::Node& node) {
  const KernelDef* def = KernelRegistry::instance().match(node);
  if (def == nullptr)
    sdk::fail(EPHOST_NOT_IMPLEMENTED, "cpu: no kernel for " + node.op_type() + " '" + node.name() + "' at opset " +
                                          std::to_string(node.opset()));
  return def->create(node, config_);
}

std::unique_ptr<sdk::CompiledGroup> CpuProvider::compile(const sdk::Graph& group, const std::string& fused_name) {
  return compile_elementwise_chain(group, fused_name, config_);
}

}  // namespace ephost::cpu
