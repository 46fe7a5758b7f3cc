// Session profiling (session.enable_profiling=1, as ONNX Runtime's enable_profiling): spans of time
// with a category, a name, the thread and a few named arguments, written as a Chrome trace
// (chrome://tracing, Perfetto's JSON format: {"traceEvents": [{"ph": "X", ...}]}). Spans of one thread
// nest: a node's span lies inside its run's span, and the operator spans a plugin reports from inside
// a step (plugin ABI 4, category "op") lie inside that step's span. Thread-safe: concurrent runs
// record side by side.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace ephost {

class Profiler {
 public:
  using Clock = std::chrono::steady_clock;
  using Args = std::vector<std::pair<std::string, std::string>>;

  // Traces go to "<file_prefix>_<date>_<time>.json" (ONNX Runtime's naming).
  explicit Profiler(std::string file_prefix);
  // A profile that counts from `origin` instead of now: a provider host process's, which collects what an
  // isolated provider's plugin reports inside the host's profile (the steady clock is one in every process
  // of the machine, so times agree with the host's).
  Profiler(std::string file_prefix, Clock::time_point origin);

  // A span from construction to destruction (or end()).
  class Span {
   public:
    Span() = default;
    Span(Profiler* profiler, const char* category, std::string name, Args args = {});
    Span(Span&& other) noexcept;
    Span& operator=(Span&&) = delete;
    ~Span() { end(); }
    void add_arg(std::string key, std::string value);
    void end();
    // Null once ended (or for a span of no profiler).
    Profiler* profiler() const { return profiler_; }
    Clock::time_point start() const { return start_; }
    // The trace's number of the thread that opened the span: spans nested in it from other threads
    // are filed under it, so that they nest in the trace.
    uint32_t thread() const { return thread_; }

   private:
    Profiler* profiler_ = nullptr;
    const char* category_ = "";
    std::string name_;
    Args args_;
    Clock::time_point start_;
    uint32_t thread_ = 0;
  };

  // Records a span under the calling thread, or under `thread` (a number Span::thread gave) when not 0.
  void record(const char* category, std::string name, Clock::time_point start, Clock::time_point end, Args args,
              uint32_t thread = 0);
  size_t event_count() const;
  // An event as recorded: its category, name, start and duration (microseconds since origin()) and arguments.
  struct Recorded {
    std::string category;
    std::string name;
    int64_t start_us = 0;
    int64_t duration_us = 0;
    Args args;
  };
  // The events recorded so far, taken out of the profile (they will not be written): what a provider host
  // sends back to the host.
  std::vector<Recorded> take_recorded();
  // When the profile began: event times are counted from here (what a plugin keeping a profile of its own
  // counts its timestamps from).
  Clock::time_point origin() const { return origin_; }
  // Writes the trace and returns its path; later events go to a new file. Throws FAIL when the file
  // cannot be written.
  std::string write();

 private:
  struct Event {
    const char* category;
    std::string name;
    int64_t start_us;
    int64_t duration_us;
    uint32_t thread;
    Args args;
  };
  uint32_t thread_number();  // the calling thread's; mutex_ held
  uint32_t current_thread();

  std::string prefix_;
  Clock::time_point origin_ = Clock::now();
  mutable std::mutex mutex_;
  std::vector<Event> events_;
  std::vector<std::pair<std::size_t, uint32_t>> threads_;  // hashed thread id -> small number
};

// A span when `profiler` is set, nothing otherwise. The arguments are evaluated either way: on a hot
// path, build them only under `if (profiler)` (graph_executor.cpp does).
inline Profiler::Span profile(Profiler* profiler, const char* category, std::string name, Profiler::Args args = {}) {
  return profiler ? Profiler::Span(profiler, category, std::move(name), std::move(args)) : Profiler::Span();
}

}  // namespace ephost
