// A provider created from a plugin for one session, and the one place that calls into plugin code:
// every call is checked (status turned into an ephost::Error naming the provider) and fenced
// (a C++ exception thrown by a misbehaving plugin never gets past here).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "ephost/ephost_plugin.h"

namespace ephost {

struct PluginRecord;
class Device;

class ProviderInstance {
 public:
  // Creates the provider with `keys`/`values` options, on `device` (one of record.devices, created with
  // provider_create_for_device) or, when null, with provider_create. Throws EP_FAIL-style errors
  // naming the plugin.
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
    call_described([what] { return std::string(what); }, std::forward<Fn>(fn));
  }
  // The same, with the description built only when the call fails (the hot path formats nothing).
  template <typename Describe, typename Fn>
  void call_described(Describe&& describe, Fn&& fn) const {
    EphostStatus* status = nullptr;
    try {
      status = fn();
    } catch (const std::exception& e) {
      throw_exception(describe(), e.what());
    } catch (...) {
      throw_exception(describe(), "unknown exception");
    }
    if (status) throw_status(describe(), status);
  }

 private:
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
