#include "core/profiler.h"

#include <unistd.h>

#include <fmt/format.h>

#include <ctime>
#include <fstream>
#include <functional>
#include <thread>

#include "core/atomic_file.h"
#include "core/error.h"

namespace ephost {
namespace {

// A JSON string literal of `s` (the trace is written without a JSON library: core has none).
std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20)
          out += fmt::format("\\u{:04x}", c);
        else
          out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

}  // namespace

Profiler::Profiler(std::string file_prefix) : prefix_(std::move(file_prefix)) {}

Profiler::Profiler(std::string file_prefix, Clock::time_point origin)
    : prefix_(std::move(file_prefix)), origin_(origin) {}

Profiler::Span::Span(Profiler* profiler, const char* category, std::string name, Args args)
    : profiler_(profiler),
      category_(category),
      name_(std::move(name)),
      args_(std::move(args)),
      thread_(profiler ? profiler->current_thread() : 0) {
  start_ = Clock::now();  // last, so that the bookkeeping above is not timed
}

Profiler::Span::Span(Span&& other) noexcept
    : profiler_(other.profiler_),
      category_(other.category_),
      name_(std::move(other.name_)),
      args_(std::move(other.args_)),
      start_(other.start_),
      thread_(other.thread_) {
  other.profiler_ = nullptr;
}

void Profiler::Span::add_arg(std::string key, std::string value) {
  if (profiler_) args_.emplace_back(std::move(key), std::move(value));
}

void Profiler::Span::end() {
  if (!profiler_) return;
  try {
    profiler_->record(category_, std::move(name_), start_, Clock::now(), std::move(args_), thread_);
  } catch (...) {
    // Profiling never fails a run.
  }
  profiler_ = nullptr;
}

uint32_t Profiler::thread_number() {
  const std::size_t id = std::hash<std::thread::id>()(std::this_thread::get_id());
  for (const auto& [hash, number] : threads_)
    if (hash == id) return number;
  threads_.emplace_back(id, static_cast<uint32_t>(threads_.size() + 1));
  return threads_.back().second;
}

uint32_t Profiler::current_thread() {
  std::lock_guard<std::mutex> lock(mutex_);
  return thread_number();
}

void Profiler::record(const char* category, std::string name, Clock::time_point start, Clock::time_point end,
                      Args args, uint32_t thread) {
  using std::chrono::duration_cast;
  using std::chrono::microseconds;
  // Both ends rounded from the origin the same way, so that a span inside another stays inside it in
  // whole microseconds (rounding the duration on its own could push a child's end past its parent's).
  const int64_t start_us = duration_cast<microseconds>(start - origin_).count();
  const int64_t end_us = duration_cast<microseconds>(end - origin_).count();
  std::lock_guard<std::mutex> lock(mutex_);
  const uint32_t filed_under = thread ? thread : thread_number();
  events_.push_back(Event{category, std::move(name), start_us, end_us - start_us, filed_under, std::move(args)});
}

size_t Profiler::event_count() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return events_.size();
}

std::vector<Profiler::Recorded> Profiler::take_recorded() {
  std::vector<Event> events;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    events.swap(events_);
  }
  std::vector<Recorded> out;
  out.reserve(events.size());
  for (Event& e : events) out.push_back(Recorded{e.category, std::move(e.name), e.start_us, e.duration_us, std::move(e.args)});
  return out;
}

std::string Profiler::write() {
  std::vector<Event> events;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    events.swap(events_);
  }
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  char stamp[32];
  std::strftime(stamp, sizeof(stamp), "%Y-%m-%d_%H-%M-%S", &local);
  std::string path = prefix_ + "_" + stamp + ".json";
  // Two traces in one second (EndProfiling twice) get distinct names.
  for (int n = 2; access(path.c_str(), F_OK) == 0; ++n) path = prefix_ + "_" + stamp + "_" + std::to_string(n) + ".json";
  std::string text = "{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n";
  const int pid = static_cast<int>(getpid());
  for (size_t i = 0; i < events.size(); ++i) {
    const Event& e = events[i];
    text += fmt::format("{{\"ph\": \"X\", \"cat\": {}, \"name\": {}, \"pid\": {}, \"tid\": {}, \"ts\": {}, \"dur\": {}, "
                        "\"args\": {{",
                        quoted(e.category), quoted(e.name), pid, e.thread, e.start_us, e.duration_us);
    for (size_t a = 0; a < e.args.size(); ++a)
      text += (a ? ", " : "") + quoted(e.args[a].first) + ": " + quoted(e.args[a].second);
    text += i + 1 < events.size() ? "}},\n" : "}}\n";
  }
  text += "]}\n";
  try {
    write_file_atomically(path, text.data(), text.size(), true);
  } catch (...) {
    // Nothing lost: the events go back, ahead of any recorded meanwhile, for the next attempt.
    std::lock_guard<std::mutex> lock(mutex_);
    events.insert(events.end(), std::make_move_iterator(events_.begin()), std::make_move_iterator(events_.end()));
    events_.swap(events);
    throw;
  }
  return path;
}

}  // namespace ephost
