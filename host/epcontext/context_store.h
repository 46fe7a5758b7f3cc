// Where the context of an EPContext node comes from: the node's own payload (embed_mode 1), or the
// binary file its main context names (embed_mode 0), resolved inside the model's folder (absolute
// paths and `..` refused) and read once per session; with ep.share_ep_contexts the graphs a session
// does not use wait in the Env's sharing workspace for the sessions that do.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ephost/ephost_plugin.h"
#include "epcontext/context_binary.h"
#include "graph/graph.h"
#include "epcontext/share_workspace.h"

namespace ephost {

// "optimal", "prefer_recompile", "unsupported", "not_mine": how reports spell a plugin's verdict.
const char* context_verdict_name(EphostContextVerdict verdict);

// Attribute getters over IR nodes with the schema's defaults.
std::string context_attribute(const Node& n, const char* name);
int64_t context_int_attribute(const Node& n, const char* name, int64_t fallback);

// Throws INVALID_GRAPH when two EPContext nodes of `contexts` share a name: a plugin keys what it
// loads by node, and a ctx model with duplicates is not one the host wrote.
void check_context_node_names(const std::vector<const Node*>& contexts);

class ContextStore {
 public:
  // `base_dir`: the ctx model's folder ("" when unknown: a buffer without ep.context_file_path).
  // `shared`: the env's weight-sharing workspace (used when `share`).
  ContextStore(std::string base_dir, bool from_buffer, bool share, ContextShareRegistry& shared);

  // The context bytes of EPContext node `n`; `contexts` are all EPContext nodes of its graph (a
  // main_context=0 node finds its graph, by partition_name, in a main context with the same source).
  // Throws INVALID_GRAPH saying what is wrong (missing, truncated, corrupt, escaping path...).
  Bytes fetch(const Node& n, const std::vector<const Node*>& contexts);

  // The file an embed_mode 0 node names, confined to the model's folder.
  std::string file_of(const std::string& node, const std::string& reference) const;

  // Leaves the graphs this session did not take in the sharing workspace for the next sessions.
  void publish_leftovers();

 private:
  std::optional<Bytes> from_main(const Node& main, const std::string& name, bool exact);
  std::optional<Bytes> take_from_file(const std::string& node, const std::string& path, const std::string& name,
                                      bool exact);
  const ContextBinary& parsed(const std::string& path);

  std::string base_dir_;
  bool from_buffer_, share_;
  ContextShareRegistry& shared_;
  std::map<std::string, ContextBinary> files_;
  std::map<std::string, std::set<std::string>> taken_;
};

}  // namespace ephost
