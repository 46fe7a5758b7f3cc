// Hermetic test processes (tests/hermetic.cmake): whatever the user's shell exported, a test process
// starts with the user-facing EPHOST_* variables unset, a private registry file and XDG cache folder
// of its own (removed at exit), the build tree's test data folders, and the plugin scanner of this
// build. Nothing a user did before, and no other test, changes what a test sees. Tests that want a
// variable set set it themselves; CTest entries that run a suite under a setting (EPHOST_CPU_ISA=avx2,
// say) name it in EPHOST_TEST_KEEP_ENVIRONMENT (comma-separated), which keeps it.
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <set>
#include <sstream>
#include <string>
#include <system_error>

#include "test_paths.h"

namespace {

namespace paths = ephost_test::build_paths;

std::set<std::string> split_commas(const char* text) {
  std::set<std::string> names;
  std::stringstream in(text ? text : "");
  std::string name;
  while (std::getline(in, name, ','))
    if (!name.empty()) names.insert(name);
  return names;
}

class TestEnvironment {
 public:
  TestEnvironment() {
    const std::set<std::string> keep = split_commas(getenv("EPHOST_TEST_KEEP_ENVIRONMENT"));
    for (const std::string& name : split_commas(paths::user_environment))
      if (!keep.count(name)) unsetenv(name.c_str());
    std::error_code ec;
    std::filesystem::create_directories(paths::test_scratch_root, ec);
    std::string pattern = std::string(paths::test_scratch_root) + "/process-XXXXXX";
    if (mkdtemp(pattern.data()) != nullptr) private_dir_ = pattern;
    else private_dir_ = std::filesystem::temp_directory_path(ec).string() + "/ephost-test-" + std::to_string(getpid());
    owner_ = getpid();
    if (!keep.count("EPHOST_PLUGIN_REGISTRY"))
      setenv("EPHOST_PLUGIN_REGISTRY", (private_dir_ + "/plugin-registry.json").c_str(), 1);
    if (!keep.count("XDG_CACHE_HOME")) setenv("XDG_CACHE_HOME", (private_dir_ + "/cache").c_str(), 1);
    setenv("EPHOST_MODEL_CACHE", (std::string(paths::test_data_cache) + "/models").c_str(), 0);
    setenv("EPHOST_TEST_CACHE", paths::test_data_cache, 0);
    // The unit tests link the host statically, so they cannot find the scanner beside libephost.
    if (paths::plugin_scanner[0] != '\0') setenv("EPHOST_PLUGIN_SCANNER", paths::plugin_scanner, 0);
  }
  ~TestEnvironment() {
    // Only the process that made it (a forked child that returns through exit() must not remove it).
    if (getpid() != owner_) return;
    std::error_code ec;
    std::filesystem::remove_all(private_dir_, ec);
  }

 private:
  std::string private_dir_;
  pid_t owner_ = 0;
};

TestEnvironment g_test_environment;

}  // namespace
