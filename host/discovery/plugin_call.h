// The wall between discovery and plugin code: every call into a plugin goes through call_plugin, and
// every reason to skip a library travels as PluginSkipped until the registry records it.
#pragma once

#include <exception>
#include <stdexcept>
#include <string>

#include "ephost/ephost_plugin.h"

namespace ephost {

// Thrown inside discovery when a candidate must be skipped; what() is the reason recorded and logged.
class PluginSkipped : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Calls `fn` (which calls into plugin code) and turns whatever the plugin throws, although the ABI
// forbids it, into PluginSkipped("<what> threw: <message>").
template <typename Fn>
auto call_plugin(const char* what, Fn&& fn) -> decltype(fn()) {
  try {
    return fn();
  } catch (const std::exception& e) {
    throw PluginSkipped(std::string(what) + " threw an exception: " + e.what());
  } catch (...) {
    throw PluginSkipped(std::string(what) + " threw an unknown exception");
  }
}

// "NOT_IMPLEMENTED: <message>" for a status a plugin returned; releases it through `api`.
std::string take_status_text(const EphostHostApi& api, EphostStatus* status);

}  // namespace ephost
