#include "session/env.h"

#include <fmt/format.h>

#include "core/log.h"
#include "epcontext/context_schema.h"
#include "ephost/ephost_plugin.h"

// The built-in CPU plugin (plugins/cpu), linked in and negotiated with like any discovered plugin.
extern "C" EphostStatus* ephost_cpu_plugin_negotiate(EphostPluginNegotiation* negotiation);

namespace ephost {

Env::Env(EphostLogLevel level, const std::vector<std::string>* dirs) {
  log_set_level(level);
  // Models of this env are checked against the EPContext schema (com.microsoft), as ONNX Runtime does.
  epctx::register_schema();
  registry_.add_builtin(&ephost_cpu_plugin_negotiate);
  registry_.scan_directories(dirs ? *dirs : default_plugin_search_path());
}

Env::~Env() {
  // A weight-sharing group whose last session (ep.stop_share_ep_contexts=1) never came: its binary
  // was never written, and the ctx models written so far point at a missing file.
  auto lock = context_share_.lock();
  for (const std::string& plugin : context_share_.open_generations())
    log_warning(fmt::format("EPContext weight sharing for provider '{}' was never finished: '{}' was not written "
                            "(set ep.stop_share_ep_contexts=1 on the last session of the group)",
                            plugin, context_share_.generation(plugin)->bin_path));
}

}  // namespace ephost
