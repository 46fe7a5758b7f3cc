// Loading an EPContext model (seed: "Inference Workflow for EP Context Cache Models"), on the model's
// IR before partitioning:
//   1. every EPContext node of the main graph goes to the first provider of the session (in priority
//      order) whose context_source_keys contain its `source`;
//   2. its context comes from the node (embed_mode 1) or from the binary its main context names
//      (embed_mode 0; relative to the model's folder, or to ep.context_file_path's folder for a
//      buffer; absolute paths and `..` refused), checked for truncation and corruption;
//   3. the provider judges it (context_judge) and loads it (context_load);
//   4. a context that is unsupported or fails to load is an INVALID_GRAPH diagnostic (logged as a
//      warning, kept for the partition report) and, unless session.disable_ep_context_fallback=1,
//      the node is replaced in the IR (graph/graph_editor.h) by the original nodes of its partition,
//      taken from the source model (ep.context_source_model_path, or `onnx_model_filename` beside the
//      ctx model; epcontext/source_fallback.h); those nodes go to the providers after the one that
//      rejected, ending with the CPU plugin.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "provider/provider.h"
#include "graph/graph.h"
#include "model/loader.h"
#include "partition/partition.h"
#include "epcontext/context_options.h"
#include "epcontext/share_workspace.h"

namespace ephost {

// What happened to one EPContext node; the partition report lists these.
struct ContextDiagnostic {
  std::string node;
  std::string source;
  std::string provider;  // "" when no provider matched
  std::string verdict;   // optimal | prefer_recompile | unsupported | load_failed | no_provider | unreadable
  std::string reason;    // the plugin's or the host's words
  bool loaded = false;
  bool fell_back = false;  // the original nodes run instead
  size_t fallback_nodes = 0;
  std::vector<std::string> fallback_node_names;  // the inserted source nodes, by name
  std::string source_model;  // the model the fallback took the nodes from (when it fell back)
  int64_t embed_mode = 1;    // the node's embed_mode
};

struct ContextResolution {
  struct Loaded {
    size_t provider = 0;
    std::shared_ptr<ComputeUnit> compute;
  };
  std::map<std::string, Loaded> loaded;  // EPContext node name -> what its provider loaded
  // Original node name -> the provider that rejected the context they replace.
  std::map<std::string, size_t> excluded;
  std::vector<ContextDiagnostic> diagnostics;
};

struct ContextLoadSettings {
  std::string ctx_file_path;        // ep.context_file_path
  std::string source_model_path;    // ep.context_source_model_path
  bool disable_fallback = false;    // session.disable_ep_context_fallback
  bool fail_on_suboptimal = false;  // session.fail_on_suboptimal_compiled_model
  bool share = false;               // ep.share_ep_contexts
  LoadOptions source_load;          // how to load a source model for fallback (never shape-inferred: the
                                    // nodes taken from it are typed in the IR)
};
// The loading settings from the session's EPContext options; `load` is how a source model is loaded.
ContextLoadSettings read_context_load_settings(const EpContextOptions& options, const LoadOptions& load);

// Where the source model of EPContext node `n` (of `model`'s IR) is, for a fallback to its nodes:
// ep.context_source_model_path, or the node's onnx_model_filename beside the ctx model (confined to
// its folder). Nothing is loaded.
struct ContextSourceModel {
  std::string path;     // "" when there is none
  std::string how;      // how it was found, for messages
  std::string missing;  // when there is none: why, and what to do (a phrase after the node's name)
};
ContextSourceModel find_context_source_model(const Node& n, const Model& model, const ContextLoadSettings& settings);

// Resolves the EPContext nodes of `main`, the main graph of `model`'s IR (not frozen): loads what can
// be loaded and replaces the rejected nodes by their original nodes in the IR (edited, typed where the
// nodes go in: neither rebuilt nor inferred again). model.proto keeps the ctx model's nodes; it gains
// the opset imports of the source nodes' domains it lacked. Throws INVALID_GRAPH when a context cannot
// be used and fallback is off or impossible, INVALID_ARGUMENT when `main` is not `model`'s main graph.
ContextResolution resolve_contexts(Model& model, Graph& main, const std::vector<std::unique_ptr<Provider>>& providers,
                                   const ContextLoadSettings& settings, ContextShareRegistry& shared);

}  // namespace ephost
