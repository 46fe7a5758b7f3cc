// A minimal OpenMP range splitter. Guarded so that code compiled without -fopenmp (a test that only
// includes the header) still builds and simply runs serially.
#pragma once

#include <algorithm>
#include <cstdint>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace ephost::cpu::math {

// Calls f(begin, end) over disjoint chunks of [0, n) on up to `threads` threads, giving each thread
// at least `grain` items so that small tensors do not pay for waking a team. f must not throw.
template <typename F>
void parallel_for(int64_t n, int threads, int64_t grain, F&& f) {
  if (n <= 0) return;
  int64_t t = std::min<int64_t>(threads, n / std::max<int64_t>(grain, 1));
#ifdef _OPENMP
  if (t > 1) {
#pragma omp parallel num_threads(static_cast<int>(t))
    {
      int64_t id = omp_get_thread_num();
      int64_t nt = omp_get_num_threads();
      int64_t begin = n * id / nt, end = n * (id + 1) / nt;
      if (begin < end) f(begin, end);
    }
    return;
  }
#else
  (void)t;
#endif
  f(int64_t{0}, n);
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
// once per process, and only when the user set neither OMP_WAIT_POLICY nor GOMP_SPINCOUNT.
void limit_openmp_spinning();

// Threads worth waking for `flops` of work out of `threads` available: a second thread costs a wake-up
// and a barrier (tens of microseconds on a busy machine), so each one needs a few MFLOP of its own.
inline int threads_for_work(double flops, int threads) {
  const double per_thread = 2e6;
  const int want = static_cast<int>(flops / per_thread);
  return want < 1 ? 1 : (want < threads ? want : threads);
}

// Elements per thread below which elementwise loops stay single-threaded.
constexpr int64_t kElementwiseGrain = 1 << 15;

}  // namespace ephost::cpu::math
