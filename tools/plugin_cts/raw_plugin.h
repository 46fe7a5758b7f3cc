// The plugin as a host sees it before any session: the library opened directly (dlopen) and its entry
// point called with a host table of the kit's own. That table offers status and logging only, which is
// all negotiation and describe may use; the rest of the plugin ABI is exercised through libephost.
#pragma once

#include <string>

#include "ephost/ephost_plugin.h"

namespace ephost_cts {

// A host table of ABI `version` (at most EPHOST_PLUGIN_ABI_VERSION): status_* and log work, every
// other member is NULL.
const EphostHostApi* negotiation_host(uint32_t version);

// A status the kit's host made: its code and message (and releases it). "" and OK for NULL.
struct StatusText {
  EphostStatusCode code = EPHOST_OK;
  std::string message;
};
StatusText take_status(EphostStatus* status);

class RawPlugin {
 public:
  // Opens the library; `error()` says why not.
  explicit RawPlugin(const std::string& path);
  const std::string& error() const { return error_; }
  EphostPluginNegotiateFn entry() const { return entry_; }

 private:
  void* handle_ = nullptr;  // never closed: the plugin's tables stay valid for the child's life
  EphostPluginNegotiateFn entry_ = nullptr;
  std::string error_;
};

// One negotiation with the host range [min, max]: what the plugin answered.
struct NegotiationAnswer {
  bool threw = false;       // an exception crossed the ABI
  std::string exception;
  StatusText refusal;       // code OK: accepted
  uint32_t version = 0;
  const EphostPlugin* table = nullptr;
};
NegotiationAnswer negotiate(const RawPlugin& plugin, uint32_t host_min, uint32_t host_max);

// What is wrong with an accepted answer (version outside the range, table too small, members
// missing...); "" when nothing.
std::string answer_problem(const NegotiationAnswer& answer, uint32_t host_min, uint32_t host_max);

}  // namespace ephost_cts
