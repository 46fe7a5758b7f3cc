// The lifecycle rules of ephost_plugin.h that hold for any complete history of the calls a plugin
// received (plugin_call.h), whatever the caller did: the tests check them after every lifecycle test, and
// ephost-plugin-cts on any plugin it checks, once the sessions and the env are gone.
//
//  - What a call makes (a provider, from provider_create or provider_create_for_device, a kernel, a compute unit, a state) is released exactly once, by its
//    own release function, and is used only after it was made and before its release began.
//  - create_state runs at most once per compute unit (a unit belongs to one session), and compute gets
//    that state, or none when the unit made none.
//  - Release order: a unit's state before the unit; a provider's kernels and units before the provider.
//  - Every on_run_start of a provider has its on_run_end.
//  - A library is unloaded after everything else it received (providers before library unload).
#pragma once

#include <string>
#include <vector>

#include "plugin_call.h"

namespace ephost::observer {

// Each broken rule as a sentence naming the calls involved; empty when every rule holds.
std::vector<std::string> lifecycle_violations(const std::vector<PluginCall>& calls);

// "alpha provider_create -> 0x..., alpha get_capability(0x...), ..." for failure messages.
std::string describe_calls(const std::vector<PluginCall>& calls);

}  // namespace ephost::observer

// The tests name them as their call record does.
namespace ephost_test {
using ephost::observer::PluginCall;
using ephost::observer::describe_calls;
using ephost::observer::lifecycle_violations;
}  // namespace ephost_test
