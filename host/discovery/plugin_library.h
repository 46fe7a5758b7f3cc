// A plugin library loaded with Boost.DLL: opening it and finding its entry point.
#pragma once

#include <boost/dll/shared_library.hpp>
#include <memory>
#include <string>

#include "ephost/ephost_plugin.h"

namespace ephost {

class PluginLibrary {
 public:
  // Loads `path` (RTLD_NOW | RTLD_LOCAL: unresolved symbols fail here, not in the middle of a run, and
  // each plugin's symbols stay private to it). Throws PluginSkipped with the loader's own error text.
  static std::unique_ptr<PluginLibrary> open(const std::string& path);

  // The exported EPHOST_PLUGIN_ENTRY_POINT. Throws PluginSkipped when the library does not export it.
  EphostPluginNegotiateFn entry_point() const;

  // Whether the library exports `symbol`, and its address (nullptr when it does not).
  bool exports(const char* symbol) const;
  void* symbol(const char* symbol) const;

 private:
  boost::dll::shared_library library_;
};

}  // namespace ephost
