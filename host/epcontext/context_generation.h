// EPContext model generation (seed: "EP Context Cache Model Generation Workflow"). With
// ep.context_enable=1, after a session compiled its partitions, every fused group whose provider
// can emit its context becomes one `com.microsoft` EPContext node of a new model, `<model>_ctx.onnx`;
// what the plugins compiled goes into one `<model>_<ep>.bin` per plugin beside it (embed_mode 0) or
// into the node (embed_mode 1). Nodes that were not compiled (the CPU plugin's, single-node kernels)
// stay ordinary nodes, with their initializers embedded or in
// ep.context_model_external_initializers_file_name, never pointing at the source model's data file.
//
// The host writes every file: temp file then rename, binary before model, and it refuses to
// overwrite an existing ctx model unless ep.context_overwrite=1 (an ephost extension).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "exec/graph_executor.h"
#include "graph/graph.h"
#include "epcontext/context_options.h"
#include "epcontext/share_workspace.h"

namespace ephost {

struct GenerationSettings {
  bool enabled = false;
  std::string ctx_path;        // the ctx model to write (ep.context_file_path or <model>_ctx.onnx)
  bool embed = false;          // ep.context_embed_mode=1
  std::string node_prefix;     // ep.context_node_name_prefix
  std::string external_initializers_file;  // ep.context_model_external_initializers_file_name
  bool overwrite = false;      // ep.context_overwrite=1
  bool share = false;          // ep.share_ep_contexts=1
  bool stop_share = false;     // ep.stop_share_ep_contexts=1
  std::string model_name;      // names the binary: <model_name>_<ep>.bin
  std::string source_model_filename;  // recorded in onnx_model_filename
};

// Reads and checks the generation options before anything is compiled, so mistakes cost nothing:
// a buffer model without ep.context_file_path, an existing ctx model, embed mode with sharing.
// `model_path` is "" for a model from a buffer.
GenerationSettings read_generation_settings(const EpContextOptions& options, const std::string& model_path);

struct GenerationResult {
  std::string ctx_path;
  std::vector<std::string> files;  // written by this session, ctx model last
  size_t context_nodes = 0;
  size_t ordinary_nodes = 0;
};

// Writes the ctx model (and binaries) for `model`, whose main graph `main` ran. The model's proto
// must be the one the IR was built from. Throws on any failure (nothing half-written is left).
GenerationResult generate_context_model(const GenerationSettings& settings, const Model& model,
                                        const GraphExecutor& main,
                                        const std::vector<std::unique_ptr<Provider>>& providers,
                                        ContextShareRegistry& shared);

}  // namespace ephost
