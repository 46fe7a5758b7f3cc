// The kit's own plugin registry cache (host/discovery/registry_cache.h): the kit never trusts a verdict
// the user's registry remembers, and never writes its own into it. The user's cache could hold a
// refusal of the observer recorded by a discovery run without EPHOST_CTS_TARGET (the observer refuses
// then), or a verdict on the plugin under test from before its author's last fix of its environment;
// and the kit's runs, with EPHOST_CTS_TARGET set, would record verdicts that mean nothing to the user.
//
// PrivateRegistry makes a fresh folder (mkdtemp) holding the registry file, points EPHOST_PLUGIN_REGISTRY
// at it for the kit and every child it forks (whatever the user's environment said), and removes the
// folder when it goes. Every env the kit creates (env_with, case_session.h) also names the file as an
// env option.
#pragma once

#include <string>

namespace ephost_cts {

class PrivateRegistry {
 public:
  // Throws std::runtime_error when the folder cannot be made (saying where and why).
  PrivateRegistry();
  ~PrivateRegistry();
  PrivateRegistry(const PrivateRegistry&) = delete;
  PrivateRegistry& operator=(const PrivateRegistry&) = delete;

  const std::string& file() const { return file_; }

 private:
  std::string folder_;
  std::string file_;
};

// The registry file of the kit's PrivateRegistry; "" (no cache at all) when none exists.
const std::string& private_registry_file();

}  // namespace ephost_cts
