// The CPU plugin's int8 QDQ fusions (plugins/cpu/fusion/qdq_*.cpp) against the exact QDQ semantics:
// each model runs with pattern fusion (the default) and with fuse_patterns=0, where every
// QuantizeLinear / DequantizeLinear runs on its own in float, on the same random inputs. The outputs,
// dequantized, must agree within 2 quantization steps, and the fused session must contain the int8
// group (so that a pattern that silently stops matching fails here). The suite also runs under
// EPHOST_CPU_ISA=scalar and =avx2 (tests/CMakeLists.txt: cpu_plugin_tests_*), where oneDNN has no VNNI
// and the fusion must only take weights it multiplies exactly.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cpuid.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <set>

#include "ephost/ephost_cxx_api.h"
#include "cpu_fused_groups.h"
#include "qdq_test_models.h"
#include "test_support.h"

using ephost_test::ModelBuilder;
using ephost_test::Quant;
using ephost_test::channel_scales;
using ephost_test::cpu_env;
using ephost_test::fused_groups;
using ephost_test::typed_initializer;

namespace {

// AVX-VNNI from CPUID (leaf 7, sub-leaf 1, EAX bit 4): clang 14 does not know
// __builtin_cpu_supports("avxvnni").
bool cpu_has_avx_vnni() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  return __get_cpuid_count(7, 1, &a, &b, &c, &d) != 0 && ((a >> 4) & 1u) != 0;
}

// oneDNN accumulates u8 x s8 in int32 with AVX-512 VNNI, or AVX-VNNI (a capped oneDNN uses neither).
bool onednn_accumulates_in_int32() {
  const char* cap = std::getenv("EPHOST_CPU_ISA");
  const bool uncapped = cap == nullptr || *cap == '\0' || std::string(cap) == "avx512";
  return uncapped && ((__builtin_cpu_supports("avx512vnni") && __builtin_cpu_supports("avx512bw")) ||
                      cpu_has_avx_vnni());
}

std::vector<float> run(const Ephost::Session& s, const std::vector<int64_t>& shape, std::vector<float>& x) {
  std::vector<Ephost::Tensor> in;
  in.push_back(Ephost::Tensor::wrap(EPHOST_ELEMENT_FLOAT, shape, x.data(), x.size()));
  std::vector<Ephost::Tensor> out = s.run({"x"}, in, {"y"});
  const float* p = static_cast<const float*>(Ephost::api().TensorGetData(out[0].get()));
  return std::vector<float>(p, p + Ephost::api().TensorGetElementCount(out[0].get()));
}

// Q(x) -> DQ -> [product] -> Q -> DQ -> y, with the product's nodes added by `body` (from "a" to "p").
struct QdqModel {
  ModelBuilder m{13};
  Quant in{0.02f, 128, false}, out{0.05f, 120, false};

  void add_quant_pair(const std::string& x, const Quant& q, const std::string& prefix, const std::string& y) {
    ephost_test::add_quant_pair(m, x, q, prefix, y);
  }

  // Per-column int8 weights [K, N] (or [N, K] when transposed) within +-limit, dequantized along `axis`.
  void add_weights(int64_t K, int64_t N, bool transposed, int limit, uint32_t seed) {
    std::mt19937 gen(seed);
    std::uniform_int_distribution<int> d(-limit, limit);
    std::vector<int8_t> w(static_cast<size_t>(K * N));
    for (int8_t& v : w) v = static_cast<int8_t>(d(gen));
    const std::vector<float> s = channel_scales(N);
    typed_initializer<int8_t>(m, "w_q", onnx::TensorProto::INT8, transposed ? std::vector<int64_t>{N, K} : std::vector<int64_t>{K, N}, w);
    m.initializer("w_s", {N}, s);
    typed_initializer<int8_t>(m, "w_z", onnx::TensorProto::INT8, {N}, std::vector<int8_t>(static_cast<size_t>(N), 0));
    auto& dq = m.node("DequantizeLinear", {"w_q", "w_s", "w_z"}, {"w"}, "w_dequantize");
    ephost_test::attr_int(dq, "axis", transposed ? 0 : 1);
  }

  // Per-output-channel int8 convolution weights [M, C/group, k, k] within +-limit, dequantized into
  // the value `name` (initializers name_q, name_s).
  void add_conv_weights(int64_t M, int64_t c_per_group, int64_t k, int limit, uint32_t seed,
                        const std::string& name = "w") {
    std::mt19937 gen(seed);
    std::uniform_int_distribution<int> d(-limit, limit);
    std::vector<int8_t> w(static_cast<size_t>(M * c_per_group * k * k));
    for (int8_t& v : w) v = static_cast<int8_t>(d(gen));
    const std::vector<float> s = channel_scales(M);
    typed_initializer<int8_t>(m, name + "_q", onnx::TensorProto::INT8, {M, c_per_group, k, k}, w);
    m.initializer(name + "_s", {M}, s);
    auto& dq = m.node("DequantizeLinear", {name + "_q", name + "_s"}, {name}, name + "_dequantize");
    ephost_test::attr_int(dq, "axis", 0);
  }

  // An int32 bias dequantized with scale in.scale * 0.004 (as quantizers write it).
  void add_bias(int64_t N, uint32_t seed) {
    std::mt19937 gen(seed);
    std::uniform_int_distribution<int32_t> d(-3000, 3000);
    std::vector<int32_t> b(static_cast<size_t>(N));
    for (int32_t& v : b) v = d(gen);
    typed_initializer<int32_t>(m, "b_q", onnx::TensorProto::INT32, {N}, b);
    m.initializer("b_s", {}, {in.scale * 0.004f});
    m.node("DequantizeLinear", {"b_q", "b_s"}, {"b"}, "b_dequantize");
  }
};

// The model fused, at 2 threads with the load check off (so the threaded paths run on a busy machine);
// with `trunks` false, int8 conv chains that read each other stay groups of their own.
Ephost::Session fused_session(const std::string& bytes, bool trunks = true) {
  Ephost::SessionOptions opts;
  opts.set_threads(2);
  opts.append_provider("cpu", {{"adaptive_threads", "0"}, {"int8_trunks", trunks ? "1" : "0"}});
  return Ephost::Session(cpu_env(), bytes.data(), bytes.size(), opts);
}

// The model op by op (no patterns fused), the reference a fused group must match.
Ephost::Session op_by_op_session(const std::string& bytes) {
  Ephost::SessionOptions opts;
  opts.set_threads(1);
  opts.append_provider("cpu", {{"fuse_patterns", "0"}});
  return Ephost::Session(cpu_env(), bytes.data(), bytes.size(), opts);
}

// The outputs of `names` on input x.
std::vector<std::vector<float>> run_outputs(const Ephost::Session& s, const std::vector<int64_t>& shape,
                                            std::vector<float>& x, const std::vector<std::string>& names) {
  std::vector<Ephost::Tensor> in;
  in.push_back(Ephost::Tensor::wrap(EPHOST_ELEMENT_FLOAT, shape, x.data(), x.size()));
  std::vector<Ephost::Tensor> out = s.run({"x"}, in, names);
  std::vector<std::vector<float>> values;
  for (const Ephost::Tensor& t : out) {
    const float* p = static_cast<const float*>(Ephost::api().TensorGetData(t.get()));
    values.emplace_back(p, p + Ephost::api().TensorGetElementCount(t.get()));
  }
  return values;
}

Ephost::Session trunk_session(const std::string& bytes, int threads, bool trunks) {
  Ephost::SessionOptions opts;
  opts.set_threads(threads);
  opts.append_provider("cpu", {{"adaptive_threads", "0"}, {"int8_trunks", trunks ? "1" : "0"}});
  return Ephost::Session(cpu_env(), bytes.data(), bytes.size(), opts);
}

// How many of the session's fused groups hold a Conv, and how many Convs the largest holds.
std::pair<size_t, size_t> conv_groups(const Ephost::Session& s) {
  size_t groups = 0, largest = 0;
  for (const std::string& g : fused_groups(s)) {
    size_t convs = 0;
    for (size_t at = g.find("Conv"); at != std::string::npos; at = g.find("Conv", at + 1)) ++convs;
    if (convs == 0) continue;
    ++groups;
    largest = std::max(largest, convs);
  }
  return {groups, largest};
}

// Every output of `names` bit for bit equal with the int8 trunks and with the chains one group each
// (int8_trunks=0), at 1 and 2 threads, on one random input; the trunk session holds a group of
// `trunk_convs` Convs.
void expect_trunk_matches_chains(QdqModel& q, const std::vector<int64_t>& x_shape,
                                 const std::vector<std::string>& names, size_t trunk_convs, uint32_t seed) {
  const std::string bytes = q.m.bytes();
  size_t n = 1;
  for (int64_t d : x_shape) n *= static_cast<size_t>(d);
  std::vector<float> x(n);
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> d(-2.7f, 2.7f);
  for (float& v : x) v = d(gen);
  for (int threads : {1, 2}) {
    Ephost::Session trunk = trunk_session(bytes, threads, true);
    Ephost::Session chains = trunk_session(bytes, threads, false);
    EXPECT_EQ(conv_groups(trunk).second, trunk_convs) << threads << " threads";
    const auto got = run_outputs(trunk, x_shape, x, names);
    const auto want = run_outputs(chains, x_shape, x, names);
    ASSERT_EQ(got.size(), names.size());
    for (size_t o = 0; o < names.size(); ++o) {
      ASSERT_EQ(got[o].size(), want[o].size()) << names[o];
      size_t differing = 0;
      for (size_t i = 0; i < got[o].size(); ++i) differing += got[o][i] != want[o][i];
      EXPECT_EQ(differing, 0u) << names[o] << " at " << threads << " threads: of " << got[o].size();
    }
  }
}

// Runs the model fused and op by op; the dequantized outputs must be within 2 steps of out.scale, and
// the fused session must hold `count` groups of exactly `expect`'s op types (none unless expect_fused).
// With `trunks` false the int8 conv chains stay groups of their own.
void check_qdq(QdqModel& q, const std::vector<int64_t>& x_shape, const std::string& expect, uint32_t seed = 1,
               bool expect_fused = true, double max_steps = 2.0, size_t count = 1, bool trunks = true) {
  const std::string bytes = q.m.bytes();
  Ephost::Session fused = fused_session(bytes, trunks);
  Ephost::Session plain = op_by_op_session(bytes);

  const std::multiset<std::string> groups = fused_groups(fused);
  std::string all;
  for (const auto& g : groups) all += "[" + g + "] ";
  EXPECT_EQ(groups.count(expect), expect_fused ? count : 0u) << "fused groups: " << all;
  for (const std::string& g : fused_groups(plain)) EXPECT_NE(g, expect) << "fuse_patterns=0 still fused " << g;

  size_t n = 1;
  for (int64_t d : x_shape) n *= static_cast<size_t>(d);
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> d(-2.7f, 2.7f);  // beyond the input range too: saturation
  std::vector<float> x(n);
  for (float& v : x) v = d(gen);
  const std::vector<float> got = run(fused, x_shape, x);
  const std::vector<float> want = run(plain, x_shape, x);
  ASSERT_EQ(got.size(), want.size());
  double worst = 0;
  size_t differing = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double steps = std::abs(static_cast<double>(got[i]) - want[i]) / q.out.scale;
    worst = std::max(worst, steps);
    differing += steps > 0.5;
  }
  EXPECT_LE(worst, max_steps + 1e-3) << differing << " of " << got.size() << " outputs differ";
  // Not a vacuous comparison: the outputs span many quantization levels.
  std::set<float> levels(want.begin(), want.end());
  EXPECT_GT(levels.size(), 20u);
}

// A constant quantized operand: `values` as u8 bytes with scale and zero point, through its own
// DequantizeLinear named `y`.
void add_constant_operand(QdqModel& q, const std::string& y, const std::vector<int64_t>& dims,
                          const std::vector<uint8_t>& values, float scale, int zero_point) {
  typed_initializer<uint8_t>(q.m, y + "_q", onnx::TensorProto::UINT8, dims, values);
  q.m.initializer(y + "_s", {}, {scale});
  typed_initializer<uint8_t>(q.m, y + "_z", onnx::TensorProto::UINT8, {}, {static_cast<uint8_t>(zero_point)});
  q.m.node("DequantizeLinear", {y + "_q", y + "_s", y + "_z"}, {y}, y + "_dequantize");
}

}  // namespace

TEST(CpuQdqFusion, MatMulBiasReluPerColumnWeights) {
  QdqModel q;
  q.m.input("x", onnx::TensorProto::FLOAT, {3, 7, 48}).output("y", onnx::TensorProto::FLOAT, {3, 7, 40});
  q.add_quant_pair("x", q.in, "in", "a");
  q.add_weights(48, 40, false, 64, 11);
  q.add_bias(40, 12);
  q.m.node("MatMul", {"a", "w"}, {"mm"}, "matmul");
  q.m.node("Add", {"mm", "b"}, {"biased"}, "bias");
  q.m.node("Relu", {"biased"}, {"r"}, "relu");
  q.out = {0.03f, 0, false};
  q.add_quant_pair("r", q.out, "out", "y");
  check_qdq(q, {3, 7, 48}, "DequantizeLinear+DequantizeLinear+MatMul+Add+Relu+QuantizeLinear");
}

TEST(CpuQdqFusion, MatMulWhoseInputRankIsUnknownUntilTheRun) {
  // A Reshape to a shape given at run time (as BERT's heads merge) leaves A's rank unknown to shape
  // inference: the pattern is still taken, its shapes checked per run.
  QdqModel q;
  q.m.input("x", onnx::TensorProto::FLOAT, {6, 64}).input("shape", onnx::TensorProto::INT64, {-1});
  q.m.output("y", onnx::TensorProto::FLOAT, {});
  q.m.node("Reshape", {"x", "shape"}, {"r"}, "reshape");
  q.add_quant_pair("r", q.in, "in", "a");
  q.add_weights(32, 24, false, 63, 61);
  q.add_bias(24, 62);
  q.m.node("MatMul", {"a", "w"}, {"mm"}, "matmul");
  q.m.node("Add", {"mm", "b"}, {"biased"}, "bias");
  q.add_quant_pair("biased", q.out, "out", "y");
  const std::string bytes = q.m.bytes();
  Ephost::SessionOptions fused_opts, plain_opts;
  plain_opts.append_provider("cpu", {{"fuse_patterns", "0"}});
  Ephost::Session fused(cpu_env(), bytes.data(), bytes.size(), fused_opts);
  Ephost::Session plain(cpu_env(), bytes.data(), bytes.size(), plain_opts);
  EXPECT_EQ(fused_groups(fused).count("DequantizeLinear+DequantizeLinear+MatMul+Add+QuantizeLinear"), 1u);
  std::mt19937 gen(63);
  std::uniform_real_distribution<float> d(-2.7f, 2.7f);
  std::vector<float> x(6 * 64);
  for (float& v : x) v = d(gen);
  for (std::vector<int64_t> shape : {std::vector<int64_t>{2, 6, 32}, std::vector<int64_t>{12, 32}}) {
    auto run_with = [&](const Ephost::Session& s) {
      std::vector<Ephost::Tensor> in;
      in.push_back(Ephost::Tensor::wrap(EPHOST_ELEMENT_FLOAT, {6, 64}, x.data(), x.size()));
      in.push_back(Ephost::Tensor::wrap(EPHOST_ELEMENT_INT64, {static_cast<int64_t>(shape.size())}, shape.data(),
                                        shape.size()));
      std::vector<Ephost::Tensor> out = s.run({"x", "shape"}, in, {"y"});
      const std::vector<int64_t> dims = out[0].shape();
      const float* p = static_cast<const float*>(Ephost::api().TensorGetData(out[0].get()));
      return std::make_pair(dims, std::vector<float>(p, p + Ephost::api().TensorGetElementCount(out[0].get())));
    };
    const auto got = run_with(fused), want = run_with(plain);
    EXPECT_EQ(got.first, want.first);
    ASSERT_EQ(got.second.size(), want.second.size());
    for (size_t i = 0; i < got.second.size(); ++i)
      ASSERT_LE(std::abs(got.second[i] - want.second[i]), 1.001f * q.out.scale) << i;
  }
}

TEST(CpuQdqFusion, MatMulSignedOutputNoRelu) {
  QdqModel q;
  q.m.input("x", onnx::TensorProto::FLOAT, {33, 64}).output("y", onnx::TensorProto::FLOAT, {33, 24});
  q.add_quant_pair("x", q.in, "in", "a");
  q.add_weights(64, 24, false, 64, 21);
  q.add_bias(24, 22);
  q.m.node("MatMul", {"a", "w"}, {"mm"}, "matmul");
  q.m.node("Add", {"b", "mm"}, {"biased"}, "bias");
  q.out = {0.04f, -5, true};
  q.add_quant_pair("biased", q.out, "out", "y");
  check_qdq(q, {33, 64}, "DequantizeLinear+DequantizeLinear+MatMul+Add+QuantizeLinear", 3);
}

TEST(CpuQdqFusion, SignedActivationsGemmTransB) {
  QdqModel q;
  q.in = {0.02f, 3, true};
  q.m.input("x", onnx::TensorProto::FLOAT, {17, 32}).output("y", onnx::TensorProto::FLOAT, {17, 20});
  q.add_quant_pair("x", q.in, "in", "a");
  q.add_weights(32, 20, true, 64, 31);
  q.add_bias(20, 32);
  auto& gemm = q.m.node("Gemm", {"a", "w", "b"}, {"g"}, "gemm");
  ephost_test::attr_int(gemm, "transB", 1);
  q.out = {0.05f, 128, false};
  q.add_quant_pair("g", q.out, "out", "y");
  check_qdq(q, {17, 32}, "DequantizeLinear+DequantizeLinear+Gemm+QuantizeLinear", 5);
}

TEST(CpuQdqFusion, SharedInputDequantizeStaysOutside) {
  // A's DequantizeLinear also feeds a residual Add: the group re-quantizes its float output.
  QdqModel q;
  q.m.input("x", onnx::TensorProto::FLOAT, {9, 40}).output("y", onnx::TensorProto::FLOAT, {9, 40});
  q.add_quant_pair("x", q.in, "in", "a");
  q.add_weights(40, 40, false, 64, 41);
  q.add_bias(40, 42);
  q.m.node("MatMul", {"a", "w"}, {"mm"}, "matmul");
  q.m.node("Add", {"mm", "b"}, {"biased"}, "bias");
  q.out = {0.05f, 128, false};
  q.add_quant_pair("biased", q.out, "mid", "m");
  q.m.node("Add", {"m", "a"}, {"y"}, "residual");
  check_qdq(q, {9, 40}, "DequantizeLinear+MatMul+Add+QuantizeLinear", 7);
}

TEST(CpuQdqFusion, MatMulsSharingOneDequantizeEachReadTheBytes) {
  // BERT's query, key and value projections read one LayerNorm output's DequantizeLinear. The host gives
  // each MatMul a copy (host/transform/unique_dequantize.cpp), so each group takes its own and reads the
  // bytes: three groups with their activation's DequantizeLinear, no DequantizeLinear left on its own.
  QdqModel q;
  q.m.input("x", onnx::TensorProto::FLOAT, {2, 5, 32}).output("y", onnx::TensorProto::FLOAT, {2, 5, 24});
  q.add_quant_pair("x", q.in, "in", "a");
  std::vector<std::string> outs;
  for (int i = 0; i < 3; ++i) {
    const std::string k = std::to_string(i);
    std::mt19937 gen(90 + i);
    std::uniform_int_distribution<int> d(-64, 64);
    std::vector<int8_t> w(32 * 24);
    for (int8_t& v : w) v = static_cast<int8_t>(d(gen));
    typed_initializer<int8_t>(q.m, "w" + k + "_q", onnx::TensorProto::INT8, {32, 24}, w);
    q.m.initializer("w" + k + "_s", {24}, channel_scales(24));
    auto& dq = q.m.node("DequantizeLinear", {"w" + k + "_q", "w" + k + "_s"}, {"w" + k}, "w" + k + "_dequantize");
    ephost_test::attr_int(dq, "axis", 1);
    q.m.node("MatMul", {"a", "w" + k}, {"mm" + k}, "matmul" + k);
    q.add_quant_pair("mm" + k, {0.06f, 128, false}, "p" + k, "d" + k);
    outs.push_back("d" + k);
  }
  q.m.node("Add", {outs[0], outs[1]}, {"s01"}, "sum01");
  q.add_quant_pair("s01", {0.08f, 128, false}, "s01", "e01");
  q.m.node("Add", {"e01", outs[2]}, {"s"}, "sum");
  q.out = {0.1f, 128, false};
  q.add_quant_pair("s", q.out, "out", "y");
  check_qdq(q, {2, 5, 32}, "DequantizeLinear+DequantizeLinear+MatMul+QuantizeLinear", 93, true, 2.0, 3);
}

TEST(CpuQdqFusion, FullRangeWeightsFuseOnlyWhereExact) {
  // Weights beyond 7 bits: oneDNN without VNNI would saturate its int16 pair sums, so the pattern is
  // taken only where VNNI is available; either way the result must hold.
  QdqModel q;
  q.m.input("x", onnx::TensorProto::FLOAT, {16, 256}).output("y", onnx::TensorProto::FLOAT, {16, 32});
  q.add_quant_pair("x", q.in, "in", "a");
  q.add_weights(256, 32, false, 127, 51);
  q.add_bias(32, 52);
  q.m.node("MatMul", {"a", "w"}, {"mm"}, "matmul");
  q.m.node("Add", {"mm", "b"}, {"biased"}, "bias");
  q.out = {0.08f, 128, false};
  q.add_quant_pair("biased", q.out, "out", "y");
  check_qdq(q, {16, 256}, "DequantizeLinear+DequantizeLinear+MatMul+Add+QuantizeLinear", 9, onednn_accumulates_in_int32());
}

TEST(CpuQdqFusion, ConvPaddedReluWithInputZeroPoint) {
  // The input's zero point is 128: the padding must act as the quantized zero, not as byte 0.
  QdqModel q;
  q.m.input("x", onnx::TensorProto::FLOAT, {2, 8, 9, 11}).output("y", onnx::TensorProto::FLOAT, {2, 16, 9, 11});
  q.add_quant_pair("x", q.in, "in", "a");
  q.add_conv_weights(16, 8, 3, 64, 61);
  q.add_bias(16, 62);
  auto& conv = q.m.node("Conv", {"a", "w", "b"}, {"c"}, "conv");
  ephost_test::attr_ints(conv, "pads", {1, 1, 1, 1});
  q.m.node("Relu", {"c"}, {"r"}, "relu");
  q.out = {0.03f, 0, false};
  q.add_quant_pair("r", q.out, "out", "y");
  check_qdq(q, {2, 8, 9, 11}, "DequantizeLinear+DequantizeLinear+Conv+Relu+QuantizeLinear", 11);
}

TEST(CpuQdqFusion, ExactRequantizeOptionDividesLikeQuantizeLinear) {
  // int8_exact_requantize=1: the epilogue's division instead of oneDNN's multiplication. Either way
  // each output is within a step of the op-by-op graph; the option's value is checked.
  QdqModel q;
  q.m.input("x", onnx::TensorProto::FLOAT, {2, 8, 9, 11}).output("y", onnx::TensorProto::FLOAT, {2, 16, 9, 11});
  q.add_quant_pair("x", q.in, "in", "a");
  q.add_conv_weights(16, 8, 3, 64, 61);
  q.add_bias(16, 62);
  auto& conv = q.m.node("Conv", {"a", "w", "b"}, {"c"}, "conv");
  ephost_test::attr_ints(conv, "pads", {1, 1, 1, 1});
  q.out = {0.03f, 0, false};
  q.add_quant_pair("c", q.out, "out", "y");
  const std::string bytes = q.m.bytes();
  std::vector<float> x(2 * 8 * 9 * 11);
  std::mt19937 gen(5);
  std::uniform_real_distribution<float> d(-2.7f, 2.7f);
  for (float& v : x) v = d(gen);
  auto outputs = [&](const std::vector<std::pair<std::string, std::string>>& options) {
    Ephost::SessionOptions o;
    o.set_threads(1);
    o.append_provider("cpu", options);
    Ephost::Session s(cpu_env(), bytes.data(), bytes.size(), o);
    return run(s, {2, 8, 9, 11}, x);
  };
  const std::vector<float> plain = outputs({{"fuse_patterns", "0"}});
  for (const char* exact : {"0", "1"}) {
    SCOPED_TRACE(std::string("int8_exact_requantize=") + exact);
    const std::vector<float> fused = outputs({{"int8_exact_requantize", exact}});
    ASSERT_EQ(fused.size(), plain.size());
    double worst = 0;
    for (size_t i = 0; i < fused.size(); ++i)
      worst = std::max(worst, std::abs(static_cast<double>(fused[i]) - plain[i]) / q.out.scale);
    EXPECT_LE(worst, 1.0 + 1e-3);
  }
  try {
    outputs({{"int8_exact_requantize", "yes"}});
    FAIL() << "int8_exact_requantize=yes was accepted";
  } catch (const Ephost::Exception& e) {
    EXPECT_NE(e.message().find("int8_exact_requantize must be 0 or 1"), std::string::npos) << e.message();
  }
}

TEST(CpuQdqFusion, DepthwiseStridedConvSignedOutput) {
  QdqModel q;
  q.m.input("x", onnx::TensorProto::FLOAT, {1, 12, 15, 14}).output("y", onnx::TensorProto::FLOAT, {1, 12, 8, 7});
  q.add_quant_pair("x", q.in, "in", "a");
  q.add_conv_weights(12, 1, 3, 64, 71);
  auto& conv = q.m.node("Conv", {"a", "w"}, {"c"}, "conv");
  ephost_test::attr_int(conv, "group", 12);
  ephost_test::attr_ints(conv, "strides", {2, 2});
  ephost_test::attr_ints(conv, "pads", {1, 1, 1, 1});
  q.out = {0.02f, -3, true};
  q.add_quant_pair("c", q.out, "out", "y");
  check_qdq(q, {1, 12, 15, 14}, "DequantizeLinear+DequantizeLinear+Conv+QuantizeLinear", 13);
}

TEST(CpuQdqFusion, PointwiseConvOverManyPixelsTwoImages) {
  // No padding: X_q goes straight into NHWC, each image's plane in blocks of whole 16-pixel tiles
  // (8192 pixels for 4 channels): 91 x 93 pixels make a second block, partly filled and ending in a
  // partial tile, in each of two images.
  QdqModel q;
  q.m.input("x", onnx::TensorProto::FLOAT, {2, 4, 91, 93}).output("y", onnx::TensorProto::FLOAT, {2, 8, 91, 93});
  q.add_quant_pair("x", q.in, "in", "a");
  q.add_conv_weights(8, 4, 1, 64, 91);
  q.add_bias(8, 92);
  q.m.node("Conv", {"a", "w", "b"}, {"c"}, "conv");
  q.out = {0.03f, 110, false};
  q.add_quant_pair("c", q.out, "out", "y");
  check_qdq(q, {2, 4, 91, 93}, "DequantizeLinear+DequantizeLinear+Conv+QuantizeLinear", 19);
}

TEST(CpuQdqFusion, SharedInputConvSamePadding) {
  // X's DequantizeLinear also feeds the residual: the group takes it, reads X_q and hands the
  // float tensor out to the Add as its second output.
  QdqModel q;
  q.m.input("x", onnx::TensorProto::FLOAT, {1, 16, 10, 10}).output("y", onnx::TensorProto::FLOAT, {1, 16, 10, 10});
  q.add_quant_pair("x", q.in, "in", "a");
  q.add_conv_weights(16, 16, 3, 64, 81);
  q.add_bias(16, 82);
  auto& conv = q.m.node("Conv", {"a", "w", "b"}, {"c"}, "conv");
  ephost_test::attr_string(conv, "auto_pad", "SAME_UPPER");
  q.out = {0.05f, 128, false};
  q.add_quant_pair("c", q.out, "mid", "m");
  q.m.node("Add", {"m", "a"}, {"y"}, "residual");
  check_qdq(q, {1, 16, 10, 10}, "DequantizeLinear+DequantizeLinear+Conv+QuantizeLinear", 17);
}

TEST(CpuQdqFusion, TwoConvsShareOneDequantize) {
  // One DequantizeLinear feeds two convolutions (a bottleneck's first conv and its projection): the
  // first takes it and hands its float output to the second, which re-quantizes it.
  QdqModel q;
  q.m.input("x", onnx::TensorProto::FLOAT, {2, 8, 6, 7}).output("y", onnx::TensorProto::FLOAT, {2, 8, 6, 7});
  q.add_quant_pair("x", q.in, "in", "a");
  q.add_conv_weights(8, 8, 3, 64, 101);
  auto& c1 = q.m.node("Conv", {"a", "w"}, {"c1"}, "conv1");
  ephost_test::attr_ints(c1, "pads", {1, 1, 1, 1});
  q.m.node("Relu", {"c1"}, {"r1"}, "relu1");
  q.add_quant_pair("r1", {0.04f, 0, false}, "m1", "d1");
  auto& c2 = q.m.node("Conv", {"a", "w"}, {"c2"}, "conv2");
  ephost_test::attr_ints(c2, "pads", {1, 1, 1, 1});
  q.add_quant_pair("c2", {0.05f, 128, false}, "m2", "d2");
  q.m.node("Add", {"d1", "d2"}, {"s"}, "sum");
  q.out = {0.06f, 100, false};
  q.add_quant_pair("s", q.out, "out", "y");
  check_qdq(q, {2, 8, 6, 7}, "DequantizeLinear+Conv+Relu+QuantizeLinear", 23, true, 2.0, 1, false);
  // The second also ends with the Add, whose other operand (conv1's bytes, d1) it dequantizes itself.
  check_qdq(q, {2, 8, 6, 7}, "DequantizeLinear+Conv+QuantizeLinear+DequantizeLinear+Add+QuantizeLinear", 29, true,
            2.0, 1, false);
  // The two chains read each other's values (the float X, conv1's bytes): one trunk, in which conv2
  // reads the bytes under the float X and the Add conv1's NHWC bytes.
  check_qdq(q, {2, 8, 6, 7},
            "DequantizeLinear+Conv+Relu+QuantizeLinear+DequantizeLinear+Conv+QuantizeLinear+DequantizeLinear+Add+"
            "QuantizeLinear",
            31);
  expect_trunk_matches_chains(q, {2, 8, 6, 7}, {"y"}, 2, 37);
}

TEST(CpuQdqFusion, ActivationsAsTables) {
  // DQ -> HardSigmoid / Sigmoid / Tanh -> Q (s8 in, u8 out): 256-entry tables.
  for (const char* op : {"HardSigmoid", "Sigmoid", "Tanh"}) {
    QdqModel q;
    q.in = {0.03f, -7, true};
    q.m.input("x", onnx::TensorProto::FLOAT, {3, 5, 77}).output("y", onnx::TensorProto::FLOAT, {3, 5, 77});
    q.add_quant_pair("x", q.in, "in", "a");
    q.m.node(op, {"a"}, {"h"}, "act");
    q.out = {std::string(op) == "Tanh" ? 0.009f : 0.005f, std::string(op) == "Tanh" ? 128 : 0, false};
    q.add_quant_pair("h", q.out, "out", "y");
    SCOPED_TRACE(op);
    check_qdq(q, {3, 5, 77}, std::string("DequantizeLinear+") + op + "+QuantizeLinear", 19, true, 0.0);
  }
}

TEST(CpuQdqFusion, ChainsOfElementwiseStepsAsOneTable) {
  // What a quantizer leaves between two Q/DQ pairs: BERT's DQ -> Div(sqrt 2) -> Erf -> Q, and chains
  // with Sqrt, a reversed Sub / Div (constant first), Add and Mul by scalars: one table each, bit for
  // bit the op-by-op graph.
  struct Case {
    std::vector<std::pair<std::string, float>> steps;  // op and scalar; "rSub" / "rDiv": constant first
    Quant in, out;
    std::string expect;
  };
  const Case cases[] = {
      {{{"Div", 1.41421356f}, {"Erf", 0.f}}, {0.02f, 128, false}, {0.008f, 128, false}, "Div+Erf"},
      {{{"rSub", 3.f}, {"Sqrt", 0.f}, {"Mul", 0.5f}}, {0.021f, -5, true}, {0.004f, 0, false}, "Sub+Sqrt+Mul"},
      {{{"Add", 6.f}, {"rDiv", 4.f}}, {0.02f, 120, false}, {0.003f, -100, true}, "Add+Div"},
  };
  int seed = 50;
  for (const Case& c : cases) {
    QdqModel q;
    q.in = c.in;
    q.m.input("x", onnx::TensorProto::FLOAT, {2, 9, 31}).output("y", onnx::TensorProto::FLOAT, {2, 9, 31});
    q.add_quant_pair("x", q.in, "in", "a");
    std::string v = "a";
    for (size_t i = 0; i < c.steps.size(); ++i) {
      const std::string op = c.steps[i].first, out = "s" + std::to_string(i), k = "k" + std::to_string(i);
      if (op == "Erf" || op == "Sqrt") {
        q.m.node(op, {v}, {out}, "step" + std::to_string(i));
      } else {
        q.m.initializer(k, {}, {c.steps[i].second});
        const bool reversed = op[0] == 'r';
        q.m.node(reversed ? op.substr(1) : op, reversed ? std::vector<std::string>{k, v} : std::vector<std::string>{v, k},
                 {out}, "step" + std::to_string(i));
      }
      v = out;
    }
    q.out = c.out;
    q.add_quant_pair(v, q.out, "out", "y");
    SCOPED_TRACE(c.expect);
    check_qdq(q, {2, 9, 31}, "DequantizeLinear+" + c.expect + "+QuantizeLinear", static_cast<uint32_t>(seed++), true,
              0.0);
  }
}

TEST(CpuQdqFusion, ChainFromASharedDequantizeReadsItsFloatOutput) {
  // x's DequantizeLinear feeds Div(sqrt 2) -> Erf -> Q, the Mul by that Q/DQ's output, and an Add of the
  // product (three readers of one operator: the host keeps them on one DequantizeLinear). The chain's
  // group reads the float x and quantizes it back (exact); the DequantizeLinear stays.
  QdqModel q;
  q.m.input("x", onnx::TensorProto::FLOAT, {4, 64}).output("y", onnx::TensorProto::FLOAT, {4, 64});
  q.add_quant_pair("x", q.in, "in", "a");
  q.m.initializer("sqrt2", {}, {1.41421356f});
  q.m.node("Div", {"a", "sqrt2"}, {"d"}, "div");
  q.m.node("Erf", {"d"}, {"e"}, "erf");
  q.add_quant_pair("e", {0.008f, 128, false}, "eq", "ed");
  q.m.node("Mul", {"a", "ed"}, {"p"}, "mul");
  q.m.node("Add", {"a", "p"}, {"s"}, "add");
  q.out = {0.012f, 128, false};
  q.add_quant_pair("s", q.out, "out", "y");
  check_qdq(q, {4, 64}, "Div+Erf+QuantizeLinear", 61, true, 0.0);
}

TEST(CpuQdqFusion, QuantizedGeluAsOneTable) {
  // BERT's GELU as a static quantizer writes it (Add and Mul quantized, Div and Erf left float):
  //   a = DQ(x_q); e = Q/DQ(Erf(a / sqrt 2)); g = Q/DQ(e + DQ(1)); p = Q/DQ(a * g); y = Q(p * DQ(0.5))
  // x's DequantizeLinear has two readers (Div and the Mul), both inside the pattern: one table over x's
  // byte, bit for bit the op-by-op graph. Before, the DequantizeLinear ran on its own and four groups
  // read its float output or each other's bytes.
  for (const bool x_first : {true, false}) {
    QdqModel q;
    q.in = {0.03f, 140, false};
    q.m.input("x", onnx::TensorProto::FLOAT, {2, 6, 40}).output("y", onnx::TensorProto::FLOAT, {2, 6, 40});
    q.add_quant_pair("x", q.in, "in", "a");
    q.m.initializer("sqrt2", {}, {1.41421356f});
    q.m.node("Div", {"a", "sqrt2"}, {"d"}, "div");
    q.m.node("Erf", {"d"}, {"e"}, "erf");
    q.add_quant_pair("e", {2.f / 255, 128, false}, "eq", "ed");
    add_constant_operand(q, "one", {}, {255}, 1.f / 255, 0);
    q.m.node("Add", {"ed", "one"}, {"g"}, "add_one");
    q.add_quant_pair("g", {2.f / 255, 0, false}, "gq", "gd");
    q.m.node("Mul", x_first ? std::vector<std::string>{"a", "gd"} : std::vector<std::string>{"gd", "a"}, {"p"}, "mul");
    q.add_quant_pair("p", {0.02f, 20, false}, "pq", "pd");
    add_constant_operand(q, "half", {}, {128}, 0.5f / 128, 0);
    q.m.node("Mul", {"pd", "half"}, {"h"}, "mul_half");
    q.out = {0.012f, 16, false};
    q.add_quant_pair("h", q.out, "out", "y");
    SCOPED_TRACE(x_first);
    check_qdq(q, {2, 6, 40},
              "DequantizeLinear+Div+Erf+QuantizeLinear+DequantizeLinear+Add+QuantizeLinear+DequantizeLinear+Mul+"
              "QuantizeLinear+DequantizeLinear+Mul+QuantizeLinear",
              x_first ? 81 : 82, true, 0.0);
  }
}

TEST(CpuQdqFusion, ReshapeAndTransposeBetweenEqualQuantPairsMoveBytes) {
  // BERT's head split: DQ -> Reshape -> Q and DQ -> Transpose -> Q with one scale and zero point on both
  // sides are the bytes moved, bit for bit (u8 and s8). The Reshape's target has a 0 and a -1, or is
  // computed at run time (Shape of a transposed tensor).
  for (const bool is_signed : {false, true}) {
    for (const char* op : {"Reshape", "ReshapeRuntime", "Transpose"}) {
      QdqModel q;
      q.in = is_signed ? Quant{0.021f, -7, true} : Quant{0.02f, 128, false};
      q.out = q.in;
      const std::string kind = op;
      const std::vector<int64_t> out_shape =
          kind == "Reshape" ? std::vector<int64_t>{2, 6, 5, 2} : std::vector<int64_t>{2, 10, 6};
      q.m.input("x", onnx::TensorProto::FLOAT, {2, 6, 10}).output("y", onnx::TensorProto::FLOAT, out_shape);
      q.add_quant_pair("x", q.in, "in", "a");
      if (kind == "Transpose") {
        ephost_test::attr_ints(q.m.node("Transpose", {"a"}, {"v"}, "view"), "perm", {0, 2, 1});
      } else if (kind == "Reshape") {
        typed_initializer<int64_t>(q.m, "target", onnx::TensorProto::INT64, {4}, {0, 6, -1, 2});
        q.m.node("Reshape", {"a", "target"}, {"v"}, "view");
      } else {
        ephost_test::attr_ints(q.m.node("Transpose", {"x"}, {"xt"}, "xt"), "perm", {0, 2, 1});
        q.m.node("Shape", {"xt"}, {"target"}, "target");
        q.m.node("Reshape", {"a", "target"}, {"v"}, "view");
      }
      q.add_quant_pair("v", q.out, "out", "y");
      SCOPED_TRACE(kind + (is_signed ? " s8" : " u8"));
      const std::string fused = kind == "Transpose" ? "Transpose" : "Reshape";
      check_qdq(q, {2, 6, 10}, "DequantizeLinear+" + fused + "+QuantizeLinear", 71, true, 0.0);
    }
  }
}

TEST(CpuQdqFusion, ReshapeToTheShapeOfItsOwnDequantizeMovesBytes) {
  // BERT's head split computes the Reshape's target from Shape of the very DequantizeLinear it reshapes
  // (a dynamic batch: the Shape is not folded). The host's shape-source rewrite makes that Shape read
  // the quantized bytes, so the DequantizeLinear feeds the Reshape alone and the three move bytes.
  QdqModel q;
  q.out = q.in;
  q.m.input("x", onnx::TensorProto::FLOAT, {-1, 6, 10}).output("y", onnx::TensorProto::FLOAT, {-1, 6, 5, 2});
  q.add_quant_pair("x", q.in, "in", "a");
  q.m.node("Shape", {"a"}, {"a_shape"}, "a_shape");
  typed_initializer<int64_t>(q.m, "head_dims", onnx::TensorProto::INT64, {2}, {5, 2});
  typed_initializer<int64_t>(q.m, "first_two", onnx::TensorProto::INT64, {2}, {0, 1});
  q.m.node("Gather", {"a_shape", "first_two"}, {"batch_seq"}, "batch_seq");
  ephost_test::attr_int(q.m.node("Concat", {"batch_seq", "head_dims"}, {"target"}, "target"), "axis", 0);
  q.m.node("Reshape", {"a", "target"}, {"v"}, "view");
  q.add_quant_pair("v", q.out, "out", "y");
  check_qdq(q, {2, 6, 10}, "DequantizeLinear+Reshape+QuantizeLinear", 74, true, 0.0);
}

TEST(CpuQdqFusion, SlicesSharingOneDequantizeMoveBytes) {
  // ViT's query/key/value split: one DequantizeLinear read by three Slices, each between equal Q/DQ
  // pairs, is one group that reads the bytes once and writes three (bounds in int64 and int32, a
  // negative step, axes given or not). The three are joined in float by a Concat outside the group.
  for (const bool is_signed : {false, true}) {
    QdqModel q;
    q.in = is_signed ? Quant{0.021f, -7, true} : Quant{0.02f, 128, false};
    q.out = q.in;
    q.m.input("x", onnx::TensorProto::FLOAT, {2, 5, 12}).output("y", onnx::TensorProto::FLOAT, {2, 13, 4});
    q.add_quant_pair("x", q.in, "in", "a");
    typed_initializer<int64_t>(q.m, "s0_starts", onnx::TensorProto::INT64, {3}, {0, 0, 0});
    typed_initializer<int64_t>(q.m, "s0_ends", onnx::TensorProto::INT64, {3}, {2, 5, 4});
    q.m.node("Slice", {"a", "s0_starts", "s0_ends"}, {"v0"}, "slice0");
    q.add_quant_pair("v0", q.out, "s0", "d0");
    typed_initializer<int32_t>(q.m, "s1_starts", onnx::TensorProto::INT32, {1}, {4});
    typed_initializer<int32_t>(q.m, "s1_ends", onnx::TensorProto::INT32, {1}, {8});
    typed_initializer<int32_t>(q.m, "s1_axes", onnx::TensorProto::INT32, {1}, {-1});
    q.m.node("Slice", {"a", "s1_starts", "s1_ends", "s1_axes"}, {"v1"}, "slice1");
    q.add_quant_pair("v1", q.out, "s1", "d1");
    typed_initializer<int64_t>(q.m, "s2_starts", onnx::TensorProto::INT64, {2}, {3, 11});
    typed_initializer<int64_t>(q.m, "s2_ends", onnx::TensorProto::INT64, {2}, {0, 7});
    typed_initializer<int64_t>(q.m, "s2_axes", onnx::TensorProto::INT64, {2}, {1, 2});
    typed_initializer<int64_t>(q.m, "s2_steps", onnx::TensorProto::INT64, {2}, {-1, -1});
    q.m.node("Slice", {"a", "s2_starts", "s2_ends", "s2_axes", "s2_steps"}, {"v2"}, "slice2");
    q.add_quant_pair("v2", q.out, "s2", "d2");
    ephost_test::attr_int(q.m.node("Concat", {"d1", "d0", "d2"}, {"y"}, "join"), "axis", 1);
    SCOPED_TRACE(is_signed ? "s8" : "u8");
    check_qdq(q, {2, 5, 12},
              "DequantizeLinear+Slice+QuantizeLinear+Slice+QuantizeLinear+Slice+QuantizeLinear", 75, true, 0.0);
  }
}

TEST(CpuQdqFusion, TransposeBetweenDifferentQuantPairsStaysOpByOp) {
  // Another output scale: the bytes would not be the result, so nothing is fused.
  QdqModel q;
  q.out = {0.03f, 128, false};
  q.m.input("x", onnx::TensorProto::FLOAT, {3, 4, 5}).output("y", onnx::TensorProto::FLOAT, {5, 4, 3});
  q.add_quant_pair("x", q.in, "in", "a");
  q.m.node("Transpose", {"a"}, {"v"}, "view");
  q.add_quant_pair("v", q.out, "out", "y");
  check_qdq(q, {3, 4, 5}, "DequantizeLinear+Transpose+QuantizeLinear", 73, false, 0.0);
}

TEST(CpuQdqFusion, ProductOfTwoQuantizedActivations) {
  // Attention's Q x K^T as a quantizer writes it: both MatMul operands are activations, each through its
  // own Q/DQ pair. u8 x u8, s8 x u8 and u8 x s8, with zero points off the middle; B's batch axis
  // broadcast ([1, 3] against [2, 3]); a vector B [8] and a vector A [8] (MatMul drops that axis).
  // Fused only where oneDNN accumulates in int32 (B is full range); each output within a step of the
  // op-by-op graph.
  enum Form { kTransposed, kBroadcast, kVectorB, kVectorA };
  struct Case {
    Quant a, b, out;
    Form form;
  };
  const Case cases[] = {{{0.02f, 128, false}, {0.021f, 100, false}, {0.05f, 120, false}, kTransposed},
                        {{0.02f, -9, true}, {0.019f, 140, false}, {0.045f, 3, true}, kTransposed},
                        {{0.022f, 90, false}, {0.02f, 5, true}, {0.04f, 128, false}, kBroadcast},
                        {{0.02f, 110, false}, {0.004f, 130, false}, {0.01f, 128, false}, kVectorB},
                        {{0.004f, 120, false}, {0.02f, 128, false}, {0.01f, 128, false}, kVectorA}};
  uint32_t seed = 80;
  for (const Case& c : cases) {
    QdqModel q;
    const bool vector = c.form == kVectorA || c.form == kVectorB;
    q.m.input("x", onnx::TensorProto::FLOAT, {2, 3, 8, 8})
        .output("y", onnx::TensorProto::FLOAT, vector ? std::vector<int64_t>{2, 3, 8} : std::vector<int64_t>{2, 3, 8, 8});
    std::string a = "x", b = "xb";
    if (c.form == kBroadcast) {
      ephost_test::attr_ints(q.m.node("ReduceMean", {"x"}, {"xb"}, "mean"), "axes", {0});
    } else if (vector) {
      auto& mean = q.m.node("ReduceMean", {"x"}, {"xv"}, "mean");
      ephost_test::attr_ints(mean, "axes", {0, 1, 2});
      ephost_test::attr_int(mean, "keepdims", 0);
      a = c.form == kVectorA ? "xv" : "x";
      b = c.form == kVectorA ? "x" : "xv";
    } else {
      ephost_test::attr_ints(q.m.node("Transpose", {"x"}, {"xb"}, "xt"), "perm", {0, 1, 3, 2});
    }
    q.add_quant_pair(a, c.a, "qa", "a");
    q.add_quant_pair(b, c.b, "qb", "b");
    q.m.node("MatMul", {"a", "b"}, {"p"}, "matmul");
    q.out = c.out;
    q.add_quant_pair("p", q.out, "out", "y");
    SCOPED_TRACE(seed);
    check_qdq(q, {2, 3, 8, 8}, "DequantizeLinear+DequantizeLinear+MatMul+QuantizeLinear", seed++,
              onednn_accumulates_in_int32(), 1.0);
  }
}

TEST(CpuQdqFusion, AttentionSoftmaxByRows) {
  // BERT's scores: DQ -> Div(8) -> Add(mask [B, 1, 1, S], computed at run time) -> Softmax -> Q; a
  // constant mask [S]; Mul by a scale and no mask, s8 in. Bit for bit the op-by-op graph.
  enum MaskKind { kRuntime, kConstant, kNone };
  struct Case {
    Quant in, out;
    MaskKind mask;
    const char* expect;
  };
  const Case cases[] = {{{0.05f, 128, false}, {1.f / 256, 0, false}, kRuntime, "DequantizeLinear+Div+Add+Softmax+QuantizeLinear"},
                        {{0.04f, 120, false}, {1.f / 255, -128, true}, kConstant, "DequantizeLinear+Div+Add+Softmax+QuantizeLinear"},
                        {{0.03f, 3, true}, {1.f / 256, 0, false}, kNone, "DequantizeLinear+Mul+Softmax+QuantizeLinear"}};
  uint32_t seed = 90;
  for (const Case& c : cases) {
    QdqModel q;
    q.in = c.in;
    q.m.input("x", onnx::TensorProto::FLOAT, {2, 3, 5, 16}).output("y", onnx::TensorProto::FLOAT, {2, 3, 5, 16});
    q.add_quant_pair("x", q.in, "in", "a");
    q.m.initializer("k", {}, {c.mask == kNone ? 0.37f : 8.f});
    q.m.node(c.mask == kNone ? "Mul" : "Div", {"a", "k"}, {"scaled"}, "scale");
    std::string scores = "scaled";
    if (c.mask == kRuntime) {
      ephost_test::attr_ints(q.m.node("ReduceMax", {"x"}, {"mask"}, "mask"), "axes", {1, 2});
    } else if (c.mask == kConstant) {
      std::vector<float> mask(16);
      for (size_t i = 0; i < mask.size(); ++i) mask[i] = i % 5 == 0 ? -10000.f : 0.1f * static_cast<float>(i);
      q.m.initializer("mask", {16}, mask);
    }
    if (c.mask != kNone) {
      q.m.node("Add", {"scaled", "mask"}, {"masked"}, "add_mask");
      scores = "masked";
    }
    ephost_test::attr_int(q.m.node("Softmax", {scores}, {"p"}, "softmax"), "axis", -1);
    q.out = c.out;
    q.add_quant_pair("p", q.out, "out", "y");
    SCOPED_TRACE(seed);
    check_qdq(q, {2, 3, 5, 16}, c.expect, seed++, true, 0.0);
  }
}

TEST(CpuQdqFusion, QuantizedGateTimesInputAsOneTable) {
  // SiLU as quantizers write it: x * DQ(Q(Sigmoid(x))), and MobileNet's x * DQ(Q(HardSigmoid(x))), the
  // Mul's operands in either order, u8 and s8 x: one table, bit for bit the op-by-op graph.
  struct Case {
    const char* gate;
    Quant in, gate_q, out;
    bool x_first;
  };
  const Case cases[] = {{"Sigmoid", {0.03f, 128, false}, {1.f / 255, 0, false}, {0.02f, 10, false}, true},
                        {"Sigmoid", {0.025f, -9, true}, {1.f / 256, -128, true}, {0.018f, -20, true}, false},
                        {"HardSigmoid", {0.04f, 100, false}, {0.0039f, 3, false}, {0.022f, 30, false}, false}};
  for (const Case& c : cases) {
    QdqModel q;
    q.in = c.in;
    q.m.input("x", onnx::TensorProto::FLOAT, {2, 7, 5, 13}).output("y", onnx::TensorProto::FLOAT, {2, 7, 5, 13});
    q.add_quant_pair("x", q.in, "in", "a");
    q.m.node(c.gate, {"a"}, {"g"}, "gate");
    q.add_quant_pair("g", c.gate_q, "gq", "gd");
    q.m.node("Mul", c.x_first ? std::vector<std::string>{"a", "gd"} : std::vector<std::string>{"gd", "a"}, {"p"}, "mul");
    q.out = c.out;
    q.add_quant_pair("p", q.out, "out", "y");
    SCOPED_TRACE(c.gate);
    check_qdq(q, {2, 7, 5, 13},
              std::string("DequantizeLinear+") + c.gate + "+QuantizeLinear+DequantizeLinear+Mul+QuantizeLinear", 41,
              true, 0.0);
  }
}

TEST(CpuQdqFusion, MaxPoolOnTheBytes) {
  // DQ -> MaxPool -> Q: the maximum of the bytes, through a table where the output's scale or type
  // differs (bit for bit). ResNet's stem (3x3, stride 2, pads 1, same parameters), an odd-sized
  // dilated pool into another scale, and s8 into u8.
  struct Case {
    std::vector<int64_t> kernel, strides, pads, dilations;
    Quant in, out;
    std::vector<int64_t> x, y;
  };
  const Case cases[] = {
      {{3, 3}, {2, 2}, {1, 1, 1, 1}, {}, {0.02f, 128, false}, {0.02f, 128, false}, {1, 6, 17, 15}, {1, 6, 9, 8}},
      {{2, 3}, {1, 2}, {0, 1, 1, 0}, {2, 1}, {0.02f, 100, false}, {0.013f, 90, false}, {2, 3, 11, 9}, {2, 3, 10, 4}},
      {{3, 3}, {2, 2}, {1, 1, 1, 1}, {}, {0.03f, -5, true}, {0.015f, 0, false}, {1, 5, 9, 13}, {1, 5, 5, 7}}};
  int index = 0;
  for (const Case& c : cases) {
    QdqModel q;
    q.in = c.in;
    q.m.input("x", onnx::TensorProto::FLOAT, c.x).output("y", onnx::TensorProto::FLOAT, c.y);
    q.add_quant_pair("x", q.in, "in", "a");
    auto& pool = q.m.node("MaxPool", {"a"}, {"p"}, "pool");
    ephost_test::attr_ints(pool, "kernel_shape", c.kernel);
    ephost_test::attr_ints(pool, "strides", c.strides);
    ephost_test::attr_ints(pool, "pads", c.pads);
    if (!c.dilations.empty()) ephost_test::attr_ints(pool, "dilations", c.dilations);
    q.out = c.out;
    q.add_quant_pair("p", q.out, "out", "y");
    SCOPED_TRACE(index++);
    check_qdq(q, c.x, "DequantizeLinear+MaxPool+QuantizeLinear", 43, true, 0.0);
  }
}

// ---- DQ, DQ -> Add / Mul -> Q (qdq_binary.cpp): the op-by-op arithmetic in blocks, so bit for bit --------

TEST(CpuQdqFusion, AddOfTwoQuantizedTensorsOfOneShape) {
  QdqModel q;
  q.m.input("x", onnx::TensorProto::FLOAT, {2, 3, 17, 19}).output("y", onnx::TensorProto::FLOAT, {2, 3, 17, 19});
  q.add_quant_pair("x", q.in, "in", "a");
  q.add_quant_pair("x", {0.013f, 100, false}, "in2", "b");
  q.m.node("Add", {"a", "b"}, {"s"}, "add");
  q.out = {0.03f, 128, false};
  q.add_quant_pair("s", q.out, "out", "y");
  check_qdq(q, {2, 3, 17, 19}, "DequantizeLinear+DequantizeLinear+Add+QuantizeLinear", 23, true, 0.0);
}

TEST(CpuQdqFusion, MulByAPerChannelScaleWhoseOtherDequantizeIsShared) {
  // Squeeze-and-excitation's scale: x * Q/DQ(GlobalAveragePool(x)), [1, 8, 9, 10] by [1, 8, 1, 1]. x's
  // DequantizeLinear also feeds the pool, so it stays outside the group, which reads its float output.
  QdqModel q;
  q.m.input("x", onnx::TensorProto::FLOAT, {1, 8, 9, 10}).output("y", onnx::TensorProto::FLOAT, {1, 8, 9, 10});
  q.add_quant_pair("x", q.in, "in", "a");
  q.m.node("GlobalAveragePool", {"a"}, {"g"}, "pool");
  q.add_quant_pair("g", {0.004f, 10, false}, "gq", "gd");
  q.m.node("Mul", {"a", "gd"}, {"p"}, "scale");
  q.out = {0.002f, 128, false};
  q.add_quant_pair("p", q.out, "out", "y");
  check_qdq(q, {1, 8, 9, 10}, "DequantizeLinear+Mul+QuantizeLinear", 29, true, 0.0);
}

TEST(CpuQdqFusion, SignedBiasAddWithAConstantFirstOperand) {
  // A transformer's bias: DQ(constant [24]) + DQ(x [2, 5, 24]), int8 activations.
  QdqModel q;
  q.in = {0.02f, -3, true};
  q.m.input("x", onnx::TensorProto::FLOAT, {2, 5, 24}).output("y", onnx::TensorProto::FLOAT, {2, 5, 24});
  q.add_quant_pair("x", q.in, "in", "a");
  std::vector<uint8_t> bias(24);
  for (size_t i = 0; i < bias.size(); ++i) bias[i] = static_cast<uint8_t>((i * 37) % 256);
  add_constant_operand(q, "bias", {24}, bias, 0.01f, 128);
  q.m.node("Add", {"bias", "a"}, {"s"}, "add");
  q.out = {0.025f, 5, true};
  q.add_quant_pair("s", q.out, "out", "y");
  // The constant's DequantizeLinear joins the group (the plugin folds nothing; the host precomputes
  // it): the group reads its float output as a constant.
  check_qdq(q, {2, 5, 24}, "DequantizeLinear+DequantizeLinear+Add+QuantizeLinear", 31, true, 0.0);
}

TEST(CpuQdqFusion, MatMulWithItsQuantizedBiasAddAsOneGroup) {
  // A transformer's Linear as a static quantizer writes it (ours; ONNX Runtime's for MatMul + Add): the
  // product quantized on its own, then DQ(product) + DQ(bias constant) -> Q. The bias Add joins the int8
  // MatMul's group, which rounds the product with its Q/DQ before adding the bias, as the graph does.
  struct Case {
    Quant product, out;
    bool bias_first, relu;
  };
  const Case cases[] = {{{0.04f, 131, false}, {0.05f, 120, false}, false, false},
                        {{0.035f, -4, true}, {0.03f, 0, false}, true, true}};
  uint32_t seed = 71;
  for (const Case& c : cases) {
    QdqModel q;
    q.m.input("x", onnx::TensorProto::FLOAT, {2, 9, 48}).output("y", onnx::TensorProto::FLOAT, {2, 9, 40});
    q.add_quant_pair("x", q.in, "in", "a");
    q.add_weights(48, 40, false, 64, seed);
    q.m.node("MatMul", {"a", "w"}, {"mm"}, "matmul");
    q.add_quant_pair("mm", c.product, "product", "p");
    std::vector<uint8_t> bias(40);
    for (size_t i = 0; i < bias.size(); ++i) bias[i] = static_cast<uint8_t>((i * 53 + seed) % 256);
    add_constant_operand(q, "bias", {40}, bias, 0.012f, 140);
    q.m.node("Add", c.bias_first ? std::vector<std::string>{"bias", "p"} : std::vector<std::string>{"p", "bias"},
             {"s"}, "add");
    std::string last = "s", ops = "Add+";
    if (c.relu) {
      q.m.node("Relu", {"s"}, {"r"}, "relu");
      last = "r";
      ops += "Relu+";
    }
    q.out = c.out;
    q.add_quant_pair(last, q.out, "out", "y");
    SCOPED_TRACE(seed);
    check_qdq(q, {2, 9, 48},
              "DequantizeLinear+DequantizeLinear+MatMul+QuantizeLinear+DequantizeLinear+" + ops + "QuantizeLinear",
              seed++);
  }
}

TEST(CpuQdqFusion, MulBroadcastingBothWays) {
  // [3, 1, 7] by a constant [1, 4, 1]: each operand repeats along a different axis.
  QdqModel q;
  q.m.input("x", onnx::TensorProto::FLOAT, {3, 1, 7}).output("y", onnx::TensorProto::FLOAT, {3, 4, 7});
  q.add_quant_pair("x", q.in, "in", "a");
  add_constant_operand(q, "f", {1, 4, 1}, {90, 140, 200, 255}, 0.02f, 128);
  q.m.node("Mul", {"a", "f"}, {"p"}, "mul");
  q.out = {0.01f, 128, false};
  q.add_quant_pair("p", q.out, "out", "y");
  check_qdq(q, {3, 1, 7}, "DequantizeLinear+DequantizeLinear+Mul+QuantizeLinear", 37, true, 0.0);
}

TEST(CpuQdqFusion, LayerNormBetweenQuantPairsByRows) {
  // A decomposed LayerNorm between DQ and Q, with Q/DQ pairs between steps as BERT's quantized model
  // has them (variance, variance + eps, normalised row, row times gamma), gamma as a DequantizeLinear
  // of int8; none at all with Mul(d, d) and no gamma/beta (s8 out); the difference re-quantized (it
  // feeds the square and the division) and gamma without beta, s8 in; x's DequantizeLinear also read by
  // a residual Add after the norm (ViT's pre-norm: the group reads the float x). The fused means add in
  // another order than the ReduceMean kernel, so a re-quantized variance may land a step away: within 2
  // steps of the op-by-op graph, as every int8 fusion.
  struct Case {
    Quant in, out;
    bool bert_pairs, pow, gamma, beta, diff_pair, shared;
  };
  const Case cases[] = {{{0.02f, 128, false}, {0.02f, 128, false}, true, true, true, true, false, false},
                        {{0.025f, 100, false}, {0.015f, 0, true}, false, false, false, false, false, false},
                        {{0.03f, -3, true}, {0.018f, 120, false}, false, true, true, false, true, false},
                        {{0.02f, 128, false}, {0.03f, 128, false}, true, true, true, true, false, true}};
  uint32_t seed = 120;
  int pair = 0;
  for (const Case& c : cases) {
    QdqModel q;
    q.in = c.in;
    const std::vector<int64_t> shape{2, 5, 48};
    q.m.input("x", onnx::TensorProto::FLOAT, shape).output("y", onnx::TensorProto::FLOAT, shape);
    q.add_quant_pair("x", q.in, "in", "a");
    std::string expect = c.shared ? "" : "DequantizeLinear";
    auto add = [&](const std::string& op, const std::vector<std::string>& in, const std::string& out) -> onnx::NodeProto& {
      expect += (expect.empty() ? "" : "+") + op;
      return q.m.node(op, in, {out}, out + "_node");
    };
    // Re-quantizes v when `on`: the pair's nodes join the group.
    auto maybe_pair = [&](const std::string& v, bool on, const Quant& p) {
      if (!on) return v;
      const std::string prefix = "rq" + std::to_string(pair++), out = prefix + "_dq";
      q.add_quant_pair(v, p, prefix, out);
      expect += "+QuantizeLinear+DequantizeLinear";
      return out;
    };
    ephost_test::attr_ints(add("ReduceMean", {"a"}, "mean"), "axes", {-1});
    add("Sub", {"a", "mean"}, "diff");
    const std::string d = maybe_pair("diff", c.diff_pair, {0.03f, 128, false});
    if (c.pow) {
      q.m.initializer("two", {}, {2.f});
      add("Pow", {d, "two"}, "square");
    } else {
      add("Mul", {d, d}, "square");
    }
    ephost_test::attr_ints(add("ReduceMean", {"square"}, "var"), "axes", {-1});
    const std::string var = maybe_pair("var", c.bert_pairs, {0.012f, 0, false});
    q.m.initializer("eps", {}, {1e-5f});
    add("Add", {var, "eps"}, "shifted");
    const std::string shifted = maybe_pair("shifted", c.bert_pairs, {0.012f, 0, false});
    add("Sqrt", {shifted}, "std");
    add("Div", {d, "std"}, "norm");
    std::string v = "norm";
    std::mt19937 gen(seed);
    std::uniform_real_distribution<float> u(0.f, 1.f);
    if (c.gamma) {
      v = maybe_pair(v, c.bert_pairs, {0.014f, 128, false});
      std::vector<int8_t> g(48);
      for (int8_t& e : g) e = static_cast<int8_t>(64 + static_cast<int>(u(gen) * 60));
      typed_initializer<int8_t>(q.m, "gamma_q", onnx::TensorProto::INT8, {48}, g);
      q.m.initializer("gamma_s", {}, {1.f / 100});
      q.m.node("DequantizeLinear", {"gamma_q", "gamma_s"}, {"gamma"}, "gamma_dequantize");
      add("Mul", {v, "gamma"}, "scaled");
      v = "scaled";
    }
    if (c.beta) {
      v = maybe_pair(v, c.bert_pairs, {0.02f, 128, false});
      std::vector<float> b(48);
      for (float& e : b) e = u(gen) * 0.6f - 0.3f;
      q.m.initializer("beta", {48}, b);
      add("Add", {"beta", v}, "shiftedrow");
      v = "shiftedrow";
    }
    q.out = c.out;
    if (c.shared) {
      q.add_quant_pair(v, {0.02f, 128, false}, "ln", "ln_dq");
      q.m.node("Add", {"a", "ln_dq"}, {"residual"}, "residual_add");
      v = "residual";
    }
    q.add_quant_pair(v, q.out, "out", "y");
    expect += "+QuantizeLinear";
    SCOPED_TRACE(expect);
    check_qdq(q, shape, expect, seed++);
  }
}

namespace {

// A Conv named `name` from x to y over its own int8 weights (name_w), with `pads` on every side and
// `stride`.
void add_chain_conv(QdqModel& q, const std::string& name, const std::string& x, const std::string& y, int64_t M,
                    int64_t C, int64_t k, int64_t pad, int64_t stride, uint32_t seed) {
  q.add_conv_weights(M, C, k, 64, seed, name + "_w");
  auto& conv = q.m.node("Conv", {x, name + "_w"}, {y}, name);
  ephost_test::attr_ints(conv, "pads", {pad, pad, pad, pad});
  ephost_test::attr_ints(conv, "strides", {stride, stride});
}

// Every named output of the model fused and op by op on one random input: within `steps[name]`
// quantization steps of each other (the step in the output's own scale). With `trunks` false the int8
// conv chains stay groups of their own.
void check_outputs(QdqModel& q, const std::vector<int64_t>& x_shape, const std::map<std::string, float>& steps,
                   const std::string& expect_group, uint32_t seed, bool trunks = true) {
  const std::string bytes = q.m.bytes();
  Ephost::Session fused = fused_session(bytes, trunks);
  Ephost::Session plain = op_by_op_session(bytes);
  const std::multiset<std::string> groups = fused_groups(fused);
  std::string all;
  for (const auto& g : groups) all += "[" + g + "] ";
  EXPECT_EQ(groups.count(expect_group), 1u) << "fused groups: " << all;

  size_t n = 1;
  for (int64_t d : x_shape) n *= static_cast<size_t>(d);
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> d(-2.7f, 2.7f);
  std::vector<float> x(n);
  for (float& v : x) v = d(gen);
  std::vector<std::string> names;
  for (const auto& [name, step] : steps) names.push_back(name);
  const auto got = run_outputs(fused, x_shape, x, names), want = run_outputs(plain, x_shape, x, names);
  ASSERT_EQ(got.size(), names.size());
  for (size_t o = 0; o < names.size(); ++o) {
    ASSERT_EQ(got[o].size(), want[o].size()) << names[o];
    double worst = 0;
    for (size_t i = 0; i < got[o].size(); ++i)
      worst = std::max(worst, std::abs(static_cast<double>(got[o][i]) - want[o][i]) / steps.at(names[o]));
    EXPECT_LE(worst, 2.0 + 1e-3) << names[o];
    std::set<float> levels(want[o].begin(), want[o].end());
    EXPECT_GT(levels.size(), 20u) << names[o];
  }
}

const char* const kConvLink = "DequantizeLinear+DequantizeLinear+Conv";

}  // namespace

TEST(CpuQdqFusion, ConvChainKeepsTheBytesNhwcBetweenConvs) {
  // conv 3x3 (padded, Relu) → Q → DQ → conv 1x1 → Q → DQ → conv 3x3 (padded, strided, Relu) → Q:
  // one group, whose links hand each other NHWC bytes; the padding of the third link is laid around
  // the second link's NHWC output with its own zero point.
  QdqModel q;
  q.m.input("x", onnx::TensorProto::FLOAT, {2, 8, 9, 11}).output("y", onnx::TensorProto::FLOAT, {2, 16, 5, 6});
  q.add_quant_pair("x", q.in, "in", "a");
  add_chain_conv(q, "conv1", "a", "c1", 16, 8, 3, 1, 1, 301);
  q.m.node("Relu", {"c1"}, {"r1"}, "relu1");
  q.add_quant_pair("r1", {0.04f, 3, false}, "m1", "d1");
  add_chain_conv(q, "conv2", "d1", "c2", 12, 16, 1, 0, 1, 302);
  q.add_quant_pair("c2", {0.05f, 125, false}, "m2", "d2");
  add_chain_conv(q, "conv3", "d2", "c3", 16, 12, 3, 1, 2, 303);
  q.m.node("Relu", {"c3"}, {"r3"}, "relu3");
  q.out = {0.03f, 0, false};
  q.add_quant_pair("r3", q.out, "out", "y");
  const std::string link = kConvLink;
  check_qdq(q, {2, 8, 9, 11},
            link + "+Relu+QuantizeLinear+" + link + "+QuantizeLinear+" + link + "+Relu+QuantizeLinear", 31);
}

TEST(CpuQdqFusion, ConvChainEndsWhereAnIntermediateIsAGraphOutput) {
  // conv1's dequantized output is a graph output as well as conv2's input: it must reach the graph in
  // NCHW, so conv1 ends its group and conv2 starts another that hands the float tensor out.
  QdqModel q;
  q.m.input("x", onnx::TensorProto::FLOAT, {1, 8, 10, 10})
      .output("y", onnx::TensorProto::FLOAT, {1, 8, 10, 10})
      .output("d1", onnx::TensorProto::FLOAT, {1, 16, 10, 10});
  q.add_quant_pair("x", q.in, "in", "a");
  add_chain_conv(q, "conv1", "a", "c1", 16, 8, 3, 1, 1, 311);
  q.m.node("Relu", {"c1"}, {"r1"}, "relu1");
  const Quant mid{0.04f, 0, false};
  q.add_quant_pair("r1", mid, "m1", "d1");
  add_chain_conv(q, "conv2", "d1", "c2", 8, 16, 3, 1, 1, 312);
  q.out = {0.05f, 128, false};
  q.add_quant_pair("c2", q.out, "out", "y");
  const std::string link = kConvLink;
  check_outputs(q, {1, 8, 10, 10}, {{"y", q.out.scale}, {"d1", mid.scale}}, link + "+Relu+QuantizeLinear", 37,
                false);
  check_outputs(q, {1, 8, 10, 10}, {{"y", q.out.scale}, {"d1", mid.scale}}, link + "+QuantizeLinear", 41, false);
  // In one trunk: conv1's bytes stay NHWC for conv2, and d1 (conv2's DequantizeLinear, which the trunk
  // holds) is dequantized from them into NCHW at the boundary.
  check_outputs(q, {1, 8, 10, 10}, {{"y", q.out.scale}, {"d1", mid.scale}},
                link + "+Relu+QuantizeLinear+" + link + "+QuantizeLinear", 43);
  expect_trunk_matches_chains(q, {1, 8, 10, 10}, {"y", "d1"}, 2, 47);
}

TEST(CpuQdqFusion, ConvChainEndsWhereAnIntermediateFeedsAFloatOp) {
  // conv1's bytes go to conv2 and, through a second DequantizeLinear, to a float Sigmoid: the bytes
  // must stay in NCHW for it, so the chain ends at conv1.
  QdqModel q;
  q.m.input("x", onnx::TensorProto::FLOAT, {2, 8, 7, 9})
      .output("y", onnx::TensorProto::FLOAT, {2, 8, 7, 9})
      .output("z", onnx::TensorProto::FLOAT, {2, 16, 7, 9});
  q.add_quant_pair("x", q.in, "in", "a");
  add_chain_conv(q, "conv1", "a", "c1", 16, 8, 3, 1, 1, 321);
  const Quant mid{0.04f, 128, false};
  q.add_quant_pair("c1", mid, "m1", "d1");
  q.m.node("DequantizeLinear", {"m1_q", "m1_s", "m1_z"}, {"d1b"}, "m1_dequantize_again");
  q.m.node("Sigmoid", {"d1b"}, {"z"}, "sigmoid");
  add_chain_conv(q, "conv2", "d1", "c2", 8, 16, 1, 0, 1, 322);
  q.m.node("Relu", {"c2"}, {"r2"}, "relu2");
  q.out = {0.03f, 0, false};
  q.add_quant_pair("r2", q.out, "out", "y");
  const std::string link = kConvLink;
  // The sigmoid's slope is at most 1/4: a step of d1 moves z by at most a quarter of it.
  check_outputs(q, {2, 8, 7, 9}, {{"y", q.out.scale}, {"z", mid.scale}}, link + "+QuantizeLinear", 43, false);
  check_outputs(q, {2, 8, 7, 9}, {{"y", q.out.scale}, {"z", mid.scale}}, link + "+Relu+QuantizeLinear", 47, false);
  // In one trunk: conv1's bytes stay NHWC for conv2 and leave it in NCHW for the float Sigmoid.
  check_outputs(q, {2, 8, 7, 9}, {{"y", q.out.scale}, {"z", mid.scale}},
                link + "+QuantizeLinear+" + link + "+Relu+QuantizeLinear", 49);
  expect_trunk_matches_chains(q, {2, 8, 7, 9}, {"y", "z"}, 2, 53);
}

namespace {

// A bottleneck on DQ(x) = "a" (C_in channels): 1x1 (Relu) → 3x3 (padded, Relu) → 1x1 to C_out channels,
// each between quantize pairs, then Add(DQ(conv3), residual) → Relu → QuantizeLinear.
void add_bottleneck(QdqModel& q, int64_t C_in, int64_t C_out, const std::string& residual, uint32_t seed) {
  add_chain_conv(q, "conv1", "a", "c1", 8, C_in, 1, 0, 1, seed);
  q.m.node("Relu", {"c1"}, {"r1"}, "relu1");
  q.add_quant_pair("r1", {0.04f, 0, false}, "m1", "d1");
  add_chain_conv(q, "conv2", "d1", "c2", 8, 8, 3, 1, 1, seed + 1);
  q.m.node("Relu", {"c2"}, {"r2"}, "relu2");
  q.add_quant_pair("r2", {0.03f, 0, false}, "m2", "d2");
  add_chain_conv(q, "conv3", "d2", "c3", C_out, 8, 1, 0, 1, seed + 2);
  q.add_quant_pair("c3", {0.05f, 131, false}, "m3", "d3");
  q.m.node("Add", {"d3", residual}, {"s"}, "residual_add");
  q.m.node("Relu", {"s"}, {"rs"}, "relu_out");
  q.out = {0.04f, 0, false};
  q.add_quant_pair("rs", q.out, "out", "y");
}

const char* const kBottleneck =
    "DequantizeLinear+Conv+Relu+QuantizeLinear+DequantizeLinear+DequantizeLinear+Conv+Relu+QuantizeLinear+"
    "DequantizeLinear+DequantizeLinear+Conv+QuantizeLinear+DequantizeLinear+Add+Relu+QuantizeLinear";

}  // namespace

TEST(CpuQdqFusion, ConvChainEndsWithTheResidualAddOfItsOwnInput) {
  // An identity block: X's DequantizeLinear feeds conv1 and the Add, both in the one group, which
  // hands no float X out and adds X_q (NCHW) to conv3's NHWC bytes.
  QdqModel q;
  q.m.input("x", onnx::TensorProto::FLOAT, {2, 16, 9, 11}).output("y", onnx::TensorProto::FLOAT, {2, 16, 9, 11});
  q.add_quant_pair("x", q.in, "in", "a");
  add_bottleneck(q, 16, 16, "a", 331);
  check_qdq(q, {2, 16, 9, 11}, std::string("DequantizeLinear+") + kBottleneck, 53);
}

TEST(CpuQdqFusion, ConvChainResidualAddOverPartialChannelTilesAndLongPlanes) {
  // The residual Add transposes the last link's NHWC bytes in tiles of 16 channels of one image and
  // evaluates them in pieces of 2048 elements: 40 channels end in a partial tile, and a tile of 16
  // channels of 13x17 pixels (3536 elements) spans two pieces, over two images.
  QdqModel q;
  q.m.input("x", onnx::TensorProto::FLOAT, {2, 40, 13, 17}).output("y", onnx::TensorProto::FLOAT, {2, 40, 13, 17});
  q.add_quant_pair("x", q.in, "in", "a");
  add_bottleneck(q, 40, 40, "a", 337);
  check_qdq(q, {2, 40, 13, 17}, std::string("DequantizeLinear+") + kBottleneck, 57);
}

TEST(CpuQdqFusion, ConvChainEndsWithTheResidualAddOfAProjection) {
  // A projection block: X's DequantizeLinear feeds conv1 and a projection conv (which comes first and
  // takes it, handing the float X out), and the Add reads the projection's quantized output. The
  // chain reads float X, takes the projection's DequantizeLinear and adds its bytes; the projection's
  // group could not take the Add (its float X leaves the group).
  QdqModel q;
  q.m.input("x", onnx::TensorProto::FLOAT, {1, 8, 12, 10}).output("y", onnx::TensorProto::FLOAT, {1, 16, 12, 10});
  q.add_quant_pair("x", q.in, "in", "a");
  add_chain_conv(q, "projection", "a", "p", 16, 8, 1, 0, 1, 341);
  q.add_quant_pair("p", {0.06f, 120, false}, "mp", "dp");
  add_bottleneck(q, 8, 16, "dp", 345);
  check_qdq(q, {1, 8, 12, 10}, std::string("DequantizeLinear+") + kBottleneck, 59, true, 2.0, 1, false);
  // In one trunk with the projection: the Add reads the projection's NHWC bytes.
  expect_trunk_matches_chains(q, {1, 8, 12, 10}, {"y"}, 4, 61);
}

TEST(CpuQdqFusion, ConvChainEndsWithTheResidualAddOfAFloatTensor) {
  // The Add's other operand is a float tensor no DequantizeLinear makes (here the graph's input): the
  // group reads it as it is.
  QdqModel q;
  q.m.input("x", onnx::TensorProto::FLOAT, {2, 16, 7, 7}).output("y", onnx::TensorProto::FLOAT, {2, 16, 7, 7});
  q.add_quant_pair("x", q.in, "in", "a");
  add_bottleneck(q, 16, 16, "x", 351);
  check_qdq(q, {2, 16, 7, 7}, std::string("DequantizeLinear+") + kBottleneck, 61);
}

TEST(CpuQdqFusion, ConvChainEndsWithAMaxPoolOnItsNhwcBytes) {
  // A stem: conv 3x3 (Relu) → Q → DQ → MaxPool 3x3 stride 2 pad 1 → Q: the pool runs on the conv's NHWC
  // bytes in the same group. Once with the pool's output quantized as its input (no table), once
  // with other parameters (the byte table), and with signed bytes.
  for (const Quant& pooled : {Quant{0.04f, 0, false}, Quant{0.05f, 7, false}, Quant{0.05f, -3, true}}) {
    const Quant mid = pooled.is_signed ? Quant{0.04f, -10, true} : Quant{0.04f, 0, false};
    QdqModel q;
    q.m.input("x", onnx::TensorProto::FLOAT, {2, 4, 13, 11}).output("y", onnx::TensorProto::FLOAT, {2, 16, 7, 6});
    q.add_quant_pair("x", q.in, "in", "a");
    add_chain_conv(q, "stem", "a", "c", 16, 4, 3, 1, 1, 361);
    q.m.node("Relu", {"c"}, {"r"}, "relu");
    q.add_quant_pair("r", mid, "m", "d");
    auto& pool = q.m.node("MaxPool", {"d"}, {"p"}, "pool");
    ephost_test::attr_ints(pool, "kernel_shape", {3, 3});
    ephost_test::attr_ints(pool, "strides", {2, 2});
    ephost_test::attr_ints(pool, "pads", {1, 1, 1, 1});
    q.out = pooled;
    q.add_quant_pair("p", q.out, "out", "y");
    check_qdq(q, {2, 4, 13, 11},
              std::string(kConvLink) + "+Relu+QuantizeLinear+DequantizeLinear+MaxPool+QuantizeLinear", 67);
  }
}

namespace {

// A ResNet-like int8 trunk on 4-channel images: a stem (conv 3x3 Relu → MaxPool 3x3 stride 2), a
// projection block (1x1 projection to 24 channels beside a 1x1 → 3x3 → 1x1 bottleneck, their Add and
// Relu) and an identity block (bottleneck, Add of its own input, Relu), each between quantize pairs.
// Besides y, the graph hands out the pooled stem output dequantized ("pooled", the float output of
// the DequantizeLinear both block-1 convolutions read: read inside the trunk and outside) and block
// 1's output through a second DequantizeLinear ("mid": the bytes read inside and outside).
void add_trunk_block(QdqModel& q, const std::string& p, const std::string& x, int64_t C_in, int64_t C_out,
                     const std::string& residual, const std::string& y, uint32_t seed) {
  add_chain_conv(q, p + "conv1", x, p + "c1", 8, C_in, 1, 0, 1, seed);
  q.m.node("Relu", {p + "c1"}, {p + "r1"}, p + "relu1");
  q.add_quant_pair(p + "r1", {0.04f, 0, false}, p + "m1", p + "d1");
  add_chain_conv(q, p + "conv2", p + "d1", p + "c2", 8, 8, 3, 1, 1, seed + 1);
  q.m.node("Relu", {p + "c2"}, {p + "r2"}, p + "relu2");
  q.add_quant_pair(p + "r2", {0.03f, 0, false}, p + "m2", p + "d2");
  add_chain_conv(q, p + "conv3", p + "d2", p + "c3", C_out, 8, 1, 0, 1, seed + 2);
  q.add_quant_pair(p + "c3", {0.05f, 131, false}, p + "m3", p + "d3");
  q.m.node("Add", {p + "d3", residual}, {p + "s"}, p + "residual_add");
  q.m.node("Relu", {p + "s"}, {p + "rs"}, p + "relu_out");
  q.add_quant_pair(p + "rs", {0.04f, 0, false}, p + "out", y);
}

QdqModel resnet_like_trunk() {
  QdqModel q;
  q.m.input("x", onnx::TensorProto::FLOAT, {2, 4, 15, 13})
      .output("y", onnx::TensorProto::FLOAT, {2, 24, 8, 7})
      .output("pooled", onnx::TensorProto::FLOAT, {2, 16, 8, 7})
      .output("mid", onnx::TensorProto::FLOAT, {2, 24, 8, 7});
  q.add_quant_pair("x", q.in, "in", "a");
  add_chain_conv(q, "stem", "a", "sc", 16, 4, 3, 1, 1, 401);
  q.m.node("Relu", {"sc"}, {"sr"}, "stem_relu");
  q.add_quant_pair("sr", {0.04f, 0, false}, "sm", "sd");
  auto& pool = q.m.node("MaxPool", {"sd"}, {"sp"}, "stem_pool");
  ephost_test::attr_ints(pool, "kernel_shape", {3, 3});
  ephost_test::attr_ints(pool, "strides", {2, 2});
  ephost_test::attr_ints(pool, "pads", {1, 1, 1, 1});
  q.add_quant_pair("sp", {0.05f, 5, false}, "pq", "pooled");
  // The projection first: it takes the pooled DequantizeLinear, block 1's bottleneck reads its float.
  add_chain_conv(q, "projection", "pooled", "pc", 24, 16, 1, 0, 1, 411);
  q.add_quant_pair("pc", {0.06f, 120, false}, "pm", "pd");
  add_trunk_block(q, "b1_", "pooled", 16, 24, "pd", "b1", 421);
  q.m.node("DequantizeLinear", {"b1_out_q", "b1_out_s", "b1_out_z"}, {"mid"}, "b1_out_dequantize_again");
  add_trunk_block(q, "b2_", "b1", 24, 24, "b1", "y", 431);
  q.out = {0.04f, 0, false};
  return q;
}

}  // namespace

TEST(CpuQdqFusion, Int8TrunkKeepsValuesNhwcAndMatchesItsChainsBitForBit) {
  // The stem's chain, the projection and both blocks read each other's values: one trunk group, whose
  // values stay NHWC inside. Its outputs must equal those of the chains run as groups of their own
  // (int8_trunks=0: every value between them NCHW) bit for bit, at 1 and 2 threads, and be within 2
  // steps of the graph op by op; a value laid out wrongly inside the trunk (or handed out in NHWC)
  // changes them.
  QdqModel q = resnet_like_trunk();
  const std::string bytes = q.m.bytes();
  const std::vector<std::string> names{"y", "pooled", "mid"};
  const std::map<std::string, float> steps{{"y", 0.04f}, {"pooled", 0.05f}, {"mid", 0.04f}};
  const std::vector<int64_t> shape{2, 4, 15, 13};
  std::vector<float> x(2 * 4 * 15 * 13);
  std::mt19937 gen(71);
  std::uniform_real_distribution<float> d(-2.7f, 2.7f);
  for (float& v : x) v = d(gen);
  Ephost::Session plain = op_by_op_session(bytes);
  const auto want = run_outputs(plain, shape, x, names);
  for (int threads : {1, 2}) {
    Ephost::Session trunk = trunk_session(bytes, threads, true);
    Ephost::Session chains = trunk_session(bytes, threads, false);
    EXPECT_EQ(conv_groups(trunk), std::make_pair(size_t{1}, size_t{8})) << threads << " threads";
    EXPECT_EQ(conv_groups(chains), std::make_pair(size_t{4}, size_t{3})) << threads << " threads";
    const auto got = run_outputs(trunk, shape, x, names);
    const auto chained = run_outputs(chains, shape, x, names);
    ASSERT_EQ(got.size(), names.size());
    for (size_t o = 0; o < names.size(); ++o) {
      ASSERT_EQ(got[o].size(), chained[o].size()) << names[o];
      ASSERT_EQ(got[o].size(), want[o].size()) << names[o];
      size_t differing = 0;
      double worst = 0;
      for (size_t i = 0; i < got[o].size(); ++i) {
        differing += got[o][i] != chained[o][i];
        worst = std::max(worst, std::abs(static_cast<double>(got[o][i]) - want[o][i]) / steps.at(names[o]));
      }
      EXPECT_EQ(differing, 0u) << names[o] << " at " << threads << " threads: of " << got[o].size();
      EXPECT_LE(worst, 2.0 + 1e-3) << names[o] << " at " << threads << " threads";
      std::set<float> levels(want[o].begin(), want[o].end());
      EXPECT_GT(levels.size(), 20u) << names[o];
    }
  }
}
