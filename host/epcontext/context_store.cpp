#include "epcontext/context_store.h"

#include <onnx/onnx_pb.h>

#include <memory>

#include "core/atomic_file.h"
#include "core/confined_path.h"
#include "core/error.h"
#include "core/log.h"
#include "epcontext/context_schema.h"

namespace ephost {

const char* context_verdict_name(EphostContextVerdict v) {
  switch (v) {
    case EPHOST_CONTEXT_NOT_MINE: return "not_mine";
    case EPHOST_CONTEXT_OPTIMAL: return "optimal";
    case EPHOST_CONTEXT_PREFER_RECOMPILE: return "prefer_recompile";
    case EPHOST_CONTEXT_UNSUPPORTED: return "unsupported";
  }
  return "unknown";
}

std::string context_attribute(const Node& n, const char* name) {
  const onnx::AttributeProto* a = n.attribute(name);
  return a ? a->s() : std::string();
}

int64_t context_int_attribute(const Node& n, const char* name, int64_t fallback) {
  const onnx::AttributeProto* a = n.attribute(name);
  return a ? a->i() : fallback;
}

namespace {

// The names must match: a container holding other graphs (even a single one) belongs to another model.
[[noreturn]] void no_such_graph(const std::string& node, const std::string& name, const ContextBinary& b) {
  std::string held;
  for (const std::string& g : b.graph_names()) held += (held.empty() ? "'" : ", '") + g + "'";
  fail(EPHOST_INVALID_GRAPH,
       "the context of EPContext node '{}' holds no graph '{}' (it holds {}): a binary of another model, or a "
       "partition_name that was changed",
       node, name, held.empty() ? std::string("none") : held);
}

}  // namespace

void check_context_node_names(const std::vector<const Node*>& contexts) {
  std::map<std::string, const Node*> seen;
  for (const Node* n : contexts) {
    auto [it, inserted] = seen.emplace(n->name, n);
    if (!inserted)
      fail(EPHOST_INVALID_GRAPH,
           "EPContext nodes {} and {} are both named '{}'; each EPContext node of a model needs its own name",
           it->second->index, n->index, n->name);
  }
}

ContextStore::ContextStore(std::string base_dir, bool from_buffer, bool share, ContextShareRegistry& shared)
    : base_dir_(std::move(base_dir)), from_buffer_(from_buffer), share_(share), shared_(shared) {}

std::string ContextStore::file_of(const std::string& node, const std::string& reference) const {
  if (from_buffer_ && base_dir_.empty())
    fail(EPHOST_INVALID_GRAPH,
         "EPContext node '{}' keeps its context in file '{}', but the model came from a buffer: set "
         "ep.context_file_path to the ctx model's path so the host knows its folder",
         node, reference);
  return confine_path(base_dir_, reference, fmt::format("EPContext node '{}' ep_cache_context", node));
}

Bytes ContextStore::fetch(const Node& n, const std::vector<const Node*>& contexts) {
  const std::string partition = context_attribute(n, epctx::kPartitionName);
  if (context_int_attribute(n, epctx::kMainContext, 1) == 1) {
    auto bytes = from_main(n, partition.empty() ? n.name : partition, false);
    if (!bytes) fail(EPHOST_INVALID_GRAPH, "the context of EPContext node '{}' holds no graph '{}'", n.name, partition);
    return std::move(*bytes);
  }
  if (partition.empty())
    fail(EPHOST_INVALID_GRAPH,
         "EPContext node '{}' has main_context=0 but no partition_name saying which graph of a main context it uses",
         n.name);
  const std::string source = context_attribute(n, epctx::kSource);
  for (const Node* m : contexts)
    if (m != &n && context_int_attribute(*m, epctx::kMainContext, 1) == 1 &&
        context_attribute(*m, epctx::kSource) == source)
      if (auto bytes = from_main(*m, partition, true)) return std::move(*bytes);
  fail(EPHOST_INVALID_GRAPH,
       "EPContext node '{}' (main_context=0) uses graph '{}', which no main context with source '{}' in this model "
       "holds",
       n.name, partition, source);
}

std::optional<Bytes> ContextStore::from_main(const Node& main, const std::string& name, bool exact) {
  const int64_t embed = context_int_attribute(main, epctx::kEmbedMode, 1);
  const std::string cache = context_attribute(main, epctx::kCacheContext);
  if (embed == 1) {
    if (cache.empty()) fail(EPHOST_INVALID_GRAPH, "EPContext node '{}' has embed_mode 1 but an empty payload", main.name);
    auto data = std::make_shared<const Bytes>(cache.begin(), cache.end());
    ContextBinary b =
        ContextBinary::parse(data, fmt::format("the context embedded in EPContext node '{}'", main.name));
    std::string resolved = exact ? (b.has_graph(name) ? name : "") : b.resolve(name);
    if (resolved.empty() && exact) return std::nullopt;
    if (resolved.empty()) no_such_graph(main.name, name, b);
    return b.assemble(resolved);
  }
  if (embed != 0)
    fail(EPHOST_INVALID_GRAPH, "EPContext node '{}' has embed_mode {}; it must be 0 or 1", main.name, embed);
  if (cache.empty())
    fail(EPHOST_INVALID_GRAPH, "EPContext node '{}' has embed_mode 0 but no file in ep_cache_context", main.name);
  return take_from_file(main.name, file_of(main.name, cache), name, exact);
}

std::optional<Bytes> ContextStore::take_from_file(const std::string& node, const std::string& path,
                                                  const std::string& name, bool exact) {
  if (share_) {
    auto lock = shared_.lock();
    if (auto bytes = shared_.take(path, name)) {
      log_info(fmt::format("EPContext: graph '{}' of '{}' taken from the sharing workspace (file not read)", name,
                           path));
      taken_[path].insert(name);
      return bytes;
    }
  }
  const ContextBinary& b = parsed(path);
  std::string resolved = exact ? (b.has_graph(name) ? name : "") : b.resolve(name);
  if (resolved.empty() && exact) return std::nullopt;
  if (resolved.empty()) no_such_graph(node, name, b);
  taken_[path].insert(resolved);
  return b.assemble(resolved);
}

const ContextBinary& ContextStore::parsed(const std::string& path) {
  auto it = files_.find(path);
  if (it != files_.end()) return it->second;
  std::shared_ptr<const Bytes> data;
  {
    std::string bytes;
    try {
      bytes = read_whole_file(path, "context binary");
    } catch (const Error& e) {  // a missing or unreadable binary is a context that cannot be used
      throw Error(EPHOST_INVALID_GRAPH, e.what());
    }
    data = std::make_shared<const Bytes>(bytes.begin(), bytes.end());
  }
  log_info(fmt::format("EPContext: read context binary '{}' ({} bytes)", path, data->size()));
  return files_.emplace(path, ContextBinary::parse(data, fmt::format("context binary '{}'", path))).first->second;
}

void ContextStore::publish_leftovers() {
  if (!share_) return;
  auto lock = shared_.lock();
  for (const auto& [path, binary] : files_) {
    if (binary.raw()) continue;
    for (const std::string& name : binary.graph_names())
      if (!taken_[path].count(name)) shared_.put(path, name, binary.assemble(name));
  }
}

}  // namespace ephost
