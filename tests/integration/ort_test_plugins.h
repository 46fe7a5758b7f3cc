// The ONNX Runtime test plugins (tests/plugins/ort_ep/) as the integration tests use them: a build copied
// alone into a plugin directory, the logs they write, and where a session's nodes went.
#pragma once

#include <boost/filesystem.hpp>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "ephost/ephost_cxx_api.h"
#include "test_support.h"
#include "test_paths.h"

namespace ephost_test {

// The ORT test plugin build `variant` (good, kernels, two_factories, ...) copied into `dir`.
inline void install_ort_plugin(const TempDir& dir, const std::string& variant) {
  namespace fs = boost::filesystem;
  const std::string file = "libephost_test_ort_" + variant + ".so";
  fs::copy_file(fs::path(EPHOST_TEST_PLUGIN_DIR) / "ort_ep" / variant / file, fs::path(dir.path()) / file,
                fs::copy_option::overwrite_if_exists);
}

// A whole text file (a plugin's log), "" when it does not exist.
inline std::string read_text(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Node name -> the provider that runs it, from the session's partition report (main graph).
inline std::map<std::string, std::string> assignment(const Ephost::Session& s) {
  const nlohmann::json report = nlohmann::json::parse(s.partition_report_json());
  std::map<std::string, std::string> out;
  for (const auto& n : report["graphs"][0]["nodes"]) out[n["node"]] = n["provider"];
  return out;
}

}  // namespace ephost_test
