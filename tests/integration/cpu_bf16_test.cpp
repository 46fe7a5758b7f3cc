// The CPU plugin's opt-in precision=bf16 (plugins/cpu/cpu_provider.cpp): products against constant
// weights (fused MatMul/Gemm) and attention's products take bfloat16 operands and accumulate in f32.
// Where the CPU has AVX512_BF16 or AMX-BF16 (and no EPHOST_CPU_ISA cap below avx512), outputs must
// stay within bf16's rounding of the f32 run and differ from it somewhere (so the bf16 path did run);
// elsewhere, and under cpu_plugin_tests_avx2 / _scalar (tests/CMakeLists.txt), the option must be
// refused with a message that says what is missing.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "ephost/ephost_cxx_api.h"
#include "test_support.h"

using ephost_test::ModelBuilder;

namespace {

Ephost::Env& cpu_env() {
  static Ephost::Env env(EPHOST_LOG_ERROR, std::vector<std::string>{});
  return env;
}

// What the plugin should decide, found independently of it: bf16 products on the processor, the
// avx512 tier, and no EPHOST_CPU_ISA cap below it.
bool expect_bf16() {
#if defined(__x86_64__) && defined(__GNUC__)
  __builtin_cpu_init();
  const bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
                      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw") &&
                      __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  const bool bf16 = __builtin_cpu_supports("avx512bf16") || __builtin_cpu_supports("amx-bf16");
  const char* cap = std::getenv("EPHOST_CPU_ISA");
  const bool capped = cap != nullptr && (std::strcmp(cap, "scalar") == 0 || std::strcmp(cap, "avx2") == 0);
  return avx512 && bf16 && !capped;
#else
  return false;
#endif
}

constexpr int64_t kBatch = 2, kRows = 7, kK = 96, kN = 48;

struct Model {
  std::string bytes;
  std::vector<float> w, b;
};

// y = x[2, 7, 96] x W[96, 48] + b: one fused matmul group.
Model matmul_bias_model() {
  Model m;
  std::mt19937 gen(11);
  std::uniform_real_distribution<float> d(-1.f, 1.f);
  m.w.resize(kK * kN);
  m.b.resize(kN);
  for (float& v : m.w) v = d(gen);
  for (float& v : m.b) v = d(gen);
  ModelBuilder mb;
  mb.input("x", onnx::TensorProto::FLOAT, {kBatch, kRows, kK}).output("y", onnx::TensorProto::FLOAT, {kBatch, kRows, kN});
  mb.initializer("w", {kK, kN}, m.w).initializer("b", {kN}, m.b);
  mb.node("MatMul", {"x", "w"}, {"p"}, "mm");
  mb.node("Add", {"p", "b"}, {"y"}, "bias");
  m.bytes = mb.bytes();
  return m;
}

std::vector<float> run(const std::string& bytes, const std::vector<std::pair<std::string, std::string>>& options,
                       std::vector<float>& x) {
  Ephost::SessionOptions o;
  o.set_threads(1);
  o.append_provider("cpu", options);
  Ephost::Session s(cpu_env(), bytes.data(), bytes.size(), o);
  std::vector<Ephost::Tensor> in;
  in.push_back(Ephost::Tensor::wrap(EPHOST_ELEMENT_FLOAT, {kBatch, kRows, kK}, x.data(), x.size()));
  std::vector<Ephost::Tensor> out = s.run({"x"}, in, {"y"});
  const float* p = static_cast<const float*>(Ephost::api().TensorGetData(out[0].get()));
  return std::vector<float>(p, p + Ephost::api().TensorGetElementCount(out[0].get()));
}

std::vector<float> random_input(unsigned seed) {
  std::vector<float> x(kBatch * kRows * kK);
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> d(-2.f, 2.f);
  for (float& v : x) v = d(gen);
  return x;
}

}  // namespace

TEST(CpuBf16, MatMulWithinBf16RoundingOfF32) {
  const Model m = matmul_bias_model();
  std::vector<float> x = random_input(3);
  const std::vector<float> f32 = run(m.bytes, {{"precision", "f32"}}, x);
  if (!expect_bf16()) {
    try {
      run(m.bytes, {{"precision", "bf16"}}, x);
      FAIL() << "precision=bf16 was accepted on a CPU (or tier) without bf16 products";
    } catch (const Ephost::Exception& e) {
      EXPECT_NE(e.message().find("precision=bf16 needs a CPU with AVX512_BF16 or AMX-BF16"), std::string::npos)
          << e.message();
    }
    GTEST_SKIP() << "no bf16 products here (CPU or EPHOST_CPU_ISA cap): the refusal was checked";
  }
  const std::vector<float> bf16 = run(m.bytes, {{"precision", "bf16"}}, x);
  ASSERT_EQ(bf16.size(), f32.size());
  // Each operand rounds to bf16 (8 significant bits: relative error at most 2^-8), so a product term
  // errs by at most about 2^-7 of its magnitude; the sums stay f32.
  size_t differ = 0;
  for (int64_t r = 0; r < kBatch * kRows; ++r)
    for (int64_t n = 0; n < kN; ++n) {
      double magnitude = 0;
      for (int64_t k = 0; k < kK; ++k) magnitude += std::abs(static_cast<double>(x[r * kK + k]) * m.w[k * kN + n]);
      const size_t i = static_cast<size_t>(r * kN + n);
      EXPECT_LE(std::abs(static_cast<double>(bf16[i]) - f32[i]), std::ldexp(magnitude, -7) * 1.01 + 1e-5)
          << "row " << r << " column " << n;
      differ += bf16[i] != f32[i];
    }
  EXPECT_GT(differ, bf16.size() / 4) << "bf16 and f32 agree almost bit for bit: the bf16 product did not run";
}

TEST(CpuBf16, PrecisionValuesAreChecked) {
  const Model m = matmul_bias_model();
  std::vector<float> x = random_input(4);
  // f32 is the default, spelled out or not.
  EXPECT_EQ(run(m.bytes, {{"precision", "f32"}}, x), run(m.bytes, {}, x));
  try {
    run(m.bytes, {{"precision", "fp16"}}, x);
    FAIL() << "precision=fp16 was accepted";
  } catch (const Ephost::Exception& e) {
    EXPECT_NE(e.message().find("precision must be f32 or bf16"), std::string::npos) << e.message();
  }
}
