// `ephost inspect`: what an EPContext model holds and what the installed plugins think of it, without
// creating a session: every EPContext node's attributes and context size, and the verdict
// (context_judge) of every loaded plugin whose source keys match the node's `source`.
#pragma once

#include <string>

#include "discovery/plugin_registry.h"

namespace ephost {

// JSON: {"model", "metadata": {...ep_compatibility_info.*}, "nodes": [{"name", "source", "partition_name",
// "main_context", "embed_mode", "ep_cache_context" (path, or "<N bytes embedded>"), "ep_sdk_version",
// "hardware_architecture", "onnx_model_filename", "context_bytes", "graph_bytes", "error",
// "verdicts": [{"provider", "verdict", "reason"}]}]}.
// `external_data_folder`: session.model_external_initializers_file_folder_path.
std::string inspect_context_model(const PluginRegistry& registry, const std::string& model_path,
                                  const std::string& external_data_folder);

}  // namespace ephost
