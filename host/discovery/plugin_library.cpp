#include "discovery/plugin_library.h"

#include <fmt/format.h>

#include "discovery/plugin_call.h"

#ifndef _WIN32
#include <dlfcn.h>
#endif

namespace ephost {
namespace {

constexpr auto kLoadMode = boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local;

// Boost.DLL reports every dlopen failure as "bad file descriptor"; what the user needs is dlerror's
// text ("undefined symbol: ...", "cannot open shared object file ..."). It is still pending right
// after the failed load; if something cleared it, a second dlopen of the same file reproduces it.
std::string loader_error_text(const std::string& path, const boost::dll::fs::error_code& ec) {
#ifndef _WIN32
  if (const char* text = dlerror()) return text;
  if (void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL)) {
    dlclose(handle);
  } else if (const char* text = dlerror()) {
    return text;
  }
#endif
  return ec.message();
}

}  // namespace

std::unique_ptr<PluginLibrary> PluginLibrary::open(const std::string& path) {
  auto lib = std::make_unique<PluginLibrary>();
  boost::dll::fs::error_code ec;
  lib->library_.load(boost::dll::fs::path(path), kLoadMode, ec);
  if (ec || !lib->library_.is_loaded())
    throw PluginSkipped(fmt::format("dlopen failed: {}", loader_error_text(path, ec)));
  return lib;
}

EphostPluginNegotiateFn PluginLibrary::entry_point() const {
  if (!library_.has(EPHOST_PLUGIN_ENTRY_POINT))
    throw PluginSkipped(fmt::format("no entry point: the library does not export '{}'", EPHOST_PLUGIN_ENTRY_POINT));
  return &library_.get<EphostStatus*(EphostPluginNegotiation*)>(EPHOST_PLUGIN_ENTRY_POINT);
}

bool PluginLibrary::exports(const char* symbol) const { return library_.has(symbol); }

void* PluginLibrary::symbol(const char* symbol) const {
  return library_.has(symbol) ? reinterpret_cast<void*>(&library_.get<void()>(symbol)) : nullptr;
}

}  // namespace ephost
