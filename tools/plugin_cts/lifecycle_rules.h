// The lifecycle rules (tools/plugin_observer/plugin_call_rules.h: every provider, kernel, compute unit
// and state released exactly once, by its own release, used only while alive; release order; every
// on_run_start with its on_run_end) on the calls the observer recorded in this child, checked once the
// sessions and the env are gone. The same rules the project's own lifecycle tests keep.
#pragma once

#include <string>

#include "isolation.h"

namespace ephost_cts {

// Adds the check "<section>/lifecycle rules". `observer` is the observer library this child loaded
// (still loaded: the kit holds it open); call it after the env that used it is gone.
void check_lifecycle_rules(ChildChannel& out, const std::string& section, const std::string& observer);

}  // namespace ephost_cts
