#include "session/env.h"

#include "core/log.h"
#include "ephost/ephost_plugin.h"

// The built-in CPU plugin (plugins/cpu), linked in and negotiated with like any discovered plugin.
extern "C" EphostStatus* ephost_cpu_plugin_negotiate(EphostPluginNegotiation* negotiation);

namespace ephost {

Env::Env(EphostLogLevel level, const std::vector<std::string>* dirs) {
  log_set_level(level);
  registry_.add_builtin(&ephost_cpu_plugin_negotiate);
  registry_.scan_directories(dirs ? *dirs : default_plugin_search_path());
}

}  // namespace ephost
