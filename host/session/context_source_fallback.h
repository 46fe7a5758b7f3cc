// The fallback of an EPContext node whose provider fell back after loading its context: an isolated
// provider whose provider host process failed too often (session/provider_fallback.h). The node's
// context is the plugin's own, which no other provider reads, so the node's partition runs from the
// source model's nodes instead, as a context rejected at creation does (epcontext/source_fallback.h).
// The IR is frozen by then (concurrent runs read it), so those nodes are not spliced into it: they are
// cut out of the source model into a graph of their own, whose inputs and outputs are the EPContext
// node's, and run in the node's place by the session's CPU plugin's kernels (isolation/fallback_group.h),
// one step that the new plan places like any other.
//
// The source model is found at creation (ep.context_source_model_path, or onnx_model_filename beside
// the ctx model: its path, or why there is none) and loaded only when a fallback needs it. A provider
// holding a node with no source model cannot hand its work on: it is told so, and is restarted instead
// of falling back (isolation/isolated_provider.h), each failure saying what to do.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "epcontext/context_loading.h"
#include "graph/graph.h"
#include "model/model.h"
#include "partition/partition.h"
#include "provider/provider_set.h"
#include "session/provider_fallback.h"

namespace ephost {

class ContextSourceFallback {
 public:
  // For the EPContext nodes of `main` (the IR of `model`) that isolated providers of `providers` loaded
  // (`contexts`): finds their source models, tells each provider with a node that has none, and has
  // `fallback` plan again when a host-memory one falls back. `providers` and `main` must outlive this.
  ContextSourceFallback(const Model& model, const Graph& main, const ProviderSet& providers,
                        const ContextResolution& contexts, const ContextLoadSettings& settings,
                        ProviderFallback& fallback);
  ~ContextSourceFallback();
  ContextSourceFallback(const ContextSourceFallback&) = delete;
  ContextSourceFallback& operator=(const ContextSourceFallback&) = delete;

  // The EPContext nodes of the providers in `left_out` (by index; "" for those in), each as its source
  // nodes run by the session's CPU plugin in its place: partition_graphs' replacements. Made once per
  // node and kept. Throws EP_FAIL when a node has no source model, its source model does not hold its
  // partition, or the session has no CPU plugin.
  std::vector<PartitionOptions::Preassigned> replacements(const std::vector<std::string>& left_out);

 private:
  class Runner;
  struct Entry {
    const Node* node = nullptr;
    size_t provider = 0;
    ContextSourceModel source;
    PartitionOptions::Preassigned replacement;  // once made
  };

  PartitionOptions::Preassigned make_replacement(const Entry& entry);

  const ProviderSet& providers_;
  const ContextLoadSettings settings_;
  std::vector<Entry> entries_;
  std::unique_ptr<Runner> runner_;  // made with the first replacement
  std::map<std::string, std::unique_ptr<Model>> sources_;  // source models by path, loaded once
  std::mutex mutex_;
};

}  // namespace ephost
