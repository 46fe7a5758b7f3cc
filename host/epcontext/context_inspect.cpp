#include "epcontext/context_inspect.h"

#include <onnx/onnx_pb.h>

#include <boost/filesystem.hpp>
#include <nlohmann/json.hpp>

#include "plugin_abi/handles.h"
#include "core/error.h"
#include "discovery/plugin_record.h"
#include "epcontext/context_schema.h"
#include "epcontext/context_store.h"
#include "provider/provider.h"
#include "model/loader.h"

namespace ephost {

std::string inspect_context_model(const PluginRegistry& registry, const std::string& model_path,
                                  const std::string& external_data_folder) {
  using nlohmann::json;
  LoadOptions load;
  load.external_data_folder = external_data_folder;
  std::unique_ptr<Model> model = load_model_from_file(model_path, load);
  std::unique_ptr<Graph> graph = build_graph_ir(*model);

  json report;
  report["model"] = model_path;
  json metadata = json::object();
  for (const auto& kv : model->proto->metadata_props())
    if (kv.key().rfind(epctx::kCompatibilityInfoPrefix, 0) == 0) metadata[kv.key()] = kv.value();
  report["metadata"] = metadata;

  std::vector<const Node*> contexts;
  for (const auto& n : graph->nodes)
    if (n->op_type == epctx::kOpType && n->domain == epctx::kDomain) contexts.push_back(n.get());
  check_context_node_names(contexts);

  // One provider per plugin that could load some node, created with the plugin's default options.
  std::map<std::string, std::unique_ptr<Provider>> providers;
  auto provider_for = [&](const PluginRecord& rec) -> Provider* {
    auto it = providers.find(rec.name);
    if (it == providers.end()) {
      std::vector<std::pair<std::string, std::string>> opts;
      opts.emplace_back("intra_op_num_threads", "1");
      it = providers.emplace(rec.name, create_provider(rec, opts)).first;
    }
    return it->second.get();
  };

  const std::string base_dir = boost::filesystem::absolute(model_path).parent_path().string();
  ContextShareRegistry unshared;  // inspect never shares: each binary is read from its file
  ContextStore store(base_dir, false, false, unshared);
  json nodes = json::array();
  for (const Node* n : contexts) {
    json jn;
    const int64_t embed = context_int_attribute(*n, epctx::kEmbedMode, 1);
    const std::string cache = context_attribute(*n, epctx::kCacheContext);
    const std::string source = context_attribute(*n, epctx::kSource);
    jn["name"] = n->name;
    jn["source"] = source;
    jn["partition_name"] = context_attribute(*n, epctx::kPartitionName);
    jn["main_context"] = context_int_attribute(*n, epctx::kMainContext, 1);
    jn["embed_mode"] = embed;
    jn["ep_cache_context"] = embed == 1 ? fmt::format("<{} bytes embedded>", cache.size()) : cache;
    jn["ep_sdk_version"] = context_attribute(*n, epctx::kSdkVersion);
    jn["hardware_architecture"] = context_attribute(*n, epctx::kHardwareArchitecture);
    jn["onnx_model_filename"] = context_attribute(*n, epctx::kModelFilename);
    jn["notes"] = context_attribute(*n, epctx::kNotes);
    jn["inputs"] = n->inputs.size();
    jn["outputs"] = n->outputs.size();
    if (embed == 1) {
      jn["context_bytes"] = cache.size();
    } else if (!cache.empty()) {
      try {
        jn["context_bytes"] = boost::filesystem::file_size(store.file_of(n->name, cache));
      } catch (const std::exception& e) {
        jn["context_bytes"] = nullptr;
      }
    }
    Bytes blob;
    bool have_blob = false;
    try {
      blob = store.fetch(*n, contexts);
      have_blob = true;
      jn["graph_bytes"] = blob.size();
    } catch (const std::exception& e) {
      jn["error"] = e.what();
    }
    json verdicts = json::array();
    for (const PluginRecord* rec : registry.loaded_by_priority()) {
      const auto& keys = rec->context_source_keys;
      if (std::find(keys.begin(), keys.end(), source) == keys.end()) continue;
      json v;
      v["provider"] = rec->name;
      v["version"] = rec->version;
      v["sdk_version"] = rec->sdk_version;
      if (!have_blob) {
        v["verdict"] = "unreadable";
        v["reason"] = jn["error"];
      } else if (!registry.ensure_loaded(*rec)) {  // lazy loading: its code is needed now
        v["verdict"] = "unavailable";
        v["reason"] = "the plugin dropped out when it was loaded: " + rec->skip_reason();
      } else {
        try {
          const std::optional<ContextJudgement> judged = provider_for(*rec)->judge_context(*n, blob.data(), blob.size());
          if (judged) {
            v["verdict"] = context_verdict_name(judged->verdict);
            v["reason"] = judged->reason;
          } else {
            v["verdict"] = "unknown";
            v["reason"] = "the plugin has no context_judge; it would try to load the context";
          }
        } catch (const std::exception& e) {
          v["verdict"] = "error";
          v["reason"] = e.what();
        }
      }
      verdicts.push_back(v);
    }
    jn["verdicts"] = verdicts;
    nodes.push_back(jn);
  }
  report["nodes"] = nodes;
  return report.dump(2);
}

}  // namespace ephost
