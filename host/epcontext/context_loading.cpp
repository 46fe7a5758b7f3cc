#include "epcontext/context_loading.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <boost/filesystem.hpp>
#include <optional>
#include <tuple>

#include "abi/handles.h"
#include "core/atomic_file.h"
#include "core/confined_path.h"
#include "core/error.h"
#include "core/log.h"
#include "discovery/plugin_record.h"
#include "epcontext/context_store.h"
#include "epcontext/context_schema.h"
#include "epcontext/source_fallback.h"

namespace ephost {
namespace fs = boost::filesystem;
namespace {

// A context that cannot be used: why, in the words of whoever decided.
struct Rejection {
  std::string verdict;
  std::string reason;
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

ContextResolution resolve_contexts(Model& model, const std::vector<std::unique_ptr<Provider>>& providers,
                                   const ContextLoadSettings& settings, ContextShareRegistry& shared) {
  ContextResolution result;
  const bool from_buffer = model.path.empty();
  std::string base_dir = from_buffer ? (settings.ctx_file_path.empty()
                                            ? std::string()
                                            : fs::absolute(fs::path(settings.ctx_file_path)).parent_path().string())
                                     : fs::absolute(fs::path(model.path)).parent_path().string();
  ContextStore store(base_dir, from_buffer, settings.share, shared);

  // A temporary IR over the ctx model: plugins judge and load EPContext nodes through node handles.
  std::unique_ptr<Graph> ir = build_graph_ir(model);
  std::vector<const Node*> contexts;
  for (const auto& n : ir->nodes)
    if (n->op_type == epctx::kOpType && n->domain == epctx::kDomain) contexts.push_back(n.get());
  check_context_node_names(contexts);

  std::vector<std::pair<const Node*, size_t>> rejected;  // node, provider that rejected (or SIZE_MAX)
  for (const Node* n : contexts) {
    ContextDiagnostic d;
    d.node = n->name;
    d.source = context_attribute(*n, epctx::kSource);
    d.embed_mode = context_int_attribute(*n, epctx::kEmbedMode, 1);
    std::vector<size_t> candidates;
    for (size_t i = 0; i < providers.size(); ++i) {
      const auto& keys = providers[i]->record().context_source_keys;
      if (std::find(keys.begin(), keys.end(), d.source) != keys.end()) candidates.push_back(i);
    }
    std::optional<Rejection> rejection;
    size_t rejected_by = SIZE_MAX;
    Bytes blob;
    if (candidates.empty()) {
      std::string names;
      for (const auto& p : providers) names += (names.empty() ? "" : ", ") + p->name();
      rejection = Rejection{"no_provider", fmt::format("no provider of this session loads contexts with source '{}' "
                                                       "(providers: {})",
                                                       d.source, names)};
    } else {
      try {
        blob = store.fetch(*n, contexts);
      } catch (const Error& e) {
        rejection = Rejection{"unreadable", e.what()};
        rejected_by = candidates.front();
        d.provider = providers[candidates.front()]->name();
      }
    }
    for (size_t i = 0; !rejection && i < candidates.size(); ++i) {
      const Provider& p = *providers[candidates[i]];
      d.provider = p.name();
      rejected_by = candidates[i];
      EphostContextVerdict verdict = EPHOST_CONTEXT_OPTIMAL;
      std::string reason;
      // Without a judge, every context of the provider's source keys is loaded.
      try {
        if (std::optional<ContextJudgement> judged = p.judge_context(*n, blob.data(), blob.size())) {
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
          rejection = Rejection{"not_mine", fmt::format("every provider with source key '{}' said the context is not "
                                                        "theirs{}",
                                                        d.source, reason.empty() ? "" : " (" + reason + ")")};
        continue;
      }
      if (verdict == EPHOST_CONTEXT_UNSUPPORTED || verdict > EPHOST_CONTEXT_UNSUPPORTED) {
        rejection = Rejection{"unsupported", reason.empty() ? "the provider cannot use it" : reason};
        break;
      }
      if (verdict == EPHOST_CONTEXT_PREFER_RECOMPILE) {
        std::string msg = fmt::format("EPContext node '{}': provider '{}' can run its context but recommends compiling "
                                      "the model again{}",
                                      n->name, p.name(), reason.empty() ? "" : ": " + reason);
        if (settings.fail_on_suboptimal)
          fail(EPHOST_INVALID_GRAPH, "{} (session.fail_on_suboptimal_compiled_model=1)", msg);
        log_warning(msg);
      }
      std::shared_ptr<ComputeUnit> compute;
      try {
        compute = p.load_context(*n, blob.data(), blob.size());
      } catch (const Error& e) {
        rejection = Rejection{"load_failed", e.what()};
        break;
      }
      d.loaded = true;
      result.loaded[n->name] = {candidates[i], std::move(compute)};
      break;
    }
    if (rejection) {
      d.verdict = rejection->verdict;
      d.reason = rejection->reason;
      const std::string message = fmt::format(
          "INVALID_GRAPH: EPContext node '{}' (source '{}'{}) cannot be used: {}", n->name, d.source,
          d.provider.empty() ? "" : ", provider '" + d.provider + "'", d.reason);
      if (settings.disable_fallback)
        fail(EPHOST_INVALID_GRAPH, "EPContext node '{}' (source '{}'{}) cannot be used: {} "
             "(session.disable_ep_context_fallback=1, so the session fails instead of running the source model's "
             "nodes)",
             n->name, d.source, d.provider.empty() ? "" : ", provider '" + d.provider + "'", d.reason);
      log_warning(message + "; falling back to the source model's nodes on the next providers");
      d.fell_back = true;
      rejected.emplace_back(n, rejected_by);
    }
    result.diagnostics.push_back(std::move(d));
  }
  store.publish_leftovers();

  // Fallback: the rejected nodes' original partitions, from their source models.
  std::vector<std::tuple<std::string, std::string, size_t>> replace;  // node, source model file name, rejecter
  for (auto& [n, by] : rejected) replace.emplace_back(n->name, context_attribute(*n, epctx::kModelFilename), by);
  ir.reset();  // the temporary IR goes; the proto is rewritten below
  std::map<std::string, std::unique_ptr<Model>> sources;
  for (auto& [name, filename, by] : replace) {
    std::string path;
    std::string how;
    if (!settings.source_model_path.empty()) {
      path = settings.source_model_path;
      how = "ep.context_source_model_path";
    } else {
      if (filename.empty())
        fail(EPHOST_INVALID_GRAPH, "EPContext node '{}' cannot be used and records no onnx_model_filename to fall "
             "back to; set ep.context_source_model_path to the source model", name);
      if (base_dir.empty())
        fail(EPHOST_INVALID_GRAPH, "EPContext node '{}' cannot be used, and the fallback to its source model '{}' "
             "needs the ctx model's folder: set ep.context_file_path (model from a buffer) or "
             "ep.context_source_model_path", name, filename);
      path = confine_path(base_dir, filename, fmt::format("EPContext node '{}' onnx_model_filename", name));
      how = "onnx_model_filename, beside the ctx model";
    }
    auto it = sources.find(path);
    if (it == sources.end()) {
      boost::system::error_code ec;
      if (!fs::exists(path, ec))
        fail(EPHOST_INVALID_GRAPH, "EPContext node '{}' cannot be used and its source model '{}' ({}) does not "
             "exist, so there is nothing to fall back to; put the source model there or set "
             "ep.context_source_model_path", name, path, how);
      it = sources.emplace(path, load_model_from_file(path, settings.source_load)).first;
    }
    std::vector<std::string> inserted = replace_with_source_nodes(*model.proto, name, *it->second->proto, path);
    for (const std::string& n : inserted)
      if (by != SIZE_MAX) result.excluded[n] = by;
    for (auto& d : result.diagnostics)
      if (d.node == name) {
        d.fallback_nodes = inserted.size();
        d.fallback_node_names = inserted;
        d.source_model = path;
      }
    log_info(fmt::format("EPContext: node '{}' replaced by {} node(s) of '{}'", name, inserted.size(), path));
  }
  if (!replace.empty()) infer_model_shapes(model);
  return result;
}

}  // namespace ephost
