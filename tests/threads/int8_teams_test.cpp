// How many OpenMP teams a run of fused int8 (QDQ) groups wakes at 2 threads. Waking a team whose
// workers sleep between regions costs tens of microseconds (more in a VM), so a small int8
// convolution, and the layout copies around it, must run on the calling thread: at 2 threads int8
// MobileNetV3-small woke 53 teams per run and ran slower than at 1 thread (issue 27). A large one must
// still get its team. Checked without timing: this executable interposes libgomp's GOMP_parallel (the
// entry every `#pragma omp parallel`, the plugin's and oneDNN's, calls) and counts the teams of more
// than one thread that the runs start.
#include <gtest/gtest.h>

#include <dlfcn.h>

#include <atomic>
#include <cstdint>
#include <string>
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

struct Teams {
  long per_run = 0;  // teams of more than one thread one steady run woke
  bool fused = false;  // the convolution ran as a fused int8 group
};

// Runs the model at 2 threads (the machine's load ignored: adaptive_threads=0) three times and counts
// the teams of the last run.
Teams teams_of(const std::string& model, int64_t C, int64_t S) {
  Ephost::SessionOptions options;
  options.set_threads(2);
  options.append_provider("cpu", {{"adaptive_threads", "0"}});
  Ephost::Session session(ephost_test::cpu_env(), model.data(), model.size(), options);
  Teams out;
  for (const std::string& g : ephost_test::fused_groups(session))
    if (g.find("Conv") != std::string::npos && g.find("QuantizeLinear") != std::string::npos) out.fused = true;
  std::vector<uint8_t> x(static_cast<size_t>(C * S * S));
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<uint8_t>(i * 29 % 251);
  Ephost::Tensor in = Ephost::Tensor::wrap(EPHOST_ELEMENT_UINT8, {1, C, S, S}, x.data(), x.size());
  for (int r = 0; r < 3; ++r) {
    const long before = g_teams.load();
    session.run({"x"}, {in}, {"y"});
    out.per_run = g_teams.load() - before;
  }
  return out;
}

// MobileNetV3-small's 1x1 convolutions are this size (~15 MOP). It used to get a 2-thread oneDNN team,
// and its NCHW -> NHWC copy and output transpose (75 KB each) a team each.
TEST(CpuInt8Teams, SmallConvolutionWakesNoTeamAtTwoThreads) {
  const int64_t C = 96, S = 28;
  const Teams t = teams_of(int8_conv_model(C, S, 1), C, S);
  ASSERT_TRUE(t.fused) << "the int8 convolution did not fuse: this test checks the fused group";
  EXPECT_EQ(t.per_run, 0) << "a small int8 convolution at 2 threads woke " << t.per_run << " teams in one run";
}

// A ResNet-50-sized 3x3 convolution (~470 MOP) still runs on 2 threads.
TEST(CpuInt8Teams, LargeConvolutionGetsItsTeam) {
  const int64_t C = 64, S = 56;
  const Teams t = teams_of(int8_conv_model(C, S, 3), C, S);
  ASSERT_TRUE(t.fused) << "the int8 convolution did not fuse: this test checks the fused group";
  EXPECT_GE(t.per_run, 1) << "a large int8 convolution at 2 threads ran on one thread";
}

}  // namespace
