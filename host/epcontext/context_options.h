// The EPContext session options, typed (keys: plugin_api/include/ephost/ephost_session_options_keys.h).
// The session parses them once (options/session_config.h); epcontext/ reads only this struct.
#pragma once

#include <string>

namespace ephost {

struct EpContextOptions {
  // Generation.
  bool enable = false;                      // ep.context_enable
  std::string file_path;                    // ep.context_file_path (also where a buffer ctx model's binaries are)
  bool embed = false;                       // ep.context_embed_mode
  std::string node_prefix;                  // ep.context_node_name_prefix
  std::string external_initializers_file;   // ep.context_model_external_initializers_file_name
  bool overwrite = false;                   // ep.context_overwrite
  // Weight sharing.
  bool share = false;                       // ep.share_ep_contexts
  bool stop_share = false;                  // ep.stop_share_ep_contexts
  // Loading.
  std::string source_model_path;            // ep.context_source_model_path
  bool disable_fallback = false;            // session.disable_ep_context_fallback
  bool fail_on_suboptimal = false;          // session.fail_on_suboptimal_compiled_model
  bool rebuild = false;                     // ep.context_rebuild
};

}  // namespace ephost
