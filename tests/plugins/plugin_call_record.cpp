#include "plugin_call_record.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>

#include <fcntl.h>
#include <unistd.h>

namespace ephost_test {

namespace {

struct Record {
  std::atomic<uint64_t> clock{0};
  std::mutex mutex;
  bool recording = false;
  std::vector<PluginCall> calls;
};

// Never destroyed: a plugin's static destructors may record "unload" at process exit, after this
// library's own statics would be gone.
Record& record() {
  static Record* r = new Record;
  return *r;
}

}  // namespace

uint64_t plugin_call_clock_tick() { return ++record().clock; }

// With EPHOST_TEST_CALL_JOURNAL naming a file, every call is also appended to it as one line
// "<plugin> <function>": the calls of a plugin in another process (a provider host) for a test to count.
static void journal(const PluginCall& call) {
  const char* path = std::getenv("EPHOST_TEST_CALL_JOURNAL");
  if (!path || !*path) return;
  const std::string line = call.plugin + " " + call.function + "\n";
  const int fd = ::open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return;
  // One write per line: lines of several processes do not interleave (O_APPEND).
  if (::write(fd, line.data(), line.size()) < 0) {
  }
  ::close(fd);
}

void record_plugin_call(PluginCall call) {
  journal(call);
  Record& r = record();
  std::lock_guard<std::mutex> lock(r.mutex);
  if (r.recording) r.calls.push_back(std::move(call));
}

PluginCallRecording::PluginCallRecording() {
  Record& r = record();
  std::lock_guard<std::mutex> lock(r.mutex);
  if (r.recording) {
    std::fprintf(stderr, "PluginCallRecording: a recording is already under way (one at a time)\n");
    std::abort();
  }
  r.recording = true;
  r.calls.clear();
}

PluginCallRecording::~PluginCallRecording() {
  Record& r = record();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.recording = false;
  r.calls.clear();
}

std::vector<PluginCall> PluginCallRecording::calls() const {
  Record& r = record();
  std::vector<PluginCall> out;
  {
    std::lock_guard<std::mutex> lock(r.mutex);
    out = r.calls;
  }
  // Calls are appended as they return; two threads may append in the other order than they ticked.
  std::stable_sort(out.begin(), out.end(), [](const PluginCall& a, const PluginCall& b) { return a.end < b.end; });
  return out;
}

std::vector<PluginCall> PluginCallRecording::calls(const std::string& plugin) const {
  std::vector<PluginCall> out = calls();
  out.erase(std::remove_if(out.begin(), out.end(), [&](const PluginCall& c) { return c.plugin != plugin; }), out.end());
  return out;
}

}  // namespace ephost_test
