// Plugin ABI 5's value_initializer_done, end to end: the CPU plugin packs the int8 weights of a fused
// int8 MatMul at compile (static shapes) and says it is done with them; the host then frees the
// original bytes (the partition report's "freed_initializers" counts them) when the model came from a
// file, and keeps them for a model from a buffer. When the session plans again after an isolated device
// provider fell back (fakedev, three crashes), the CPU plugin compiles the int8 group again: the host
// reads the freed weights back from the model file, the outputs stay bit for bit those of a session
// that never freed anything, and the new plan frees them again. A model file that changed meanwhile is
// a clear error naming the initializer, never other bytes.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>

#include "cpu_fused_groups.h"
#include "device_support.h"
#include "qdq_test_models.h"

namespace {

using namespace ephost_test;
using json = nlohmann::json;

constexpr int64_t kK = 64, kN = 32, kBatch = 4;
constexpr size_t kWeightBytes = kK * kN;  // int8

// x [4, 64] -> Q/DQ -> MatMul(DQ(w_q int8 [64, 32])) -> Q/DQ -> Relu -> y. The CPU plugin fuses all but
// the Relu into one int8 group, which reads w_q; fakedev (where present) takes the Relu.
std::string int8_matmul_model(uint32_t seed) {
  ModelBuilder m(13);
  m.input("x", onnx::TensorProto::FLOAT, {kBatch, kK}).output("y", onnx::TensorProto::FLOAT, {kBatch, kN});
  add_quant_pair(m, "x", Quant{0.02f, 128, false}, "in", "a");
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> d(-60, 60);
  std::vector<int8_t> w(kWeightBytes);
  for (int8_t& v : w) v = static_cast<int8_t>(d(gen));
  typed_initializer<int8_t>(m, "w_q", onnx::TensorProto::INT8, {kK, kN}, w);
  m.initializer("w_s", {kN}, channel_scales(kN));
  typed_initializer<int8_t>(m, "w_z", onnx::TensorProto::INT8, {kN}, std::vector<int8_t>(kN, 0));
  attr_int(m.node("DequantizeLinear", {"w_q", "w_s", "w_z"}, {"w"}, "w_dequantize"), "axis", 1);
  m.node("MatMul", {"a", "w"}, {"mm"}, "matmul");
  add_quant_pair(m, "mm", Quant{0.05f, 120, false}, "out", "r");
  m.node("Relu", {"r"}, {"y"}, "relu");
  return m.bytes();
}

// x [4, 64] -> Q/DQ -> MatMul(DQ(w1_q [64, 64])) -> Q/DQ -> MatMul(DQ(w2_q [64, 32])) -> Q/DQ -> Relu -> y:
// two int8 MatMul groups, each reading (and packing) its own weights.
std::string two_int8_matmuls_model(uint32_t seed) {
  ModelBuilder m(13);
  m.input("x", onnx::TensorProto::FLOAT, {kBatch, kK}).output("y", onnx::TensorProto::FLOAT, {kBatch, kN});
  add_quant_pair(m, "x", Quant{0.02f, 128, false}, "in", "a");
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> d(-60, 60);
  auto weight = [&](const std::string& name, int64_t n, const std::string& in, const std::string& out) {
    std::vector<int8_t> w(static_cast<size_t>(kK * n));
    for (int8_t& v : w) v = static_cast<int8_t>(d(gen));
    typed_initializer<int8_t>(m, name + "_q", onnx::TensorProto::INT8, {kK, n}, w);
    m.initializer(name + "_s", {n}, channel_scales(n));
    typed_initializer<int8_t>(m, name + "_z", onnx::TensorProto::INT8, {n}, std::vector<int8_t>(static_cast<size_t>(n), 0));
    attr_int(m.node("DequantizeLinear", {name + "_q", name + "_s", name + "_z"}, {name}, name + "_dequantize"), "axis", 1);
    m.node("MatMul", {in, name}, {out}, name + "_matmul");
  };
  weight("w1", kK, "a", "mm1");
  add_quant_pair(m, "mm1", Quant{0.05f, 120, false}, "mid", "b");
  weight("w2", kN, "b", "mm2");
  add_quant_pair(m, "mm2", Quant{0.05f, 120, false}, "out", "r");
  m.node("Relu", {"r"}, {"y"}, "relu");
  return m.bytes();
}

std::vector<float> run_model(const Ephost::Session& s, int seed) {
  std::vector<float> x = ramp(static_cast<size_t>(kBatch * kK), 0.031f + 0.01f * static_cast<float>(seed), -1.3f);
  auto out = s.run({"x"}, {Ephost::Tensor::wrap(EPHOST_ELEMENT_FLOAT, {kBatch, kK}, x.data(), x.size())}, {"y"});
  return out.at(0).to_vector<float>();
}

json freed_of(const Ephost::Session& s) { return json::parse(s.partition_report_json())["freed_initializers"]; }

void expect_bit_identical(const std::vector<float>& got, const std::vector<float>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_EQ(std::memcmp(&got[i], &want[i], sizeof(float)), 0) << what << " element " << i;
}

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

// `model` with initializer `name`'s bytes moved to the file `data_file` beside it (external data).
std::string with_external_initializer(const std::string& model, const std::string& name, const std::string& data_file) {
  onnx::ModelProto proto;
  EXPECT_TRUE(proto.ParseFromString(model));
  for (auto& t : *proto.mutable_graph()->mutable_initializer()) {
    if (t.name() != name) continue;
    write_file(data_file, t.raw_data());
    t.clear_raw_data();
    t.set_data_location(onnx::TensorProto::EXTERNAL);
    auto* location = t.add_external_data();
    location->set_key("location");
    location->set_value(std::string(std::strrchr(data_file.c_str(), '/') + 1));
  }
  return proto.SerializeAsString();
}

// What every test compares with: the model from a buffer, where nothing can be freed.
std::vector<float> reference(const std::string& bytes, int seed) {
  Ephost::SessionOptions o;
  o.append_provider("cpu");
  Ephost::Session s(cpu_env(), bytes.data(), bytes.size(), o);
  EXPECT_EQ(freed_of(s)["count"], 0) << "a model from a buffer keeps its initializers: nothing to read them back from";
  return run_model(s, seed);
}

TEST(InitializerRelease, TheCpuPluginsPackedInt8WeightsAreFreedForAModelFile) {
  TempDir dir;
  const std::string bytes = int8_matmul_model(3);
  const std::string path = dir.file("int8_matmul.onnx");
  write_file(path, bytes);
  Ephost::SessionOptions o;
  o.append_provider("cpu");
  Ephost::Session s(cpu_env(), path, o);
  ASSERT_EQ(fused_groups(s).size(), 1u) << "the int8 MatMul group (its weights are what is freed)";
  const json freed = freed_of(s);
  EXPECT_EQ(freed["count"], 1) << freed.dump() << ": w_q, which the int8 group packed (its scales stay)";
  EXPECT_EQ(freed["bytes"], kWeightBytes) << freed.dump();
  EXPECT_EQ(freed["read_back"], 0) << freed.dump();
  for (int seed = 0; seed < 3; ++seed) expect_bit_identical(run_model(s, seed), reference(bytes, seed), "run");
  EXPECT_EQ(freed_of(s)["read_back"], 0) << "the runs never needed the freed bytes";
}

TEST(InitializerRelease, EachWeightIsFreedWhileCompilingOnceItsLastReaderPackedIt) {
  // So that the host's bytes and the packed copies are never all alive at once: the peak of session
  // creation drops, not only what the session keeps.
  TempDir dir;
  const std::string bytes = two_int8_matmuls_model(7);
  const std::string path = dir.file("two_int8_matmuls.onnx");
  write_file(path, bytes);
  Ephost::SessionOptions o;
  o.append_provider("cpu");
  Ephost::Session s(cpu_env(), path, o);
  ASSERT_EQ(fused_groups(s).size(), 2u) << "two int8 MatMul groups";
  const json freed = freed_of(s);
  EXPECT_EQ(freed["count"], 2) << freed.dump() << ": w1_q and w2_q";
  EXPECT_EQ(freed["bytes"], kK * kK + kK * kN) << freed.dump();
  EXPECT_EQ(freed["while_compiling"], 2) << freed.dump() << ": each as its group was compiled, not after the plan";
  EXPECT_EQ(freed["read_back"], 0) << freed.dump() << ": no later step needed them";
  for (int seed = 0; seed < 3; ++seed) expect_bit_identical(run_model(s, seed), reference(bytes, seed), "run");
  EXPECT_EQ(freed_of(s)["read_back"], 0);
}

TEST(InitializerRelease, WritingAnEpContextModelFreesAfterItNotWhileCompiling) {
  // The EPContext model is written from the plan's initializers after compiling: they stay till then.
  TempDir dir;
  const std::string bytes = two_int8_matmuls_model(7);
  const std::string path = dir.file("two_int8_matmuls.onnx");
  write_file(path, bytes);
  Ephost::SessionOptions o;
  o.append_provider("cpu");
  o.add_config("ep.context_enable", "1");
  Ephost::Session s(cpu_env(), path, o);
  const json freed = freed_of(s);
  EXPECT_EQ(freed["while_compiling"], 0) << freed.dump();
  EXPECT_EQ(freed["count"], 2) << freed.dump() << ": freed once the context model was written";
  EXPECT_EQ(freed["read_back"], 0) << freed.dump();
  expect_bit_identical(run_model(s, 1), reference(bytes, 1), "run");
}

TEST(InitializerRelease, KeepInitializersKeepsEveryByte) {
  TempDir dir;
  const std::string bytes = int8_matmul_model(3);
  const std::string path = dir.file("int8_matmul.onnx");
  write_file(path, bytes);
  Ephost::SessionOptions o;
  o.append_provider("cpu");
  o.add_config("session.keep_initializers", "1");
  Ephost::Session s(cpu_env(), path, o);
  ASSERT_EQ(fused_groups(s).size(), 1u);
  EXPECT_EQ(freed_of(s)["count"], 0) << freed_of(s).dump();
  write_file(path, int8_matmul_model(4));  // nothing is ever read from the file again
  expect_bit_identical(run_model(s, 0), reference(bytes, 0), "run");
}

class InitializerReleaseFallback : public ::testing::Test {
 protected:
  void SetUp() override {
    unsetenv("FAKEDEV_UNPROTECTED");
    install_plugins(dir_, {"ephost_test_fakedev"});
    crash_file_ = dir_.file("crash-now");
    ::setenv("FAKEDEV_CRASH_FILE", crash_file_.c_str(), 1);
    env_ = std::make_unique<Ephost::Env>(EPHOST_LOG_FATAL, std::vector<std::string>{dir_.path()});
    bytes_ = int8_matmul_model(5);
    path_ = dir_.file("int8_matmul.onnx");
    write_file(path_, bytes_);
  }
  void TearDown() override {
    env_.reset();
    ::unsetenv("FAKEDEV_CRASH_FILE");
  }

  // fakedev isolated (it takes the Relu), the CPU plugin after it (the int8 group, and all once
  // fakedev fell back).
  std::unique_ptr<Ephost::Session> session() const {
    return std::make_unique<Ephost::Session>(
        *env_, path_, options_with({"fakedev", "cpu"}, {{"ep.fakedev.mode", "kernels"}, {"session.provider_isolation", "process"}}));
  }
  // Three crashes of fakedev's compute: it falls back and the session plans again at the next run.
  void crash_three_times(const Ephost::Session& s) {
    for (int i = 0; i < 3; ++i) {
      std::ofstream(crash_file_) << "crash";
      EXPECT_THROW(run_model(s, 10 + i), Ephost::Exception) << "crash " << i;
    }
    std::remove(crash_file_.c_str());
  }

  TempDir dir_;
  std::string crash_file_, bytes_, path_;
  std::unique_ptr<Ephost::Env> env_;
};

TEST_F(InitializerReleaseFallback, ThePlanAfterAFallbackReadsTheFreedWeightsBackAndFreesThemAgain) {
  auto s = session();
  const auto providers = node_providers(json::parse(s->partition_report_json()));
  ASSERT_EQ(providers.at("relu"), "fakedev");
  ASSERT_EQ(providers.at("matmul"), "cpu");
  json freed = freed_of(*s);
  ASSERT_EQ(freed["count"], 1) << freed.dump();
  expect_bit_identical(run_model(*s, 1), reference(bytes_, 1), "before the fallback");

  crash_three_times(*s);
  for (int seed = 2; seed < 5; ++seed) expect_bit_identical(run_model(*s, seed), reference(bytes_, seed), "after it");
  for (const auto& [node, provider] : node_providers(json::parse(s->partition_report_json())))
    EXPECT_EQ(provider, "cpu") << node;
  freed = freed_of(*s);
  EXPECT_GE(freed["read_back"], 1) << freed.dump() << ": w_q read back from the file (a new provider host's snapshot, or the new plan's int8 group)";
  EXPECT_EQ(freed["count"], 1) << freed.dump() << ": and was done with it again";
}

TEST_F(InitializerReleaseFallback, AModelFileThatChangedIsAClearErrorNeverOtherWeights) {
  auto s = session();
  ASSERT_EQ(freed_of(*s)["count"], 1);
  write_file(path_, int8_matmul_model(6));  // other weights under the same names
  crash_three_times(*s);
  try {
    run_model(*s, 2);
    ADD_FAILURE() << "the plan after the fallback read weights the model file no longer holds";
  } catch (const Ephost::Exception& e) {
    EXPECT_NE(e.message().find("'w_q'"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("no longer holds the same bytes"), std::string::npos) << e.message();
  }
}

TEST_F(InitializerReleaseFallback, ExternalDataIsFreedAndReadBackFromItsOwnFile) {
  const std::string data_file = dir_.file("w_q.bin");
  write_file(path_, with_external_initializer(bytes_, "w_q", data_file));
  auto s = session();
  ASSERT_EQ(freed_of(*s)["count"], 1) << freed_of(*s).dump();
  expect_bit_identical(run_model(*s, 1), reference(bytes_, 1), "before the fallback");
  crash_three_times(*s);
  for (int seed = 2; seed < 4; ++seed) expect_bit_identical(run_model(*s, seed), reference(bytes_, seed), "after it");
  EXPECT_GE(freed_of(*s)["read_back"], 1) << freed_of(*s).dump();
}

TEST_F(InitializerReleaseFallback, ExternalDataThatChangedIsAClearError) {
  const std::string data_file = dir_.file("w_q.bin");
  write_file(path_, with_external_initializer(bytes_, "w_q", data_file));
  auto s = session();
  ASSERT_EQ(freed_of(*s)["count"], 1) << freed_of(*s).dump();
  write_file(data_file, std::string(kWeightBytes, '\x07'));  // the same size, other bytes
  crash_three_times(*s);
  try {
    run_model(*s, 2);
    ADD_FAILURE() << "the plan after the fallback read weights the data file no longer holds";
  } catch (const Ephost::Exception& e) {
    EXPECT_NE(e.message().find("'w_q'"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("no longer holds the same bytes"), std::string::npos) << e.message();
  }
}

}  // namespace
