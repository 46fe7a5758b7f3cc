// Test processes find the plugin scanner and keep the plugin registry cache inside the build tree
// (never the user's ~/.cache), unless the environment already says otherwise.
#include <stdlib.h>

namespace {

struct TestEnvironment {
  TestEnvironment() {
#ifdef EPHOST_TEST_PLUGIN_SCANNER
    setenv("EPHOST_PLUGIN_SCANNER", EPHOST_TEST_PLUGIN_SCANNER, 0);
#endif
    setenv("EPHOST_PLUGIN_REGISTRY", EPHOST_TEST_PLUGIN_REGISTRY, 0);
  }
} g_test_environment;

}  // namespace
