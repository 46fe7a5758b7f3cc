#include "core/plugin_fault.h"

#include <fmt/format.h>
#include <fcntl.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/log.h"

namespace ephost {
namespace {

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// The plugin call in progress on one thread. Written by that thread only; the fault reporter reads it
// on the same thread, the watchdog from its own (atomics, and `reading` keeps a call's strings alive
// while the watchdog copies them: a scope's end waits for it).
struct CallSlot {
  std::atomic<const char*> plugin{nullptr};
  std::atomic<const char*> library{nullptr};
  std::atomic<const char*> call{nullptr};
  std::atomic<int64_t> start_ns{0};
  std::atomic<uint64_t> sequence{0};  // changes whenever a scope begins or ends
  std::atomic<bool> reading{false};
  // The call the watchdog journaled as hung (written by the watchdog, read by the scope's end, which
  // journals that it returned after all).
  std::atomic<uint64_t> warned_sequence{~uint64_t(0)};
};

// Every thread's slot, for the watchdog. Leaked: threads may end during static destruction.
std::mutex& slots_mutex() {
  static auto* m = new std::mutex;
  return *m;
}
std::vector<CallSlot*>& all_slots() {
  static auto* v = new std::vector<CallSlot*>;
  return *v;
}

// Plain pointer: read by the signal handler, which must not run a thread_local's lazy constructor.
__attribute__((tls_model("initial-exec"))) thread_local CallSlot* t_slot = nullptr;

// Owns the calling thread's slot and removes it when the thread ends.
struct SlotOwner {
  CallSlot* slot = nullptr;
  ~SlotOwner() {
    if (!slot) return;
    {
      std::lock_guard<std::mutex> lock(slots_mutex());
      auto& v = all_slots();
      v.erase(std::remove(v.begin(), v.end(), slot), v.end());
    }
    t_slot = nullptr;
    delete slot;
  }
};

CallSlot* this_thread_slot() {
  if (t_slot) return t_slot;
  thread_local SlotOwner owner;
  owner.slot = new CallSlot;
  {
    std::lock_guard<std::mutex> lock(slots_mutex());
    all_slots().push_back(owner.slot);
  }
  t_slot = owner.slot;
  return t_slot;
}

// ---- the fault reporter ----

constexpr int kFatalSignals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};
struct sigaction g_previous[NSIG];

void write_text(const char* s) {
  if (!s) return;
  size_t n = std::strlen(s);
  while (n > 0) {
    ssize_t w = ::write(STDERR_FILENO, s, n);
    if (w <= 0) return;
    s += w;
    n -= static_cast<size_t>(w);
  }
}

// Hands the signal to the handler that was installed before ours, or to the default action.
void chain(int sig, siginfo_t* info, void* context) {
  const struct sigaction& old = g_previous[sig];
  if ((old.sa_flags & SA_SIGINFO) && old.sa_sigaction) {
    old.sa_sigaction(sig, info, context);
    return;
  }
  if (!(old.sa_flags & SA_SIGINFO) && old.sa_handler != SIG_DFL && old.sa_handler != SIG_IGN && old.sa_handler) {
    old.sa_handler(sig);
    return;
  }
  // Default action: restore it and let the signal happen again (a fault re-executes the faulting
  // instruction; a raised signal is delivered when this handler returns).
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  sigaction(sig, &dfl, nullptr);
  if (info == nullptr || info->si_code <= 0) raise(sig);
}

// ---- the fault journal ----

std::atomic<int> g_journal_fd{-1};

// A line built in a fixed buffer without allocating (the signal handler's constraint), written with one
// write(2) so that lines of several processes never interleave (O_APPEND).
class JournalLine {
 public:
  JournalLine& text(const char* s) {
    for (; s && *s && used_ < sizeof(buffer_) - 1; ++s) buffer_[used_++] = (*s == '\t' || *s == '\n') ? ' ' : *s;
    return *this;
  }
  JournalLine& tab() { return raw('\t'); }
  JournalLine& number(int64_t value) {
    char digits[24];
    size_t n = 0;
    uint64_t v = value < 0 ? 0 : static_cast<uint64_t>(value);
    do {
      digits[n++] = static_cast<char>('0' + v % 10);
      v /= 10;
    } while (v && n < sizeof(digits));
    while (n > 0) raw(digits[--n]);
    return *this;
  }
  void write_to(int fd) {
    buffer_[used_ < sizeof(buffer_) ? used_ : sizeof(buffer_) - 1] = '\n';
    ssize_t ignored = ::write(fd, buffer_, used_ + 1);
    (void)ignored;
  }

 private:
  JournalLine& raw(char c) {
    if (used_ < sizeof(buffer_) - 1) buffer_[used_++] = c;
    return *this;
  }
  char buffer_[1024];
  size_t used_ = 0;
};

int64_t unix_seconds() {
  struct timespec now {};
  clock_gettime(CLOCK_REALTIME, &now);  // async-signal-safe
  return now.tv_sec;
}

void journal_fault(const char* kind, const char* detail, int64_t detail_ms, const char* library, const char* call,
                   const char* plugin) {
  const int fd = g_journal_fd.load(std::memory_order_relaxed);
  if (fd < 0) return;
  JournalLine line;
  line.text(kind).tab().number(unix_seconds()).tab();
  if (detail)
    line.text(detail);
  else
    line.number(detail_ms).text(" ms");
  line.tab().text(library).tab().text(call).tab().text(plugin).write_to(fd);
}

void on_fatal_signal(int sig, siginfo_t* info, void* context) {
  const int saved_errno = errno;
  CallSlot* slot = t_slot;
  const char* plugin = slot ? slot->plugin.load(std::memory_order_relaxed) : nullptr;
  if (plugin) {
    write_text("[ephost] [critical] fatal signal ");
    write_text(signal_description(sig));
    write_text(" inside plugin '");
    write_text(plugin);
    write_text("' (");
    write_text(slot->library.load(std::memory_order_relaxed));
    write_text(") during ");
    write_text(slot->call.load(std::memory_order_relaxed));
    write_text(": a crash in a plugin's own code ends the process while providers run in it\n");
    journal_fault("crashed", signal_description(sig), 0, slot->library.load(std::memory_order_relaxed),
                  slot->call.load(std::memory_order_relaxed), plugin);
  }
  errno = saved_errno;
  chain(sig, info, context);
}

// ---- the hang watchdog ----

std::atomic<int64_t> g_hang_threshold_ns{0};

void warn_about_slow_calls(int64_t threshold_ns) {
  std::lock_guard<std::mutex> lock(slots_mutex());
  const int64_t now = now_ns();
  for (CallSlot* slot : all_slots()) {
    const uint64_t seq = slot->sequence.load();
    if (seq == slot->warned_sequence || slot->plugin.load() == nullptr) continue;
    const int64_t elapsed = now - slot->start_ns.load();
    if (elapsed < threshold_ns) continue;
    std::string plugin, library, call;
    slot->reading.store(true);
    const bool same_call = slot->sequence.load() == seq;
    if (same_call) {
      plugin = slot->plugin.load();
      library = slot->library.load();
      call = slot->call.load();
    }
    slot->reading.store(false);
    if (!same_call) continue;
    slot->warned_sequence = seq;
    // Remembered as a hang: in isolation mode auto, the next process runs this plugin isolated.
    journal_fault("hung", nullptr, elapsed / 1'000'000, library.c_str(), call.c_str(), plugin.c_str());
    log_warning(fmt::format("plugin '{}' ({}) has not returned from {} for {:.1f} s; a plugin that hangs cannot be "
                            "interrupted while providers run in the host process",
                            plugin, library, call, static_cast<double>(elapsed) / 1e9));
  }
}

void watchdog_loop() {
  for (;;) {
    const int64_t threshold = g_hang_threshold_ns.load();
    const int64_t tick = std::clamp<int64_t>(threshold / 4, 10'000'000, 1'000'000'000);
    std::this_thread::sleep_for(std::chrono::nanoseconds(tick));
    warn_about_slow_calls(threshold);
  }
}

}  // namespace

PluginCallScope::PluginCallScope(const char* plugin, const char* library, const char* call) noexcept {
  CallSlot* slot = nullptr;
  try {
    slot = this_thread_slot();
  } catch (...) {
  }
  if (!slot) {  // out of memory for the slot: nothing is reported for this call
    saved_plugin_ = saved_library_ = saved_call_ = nullptr;
    saved_start_ns_ = -1;
    return;
  }
  saved_plugin_ = slot->plugin.load(std::memory_order_relaxed);
  saved_library_ = slot->library.load(std::memory_order_relaxed);
  saved_call_ = slot->call.load(std::memory_order_relaxed);
  saved_start_ns_ = slot->start_ns.load(std::memory_order_relaxed);
  slot->library.store(library ? library : "", std::memory_order_relaxed);
  slot->call.store(call ? call : "a plugin call", std::memory_order_relaxed);
  slot->start_ns.store(now_ns(), std::memory_order_relaxed);
  slot->plugin.store(plugin && *plugin ? plugin : "<unnamed>", std::memory_order_relaxed);
  slot->sequence.fetch_add(1);
}

PluginCallScope::~PluginCallScope() {
  CallSlot* slot = t_slot;
  if (!slot || saved_start_ns_ < 0) return;
  // A call journaled as hung that returns was only slow (a long compile on a loaded machine): the
  // journal says so, and isolation mode auto forgets the hang (isolation/fault_memory.h).
  if (slot->warned_sequence.load(std::memory_order_relaxed) == slot->sequence.load())
    journal_fault("returned", nullptr, (now_ns() - slot->start_ns.load(std::memory_order_relaxed)) / 1'000'000,
                  slot->library.load(std::memory_order_relaxed), slot->call.load(std::memory_order_relaxed),
                  slot->plugin.load(std::memory_order_relaxed));
  slot->sequence.fetch_add(1);
  while (slot->reading.load()) std::this_thread::yield();
  slot->plugin.store(saved_plugin_, std::memory_order_relaxed);
  slot->library.store(saved_library_, std::memory_order_relaxed);
  slot->call.store(saved_call_, std::memory_order_relaxed);
  slot->start_ns.store(saved_start_ns_, std::memory_order_relaxed);
}

const char* plugin_in_call() {
  CallSlot* slot = t_slot;
  return slot ? slot->plugin.load(std::memory_order_relaxed) : nullptr;
}

void install_plugin_fault_reporter() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (int sig : kFatalSignals) {
      struct sigaction action {};
      action.sa_sigaction = &on_fatal_signal;
      action.sa_flags = SA_SIGINFO | SA_ONSTACK;
      sigemptyset(&action.sa_mask);
      sigaction(sig, &action, &g_previous[sig]);
    }
  });
}

void start_plugin_hang_watchdog(std::chrono::milliseconds threshold) {
  if (threshold.count() <= 0) return;
  const int64_t ns = std::chrono::duration_cast<std::chrono::nanoseconds>(threshold).count();
  int64_t current = g_hang_threshold_ns.load();
  while ((current == 0 || ns < current) && !g_hang_threshold_ns.compare_exchange_weak(current, ns)) {
  }
  static std::once_flag once;
  std::call_once(once, [] { std::thread(watchdog_loop).detach(); });
}

void set_plugin_fault_journal(const std::string& path) {
  int fd = -1;
  if (!path.empty()) {
    std::error_code ignored;
    std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ignored);
    fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
      log_info(fmt::format("the plugin fault journal {} cannot be opened ({}): crashes of plugins in this process "
                              "will not make isolation mode auto isolate them next time",
                              path, std::strerror(errno)));
  }
  const int old = g_journal_fd.exchange(fd);
  if (old >= 0) ::close(old);
}

std::string plugin_fault_journal_path(const std::string& registry_file) {
  return registry_file.empty() ? std::string() : registry_file + ".faults";
}

const char* signal_description(int signal) {
  switch (signal) {
    case SIGSEGV: return "SIGSEGV (segmentation fault)";
    case SIGBUS: return "SIGBUS (bus error)";
    case SIGILL: return "SIGILL (illegal instruction)";
    case SIGFPE: return "SIGFPE (arithmetic exception)";
    case SIGABRT: return "SIGABRT (aborted)";
    case SIGKILL: return "SIGKILL";
    case SIGTERM: return "SIGTERM (terminated)";
    case SIGINT: return "SIGINT (interrupted)";
    case SIGQUIT: return "SIGQUIT (quit)";
    case SIGTRAP: return "SIGTRAP (trace trap)";
    case SIGSYS: return "SIGSYS (bad system call)";
    case SIGPIPE: return "SIGPIPE (broken pipe)";
    case SIGALRM: return "SIGALRM (alarm clock)";
    case SIGXCPU: return "SIGXCPU (CPU time limit exceeded)";
    case SIGXFSZ: return "SIGXFSZ (file size limit exceeded)";
    case SIGUSR1: return "SIGUSR1";
    case SIGUSR2: return "SIGUSR2";
    case SIGHUP: return "SIGHUP (hangup)";
    default: return "an unnamed signal";
  }
}

}  // namespace ephost
