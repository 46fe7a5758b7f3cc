// Plugin ABI 5's value_initializer_done as a careless or hostile vendor might call it: twice, from a
// thread of its own, with handles the host never made, for bytes it never asked for, after its session
// ended, or saying done and reading the bytes all the same. The host refuses what it must refuse
// without reading through a bad handle, never frees what a step may still read, and a plugin that broke
// its word gets the bytes read back from the model file (a warning), never other bytes and never a
// crash. The test plugin is alpha with option `pack_constants` (tests/plugins/alpha_plugin.cpp).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "ephost/ephost_cxx_api.h"
#include "test_support.h"

namespace {

using json = nlohmann::json;

const std::vector<float> kW = {0.5f, -1.25f, 2.0f, 3.5f, -0.75f, 1.0f};

// y = Add(x, w), w a float [2, 3] constant initializer: alpha takes the Add.
std::string add_weight_model() {
  ephost_test::ModelBuilder m;
  m.input("x", onnx::TensorProto::FLOAT, {2, 3}).output("y", onnx::TensorProto::FLOAT, {2, 3});
  m.initializer("w", {2, 3}, kW);
  m.node("Add", {"x", "w"}, {"y"}, "add");
  return m.bytes();
}

class InitializerDoneMisuse : public ::testing::Test {
 protected:
  void SetUp() override {
    ephost_test::install_plugins(dir_, {"ephost_test_alpha"});
    env_ = std::make_unique<Ephost::Env>(EPHOST_LOG_FATAL, std::vector<std::string>{dir_.path()});
    path_ = dir_.file("add_weight.onnx");
    std::ofstream(path_, std::ios::binary) << add_weight_model();
  }
  std::unique_ptr<Ephost::Session> session(const std::string& pack,
                                           std::vector<std::pair<std::string, std::string>> more = {}) const {
    Ephost::SessionOptions o;
    more.emplace_back("pack_constants", pack);
    o.append_provider("alpha", more);
    // Alone: a CPU plugin that read a constant in its get_capability and is never done with it would
    // keep it (a provider handed the bytes may hold a view).
    o.add_config("session.disable_cpu_ep_fallback", "1");
    return std::make_unique<Ephost::Session>(*env_, path_, o);
  }
  static json freed_of(const Ephost::Session& s) { return json::parse(s.partition_report_json())["freed_initializers"]; }
  static std::string provider_of_add(const Ephost::Session& s) {
    const json report = json::parse(s.partition_report_json());
    for (const auto& n : report["graphs"][0]["nodes"])
      if (n["node"] == "add") return n["provider"];
    return "";
  }
  // x + w, checked element by element (x = 0.25 * i).
  static void expect_right_output(const Ephost::Session& s, const std::string& what) {
    std::vector<float> x(6);
    for (size_t i = 0; i < x.size(); ++i) x[i] = 0.25f * static_cast<float>(i);
    auto out = s.run({"x"}, {Ephost::Tensor::wrap(EPHOST_ELEMENT_FLOAT, {2, 3}, x.data(), x.size())}, {"y"});
    const std::vector<float> y = out.at(0).to_vector<float>();
    ASSERT_EQ(y.size(), 6u) << what;
    for (size_t i = 0; i < y.size(); ++i) EXPECT_EQ(y[i], x[i] + kW[i]) << what << " element " << i;
  }

  ephost_test::TempDir dir_;
  std::unique_ptr<Ephost::Env> env_;
  std::string path_;
};

TEST_F(InitializerDoneMisuse, DoneOnceOrTwiceFreesTheBytesOnce) {
  for (const std::string pack : {"done", "done_twice"}) {
    auto s = session(pack);
    ASSERT_EQ(provider_of_add(*s), "alpha") << pack;
    const json freed = freed_of(*s);
    EXPECT_EQ(freed["count"], 1) << pack << ": " << freed.dump();
    EXPECT_EQ(freed["bytes"], 6 * sizeof(float)) << pack << ": " << freed.dump();
    for (int i = 0; i < 2; ++i) expect_right_output(*s, pack);
    EXPECT_EQ(freed_of(*s)["read_back"], 0) << pack << ": alpha computes from its own copy";
  }
}

TEST_F(InitializerDoneMisuse, DoneFromAThreadOfThePluginsOwnCountsForTheProvider) {
  auto s = session("done_on_thread");  // alpha fails kernel creation should the host refuse it
  ASSERT_EQ(provider_of_add(*s), "alpha");
  EXPECT_EQ(freed_of(*s)["count"], 1) << freed_of(*s).dump();
  expect_right_output(*s, "done on a thread");
}

TEST_F(InitializerDoneMisuse, HandlesTheHostNeverMadeAreRefused) {
  // alpha fails kernel creation when the host accepts a NULL or made-up provider or value.
  std::unique_ptr<Ephost::Session> s;
  try {
    s = session("done_misused");
  } catch (const Ephost::Exception& e) {
    FAIL() << e.message();
  }
  ASSERT_EQ(provider_of_add(*s), "alpha");
  EXPECT_EQ(freed_of(*s)["count"], 1) << "the well-formed call after the refused ones still counts";
  expect_right_output(*s, "after refused calls");
}

TEST_F(InitializerDoneMisuse, DoneWithBytesNeverAskedForFreesNothing) {
  // alpha says done at kernel creation without having read w, and reads it as its input in compute.
  auto s = session("done_unread");
  ASSERT_EQ(provider_of_add(*s), "alpha");
  const json freed = freed_of(*s);
  EXPECT_EQ(freed["count"], 0) << freed.dump();
  for (int i = 0; i < 2; ++i) expect_right_output(*s, "done with bytes never asked for");
  EXPECT_EQ(freed_of(*s)["read_back"], 0) << freed_of(*s).dump();
}

TEST_F(InitializerDoneMisuse, APluginThatReadsWhatItSaidItWasDoneWithGetsTheBytesBack) {
  auto s = session("done_then_read");
  ASSERT_EQ(provider_of_add(*s), "alpha");
  ASSERT_EQ(freed_of(*s)["count"], 1) << freed_of(*s).dump();
  // Several runs at once, each reading w as its input: read back from the file once, never torn.
  std::vector<std::thread> runs;
  for (int t = 0; t < 4; ++t)
    runs.emplace_back([&] {
      for (int i = 0; i < 3; ++i) expect_right_output(*s, "a plugin that broke its word");
    });
  for (auto& r : runs) r.join();
  const json freed = freed_of(*s);
  EXPECT_EQ(freed["read_back"], 1) << freed.dump();
  EXPECT_EQ(freed["count"], 0) << freed.dump() << ": kept from then on";
}

TEST_F(InitializerDoneMisuse, APluginThatBrokeItsWordMeetsAChangedFileWithAClearError) {
  auto s = session("done_then_read");
  ASSERT_EQ(freed_of(*s)["count"], 1);
  ephost_test::ModelBuilder other;  // the same names, other weights
  other.input("x", onnx::TensorProto::FLOAT, {2, 3}).output("y", onnx::TensorProto::FLOAT, {2, 3});
  other.initializer("w", {2, 3}, {9, 9, 9, 9, 9, 9});
  other.node("Add", {"x", "w"}, {"y"}, "add");
  std::ofstream(path_, std::ios::binary | std::ios::trunc) << other.bytes();
  std::vector<float> x(6, 1.0f);
  for (int i = 0; i < 2; ++i) {  // the same error every time, and no other weights
    try {
      s->run({"x"}, {Ephost::Tensor::wrap(EPHOST_ELEMENT_FLOAT, {2, 3}, x.data(), x.size())}, {"y"});
      ADD_FAILURE() << "the run read weights the model file no longer holds";
    } catch (const Ephost::Exception& e) {
      EXPECT_NE(e.message().find("'w'"), std::string::npos) << e.message();
      EXPECT_NE(e.message().find("no longer holds the same bytes"), std::string::npos) << e.message();
    }
  }
}

TEST_F(InitializerDoneMisuse, DoneAfterTheSessionEndedIsRefused) {
  const std::string log = dir_.file("pack.log");
  {
    auto s = session("done_after_release", {{"pack_log", log}});
    ASSERT_EQ(provider_of_add(*s), "alpha");
    EXPECT_EQ(freed_of(*s)["count"], 0) << "alpha never said done while the session lived";
    expect_right_output(*s, "before the session ends");
  }
  std::ifstream in(log);
  std::string answer;
  std::getline(in, answer);
  EXPECT_EQ(answer, std::to_string(static_cast<int>(EPHOST_INVALID_ARGUMENT)))
      << "value_initializer_done from a released provider answered '" << answer << "'";
}

TEST_F(InitializerDoneMisuse, AModelFromABufferKeepsItsBytes) {
  const std::string bytes = add_weight_model();
  Ephost::SessionOptions o;
  o.append_provider("alpha", {{"pack_constants", "done"}});
  o.add_config("session.disable_cpu_ep_fallback", "1");
  Ephost::Session s(*env_, bytes.data(), bytes.size(), o);
  ASSERT_EQ(provider_of_add(s), "alpha");
  EXPECT_EQ(freed_of(s)["count"], 0) << "no file to read them back from";
  expect_right_output(s, "from a buffer");
}

TEST_F(InitializerDoneMisuse, AnIsolatedProviderKeepsItsBytesOnTheHostSide) {
  // alpha runs in a provider host: its "done" reaches that process's host, whose model is a snapshot
  // from a buffer; the application's process keeps the bytes it may have to send again.
  Ephost::SessionOptions o;
  o.append_provider("alpha", {{"pack_constants", "done"}});
  o.add_config("session.disable_cpu_ep_fallback", "1");
  o.add_config("session.provider_isolation", "process");
  Ephost::Session s(*env_, path_, o);
  ASSERT_EQ(provider_of_add(s), "alpha");
  EXPECT_EQ(freed_of(s)["count"], 0) << freed_of(s).dump();
  expect_right_output(s, "isolated");
}

}  // namespace
