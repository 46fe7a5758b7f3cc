// Where plugins are looked for, and which files of a directory are candidates.
#pragma once

#include <string>
#include <vector>

namespace ephost {

// Name of the environment variable listing extra plugin directories.
inline constexpr const char* kPluginPathEnv = "EPHOST_PLUGIN_PATH";

// Separator of EPHOST_PLUGIN_PATH entries: ':' on POSIX, ';' on Windows.
char plugin_path_separator();

// Splits a EPHOST_PLUGIN_PATH value into directories, in order. Empty entries are dropped, and so are
// repeats of an earlier entry.
std::vector<std::string> split_plugin_path(const std::string& value);

// The directory shipped plugins are installed in: <directory of libephost>/ephost/plugins.
// libephost finds its own location from a function inside it (dladdr), so this works wherever it is
// installed. When the host is linked statically into an executable, that executable's directory.
std::string default_plugin_directory();

// The directory holding libephost (or the executable the host is linked into); "" when it cannot be
// found. Installed helpers live below it (ephost/plugins, ephost/ephost-plugin-scanner).
std::string host_library_directory();

// An installed helper executable (the plugin scanner, the provider host): the path in environment
// variable `env` when it is set and not empty (tests point it at the build tree), else
// <host_library_directory()>/ephost/<file_name>; "" when neither is known.
std::string installed_helper_path(const char* env, const char* file_name);

// EPHOST_PLUGIN_PATH's directories, then default_plugin_directory().
std::vector<std::string> default_plugin_search_path();

// True when a file name has the platform's shared-library suffix (*.so, *.dll, *.dylib).
bool is_plugin_candidate_name(const std::string& file_name);

// Candidate files of `directory` (not recursive), sorted by file name so that discovery does not depend
// on readdir order. Directories and other non-files are left out. Empty when the directory does not
// exist or cannot be read (logged, never thrown).
std::vector<std::string> list_plugin_candidates(const std::string& directory);

}  // namespace ephost
