#include "cpu_provider.h"

#include <algorithm>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include "fusion.h"
#include "fusion/cnn_region.h"
#include "fusion/op_span_label.h"
#include "fusion/qdq_common.h"
#include "fusion/qdq_conv_trunk.h"
#include "kernel_registry.h"
#include "math/isa.h"
#include "math/parallel.h"

namespace ephost::cpu {

namespace {

// precision=f32 | bf16 (true for bf16). bf16 is refused where the CPU (or the EPHOST_CPU_ISA cap)
// has no bfloat16 products: emulating them would be slower than f32 and still lose precision.
bool parse_precision(const std::string& precision) {
  if (precision != "f32" && precision != "bf16")
    sdk::fail(EPHOST_INVALID_ARGUMENT, "cpu provider: option precision must be f32 or bf16, found '" + precision + "'");
  if (precision == "bf16" && !math::bf16_available())
    sdk::fail(EPHOST_NOT_IMPLEMENTED,
              std::string("cpu provider: precision=bf16 needs a CPU with AVX512_BF16 or AMX-BF16 and the avx512 tier; "
                          "this one has bf16 instructions: ") +
                  math::bf16_hardware_name() + ", tier " + math::isa_name(math::active_isa()) + " (" +
                  math::kCpuIsaEnv + " caps it). Use precision=f32 (the default) here");
  return precision == "bf16";
}

}  // namespace

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
  const std::string patterns = sdk::option(options, "fuse_patterns", "1");
  if (patterns != "0" && patterns != "1")
    sdk::fail(EPHOST_INVALID_ARGUMENT,
              "cpu provider: option fuse_patterns must be 0 or 1, found '" + patterns + "'");
  config_.fuse_patterns = patterns == "1";
  const std::string adaptive = sdk::option(options, "adaptive_threads", "1");
  if (adaptive != "0" && adaptive != "1")
    sdk::fail(EPHOST_INVALID_ARGUMENT,
              "cpu provider: option adaptive_threads must be 0 or 1, found '" + adaptive + "'");
  config_.adaptive_threads = adaptive == "1";
  const std::string winograd = sdk::option(options, "winograd", "1");
  if (winograd != "0" && winograd != "1")
    sdk::fail(EPHOST_INVALID_ARGUMENT, "cpu provider: option winograd must be 0 or 1, found '" + winograd + "'");
  config_.winograd = winograd == "1";
  const std::string exact = sdk::option(options, "int8_exact_requantize", "0");
  if (exact != "0" && exact != "1")
    sdk::fail(EPHOST_INVALID_ARGUMENT,
              "cpu provider: option int8_exact_requantize must be 0 or 1, found '" + exact + "'");
  config_.int8_exact_requantize = exact == "1";
  const std::string trunks = sdk::option(options, "int8_trunks", "1");
  if (trunks != "0" && trunks != "1")
    sdk::fail(EPHOST_INVALID_ARGUMENT, "cpu provider: option int8_trunks must be 0 or 1, found '" + trunks + "'");
  config_.int8_trunks = trunks == "1";
  config_.bf16 = parse_precision(sdk::option(options, "precision", "f32"));
  config_.conv_layout = sdk::option(options, "conv_layout", config_.conv_layout);
  if (config_.conv_layout != "plain" && config_.conv_layout != "blocked" && config_.conv_layout != "auto")
    sdk::fail(EPHOST_INVALID_ARGUMENT,
              "cpu provider: option conv_layout must be plain, blocked or auto, found '" + config_.conv_layout + "'");
}

namespace {

std::vector<const EphostNode*> key_of(const std::vector<sdk::Node>& nodes) {
  std::vector<const EphostNode*> key;
  key.reserve(nodes.size());
  for (const sdk::Node& n : nodes) key.push_back(n.get());
  std::sort(key.begin(), key.end());
  return key;
}

// The nodes' names in key_of's order (by address).
std::vector<std::string> names_of(std::vector<sdk::Node> nodes) {
  std::sort(nodes.begin(), nodes.end(), [](const sdk::Node& a, const sdk::Node& b) {
    return std::less<const EphostNode*>()(a.get(), b.get());
  });
  std::vector<std::string> names;
  names.reserve(nodes.size());
  for (const sdk::Node& n : nodes) names.push_back(n.name());
  return names;
}

}  // namespace

void CpuProvider::claim_int8_trunks(const sdk::Graph& graph, const std::vector<std::vector<sdk::Node>>& chains,
                                    const std::unordered_map<const EphostNode*, size_t>& position,
                                    std::unordered_map<const EphostNode*, std::vector<sdk::Node>>& pattern_at) {
  std::vector<std::vector<size_t>> trunks;
  try {
    trunks = fusion::find_int8_trunks(graph, chains);
  } catch (const std::exception& e) {
    sdk::log(EPHOST_LOG_VERBOSE, std::string("cpu: no int8 trunks: ") + e.what());
    return;
  }
  for (const std::vector<size_t>& trunk : trunks) {
    std::vector<sdk::Node> group;
    std::lock_guard<std::mutex> lock(mu_);
    for (size_t c : trunk) {
      claims_.erase(key_of(chains[c]));
      pattern_at.erase(chains[c].front().get());
      group.insert(group.end(), chains[c].begin(), chains[c].end());
    }
    std::sort(group.begin(), group.end(),
              [&](const sdk::Node& a, const sdk::Node& b) { return position.at(a.get()) < position.at(b.get()); });
    claims_[key_of(group)] = Claim{ClaimKind::kInt8Trunk, nullptr, group.front(), names_of(group)};
    pattern_at[group.front().get()] = std::move(group);
  }
}

void CpuProvider::get_capability(const sdk::Graph& graph, sdk::Capability& capability) {
  const KernelRegistry& registry = KernelRegistry::instance();
  const std::vector<sdk::Node> nodes = graph.nodes();
  // Patterns first (fusion/graph_match.h): each match becomes a fused group, claimed at its
  // topologically first node.
  std::unordered_set<const EphostNode*> taken;
  std::unordered_map<const EphostNode*, std::vector<sdk::Node>> pattern_at;  // first node -> group
  if (config_.fuse_patterns) {
    std::unordered_map<const EphostNode*, size_t> position;
    for (size_t i = 0; i < nodes.size(); ++i) position[nodes[i].get()] = i;
    const fusion::Available ok = [&](const sdk::Node& n) {
      return position.count(n.get()) != 0 && taken.count(n.get()) == 0;
    };
    std::vector<std::vector<sdk::Node>> int8_chains;  // the qdq_conv pattern's groups, for the trunks
    // Each pattern of `patterns`, in order, at every node not yet taken.
    auto claim_patterns = [&](const std::vector<const fusion::Fusion*>& patterns) {
      for (const sdk::Node& node : nodes) {
        if (taken.count(node.get())) continue;
        for (const fusion::Fusion* f : patterns) {
          std::vector<sdk::Node> group;
          try {
            group = f->match(node, ok);
          } catch (const std::exception& e) {
            sdk::log(EPHOST_LOG_VERBOSE, std::string("cpu: pattern ") + f->name() + " at '" + node.name() + "': " + e.what());
            group.clear();
          }
          if (group.empty()) continue;
          for (const sdk::Node& n : group) taken.insert(n.get());
          std::sort(group.begin(), group.end(),
                    [&](const sdk::Node& a, const sdk::Node& b) { return position[a.get()] < position[b.get()]; });
          {
            std::lock_guard<std::mutex> lock(mu_);
            claims_[key_of(group)] = Claim{ClaimKind::kPattern, f, node, names_of(group)};
          }
          if (f == &fusion::qdq_conv_fusion()) int8_chains.push_back(group);
          pattern_at[group.front().get()] = std::move(group);
          break;
        }
      }
    };
    // int8 QDQ patterns (fusion/qdq_*.cpp) before the regions, which would take their Conv in float.
    claim_patterns(fusion::int8_fusions());
    // int8 chains that read each other become one trunk (fusion/qdq_conv_trunk.h), claimed in their place.
    if (config_.int8_trunks) claim_int8_trunks(graph, int8_chains, position, pattern_at);
    // Convolutional regions (fusion/cnn_region.h) first: they take whole stretches of a convnet.
    std::vector<std::vector<sdk::Node>> regions;
    try {
      regions = fusion::find_cnn_regions(graph, [&](const sdk::Node& n) { return taken.count(n.get()) != 0; });
    } catch (const std::exception& e) {
      sdk::log(EPHOST_LOG_VERBOSE, std::string("cpu: no convolutional regions: ") + e.what());
    }
    for (std::vector<sdk::Node>& group : regions) {
      for (const sdk::Node& n : group) taken.insert(n.get());
      {
        std::lock_guard<std::mutex> lock(mu_);
        claims_[key_of(group)] = Claim{ClaimKind::kRegion, nullptr, group.front(), names_of(group)};
      }
      pattern_at[group.front().get()] = std::move(group);
    }
    claim_patterns(fusion::fusions());
  }
  // Chains of pointwise float nodes become fused groups, claimed where their first node is.
  std::map<size_t, size_t> chain_of;  // node id -> chain index
  const std::vector<std::vector<sdk::Node>> chains =
      config_.fuse_elementwise
          ? find_elementwise_chains(graph, [&](const sdk::Node& n) { return taken.count(n.get()) != 0; })
          : std::vector<std::vector<sdk::Node>>{};
  for (size_t c = 0; c < chains.size(); ++c)
    for (const sdk::Node& node : chains[c]) chain_of[node.id()] = c;
  // Fused groups first, in node order; then every node the registry can run on its own, members of
  // those groups included: the host ignores single claims of nodes our group already took, and where
  // it refused a group (fusing it with what an earlier provider took would form a cycle) the nodes
  // still run, one kernel each.
  for (const sdk::Node& node : nodes) {
    if (auto it = pattern_at.find(node.get()); it != pattern_at.end()) {
      capability.add_fused_group(it->second);
      continue;
    }
    if (auto it = chain_of.find(node.id()); it != chain_of.end())
      if (chains[it->second].front().id() == node.id()) capability.add_fused_group(chains[it->second]);
  }
  for (const sdk::Node& node : nodes) {
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
  const std::vector<sdk::Node> nodes = group.nodes();
  Claim claim;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = claims_.find(key_of(nodes));
    if (it != claims_.end() && it->second.names == names_of(nodes)) claim = it->second;
  }
  // A region reports a span per primitive itself; the other groups run as one piece, so one span
  // names all their nodes (profiles, plugin ABI 4).
  if (claim.anchor.valid()) {
    switch (claim.kind) {
      case ClaimKind::kPattern:
        return fusion::with_group_span(claim.fusion->compile(claim.anchor, group, config_), group);
      case ClaimKind::kRegion: return fusion::compile_cnn_region(group, config_);
      case ClaimKind::kInt8Trunk: return fusion::with_group_span(fusion::compile_int8_trunk(group, config_), group);
    }
  }
  return fusion::with_group_span(compile_elementwise_chain(group, fused_name, config_), group);
}

}  // namespace ephost::cpu
