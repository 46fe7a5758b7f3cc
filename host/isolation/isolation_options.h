// When a provider runs in a provider host process, and how long its calls may take there:
//   session.provider_isolation = in_process | process | auto   (every provider of the session)
//   ep.<name>.isolation        = in_process | process | auto   (one provider; wins over the session's)
//   ep.<name>.isolation_timeout_ms          a call's deadline out of process (default 60000)
//   ep.<name>.isolation_compile_timeout_ms  compile's and context_load's deadline (default 300000)
//   ep.<name>.isolation_shared_outputs      1 (default): outputs only the application and the provider's
//                                           own steps read stay in shared memory the host allocates
//                                           (isolated_provider.h); 0: they are copied out of the arena
// EPHOST_PROVIDER_ISOLATION is the default of session.provider_isolation for applications and tools
// that set no option. auto (the default) isolates the plugins that crashed or hung in process before.
#pragma once

#include <chrono>
#include <string>
#include <utility>
#include <vector>

namespace ephost {

inline constexpr const char* kProviderIsolationEnv = "EPHOST_PROVIDER_ISOLATION";

enum class IsolationMode { kInProcess, kProcess, kAuto };

const char* isolation_mode_name(IsolationMode mode);
// Throws INVALID_ARGUMENT naming `where` (the option or variable) and the accepted values.
IsolationMode parse_isolation_mode(const std::string& value, const std::string& where);

struct IsolationSettings {
  IsolationMode mode = IsolationMode::kAuto;
  std::chrono::milliseconds call_timeout{60000};
  std::chrono::milliseconds compile_timeout{300000};
  bool shared_outputs = true;  // ep.<name>.isolation_shared_outputs
  // The provider's work goes to the next providers after this many failures within the window.
  int max_failures = 3;
  std::chrono::milliseconds failure_window{60000};
  // Why auto chose process ("isolated: crashed in process at ... in compute"); "" when the settings did.
  std::string reason;
};

// The settings of provider `provider`: its ep.<name>.isolation* entries, taken out of `options` (the
// plugin never sees them), over `session_mode` (session.provider_isolation; when empty,
// $EPHOST_PROVIDER_ISOLATION; when that is unset too, auto). Throws INVALID_ARGUMENT for a bad value.
IsolationSettings take_isolation_settings(std::vector<std::pair<std::string, std::string>>& options,
                                          const std::string& session_mode, const std::string& provider);

}  // namespace ephost
