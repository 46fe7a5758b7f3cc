#include "parallel.h"

#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <future>
#include <mutex>
#include <thread>

namespace ephost::cpu::math {

namespace {

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// What the process may run on, and whether that is the whole machine (then /proc/loadavg's count of
// runnable tasks describes exactly the CPUs we compete for).
struct Machine {
  int cpus = 1;
  bool whole = false;
  Machine() {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) == 0) cpus = std::max(1, CPU_COUNT(&set));
    const long online = sysconf(_SC_NPROCESSORS_ONLN);
    whole = online > 0 && online == cpus;
  }
};

const Machine& machine() {
  static const Machine m;
  return m;
}

// Tasks runnable right now on the machine, the reader included (the 4th field of /proc/loadavg,
// "running/total"), or -1.
int runnable_tasks() {
  static const int fd = ::open("/proc/loadavg", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  char buf[128];
  const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
  if (n <= 0) return -1;
  buf[n] = '\0';
  // "0.50 0.40 0.30 3/456 12345": the number before the slash.
  const char* p = buf;
  for (int field = 0; field < 3; ++field) {
    while (*p && *p != ' ') ++p;
    while (*p == ' ') ++p;
  }
  if (*p < '0' || *p > '9') return -1;
  return std::atoi(p);
}

std::atomic<int64_t> g_sampled_at{0};
std::atomic<int> g_others{0};           // runnable tasks not ours at the last sample
std::atomic<int64_t> g_team_end{0};     // when the last multi-threaded kernel of this process ended
std::atomic<int> g_team_threads{1};     // and how many threads it used
std::atomic<int> g_mode{-1};            // -1 unknown, 0 off, 1 on

// EPHOST_CPU_ADAPTIVE_THREADS=0 turns the load check off (benchmarks of the raw behaviour).
bool adaptive_enabled() {
  int m = g_mode.load(std::memory_order_relaxed);
  if (m < 0) {
    const char* e = std::getenv("EPHOST_CPU_ADAPTIVE_THREADS");
    m = (e != nullptr && e[0] == '0') ? 0 : 1;
    g_mode.store(m, std::memory_order_relaxed);
  }
  return m == 1;
}

// Sampling period of the machine's load.
constexpr int64_t kSamplePeriodNs = 1'000'000;

// How long after a team ends its idle workers may still be spinning, and so counted as runnable by
// the kernel: libgomp's default spins ~300000 iterations, measured at ~6 ms on a 2-core Xeon VM (a
// worker's CPU time in the 200 ms after one region); a limited spin (limit_openmp_spinning, or
// GOMP_SPINCOUNT/OMP_WAIT_POLICY=passive) ends within tens of microseconds; OMP_WAIT_POLICY=active
// never ends. Counting our own spinning workers as other tasks would make the next kernel see a busy
// machine and drop to one thread while its idle worker spins on: a 2-thread run no faster than 1.
std::atomic<int64_t> g_spin_window_ns{-1};

int64_t spin_window_ns() {
  int64_t w = g_spin_window_ns.load(std::memory_order_relaxed);
  if (w >= 0) return w;
  const char* policy = std::getenv("OMP_WAIT_POLICY");
  const char* spin = std::getenv("GOMP_SPINCOUNT");
  if (policy != nullptr && (policy[0] == 'a' || policy[0] == 'A'))
    w = INT64_MAX;
  else if ((policy != nullptr && (policy[0] == 'p' || policy[0] == 'P')) || spin != nullptr)
    w = 300'000;  // passive spins not at all; a user's GOMP_SPINCOUNT: assume short
  else
    w = 50'000'000;
  g_spin_window_ns.store(w, std::memory_order_relaxed);
  return w;
}

}  // namespace

int available_cpus() { return machine().cpus; }

bool workers_spin() { return spin_window_ns() > 300'000; }

int64_t pass_grain_bytes() { return workers_spin() ? kSpinningPassGrainBytes : kPassGrainBytes; }

// The per-thread work of a team while workers spin was chosen on the models, at 2 threads on a 2-core
// Xeon VM (AVX-512 VNNI; the best of 100-200 runs, 4 alternations): int8 EfficientNet-B0 7.2 ms with
// 8 MOP, 6.3-6.5 with 1 MOP, 6.3-6.5 with 0.4 MOP; int8 MobileNetV3-small 1.70-1.75, 1.57-1.64,
// 1.47-1.55; f32 MobileNetV3-small 1.23-1.25 with 2 MFLOP, 1.19-1.20 with 0.5 (EfficientNet f32 equal).
double int8_ops_per_thread() { return workers_spin() ? 1e6 : 8e6; }

double f32_flops_per_thread() { return workers_spin() ? 5e5 : 2e6; }

int effective_threads(int requested, bool adaptive) {
  if (requested <= 1) return 1;
  if (!adaptive || !adaptive_enabled() || !machine().whole) return requested;
  const int64_t now = now_ns();
  int64_t last = g_sampled_at.load(std::memory_order_relaxed);
  if (now - last >= kSamplePeriodNs && g_sampled_at.compare_exchange_strong(last, now, std::memory_order_relaxed)) {
    const int running = runnable_tasks();
    if (running > 0) {
      // Ours: the caller, and the workers of a team that ended a moment ago (they spin before sleeping).
      int ours = 1;
      if (now - g_team_end.load(std::memory_order_relaxed) < spin_window_ns())
        ours += g_team_threads.load(std::memory_order_relaxed) - 1;
      g_others.store(std::max(0, running - ours), std::memory_order_relaxed);
    }
  }
  const int free_cpus = machine().cpus - g_others.load(std::memory_order_relaxed);
  return std::max(1, std::min(requested, free_cpus));
}

void note_team_end(int threads) {
  if (threads <= 1) return;
  g_team_threads.store(threads, std::memory_order_relaxed);
  g_team_end.store(now_ns(), std::memory_order_relaxed);
}

void limit_openmp_spinning() {
#ifdef _OPENMP
  // libgomp lets idle team threads spin GOMP_SPINCOUNT (300000 by default, milliseconds) iterations
  // before they sleep, unless it manages more threads than the process has CPUs: then only 1000
  // (microseconds). A spinning thread takes a CPU from whatever else the machine runs (a second worker,
  // the compiler...). One parked team of available_cpus() threads makes libgomp count itself
  // oversubscribed, so every wait is short; the parked threads sleep (futex) and cost no CPU. Other
  // OpenMP runtimes simply ignore this. Only on request (allow_spinning=0): every kernel's team then
  // has to wake sleeping workers, which made int8 models at 2 threads slower than at 1 (BERT int8
  // 8.9 ms against 6.2; with libgomp's own spinning 5.4).
  static std::once_flag once;
  std::call_once(once, [] {
    const char* policy = std::getenv("OMP_WAIT_POLICY");
    const char* spin = std::getenv("GOMP_SPINCOUNT");
    if (policy != nullptr || spin != nullptr) return;  // the user chose
    g_spin_window_ns.store(300'000, std::memory_order_relaxed);
    const int n = std::max(2, available_cpus());
    // Returns once the team is parked, so that libgomp is set before the first kernel runs and no team
    // of this set-up is opened while a run is under way.
    std::promise<void> parked;
    std::future<void> done = parked.get_future();
    std::thread([n, parked = std::move(parked)]() mutable {
#pragma omp parallel num_threads(n)
      {
        (void)omp_get_thread_num();
      }
      parked.set_value();
      std::mutex mu;
      std::condition_variable cv;
      std::unique_lock<std::mutex> lock(mu);
      cv.wait(lock, [] { return false; });
    }).detach();
    done.wait();
  });
#endif
}

}  // namespace ephost::cpu::math
