// Where a second thread starts to pay off for the CPU plugin's cheap per-element passes: the sweep
// behind math::kStreamGrainBytes (math/parallel.h).
//
//   ephost_team_threshold_sweep [repeats] [spin|short]
//
// For each pass and size it times the pass on the calling thread alone and split over a 2-thread team,
// in the condition a model run meets it: the step before ran on one thread (here ~200 us of busy work
// on the calling thread before each timed pass), so the team's worker is still spinning (`spin`, the
// plugin's default: libgomp spins milliseconds) or asleep (`short`: libgomp's short spin, as the plugin
// sets it with limit_openmp_spinning for allow_spinning=0). Prints, per size, the bytes the pass reads and
// writes, the fastest and the median times at 1 and 2 threads, and 2t/1t of each: the threshold
// belongs where 2t/1t falls clearly below 1 (the wake-up of a sleeping worker, tens of microseconds in
// a VM, is the cost it must beat). On a machine other jobs load, read the fastest times (the moments
// both threads had a CPU) and take the medians as the pessimist's view.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "math/parallel.h"
#include "math/quantize.h"
#include "math/vec.h"

namespace m = ephost::cpu::math;

namespace {

double now_us() {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Single-threaded work between passes (an int8 convolution on one thread, in a model run).
volatile double g_sink = 0;
void busy_single_thread(double us) {
  const double end = now_us() + us;
  double acc = 0;
  while (now_us() < end)
    for (int i = 0; i < 200; ++i) acc += std::sqrt(static_cast<double>(i) + acc);
  g_sink = acc;
}

struct Pass {
  std::string name;
  int64_t bytes_per_item;     // read + written per item of the parallel_for
  int64_t elements_per_item;  // elements of the source arrays one item reads
  // Runs items [i0, i1) of a pass over n items.
  std::function<void(int64_t, int64_t)> run;
};

struct Times {
  double min = 0, median = 0;
};

Times time_pass(const Pass& p, int64_t items, int threads, int repeats) {
  std::vector<double> t;
  for (int r = 0; r < repeats; ++r) {
    busy_single_thread(200);
    const double t0 = now_us();
    m::parallel_for(items, threads, 1, p.run);
    t.push_back(now_us() - t0);
  }
  std::sort(t.begin(), t.end());
  return {t.front(), t[t.size() / 2]};
}

}  // namespace

int main(int argc, char** argv) {
  const int repeats = argc > 1 ? std::max(3, std::atoi(argv[1])) : 41;
  const bool short_spin = argc > 2 && std::string(argv[2]) == "short";
  if (short_spin) m::limit_openmp_spinning();
  std::printf("workers between passes: %s\n", short_spin ? "asleep (short spin)" : "spinning (libgomp's default)");
  const int64_t max_elems = int64_t{1} << 22;
  std::vector<uint8_t> q(static_cast<size_t>(max_elems), 7);
  std::vector<float> f(static_cast<size_t>(max_elems), 0.25f), g(static_cast<size_t>(max_elems));
  for (int64_t i = 0; i < max_elems; ++i) {
    q[static_cast<size_t>(i)] = static_cast<uint8_t>(i * 29 % 251);
    f[static_cast<size_t>(i)] = static_cast<float>(i % 97) * 0.03f - 1.4f;
  }
  const int64_t plane = 196;  // a 14x14 plane of a global average pool
  const int64_t row = 128;    // an attention row of the BERT-style encoder (d = 2 x row)
  const std::vector<float> gamma(static_cast<size_t>(2 * row), 1.1f), beta(static_cast<size_t>(2 * row), 0.1f);
  std::vector<Pass> passes = {
      {"DequantizeLinear u8->f32", 5, 1,
       [&](int64_t a, int64_t b) { m::dequantize_linear(q.data() + a, 0.02f, uint8_t{128}, g.data() + a, b - a); }},
      {"QuantizeLinear f32->u8", 5, 1,
       [&](int64_t a, int64_t b) { m::quantize_linear(f.data() + a, 0.02f, uint8_t{128}, q.data() + a, b - a); }},
      {"Sigmoid f32", 8, 1, [&](int64_t a, int64_t b) { m::sigmoid_f32(f.data() + a, g.data() + a, b - a); }},
      {"HardSwish f32", 8, 1, [&](int64_t a, int64_t b) { m::hard_swish_f32(f.data() + a, g.data() + a, b - a); }},
      {"GlobalAveragePool f32 (196-element planes)", 4 * plane + 4, plane,
       [&](int64_t a, int64_t b) {
         for (int64_t p = a; p < b; ++p)
           g[static_cast<size_t>(p)] = static_cast<float>(m::sum_f32(f.data() + p * plane, plane) / plane);
       }},
      {"Softmax f32 (128-element rows)", 8 * row, row,
       [&](int64_t a, int64_t b) {
         for (int64_t r = a; r < b; ++r) m::softmax_row_f32(f.data() + r * row, 1.f, nullptr, g.data() + r * row, row);
       }},
      {"LayerNorm f32 (256-element rows)", 8 * 2 * row, 2 * row,
       [&](int64_t a, int64_t b) {
         for (int64_t r = a; r < b; ++r)
           m::layer_norm_f32(f.data() + r * 2 * row, g.data() + r * 2 * row, 2 * row, gamma.data(), beta.data(), 1e-5f);
       }},
  };
  std::printf("pass | bytes | items | 1t us min | 2t us min | 2t/1t min | 1t us median | 2t us median | 2t/1t median\n");
  for (const Pass& p : passes) {
    for (int64_t bytes = int64_t{1} << 14; ; bytes *= 2) {
      const int64_t items = std::max<int64_t>(2, bytes / p.bytes_per_item);
      if (items * p.elements_per_item > max_elems) break;
      const Times t1 = time_pass(p, items, 1, repeats), t2 = time_pass(p, items, 2, repeats);
      std::printf("%s | %lld | %lld | %.1f | %.1f | %.2f | %.1f | %.1f | %.2f\n", p.name.c_str(),
                  static_cast<long long>(items * p.bytes_per_item), static_cast<long long>(items), t1.min, t2.min,
                  t2.min / t1.min, t1.median, t2.median, t2.median / t1.median);
    }
  }
  return 0;
}
