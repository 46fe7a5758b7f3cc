#include "epcontext/context_loading.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <boost/filesystem.hpp>
#include <optional>

#include "plugin_abi/handles.h"
#include "core/atomic_file.h"
#include "core/confined_path.h"
#include "core/error.h"
#include "core/log.h"
#include "discovery/plugin_record.h"
#include "epcontext/context_store.h"
#include "epcontext/context_schema.h"
#include "epcontext/source_fallback.h"
#include "graph/graph_editor.h"

namespace ephost {
namespace fs = boost::filesystem;
namespace {

// A context that cannot be used: why, in the words of whoever decided.
struct Rejection {
  std::string verdict;
  std::string reason;
};

// The folder binaries and source models are found in: the ctx model's, or for a model from a buffer
// ep.context_file_path's ("" when neither is known).
std::string context_base_dir(const Model& model, const ContextLoadSettings& settings) {
  if (!model.path.empty()) return fs::absolute(fs::path(model.path)).parent_path().string();
  if (settings.ctx_file_path.empty()) return std::string();
  return fs::absolute(fs::path(settings.ctx_file_path)).parent_path().string();
}

// The session's providers (indices, in priority order) whose context_source_keys hold `source`.
std::vector<size_t> providers_for_source(const std::vector<std::unique_ptr<Provider>>& providers,
                                         const std::string& source) {
  std::vector<size_t> candidates;
  for (size_t i = 0; i < providers.size(); ++i) {
    const auto& keys = providers[i]->record().context_source_keys;
    if (std::find(keys.begin(), keys.end(), source) != keys.end()) candidates.push_back(i);
  }
  return candidates;
}

// Resolves the EPContext nodes one by one, then replaces the rejected ones by their source nodes.
class ContextResolver {
 public:
  ContextResolver(Model& model, Graph& main, const std::vector<std::unique_ptr<Provider>>& providers,
                  const ContextLoadSettings& settings, ContextShareRegistry& shared)
      : model_(model),
        main_(main),
        providers_(providers),
        settings_(settings),
        base_dir_(context_base_dir(model, settings)),
        store_(base_dir_, model.path.empty(), settings.share, shared) {}

  ContextResolution run() {
    // Plugins judge and load EPContext nodes through the IR's node handles.
    std::vector<const Node*> contexts;
    for (const auto& n : main_.nodes)
      if (n->op_type == epctx::kOpType && n->domain == epctx::kDomain) contexts.push_back(n.get());
    check_context_node_names(contexts);
    for (const Node* n : contexts) resolve(*n, contexts);
    store_.publish_leftovers();
    if (rejected_.empty()) return std::move(result_);
    // The rejected nodes are replaced in the IR, their source nodes typed where they go in.
    GraphEditor editor(main_);
    for (const auto& [index, by] : rejected_) fall_back(editor, *main_.nodes[index], by);
    editor.commit();
    return std::move(result_);
  }

 private:
  // One EPContext node: fetch its context, let the candidates judge and load it, and record the outcome.
  void resolve(const Node& n, const std::vector<const Node*>& contexts) {
    ContextDiagnostic d;
    d.node = n.name;
    d.source = context_attribute(n, epctx::kSource);
    d.embed_mode = context_int_attribute(n, epctx::kEmbedMode, 1);
    const std::vector<size_t> candidates = providers_for_source(providers_, d.source);
    std::optional<Rejection> rejection;
    size_t rejected_by = SIZE_MAX;
    Bytes blob;
    if (candidates.empty()) {
      std::string names;
      for (const auto& p : providers_) names += (names.empty() ? "" : ", ") + p->name();
      rejection = Rejection{"no_provider", fmt::format("no provider of this session loads contexts with source '{}' "
                                                       "(providers: {})",
                                                       d.source, names)};
    } else {
      try {
        blob = store_.fetch(n, contexts);
      } catch (const Error& e) {
        rejection = Rejection{"unreadable", e.what()};
        rejected_by = candidates.front();
        d.provider = providers_[candidates.front()]->name();
      }
    }
    if (!rejection) rejection = judge_and_load(n, candidates, blob, d, rejected_by);
    if (rejection) reject(n, *rejection, rejected_by, d);
    result_.diagnostics.push_back(std::move(d));
  }

  // Offers the context to each candidate in turn until one loads it or one refuses it for good; a
  // provider that says it is not theirs passes it on. Returns why it cannot be used, or nothing when loaded.
  std::optional<Rejection> judge_and_load(const Node& n, const std::vector<size_t>& candidates, const Bytes& blob,
                                          ContextDiagnostic& d, size_t& rejected_by) {
    for (size_t i = 0; i < candidates.size(); ++i) {
      const Provider& p = *providers_[candidates[i]];
      d.provider = p.name();
      rejected_by = candidates[i];
      EphostContextVerdict verdict = EPHOST_CONTEXT_OPTIMAL;
      std::string reason;
      // Without a judge, every context of the provider's source keys is loaded.
      try {
        if (std::optional<ContextJudgement> judged = p.judge_context(n, blob.data(), blob.size())) {
          verdict = judged->verdict;
          reason = judged->reason;
        }
      } catch (const Error& e) {
        verdict = EPHOST_CONTEXT_UNSUPPORTED;
        reason = e.what();
      }
      d.verdict = context_verdict_name(verdict);
      d.reason = reason;
      if (verdict == EPHOST_CONTEXT_NOT_MINE) {
        if (i + 1 == candidates.size())
          return Rejection{"not_mine", fmt::format("every provider with source key '{}' said the context is not "
                                                   "theirs{}",
                                                   d.source, reason.empty() ? "" : " (" + reason + ")")};
        continue;
      }
      if (verdict == EPHOST_CONTEXT_UNSUPPORTED || verdict > EPHOST_CONTEXT_UNSUPPORTED)
        return Rejection{"unsupported", reason.empty() ? "the provider cannot use it" : reason};
      if (verdict == EPHOST_CONTEXT_PREFER_RECOMPILE) {
        std::string msg = fmt::format("EPContext node '{}': provider '{}' can run its context but recommends compiling "
                                      "the model again{}",
                                      n.name, p.name(), reason.empty() ? "" : ": " + reason);
        if (settings_.fail_on_suboptimal)
          fail(EPHOST_INVALID_GRAPH, "{} (session.fail_on_suboptimal_compiled_model=1)", msg);
        log_warning(msg);
      }
      std::shared_ptr<ComputeUnit> compute;
      try {
        compute = p.load_context(n, blob.data(), blob.size());
      } catch (const Error& e) {
        return Rejection{"load_failed", e.what()};
      }
      d.loaded = true;
      result_.loaded[n.name] = {candidates[i], std::move(compute)};
      return std::nullopt;
    }
    return std::nullopt;  // no candidates: the caller rejected already
  }

  // Records a rejection: an INVALID_GRAPH warning and a fallback, or the session's failure when
  // fallback is off.
  void reject(const Node& n, const Rejection& rejection, size_t rejected_by, ContextDiagnostic& d) {
    d.verdict = rejection.verdict;
    d.reason = rejection.reason;
    const std::string message = fmt::format(
        "INVALID_GRAPH: EPContext node '{}' (source '{}'{}) cannot be used: {}", n.name, d.source,
        d.provider.empty() ? "" : ", provider '" + d.provider + "'", d.reason);
    if (settings_.disable_fallback)
      fail(EPHOST_INVALID_GRAPH, "EPContext node '{}' (source '{}'{}) cannot be used: {} "
           "(session.disable_ep_context_fallback=1, so the session fails instead of running the source model's "
           "nodes)",
           n.name, d.source, d.provider.empty() ? "" : ", provider '" + d.provider + "'", d.reason);
    log_warning(message + "; falling back to the source model's nodes on the next providers");
    d.fell_back = true;
    rejected_.emplace_back(n.index, rejected_by);
  }

  // The source model at `path`, loaded once: checked, not shape-inferred (the nodes taken from it are
  // typed where they are spliced in).
  const onnx::ModelProto& source_model(const std::string& path) {
    auto it = sources_.find(path);
    if (it == sources_.end()) {
      LoadOptions load = settings_.source_load;
      load.infer_shapes = false;
      it = sources_.emplace(path, load_model_from_file(path, load)).first;
    }
    return *it->second->proto;
  }

  // Replaces rejected node `n` by its original partition, taken from its source model.
  void fall_back(GraphEditor& editor, Node& n, size_t rejected_by) {
    const std::string node = n.name;
    const ContextSourceModel found = find_context_source_model(n, model_, settings_);
    if (found.path.empty()) fail(EPHOST_INVALID_GRAPH, "EPContext node '{}' cannot be used and {}", n.name, found.missing);
    const std::string& path = found.path;
    const onnx::ModelProto& source = source_model(path);
    std::vector<std::string> inserted =
        splice_source_partition(editor, model_, n, cut_source_partition(n, source, path), source);
    for (const std::string& name : inserted)
      if (rejected_by != SIZE_MAX) result_.excluded[name] = rejected_by;
    for (auto& d : result_.diagnostics)
      if (d.node == node) {
        d.fallback_nodes = inserted.size();
        d.fallback_node_names = inserted;
        d.source_model = path;
      }
    log_info(fmt::format("EPContext: node '{}' replaced by {} node(s) of '{}'", node, inserted.size(), path));
  }

  Model& model_;
  Graph& main_;
  const std::vector<std::unique_ptr<Provider>>& providers_;
  const ContextLoadSettings& settings_;
  const std::string base_dir_;
  ContextStore store_;
  ContextResolution result_;
  std::vector<std::pair<size_t, size_t>> rejected_;  // node index in main_, provider that rejected (or SIZE_MAX)
  std::map<std::string, std::unique_ptr<Model>> sources_;  // source models by path, loaded once
};

}  // namespace

ContextLoadSettings read_context_load_settings(const EpContextOptions& options, const LoadOptions& load) {
  ContextLoadSettings s;
  s.ctx_file_path = options.file_path;
  s.source_model_path = options.source_model_path;
  s.disable_fallback = options.disable_fallback;
  s.fail_on_suboptimal = options.fail_on_suboptimal;
  s.share = options.share;
  s.source_load = load;
  return s;
}

ContextSourceModel find_context_source_model(const Node& n, const Model& model, const ContextLoadSettings& settings) {
  ContextSourceModel found;
  if (!settings.source_model_path.empty()) {
    found.path = settings.source_model_path;
    found.how = "ep.context_source_model_path";
  } else {
    const std::string filename = context_attribute(n, epctx::kModelFilename);
    const std::string base_dir = context_base_dir(model, settings);
    if (filename.empty()) {
      found.missing = "records no onnx_model_filename to fall back to; set ep.context_source_model_path to the "
                      "source model";
      return found;
    }
    if (base_dir.empty()) {
      found.missing = fmt::format("the fallback to its source model '{}' needs the ctx model's folder: set "
                                  "ep.context_file_path (model from a buffer) or ep.context_source_model_path",
                                  filename);
      return found;
    }
    try {
      found.path = confine_path(base_dir, filename, fmt::format("EPContext node '{}' onnx_model_filename", n.name));
    } catch (const Error& e) {
      // A path out of the ctx model's folder names no source model: said when a fallback needs one.
      found.missing = fmt::format("names a source model it may not use ({}); set ep.context_source_model_path",
                                  e.what());
      return found;
    }
    found.how = "onnx_model_filename, beside the ctx model";
  }
  boost::system::error_code ec;
  if (!fs::exists(found.path, ec)) {
    found.missing = fmt::format("its source model '{}' ({}) does not exist, so there is nothing to fall back to; put "
                                "the source model there or set ep.context_source_model_path",
                                found.path, found.how);
    found.path.clear();
  }
  return found;
}

ContextResolution resolve_contexts(Model& model, Graph& main, const std::vector<std::unique_ptr<Provider>>& providers,
                                   const ContextLoadSettings& settings, ContextShareRegistry& shared) {
  if (main.parent_graph || main.model != &model)
    fail(EPHOST_INVALID_ARGUMENT, "resolve_contexts: the graph given is not the main graph of the model given");
  return ContextResolver(model, main, providers, settings, shared).run();
}

}  // namespace ephost
