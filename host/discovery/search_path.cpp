#include "discovery/search_path.h"

#include <fmt/format.h>

#include <algorithm>
#include <boost/dll/runtime_symbol_info.hpp>
#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "core/log.h"

#ifndef EPHOST_PLUGIN_DIR_NAME
#define EPHOST_PLUGIN_DIR_NAME "ephost/plugins"
#endif

namespace ephost {

namespace fs = std::filesystem;

char plugin_path_separator() {
#ifdef _WIN32
  return ';';
#else
  return ':';
#endif
}

std::vector<std::string> split_plugin_path(const std::string& value) {
  std::vector<std::string> dirs;
  size_t start = 0;
  while (start <= value.size()) {
    size_t end = value.find(plugin_path_separator(), start);
    if (end == std::string::npos) end = value.size();
    std::string entry = value.substr(start, end - start);
    if (!entry.empty() && std::find(dirs.begin(), dirs.end(), entry) == dirs.end()) dirs.push_back(entry);
    start = end + 1;
  }
  return dirs;
}

namespace {

// The file of libephost (or of the executable the host is linked into), absolute. dladdr reports the
// main program by the name it was started with ("./app"), so that case goes through /proc/self/exe.
fs::path host_binary_location() {
  fs::path self = boost::dll::this_line_location().native();
  if (self.is_absolute()) return self;
  fs::path program = boost::dll::program_location().native();
  std::error_code ec;
  if (fs::equivalent(self, program, ec)) return program;
  return fs::absolute(self);
}

}  // namespace

std::string host_library_directory() {
  try {
    return host_binary_location().parent_path().lexically_normal().string();
  } catch (const std::exception& e) {
    log_warning(fmt::format("cannot locate libephost to find the plugins and helpers installed beside it: {}",
                            e.what()));
    return {};
  }
}

std::string installed_helper_path(const char* env, const char* file_name) {
  const char* value = std::getenv(env);
  if (value && *value) return value;
  const std::string dir = host_library_directory();
  if (dir.empty()) return {};
  return (fs::path(dir) / "ephost" / file_name).string();
}

std::string default_plugin_directory() {
  const std::string dir = host_library_directory();
  if (dir.empty()) return {};
  return (fs::path(dir) / EPHOST_PLUGIN_DIR_NAME).lexically_normal().string();
}

std::vector<std::string> default_plugin_search_path() {
  const char* env = std::getenv(kPluginPathEnv);
  std::vector<std::string> dirs = split_plugin_path(env ? env : "");
  std::string shipped = default_plugin_directory();
  if (!shipped.empty() && std::find(dirs.begin(), dirs.end(), shipped) == dirs.end()) dirs.push_back(shipped);
  return dirs;
}

bool is_plugin_candidate_name(const std::string& file_name) {
#if defined(_WIN32)
  const std::string suffix = ".dll";
#elif defined(__APPLE__)
  const std::string suffix = ".dylib";
#else
  const std::string suffix = ".so";
#endif
  return file_name.size() > suffix.size() &&
         file_name.compare(file_name.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::vector<std::string> list_plugin_candidates(const std::string& directory) {
  std::vector<fs::path> found;
  std::error_code ec;
  fs::directory_iterator it(directory, ec);
  if (ec) {
    // A listed directory that does not exist is normal (the shipped one often is absent).
    log_info(fmt::format("plugin directory {} not searched: {}", directory, ec.message()));
    return {};
  }
  for (; it != fs::directory_iterator(); it.increment(ec)) {
    if (ec) {
      log_warning(fmt::format("error while listing plugin directory {}: {}", directory, ec.message()));
      break;
    }
    // A dangling symlink stays a candidate so that the report says why it did not load.
    std::error_code type_ec;
    if (!is_plugin_candidate_name(it->path().filename().string())) continue;
    bool dangling = it->is_symlink(type_ec) && !fs::exists(it->path(), type_ec);
    if (!it->is_regular_file(type_ec) && !dangling) continue;
    found.push_back(it->path());
  }
  std::sort(found.begin(), found.end(),
            [](const fs::path& a, const fs::path& b) { return a.filename() < b.filename(); });
  std::vector<std::string> paths;
  paths.reserve(found.size());
  for (const auto& p : found) paths.push_back(p.string());
  return paths;
}

}  // namespace ephost
