// An ONNX Runtime plugin EP with memory of its own ("ortdev": tests/plugins/ort_ep, ORT_TEST_OWN_DEVICE): its
// factory's allocator, OrtDataTransferImpl and sync streams serve ephost's device memory, copies and streams
// (plugin ABI 3), as a native device plugin's do. ortdev's Compute fails unless every input and output is in
// its memory and the run's stream is one of its own; its data transfer records each copy in the file
// ORT_TEST_COPY_LOG names.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>

#include "chain_check.h"
#include "ephost/ephost_cxx_api.h"
#include "test_support.h"
#include "test_paths.h"

using json = nlohmann::json;
using ephost_test::TempDir;

namespace {

namespace fs = boost::filesystem;

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

size_t count_lines(const std::string& text, const std::string& line) {
  size_t n = 0, at = 0;
  const std::string needle = line + "\n";
  while ((at = text.find(needle, at)) != std::string::npos) {
    if (at == 0 || text[at - 1] == '\n') ++n;
    at += needle.size();
  }
  return n;
}

class OrtPluginEpDevice : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string file = "libephost_test_ort_own_device.so";
    fs::copy_file(fs::path(EPHOST_TEST_PLUGIN_DIR) / "ort_ep" / "own_device" / file, fs::path(plugins_.path()) / file,
                  fs::copy_option::overwrite_if_exists);
    copy_log_ = models_.file("copies.txt");
    ::setenv("ORT_TEST_COPY_LOG", copy_log_.c_str(), 1);
    env_ = std::make_unique<Ephost::Env>(EPHOST_LOG_ERROR, std::vector<std::string>{plugins_.path()});
    model_path_ = ephost_test::chain_model(4, 6).save(models_);
  }
  void TearDown() override { ::unsetenv("ORT_TEST_COPY_LOG"); }

  std::map<std::string, std::string> assignment(const Ephost::Session& s) const {
    std::map<std::string, std::string> out;
    const json report = json::parse(s.partition_report_json());
    for (const auto& n : report["graphs"][0]["nodes"]) out[n["node"]] = n["provider"];
    return out;
  }

  TempDir plugins_, models_;
  std::string copy_log_;
  std::unique_ptr<Ephost::Env> env_;
  std::string model_path_;
};

TEST_F(OrtPluginEpDevice, ItsDeviceIsListedWithMemoryOfItsOwn) {
  json entry;
  for (const auto& r : json::parse(env_->plugin_report_json()))
    if (r["name"] == "ortdev") entry = r;
  ASSERT_FALSE(entry.is_null()) << env_->plugin_report_json();
  ASSERT_EQ(entry["devices"].size(), 1u) << entry.dump(2);
  EXPECT_EQ(entry["devices"][0]["label"], "ortdev:0");
  EXPECT_FALSE(entry["devices"][0]["host_memory_usable"].get<bool>()) << entry.dump(2);
}

TEST_F(OrtPluginEpDevice, ComputesOnItsOwnMemoryWithTheCopiesInTheReport) {
  Ephost::Session s(*env_, model_path_);
  auto a = assignment(s);
  EXPECT_EQ(a["add"], "ortdev");
  EXPECT_EQ(a["relu"], "ortdev");
  EXPECT_EQ(a["sub"], "cpu");
  const json report = json::parse(s.partition_report_json());
  // The group's inputs go to the device and its result comes back for the CPU plugin's Sub.
  EXPECT_GT(report["copies_planned"].get<size_t>(), 0u) << report.dump(2);
  bool to_device = false, to_host = false;
  for (const auto& c : report["graphs"][0]["copies"]) {
    to_device |= c["to"] == "ortdev:0";
    to_host |= c["from"] == "ortdev:0";
  }
  EXPECT_TRUE(to_device && to_host) << report["graphs"][0]["copies"].dump(2);
  ephost_test::expect_chain_output(s, 4, 6);  // Compute fails unless its values are on its device
  const std::string one_run = read_text(copy_log_);
  const size_t up = count_lines(one_run, "to_device"), down = count_lines(one_run, "to_host");
  EXPECT_GE(up, 1u) << one_run;
  EXPECT_GE(down, 1u) << one_run;
  EXPECT_GE(count_lines(one_run, "flush"), 1u) << one_run;  // the run's stream, synchronized
  ephost_test::expect_chain_output(s, 4, 6);
  const std::string two_runs = read_text(copy_log_);
  // The next run copies its input and result again; initializers stay uploaded from the first run.
  EXPECT_GT(count_lines(two_runs, "to_device"), up) << two_runs;
  EXPECT_LE(count_lines(two_runs, "to_device"), 2 * up) << two_runs;
  EXPECT_EQ(count_lines(two_runs, "to_host"), 2 * down) << two_runs;
}

TEST_F(OrtPluginEpDevice, EpContextRoundTripStillRunsOnItsMemory) {
  const std::string log = models_.file("compiles.txt");
  {
    Ephost::SessionOptions options;
    options.add_config("ep.context_enable", "1").add_config("ep.ortdev.compile_log", log);
    Ephost::Session s(*env_, model_path_, options);
    ephost_test::expect_chain_output(s, 4, 6);
  }
  Ephost::SessionOptions options;
  options.add_config("ep.ortdev.compile_log", log);
  Ephost::Session loaded(*env_, models_.file("model_ctx.onnx"), options);
  EXPECT_EQ(read_text(log), "graph\ncontext\n");
  ephost_test::expect_chain_output(loaded, 4, 6);
}

}  // namespace
