// A provider created from a plugin for one session, and the one place that calls into plugin code:
// every call is checked (status turned into an ephost::Error naming the provider), fenced (a C++
// exception thrown by a misbehaving plugin never gets past here) and marked (core/plugin_fault.h: a
// crash or hang inside it is reported naming the plugin, its library and the call).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/plugin_fault.h"
#include "ephost/ephost_plugin.h"

namespace ephost {

struct PluginRecord;
class Device;

class ProviderInstance {
 public:
  // Creates the provider with `keys`/`values` options, on `device` (one of record.devices, created with
  // provider_create_for_device) or, when null, with provider_create. Throws EP_FAIL-style errors
  // naming the plugin. The plugin must be loaded in process (PluginRegistry::ensure_loaded returned true
  // for `record`); otherwise this fails.
  ProviderInstance(const PluginRecord& record, const std::vector<std::pair<std::string, std::string>>& options,
                   const Device* device = nullptr);
  ~ProviderInstance();
  ProviderInstance(const ProviderInstance&) = delete;
  ProviderInstance& operator=(const ProviderInstance&) = delete;

  const std::string& name() const { return name_; }
  const EphostPlugin& plugin() const { return *plugin_; }
  const EphostHostApi& host_api() const { return *host_api_; }
  EphostProvider* handle() const { return handle_; }
  const PluginRecord& record() const { return record_; }
  // The device the provider runs on (plugin ABI 3), or null.
  const Device* device() const { return device_; }
  // The device whose memory the provider's kernels read and write, or null when they use host memory
  // (no device, or a device that works on host memory).
  const Device* memory_device() const;
  // "<name>" or, on a device, "<name>:<index>".
  std::string label() const;

  // Runs one plugin call returning EphostStatus*; throws ephost::Error("provider '<name>' <what>: ...").
  template <typename Fn>
  void call(const char* what, Fn&& fn) const {
    call_marked(what, [what] { return std::string(what); }, std::forward<Fn>(fn));
  }
  // The same, with the description built only when the call fails: the hot path (compute) formats
  // nothing, and a crash inside it is reported as happening in "compute".
  template <typename Describe, typename Fn>
  void call_described(Describe&& describe, Fn&& fn) const {
    call_marked("compute", std::forward<Describe>(describe), std::forward<Fn>(fn));
  }
  // The plugin's library path, for reports ("" for the built-in plugin).
  const char* library_path() const;

 private:
  template <typename Describe, typename Fn>
  void call_marked(const char* marker, Describe&& describe, Fn&& fn) const {
    EphostStatus* status = nullptr;
    try {
      PluginCallScope scope(name_.c_str(), library_path(), marker);
      status = fn();
    } catch (const std::exception& e) {
      throw_exception(describe(), e.what());
    } catch (...) {
      throw_exception(describe(), "unknown exception");
    }
    if (status) throw_status(describe(), status);
  }

  [[noreturn]] void throw_status(const std::string& what, EphostStatus* status) const;
  [[noreturn]] void throw_exception(const std::string& what, const char* message) const;

  const PluginRecord& record_;
  const Device* device_ = nullptr;
  std::string name_;
  const EphostPlugin* plugin_ = nullptr;
  const EphostHostApi* host_api_ = nullptr;
  EphostProvider* handle_ = nullptr;
};

}  // namespace ephost
