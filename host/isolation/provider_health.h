// What an application can read about a provider that runs in a provider host process
// (isolated_provider.h), and what a state callback is told when it changes.
#pragma once

#include <sys/types.h>

#include <string>

namespace ephost {

enum class IsolatedProviderState { kRunning, kRestarting, kFallenBack };
const char* isolated_provider_state_name(IsolatedProviderState state);

struct IsolatedProviderHealth {
  IsolatedProviderState state = IsolatedProviderState::kRunning;
  int failures = 0;           // failures since the session began
  std::string last_failure;   // the last failure's message ("" when none)
  pid_t process_id = -1;      // the provider host process now, -1 when none runs
};

}  // namespace ephost
