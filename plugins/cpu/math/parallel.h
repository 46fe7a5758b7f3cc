// A minimal OpenMP range splitter. Guarded so that code compiled without -fopenmp (a test that only
// includes the header) still builds and simply runs serially.
#pragma once

#include <algorithm>
#include <cstdint>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace ephost::cpu::math {

// ---- stopping long work early (plugin ABI 4's run control) ------------------------------------------
// The plugin defines these (run_stop.cpp): the math code only polls them.

// The run control of the compute running on the calling thread (an opaque token, null when nothing can
// stop it: no compute, or a host older than plugin ABI 4). Worker threads get their caller's token.
const void* current_run_token();
// True once the run of `token` should stop (terminate set, deadline passed). Thread-safe, cheap.
bool run_should_stop(const void* token) noexcept;
// Throws the host's reason for stopping the run of `token` (an sdk::Error: EPHOST_CANCELLED or
// EPHOST_DEADLINE_EXCEEDED), for the calling thread's kernel to return.
[[noreturn]] void throw_run_stopped(const void* token);

// Pieces per thread's share of a parallel_for while a run may be stopped: the share is cut into this
// many pieces, each at least `grain` items, and the run is polled before each.
constexpr int64_t kStopPiecesPerThread = 64;

namespace detail {
// f over [begin, end), in pieces polled against `token`; false once the run should stop (pieces skipped).
template <typename F>
bool run_pieces(int64_t begin, int64_t end, int64_t grain, const void* token, F& f) {
  if (token == nullptr) {
    f(begin, end);
    return true;
  }
  const int64_t piece = std::max<int64_t>({grain, 1, (end - begin + kStopPiecesPerThread - 1) / kStopPiecesPerThread});
  for (int64_t p = begin; p < end; p += piece) {
    if (run_should_stop(token)) return false;
    f(p, std::min(end, p + piece));
  }
  return true;
}
}  // namespace detail

// Calls f(begin, end) over disjoint chunks of [0, n) on up to `threads` threads, giving each thread
// at least `grain` items so that small tensors do not pay for waking a team. f must not throw.
// Inside a compute whose run may be stopped, each thread's share goes in pieces (kStopPiecesPerThread)
// and the run is polled before each: once it should stop, the remaining pieces are skipped and, on
// the calling thread outside any parallel region, the run's stop is thrown, so the kernel ends within
// about a piece of work.
template <typename F>
void parallel_for(int64_t n, int threads, int64_t grain, F&& f) {
  if (n <= 0) return;
  const void* token = current_run_token();
  int64_t t = std::min<int64_t>(threads, n / std::max<int64_t>(grain, 1));
  bool finished = true;
#ifdef _OPENMP
  if (t > 1) {
    bool stopped = false;
#pragma omp parallel num_threads(static_cast<int>(t))
    {
      int64_t id = omp_get_thread_num();
      int64_t nt = omp_get_num_threads();
      int64_t begin = n * id / nt, end = n * (id + 1) / nt;
      if (begin < end && !detail::run_pieces(begin, end, grain, token, f)) {
#pragma omp atomic write
        stopped = true;
      }
    }
    finished = !stopped;
  } else {
    finished = detail::run_pieces(int64_t{0}, n, grain, token, f);
  }
  // Throwing inside a parallel region (a parallel_for nested in another's f) would end the process:
  // there the skipped pieces are left for the outer caller, which polls too.
  if (!finished && !omp_in_parallel()) throw_run_stopped(token);
#else
  (void)t;
  finished = detail::run_pieces(int64_t{0}, n, grain, token, f);
  if (!finished) throw_run_stopped(token);
#endif
}

// Sets the calling thread's OpenMP team size: oneDNN (OpenMP runtime) reads it when it creates and
// runs primitives. It is a per-thread setting, so concurrent kernels do not disturb each other.
inline void set_num_threads(int threads) {
#ifdef _OPENMP
  if (threads < 1) threads = 1;
  if (omp_get_max_threads() != threads) omp_set_num_threads(threads);
#else
  (void)threads;
#endif
}

// CPUs the process may run on (its affinity mask).
int available_cpus();

// The threads a kernel given `requested` should use now: fewer when other tasks hold CPUs. Teams
// whose members must all be on a CPU at once (oneDNN's static OpenMP partitions, a barrier per
// kernel) stall for a whole scheduler slice whenever one member is descheduled, so on a busy machine
// (a second worker, a build) two threads run many times slower than one. The machine's runnable
// task count (/proc/loadavg) is sampled at most once a millisecond; our own caller and the workers of
// a team that just ended are not counted. Only where the process sees the whole machine (its
// affinity covers every online CPU); `adaptive` false (provider option adaptive_threads=0) or
// EPHOST_CPU_ADAPTIVE_THREADS=0 turns it off.
int effective_threads(int requested, bool adaptive = true);
// Records that a kernel using `threads` threads just ended (its idle workers may still spin).
void note_team_end(int threads);
// Makes libgomp's idle threads sleep after a short spin instead of milliseconds (see parallel.cpp);
// once per process, and only when the user set neither OMP_WAIT_POLICY nor GOMP_SPINCOUNT. The CPU
// provider calls it for allow_spinning=0 (session.intra_op.allow_spinning).
void limit_openmp_spinning();

// FLOPs each thread of a team must have (threads_for_work).
double f32_flops_per_thread();

// Threads worth waking for `flops` of work out of `threads` available: a second thread costs a wake-up
// and a barrier (tens of microseconds on a busy machine when workers sleep), so each one needs a few
// MFLOP of its own; while workers spin (workers_spin) a team starts in microseconds, and 0.5 MFLOP do.
inline int threads_for_work(double flops, int threads) {
  const double per_thread = f32_flops_per_thread();
  const int want = static_cast<int>(flops / per_thread);
  return want < 1 ? 1 : (want < threads ? want : threads);
}

// Elements per thread below which elementwise loops stay single-threaded.
constexpr int64_t kElementwiseGrain = 1 << 15;

// Bytes (read plus written) a thread's share of a per-element pass must reach before a team is worth
// waking: a dequantization, quantization, table lookup or layout copy, a sum (a global pool), an
// activation, a softmax or normalization row. A team costs the wake-up of workers that sleep between
// regions (limit_openmp_spinning): ~7 us at best on a 2-core Xeon VM, tens of us on an EPYC VM (int8
// EfficientNet-B0's 19 standalone DequantizeLinear nodes, ~20 us each on one thread, took 2.4x as long
// with a team). The plugin's vectorised passes move 17-45 bytes per ns on one core (AVX-512; the
// transcendental ones, softmax and sigmoid, at the slow end), so 2 MiB is 45-120 us of one thread's
// work: a second thread then saves more than a slow wake-up costs. Swept with
// benchmarks/team_threshold_sweep.cpp (2t/1t stays above 1 below ~2 MiB in total even at the best of
// a loaded machine's samples); count a pass's float working row when it computes in float between
// narrower inputs and outputs (an int8 softmax moves 2 bytes per element but works like 8).
constexpr int64_t kPassGrainBytes = int64_t{1} << 21;

// The same while the team's idle workers spin between kernels (libgomp's default, and the plugin's
// unless allow_spinning=0): starting a team is then a few microseconds, not a wake-up. The sweep
// (benchmarks/team_threshold_sweep.cpp `spin`, 2-core Xeon VM) puts 2t/1t at 0.84 for 128 KiB in all
// and 0.71 for 256 KiB, for every pass from dequantization to softmax rows.
constexpr int64_t kSpinningPassGrainBytes = int64_t{1} << 16;

// Whether a team's idle workers spin between kernels (true unless limit_openmp_spinning ran or the
// user chose OMP_WAIT_POLICY=passive or a GOMP_SPINCOUNT), which decides what a team costs to start.
bool workers_spin();

// kSpinningPassGrainBytes or kPassGrainBytes, as workers_spin() says.
int64_t pass_grain_bytes();

// parallel_for's grain (items per thread) for a per-element pass whose items each read and write
// `bytes_per_item` bytes: a second thread only once each has kPassGrainBytes.
inline int64_t pass_grain(int64_t bytes_per_item) {
  return std::max<int64_t>(1, pass_grain_bytes() / std::max<int64_t>(bytes_per_item, 1));
}

// Source bytes per thread below which a pass that does almost nothing per byte (a layout copy or
// transpose of int8 data, a byte table lookup) stays on one thread: kPassGrainBytes of reads plus
// writes. At 2 threads int8 MobileNetV3-small forked 53 teams per run, 45 of them for such passes, and
// ran slower than at 1.
inline int64_t byte_grain() { return pass_grain_bytes() / 2; }

// Ops of an int8 product each thread of a team must have (threads_for_int8_work).
double int8_ops_per_thread();

// Threads worth waking for an int8 product of `ops` (2 x its multiply-accumulates). With VNNI a core
// does 4 u8*s8 products per 32-bit lane and instruction where f32 does one FMA (AMX many more), so
// threads_for_work's f32 threshold gave 2-thread teams to int8 convolutions of ~5 us per thread at
// the peak. 8 MOP per thread is ~17 us at the VNNI peak of a 3.6 GHz core, and small convolutions
// run well below the peak: the threshold while workers sleep. While they spin, 1 MOP (parallel.cpp).
inline int threads_for_int8_work(double ops, int threads) {
  const double per_thread = int8_ops_per_thread();
  const int want = static_cast<int>(ops / per_thread);
  return want < 1 ? 1 : (want < threads ? want : threads);
}

}  // namespace ephost::cpu::math
