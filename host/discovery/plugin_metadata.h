// A plugin's self-description (EphostPlugin::describe): asking for it, copying it into the record, and
// checking it.
#pragma once

#include <string>

#include "discovery/plugin_record.h"

namespace ephost {

// Calls describe, copies EphostPluginInfo into `record` and validates it. Throws PluginSkipped when
// describe fails or throws ("describe failed: ...") or the metadata is invalid ("invalid metadata: ...");
// metadata that was copied stays in the record so that the report shows what the plugin said.
void describe_plugin(PluginRecord& record);

// [A-Za-z0-9_.-]+
bool is_valid_plugin_name(const std::string& name);

// Semantic version MAJOR.MINOR.PATCH with optional -prerelease and +build (semver.org 2.0.0).
bool is_semver(const std::string& version);

}  // namespace ephost
