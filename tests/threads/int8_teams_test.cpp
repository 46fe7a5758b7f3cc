// How many OpenMP teams a run of int8 (QDQ) steps wakes at 2 threads, with the team's workers asleep
// between kernels (allow_spinning=0) and spinning (the default). Waking a team whose workers
// sleep between regions costs tens of microseconds (more in a VM), so a small int8 convolution, and
// the layout copies around it, must run on the calling thread: at 2 threads int8 MobileNetV3-small
// woke 53 teams per run and ran slower than at 1 thread (issue 27). So must the per-element steps
// between the int8 groups (a standalone DequantizeLinear, a GlobalAveragePool, the QDQ Mul/Add group):
// int8 EfficientNet-B0 spent 2.4x as long in them at 2 threads as at 1. A large one must still get its
// team. Checked without timing: this executable interposes libgomp's GOMP_parallel (the
// entry every `#pragma omp parallel`, the plugin's and oneDNN's, calls) and counts the teams of more
// than one thread that the runs start.
#include <gtest/gtest.h>

#include <dlfcn.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "ephost/ephost_cxx_api.h"
#include "cpu_fused_groups.h"
#include "qdq_test_models.h"
#include "test_support.h"

namespace {

std::atomic<long> g_teams{0};  // GOMP_parallel calls asking for more than one thread (0 = the default team)

}  // namespace

// libgomp's entry for `#pragma omp parallel` (GCC's ABI): resolved here first, for libephost's calls too.
// Default visibility: the project builds with -fvisibility=hidden.
extern "C" __attribute__((visibility("default"))) void GOMP_parallel(void (*fn)(void*), void* data, unsigned num_threads, unsigned flags) {
  using Entry = void (*)(void (*)(void*), void*, unsigned, unsigned);
  static const Entry real = reinterpret_cast<Entry>(dlsym(RTLD_NEXT, "GOMP_parallel"));
  if (num_threads != 1) g_teams.fetch_add(1, std::memory_order_relaxed);
  real(fn, data, num_threads, flags);
}

namespace {

using ephost_test::ModelBuilder;
using ephost_test::typed_initializer;

// x_q [1, C, S, S] u8 -> DQ -> Conv k x k (C -> C, padded) with DequantizeLinear'd int8 weights -> Q -> y_q:
// one fused int8 convolution and nothing else (no float QuantizeLinear whose own team would count).
std::string int8_conv_model(int64_t C, int64_t S, int64_t k) {
  ModelBuilder m(13);
  m.input("x", onnx::TensorProto::UINT8, {1, C, S, S});
  m.output("y", onnx::TensorProto::UINT8, {1, C, S, S});
  ephost_test::add_quant_params(m, "in", {0.02f, 128, false});
  m.node("DequantizeLinear", {"x", "in_s", "in_z"}, {"a"}, "in_dequantize");
  std::vector<int8_t> w(static_cast<size_t>(C * C * k * k));
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<int8_t>(static_cast<int>(i * 37 % 121) - 60);
  typed_initializer<int8_t>(m, "w_q", onnx::TensorProto::INT8, {C, C, k, k}, w);
  m.initializer("w_s", {C}, ephost_test::channel_scales(C));
  auto& dq = m.node("DequantizeLinear", {"w_q", "w_s"}, {"w"}, "w_dequantize");
  ephost_test::attr_int(dq, "axis", 0);
  auto& conv = m.node("Conv", {"a", "w"}, {"p"}, "conv");
  ephost_test::attr_ints(conv, "kernel_shape", {k, k});
  ephost_test::attr_ints(conv, "pads", {k / 2, k / 2, k / 2, k / 2});
  ephost_test::add_quant_params(m, "out", {0.05f, 120, false});
  m.node("QuantizeLinear", {"p", "out_s", "out_z"}, {"y"}, "out_quantize");
  return m.bytes();
}

// x_q [1, C, S, S] u8 -> DequantizeLinear -> y (float): the plain kernel, as int8 EfficientNet-B0 runs
// it before each squeeze-excite pool.
std::string dequantize_model(int64_t C, int64_t S) {
  ModelBuilder m(13);
  m.input("x", onnx::TensorProto::UINT8, {1, C, S, S});
  m.output("y", onnx::TensorProto::FLOAT, {1, C, S, S});
  ephost_test::add_quant_params(m, "in", {0.02f, 128, false});
  m.node("DequantizeLinear", {"x", "in_s", "in_z"}, {"y"}, "in_dequantize");
  return m.bytes();
}

// x [1, C, S, S] float -> GlobalAveragePool -> y [1, C, 1, 1].
std::string global_average_pool_model(int64_t C, int64_t S) {
  ModelBuilder m(13);
  m.input("x", onnx::TensorProto::FLOAT, {1, C, S, S});
  m.output("y", onnx::TensorProto::FLOAT, {1, C, 1, 1});
  m.node("GlobalAveragePool", {"x"}, {"y"}, "pool");
  return m.bytes();
}

// DQ(x_q [1, C, S, S]) * DQ(g_q [1, C, 1, 1]) -> Q -> y_q: a squeeze-excite scale as one fused int8 Mul.
std::string excite_mul_model(int64_t C, int64_t S) {
  ModelBuilder m(13);
  m.input("x", onnx::TensorProto::UINT8, {1, C, S, S});
  m.input("g", onnx::TensorProto::UINT8, {1, C, 1, 1});
  m.output("y", onnx::TensorProto::UINT8, {1, C, S, S});
  ephost_test::add_quant_params(m, "x", {0.03f, 120, false});
  ephost_test::add_quant_params(m, "g", {1.f / 255, 0, false});
  ephost_test::add_quant_params(m, "y", {0.025f, 110, false});
  m.node("DequantizeLinear", {"x", "x_s", "x_z"}, {"xf"}, "x_dequantize");
  m.node("DequantizeLinear", {"g", "g_s", "g_z"}, {"gf"}, "g_dequantize");
  m.node("Mul", {"xf", "gf"}, {"p"}, "excite");
  m.node("QuantizeLinear", {"p", "y_s", "y_z"}, {"y"}, "y_quantize");
  return m.bytes();
}

// One input of a model: its bytes (patterned, so that no value is special) and element type.
struct Input {
  std::string name;
  EphostElementType type;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;

  Input(std::string n, EphostElementType t, std::vector<int64_t> s) : name(std::move(n)), type(t), shape(std::move(s)) {
    int64_t count = 1;
    for (int64_t d : shape) count *= d;
    if (type == EPHOST_ELEMENT_FLOAT) {
      std::vector<float> v(static_cast<size_t>(count));
      for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i * 29 % 251) * 0.01f - 1.2f;
      bytes.assign(reinterpret_cast<const uint8_t*>(v.data()), reinterpret_cast<const uint8_t*>(v.data() + v.size()));
    } else {
      bytes.resize(static_cast<size_t>(count));
      for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(i * 29 % 251);
    }
  }
};

struct Teams {
  long per_run = 0;                 // teams of more than one thread one steady run woke
  std::vector<std::string> groups;  // the fused groups of the session
  bool fused(const std::string& op) const {
    for (const std::string& g : groups)
      if (g.find(op) != std::string::npos && g.find("QuantizeLinear") != std::string::npos) return true;
    return false;
  }
};

// Whether a session of this process asked for allow_spinning=0: libgomp's workers then sleep between
// kernels for the rest of the process, and the tests of the spinning default cannot run here (ctest
// runs each test in a process of its own; a whole-binary run skips them).
bool g_spinning_shortened = false;

enum class Workers { kSleep, kSpin };

// Runs the model at 2 threads (the machine's load ignored: adaptive_threads=0) three times and counts
// the teams of the last run. kSleep: with allow_spinning=0, as the thresholds for sleeping workers
// were set (math::kPassGrainBytes, 8 MOP per int8 thread); kSpin: the default.
Teams teams_of(const std::string& model, std::vector<Input> inputs, Workers workers = Workers::kSleep) {
  Ephost::SessionOptions options;
  options.set_threads(2);
  if (workers == Workers::kSleep) {
    options.append_provider("cpu", {{"adaptive_threads", "0"}, {"allow_spinning", "0"}});
    g_spinning_shortened = true;
  } else {
    options.append_provider("cpu", {{"adaptive_threads", "0"}});
  }
  Ephost::Session session(ephost_test::cpu_env(), model.data(), model.size(), options);
  Teams out;
  for (const std::string& g : ephost_test::fused_groups(session)) out.groups.push_back(g);
  std::vector<std::string> names;
  std::vector<Ephost::Tensor> tensors;
  for (Input& in : inputs) {
    names.push_back(in.name);
    tensors.push_back(Ephost::Tensor::wrap(in.type, in.shape, in.bytes.data(), in.bytes.size()));
  }
  for (int r = 0; r < 3; ++r) {
    const long before = g_teams.load();
    session.run(names, tensors, {"y"});
    out.per_run = g_teams.load() - before;
  }
  return out;
}

Teams conv_teams(int64_t C, int64_t S, int64_t k, Workers workers = Workers::kSleep) {
  return teams_of(int8_conv_model(C, S, k), {Input("x", EPHOST_ELEMENT_UINT8, {1, C, S, S})}, workers);
}

// MobileNetV3-small's 1x1 convolutions are this size (~15 MOP). It used to get a 2-thread oneDNN team,
// and its NCHW -> NHWC copy and output transpose (75 KB each) a team each.
TEST(CpuInt8Teams, SmallConvolutionWakesNoTeamAtTwoThreads) {
  const int64_t C = 96, S = 28;
  const Teams t = conv_teams(C, S, 1);
  ASSERT_TRUE(t.fused("Conv")) << "the int8 convolution did not fuse: this test checks the fused group";
  EXPECT_EQ(t.per_run, 0) << "a small int8 convolution at 2 threads woke " << t.per_run << " teams in one run";
}

// A ResNet-50-sized 3x3 convolution (~470 MOP) still runs on 2 threads.
TEST(CpuInt8Teams, LargeConvolutionGetsItsTeam) {
  const int64_t C = 64, S = 56;
  const Teams t = conv_teams(C, S, 3);
  ASSERT_TRUE(t.fused("Conv")) << "the int8 convolution did not fuse: this test checks the fused group";
  EXPECT_GE(t.per_run, 1) << "a large int8 convolution at 2 threads ran on one thread";
}

// The per-element steps around the int8 groups, at the sizes int8 EfficientNet-B0 and MobileNetV3
// run them (a 96 x 56 x 56 activation: 1.5 MB read and written), start no team at 2 threads; each
// used to start one (kElementwiseGrain: 32768 elements per thread).
TEST(CpuInt8Teams, SmallDequantizeLinearWakesNoTeamAtTwoThreads) {
  const int64_t C = 96, S = 56;
  const Teams t = teams_of(dequantize_model(C, S), {Input("x", EPHOST_ELEMENT_UINT8, {1, C, S, S})});
  EXPECT_EQ(t.per_run, 0) << "a small DequantizeLinear at 2 threads woke " << t.per_run << " teams in one run";
}

TEST(CpuInt8Teams, SmallGlobalAveragePoolWakesNoTeamAtTwoThreads) {
  const int64_t C = 96, S = 28;
  const Teams t = teams_of(global_average_pool_model(C, S), {Input("x", EPHOST_ELEMENT_FLOAT, {1, C, S, S})});
  EXPECT_EQ(t.per_run, 0) << "a small GlobalAveragePool at 2 threads woke " << t.per_run << " teams in one run";
}

TEST(CpuInt8Teams, SmallInt8MulWakesNoTeamAtTwoThreads) {
  const int64_t C = 96, S = 28;
  const Teams t = teams_of(excite_mul_model(C, S), {Input("x", EPHOST_ELEMENT_UINT8, {1, C, S, S}),
                                                    Input("g", EPHOST_ELEMENT_UINT8, {1, C, 1, 1})});
  ASSERT_TRUE(t.fused("Mul")) << "the int8 Mul did not fuse: this test checks the fused group";
  EXPECT_EQ(t.per_run, 0) << "a small int8 Mul at 2 threads woke " << t.per_run << " teams in one run";
}

// Large enough (several MB per thread) that a second thread pays for its wake-up: they keep their team.
TEST(CpuInt8Teams, LargeDequantizeLinearGetsItsTeam) {
  const int64_t C = 64, S = 224;
  const Teams t = teams_of(dequantize_model(C, S), {Input("x", EPHOST_ELEMENT_UINT8, {1, C, S, S})});
  EXPECT_GE(t.per_run, 1) << "a large DequantizeLinear at 2 threads ran on one thread";
}

TEST(CpuInt8Teams, LargeGlobalAveragePoolGetsItsTeam) {
  const int64_t C = 512, S = 56;
  const Teams t = teams_of(global_average_pool_model(C, S), {Input("x", EPHOST_ELEMENT_FLOAT, {1, C, S, S})});
  EXPECT_GE(t.per_run, 1) << "a large GlobalAveragePool at 2 threads ran on one thread";
}

TEST(CpuInt8Teams, LargeInt8MulGetsItsTeam) {
  const int64_t C = 256, S = 112;
  const Teams t = teams_of(excite_mul_model(C, S), {Input("x", EPHOST_ELEMENT_UINT8, {1, C, S, S}),
                                                    Input("g", EPHOST_ELEMENT_UINT8, {1, C, 1, 1})});
  ASSERT_TRUE(t.fused("Mul")) << "the int8 Mul did not fuse: this test checks the fused group";
  EXPECT_GE(t.per_run, 1) << "a large int8 Mul at 2 threads ran on one thread";
}

// While workers spin (the default), a team starts in microseconds, so the thresholds are lower
// (math::kSpinningPassGrainBytes, 1 MOP per int8 thread): the sizes above that stayed on one thread
// with sleeping workers get their team, which made int8 EfficientNet-B0 and MobileNetV3-small at 2
// threads 10-20% faster; tiny steps still run alone.
TEST(CpuInt8Teams, WithSpinningWorkersMidSizedStepsGetATeam) {
  if (g_spinning_shortened) GTEST_SKIP() << "a test before this one in this process shortened libgomp's spinning";
  const Teams conv = conv_teams(96, 28, 1, Workers::kSpin);
  ASSERT_TRUE(conv.fused("Conv")) << "the int8 convolution did not fuse: this test checks the fused group";
  EXPECT_GE(conv.per_run, 1) << "a 15 MOP int8 convolution ran on one thread with spinning workers";
  const Teams dq = teams_of(dequantize_model(96, 56), {Input("x", EPHOST_ELEMENT_UINT8, {1, 96, 56, 56})}, Workers::kSpin);
  EXPECT_GE(dq.per_run, 1) << "a 1.5 MB DequantizeLinear ran on one thread with spinning workers";
}

TEST(CpuInt8Teams, WithSpinningWorkersTinyStepsStillRunAlone) {
  if (g_spinning_shortened) GTEST_SKIP() << "a test before this one in this process shortened libgomp's spinning";
  const Teams conv = conv_teams(8, 8, 1, Workers::kSpin);
  ASSERT_TRUE(conv.fused("Conv")) << "the int8 convolution did not fuse: this test checks the fused group";
  EXPECT_EQ(conv.per_run, 0) << "a 8 KOP int8 convolution woke a team";
  const Teams dq = teams_of(dequantize_model(4, 16), {Input("x", EPHOST_ELEMENT_UINT8, {1, 4, 16, 16})}, Workers::kSpin);
  EXPECT_EQ(dq.per_run, 0) << "a 5 KB DequantizeLinear woke a team";
}

}  // namespace

namespace {

// Teams the creation of a 2-thread session on a tiny model starts (none of its kernels' own: the model
// has no static work worth a team), with `config` as session entries.
long teams_at_creation(const std::vector<std::pair<std::string, std::string>>& config) {
  const std::string model = dequantize_model(2, 4);
  Ephost::SessionOptions options;
  options.set_threads(2);
  for (const auto& [key, value] : config) options.add_config(key, value);
  const long before = g_teams.load();
  Ephost::Session session(ephost_test::cpu_env(), model.data(), model.size(), options);
  return g_teams.load() - before;
}

// By default (session.intra_op.allow_spinning=1, as ONNX Runtime) libgomp's idle workers spin before
// they sleep, so back-to-back kernels start without a wake-up: nothing parks a team to shorten their
// spinning (that made int8 BERT at 2 threads slower than at 1). "0", given as the session entry (the
// host forwards it to the CPU plugin as allow_spinning=0) or as ep.cpu.allow_spinning, parks one team,
// once per process.
TEST(CpuSpinning, OnlyAllowSpinningZeroParksATeamAndOncePerProcess) {
  if (g_spinning_shortened) GTEST_SKIP() << "a test before this one in this process shortened libgomp's spinning";
  EXPECT_EQ(teams_at_creation({}), 0) << "a default session shortened libgomp's spinning";
  EXPECT_EQ(teams_at_creation({{"session.intra_op.allow_spinning", "1"}}), 0);
  EXPECT_EQ(teams_at_creation({{"session.intra_op.allow_spinning", "0"}}), 1)
      << "session.intra_op.allow_spinning=0 did not reach the CPU plugin";
  EXPECT_EQ(teams_at_creation({{"session.intra_op.allow_spinning", "0"}}), 0) << "parked a second team";
  EXPECT_EQ(teams_at_creation({{"ep.cpu.allow_spinning", "0"}}), 0);
}

TEST(CpuSpinning, AllowSpinningTakesOnlyZeroOrOne) {
  const std::string model = dequantize_model(2, 4);
  for (const char* key : {"session.intra_op.allow_spinning", "ep.cpu.allow_spinning"}) {
    Ephost::SessionOptions options;
    options.set_threads(2);
    try {
      options.add_config(key, "yes");
      Ephost::Session session(ephost_test::cpu_env(), model.data(), model.size(), options);
      ADD_FAILURE() << key << "=yes was accepted";
    } catch (const Ephost::Exception& e) {
      EXPECT_EQ(e.code(), EPHOST_INVALID_ARGUMENT) << key << ": " << e.what();
      EXPECT_NE(std::string(e.what()).find("allow_spinning"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
