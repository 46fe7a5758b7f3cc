// Test plugins in fresh temporary directories, for the discovery and plugin scanner tests: each test
// copies the plugins it needs (tests/plugins, built into EPHOST_TEST_PLUGIN_DIR) into its own folder.
#pragma once

#include <dlfcn.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <stdexcept>
#include <string>

#include "discovery/plugin_registry.h"
#include "test_paths.h"

namespace ephost {

namespace fs = std::filesystem;

inline std::string library_file(const std::string& target) { return "lib" + target + ".so"; }

inline bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

// A fresh directory that test plugins are copied into; removed with everything in it.
class PluginDir {
 public:
  PluginDir() {
    std::string pattern = (fs::temp_directory_path() / "ephost_discovery_XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~PluginDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  PluginDir(const PluginDir&) = delete;
  PluginDir& operator=(const PluginDir&) = delete;

  // Copies `file_name` from the test plugin directory; returns the copy's path.
  std::string add(const std::string& file_name) const {
    fs::path to = path_ / file_name;
    fs::copy_file(fs::path(EPHOST_TEST_PLUGIN_DIR) / file_name, to, fs::copy_options::overwrite_existing);
    return to.string();
  }
  std::string add_plugin(const std::string& target) const { return add(library_file(target)); }
  std::string write(const std::string& file_name, const std::string& contents) const {
    std::ofstream(path_ / file_name, std::ios::binary) << contents;
    return (path_ / file_name).string();
  }
  std::string file(const std::string& file_name) const { return (path_ / file_name).string(); }
  std::string path() const { return path_.string(); }

 private:
  fs::path path_;
};

inline const PluginRecord* record_for(const PluginRegistry& registry, const std::string& path) {
  for (const auto& r : registry.records())
    if (r->path == path) return r.get();
  return nullptr;
}

inline std::set<std::string> loaded_names(const PluginRegistry& registry) {
  std::set<std::string> names;
  for (const auto& r : registry.records())
    if (r->loaded) names.insert(r->name);
  return names;
}

inline bool is_loaded_in_process(const std::string& path) {
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD);
  if (handle == nullptr) return false;
  dlclose(handle);
  return true;
}

}  // namespace ephost
