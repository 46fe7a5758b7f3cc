// An isolated provider's plugin keeps its own profile (an ONNX Runtime plugin EP's OrtEp::CreateProfiler)
// in its provider host: the provider there profiles into a profile of that process counting from the host
// profile's origin (Op::kStartProfiling), and at end_profiling its events come back and are filed in the
// host's profile (Op::kEndProfiling), as an in-process provider files them. Profiling never fails a run:
// what goes wrong is logged.
#include <fmt/format.h>

#include <string>

#include "core/log.h"
#include "core/profiler.h"
#include "isolation/isolated_provider.h"
#include "isolation/provider_process.h"
#include "isolation/wire.h"

namespace ephost {
namespace {

isolation::MessageWriter profiling_request(isolation::Op op, uint64_t client) {
  isolation::MessageWriter w;
  w.u32(static_cast<uint32_t>(op)).u64(client);
  return w;
}

// The category as a literal (Profiler::record keeps the pointer): the plugin's categories are the host's.
const char* known_category(const std::string& category) {
  for (const char* known : {"session", "node", "kernel", "api", "op"})
    if (category == known) return known;
  return "kernel";
}

}  // namespace

void IsolatedProvider::start_profiling(Profiler& profiler) const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (profiler_ || health_.state == IsolatedProviderState::kFallenBack) return;
  try {
    ensure_process_locked("start_profiling");
    isolation::MessageWriter m = profiling_request(isolation::Op::kStartProfiling, client_);
    m.i64(std::chrono::duration_cast<std::chrono::nanoseconds>(profiler.origin().time_since_epoch()).count());
    request_locked(m.data(), "start_profiling", settings_.call_timeout);
    profiler_ = &profiler;
  } catch (const std::exception& e) {
    log_warning(fmt::format("provider '{}': its provider host could not start the plugin's profile ({}); the "
                            "plugin's own events are left out of the profile", name(), e.what()));
  }
}

void IsolatedProvider::end_profiling() const {
  std::lock_guard<std::mutex> lock(mutex_);
  Profiler* profiler = profiler_;
  profiler_ = nullptr;
  if (!profiler) return;
  if (!process_ || !process_->alive()) {
    log_warning(fmt::format("provider '{}': its provider host is gone, and the plugin's own events with it", name()));
    return;
  }
  try {
    const std::string reply = request_locked(profiling_request(isolation::Op::kEndProfiling, client_).data(),
                                             "end_profiling", settings_.call_timeout);
    isolation::MessageReader in(reply);
    in.u32();
    const auto origin = profiler->origin();
    for (uint64_t n = in.u64(); n > 0; --n) {
      const char* category = known_category(in.str());
      std::string event_name = in.str();
      const auto start = origin + std::chrono::microseconds(in.i64());
      const auto end = start + std::chrono::microseconds(in.i64());
      Profiler::Args args;
      for (uint64_t a = in.u64(); a > 0; --a) {
        std::string key = in.str();
        args.emplace_back(std::move(key), in.str());
      }
      profiler->record(category, std::move(event_name), start, end, std::move(args));
    }
  } catch (const std::exception& e) {
    log_warning(fmt::format("provider '{}': the plugin's own events could not be brought back from its provider "
                            "host ({})", name(), e.what()));
  }
}

}  // namespace ephost
