// The build's paths a test process needs (this checkout, the build tree, the plugins and tools it built).
// Their values live in a source generated for each test executable by ephost_hermetic_test_executable
// (tests/hermetic.cmake), not in compile flags, so that objects compiled in two checkouts are the same and
// ccache shares them. A test that uses a path its executable was not given fails to link.
#pragma once

namespace ephost_test::build_paths {
extern const char user_environment[];   // the user-facing variables a test process unsets, comma-separated
extern const char test_data_cache[];    // fetched and generated test data (npm models, ONNX node cases)
extern const char test_scratch_root[];  // the folder under which each test process makes its private one
extern const char plugin_scanner[];     // the scanner for a host linked statically; "" where libephost finds it
extern const char test_plugin_dir[];    // tests/plugins, built
extern const char test_data_dir[];      // tests/data
extern const char source_dir[];         // the checkout
extern const char cli_path[];           // the ephost command-line tool
extern const char ctx_gen_path[];       // ep_weight_sharing_ctx_gen
extern const char example_plugin_dir[];         // samples/example_ep built against SDK 1.0.0
extern const char example_sdk2_plugin_dir[];    // ... SDK 2.0.0
extern const char example_sdk1_1_plugin_dir[];  // ... SDK 1.1.0
extern const char opencl_plugin_dir[];          // the OpenCL plugin
}  // namespace ephost_test::build_paths

// The names the tests have always used.
#define EPHOST_TEST_PLUGIN_DIR ::ephost_test::build_paths::test_plugin_dir
#define EPHOST_TEST_DATA_DIR ::ephost_test::build_paths::test_data_dir
#define EPHOST_SOURCE_DIR ::ephost_test::build_paths::source_dir
#define EPHOST_CLI_PATH ::ephost_test::build_paths::cli_path
#define EPHOST_CTX_GEN_PATH ::ephost_test::build_paths::ctx_gen_path
#define EPHOST_EXAMPLE_PLUGIN_DIR ::ephost_test::build_paths::example_plugin_dir
#define EPHOST_EXAMPLE_SDK2_PLUGIN_DIR ::ephost_test::build_paths::example_sdk2_plugin_dir
#define EPHOST_EXAMPLE_SDK1_1_PLUGIN_DIR ::ephost_test::build_paths::example_sdk1_1_plugin_dir
#define EPHOST_OPENCL_PLUGIN_DIR ::ephost_test::build_paths::opencl_plugin_dir
