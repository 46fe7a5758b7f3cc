// The CPU plugin's convolution math on PP-OCR-like shapes, per src/dst layout (plain NCHW, oneDNN's
// blocked layout with reorders, and the plugin's automatic choice) and thread count.
//
//   cpu_kernels_bench --benchmark_filter=Conv
// Arguments: /layout (0 plain, 1 blocked, 2 auto)/threads. The label names oneDNN's implementation.
#include <benchmark/benchmark.h>

#include <random>
#include <vector>

#include "math/broadcast.h"
#include "math/conv.h"
#include "math/isa.h"
#include "math/matmul.h"
#include "math/pool.h"
#include "math/resize.h"
#include "math/softmax.h"

namespace m = ephost::cpu::math;

namespace {

std::vector<float> random_vec(int64_t n) {
  std::mt19937 gen(42);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(gen);
  return v;
}

m::ConvParams conv_params(int64_t stride, int64_t pad, int64_t group) {
  m::ConvParams p;
  p.strides = {stride, stride};
  p.pads = {pad, pad, pad, pad};
  p.group = group;
  return p;
}

void run_conv(benchmark::State& state, bool transposed, const m::Shape& x_shape, const m::Shape& w_shape,
              const m::ConvParams& p) {
  const auto layout = static_cast<m::ConvLayout>(state.range(0));
  const int threads = static_cast<int>(state.range(1));
  const m::ConvGeometry g =
      transposed ? m::conv_transpose_geometry(p, x_shape, w_shape) : m::conv_geometry(p, x_shape, w_shape);
  const auto x = random_vec(m::numel(x_shape)), w = random_vec(m::numel(w_shape)), b = random_vec(g.out_channels);
  std::vector<float> y(m::numel(g.output_shape()));
  // Constant weights, as in a model: reordered once by the runner.
  m::ConvRunner runner(transposed, layout, w.data());
  state.SetLabel(runner.implementation(g, true, threads));
  runner.run(g, x.data(), w.data(), b.data(), y.data(), threads);  // build the primitive outside the loop
  for (auto _ : state) {
    runner.run(g, x.data(), w.data(), b.data(), y.data(), threads);
    benchmark::DoNotOptimize(y.data());
  }
  int64_t macs = m::numel(g.output_shape()) * (g.in_channels / g.group) * m::numel(g.kernel);
  if (transposed) macs = m::numel(x_shape) * (g.out_channels / g.group) * m::numel(g.kernel);
  state.counters["GMAC/s"] = benchmark::Counter(static_cast<double>(macs) * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

// Detection stem: 1x3x640x640 -> 16 channels, 3x3 stride 2.
void BM_ConvStem3x3s2(benchmark::State& state) { run_conv(state, false, {1, 3, 640, 640}, {16, 3, 3, 3}, conv_params(2, 1, 1)); }
// Depthwise 3x3 on 1x64x160x160.
void BM_ConvDepthwise3x3(benchmark::State& state) {
  run_conv(state, false, {1, 64, 160, 160}, {64, 1, 3, 3}, conv_params(1, 1, 64));
}
// Pointwise 1x1 on 1x96x80x80 -> 96.
void BM_ConvPointwise1x1(benchmark::State& state) {
  run_conv(state, false, {1, 96, 80, 80}, {96, 96, 1, 1}, conv_params(1, 0, 1));
}
// Dense 3x3 on 1x64x80x80 -> 64.
void BM_Conv3x3(benchmark::State& state) { run_conv(state, false, {1, 64, 80, 80}, {64, 64, 3, 3}, conv_params(1, 1, 1)); }
// DB head upsampling: ConvTranspose 2x2 stride 2, 1x24x160x160 -> 24 channels.
void BM_ConvTranspose2x2s2(benchmark::State& state) {
  m::ConvParams p;
  p.strides = {2, 2};
  run_conv(state, true, {1, 24, 160, 160}, {24, 24, 2, 2}, p);
}

void conv_args(benchmark::internal::Benchmark* b) {
  for (int threads : {1, 2})
    for (int layout : {0, 1, 2}) b->Args({layout, threads});
  b->Unit(benchmark::kMicrosecond)->UseRealTime();
}

// A small pointwise convolution of the text-direction classifier: per-call overhead dominates.
void BM_ConvSmall1x1(benchmark::State& state) {
  run_conv(state, false, {1, 16, 12, 48}, {64, 16, 1, 1}, conv_params(1, 0, 1));
}

BENCHMARK(BM_ConvStem3x3s2)->Apply(conv_args);
BENCHMARK(BM_ConvSmall1x1)->Apply(conv_args);
BENCHMARK(BM_ConvDepthwise3x3)->Apply(conv_args);
BENCHMARK(BM_ConvPointwise1x1)->Apply(conv_args);
BENCHMARK(BM_Conv3x3)->Apply(conv_args);
BENCHMARK(BM_ConvTranspose2x2s2)->Apply(conv_args);

// Classifier head: [1, 288] x [288, 2] style and a transformer-ish [1, 64, 96] x [96, 96].
void BM_MatMul(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  const m::Shape as{1, 256, 384}, bs{384, 384};
  const auto a = random_vec(m::numel(as)), b = random_vec(m::numel(bs));
  std::vector<float> y(256 * 384);
  m::MatMulRunner runner(b.data());
  for (auto _ : state) {
    runner.run(a.data(), as, b.data(), bs, y.data(), threads);
    benchmark::DoNotOptimize(y.data());
  }
}
BENCHMARK(BM_MatMul)->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond)->UseRealTime();

// Max pooling 3x3 stride 2 (classifier stem) on 1x16x24x96, without and with indices.
void BM_MaxPool3x3s2(benchmark::State& state) {
  m::PoolParams p;
  p.kernel_shape = {3, 3};
  p.strides = {2, 2};
  p.pads = {1, 1, 1, 1};
  const m::Shape in{1, 16, 24, 96};
  const m::PoolGeometry g = m::pool_geometry(p, in);
  const auto x = random_vec(m::numel(in));
  std::vector<float> y(m::numel(g.output_shape()));
  std::vector<int64_t> idx(y.size());
  for (auto _ : state) m::max_pool(x.data(), g, y.data(), state.range(0) ? idx.data() : nullptr, false, 1);
}
BENCHMARK(BM_MaxPool3x3s2)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond)->UseRealTime();

// FPN nearest upsampling x2 on 1x96x40x40 and bilinear on 1x1x160x160 -> 640.
void BM_ResizeNearest2x(benchmark::State& state) {
  const m::Shape in{1, 96, 40, 40}, out{1, 96, 80, 80};
  const auto x = random_vec(m::numel(in));
  std::vector<float> y(m::numel(out));
  m::ResizeParams p;
  p.coord = m::CoordMode::kAsymmetric;
  p.nearest = m::NearestMode::kFloor;
  for (auto _ : state) m::resize(x.data(), in, y.data(), out, {1, 1, 2, 2}, p, static_cast<int>(state.range(0)));
}
BENCHMARK(BM_ResizeNearest2x)->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond)->UseRealTime();

void BM_ResizeLinear4x(benchmark::State& state) {
  const m::Shape in{1, 1, 160, 160}, out{1, 1, 640, 640};
  const auto x = random_vec(m::numel(in));
  std::vector<float> y(m::numel(out));
  m::ResizeParams p;
  p.mode = m::ResizeMode::kLinear;
  for (auto _ : state) m::resize(x.data(), in, y.data(), out, {1, 1, 4, 4}, p, static_cast<int>(state.range(0)));
}
BENCHMARK(BM_ResizeLinear4x)->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond)->UseRealTime();

// Elementwise traffic of PP-OCR's decomposed HardSwish on a 1x16x320x320 map: x + 3 (scalar),
// x * y (same shape), and the per-channel SE scale x * s[1,C,1,1]. Output buffers are reused, so
// this measures the loops, not page faults.
void BM_AddScalar(benchmark::State& state) {
  const m::Shape s{1, 16, 320, 320};
  const auto x = random_vec(m::numel(s));
  std::vector<float> y(x.size());
  const float three = 3.f;
  for (auto _ : state)
    m::broadcast_binary(x.data(), s, &three, m::Shape{}, y.data(), s, static_cast<int>(state.range(0)),
                        [](float a, float b) { return a + b; });
  state.SetBytesProcessed(state.iterations() * 2 * x.size() * sizeof(float));
}
BENCHMARK(BM_AddScalar)->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond)->UseRealTime();

void BM_MulSameShape(benchmark::State& state) {
  const m::Shape s{1, 16, 320, 320};
  const auto x = random_vec(m::numel(s)), z = random_vec(m::numel(s));
  std::vector<float> y(x.size());
  for (auto _ : state)
    m::broadcast_binary(x.data(), s, z.data(), s, y.data(), s, static_cast<int>(state.range(0)),
                        [](float a, float b) { return a * b; });
  state.SetBytesProcessed(state.iterations() * 3 * x.size() * sizeof(float));
}
BENCHMARK(BM_MulSameShape)->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond)->UseRealTime();

void BM_MulPerChannel(benchmark::State& state) {
  const m::Shape s{1, 64, 160, 160}, cs{1, 64, 1, 1};
  const auto x = random_vec(m::numel(s)), c = random_vec(64);
  std::vector<float> y(x.size());
  for (auto _ : state)
    m::broadcast_binary(x.data(), s, c.data(), cs, y.data(), s, static_cast<int>(state.range(0)),
                        [](float a, float b) { return a * b; });
  state.SetBytesProcessed(state.iterations() * 2 * x.size() * sizeof(float));
}
BENCHMARK(BM_MulPerChannel)->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond)->UseRealTime();

// The recognizer's head: softmax over 6625 classes for 40 time steps.
void BM_Softmax40x6625(benchmark::State& state) {
  const auto x = random_vec(40 * 6625);
  std::vector<float> y(x.size());
  for (auto _ : state) m::softmax(x.data(), y.data(), 40, 6625, 1, false, static_cast<int>(state.range(0)));
}
BENCHMARK(BM_Softmax40x6625)->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond)->UseRealTime();

}  // namespace

// Google Benchmark's main, with the ISA tier of the plugin's own loops in the context block (EPHOST_CPU_ISA
// caps it: compare tiers on one machine by running the benchmark once per value).
int main(int argc, char** argv) {
  namespace m = ephost::cpu::math;
  benchmark::AddCustomContext("ephost_cpu_isa", m::isa_name(m::active_isa()));
  benchmark::AddCustomContext("ephost_cpu_isa_hardware", m::isa_name(m::hardware_isa()));
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
