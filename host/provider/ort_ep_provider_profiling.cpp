// An ONNX Runtime plugin EP's own profile (API 25: OrtEp::CreateProfiler, OrtEpProfilerImpl) inside the
// session's: started when the session's profile is (start_profiling), each compute bracketed by
// StartEvent / StopEvent, and the events EndProfiling adds filed in the session's trace when it is written
// (end_profiling). A failing profiler call is logged and profiling goes on without it: it never fails a run.
#include <fmt/format.h>
#include <unistd.h>

#include "core/log.h"
#include "core/profiler.h"
#include "ort_ep/plugin_call.h"
#include "provider/ort_ep_provider.h"

namespace ephost {
namespace {

// The trace category of an event the EP reports.
const char* category_name(OrtProfilingEventCategory category) {
  switch (category) {
    case OrtProfilingEventCategory_SESSION: return "session";
    case OrtProfilingEventCategory_NODE: return "node";
    case OrtProfilingEventCategory_KERNEL: return "kernel";
    case OrtProfilingEventCategory_API: return "api";
  }
  return "kernel";
}

int64_t microseconds_between(std::chrono::steady_clock::time_point from, std::chrono::steady_clock::time_point to) {
  return std::chrono::duration_cast<std::chrono::microseconds>(to - from).count();
}

}  // namespace

void OrtEpProvider::start_profiling(Profiler& profiler) const {
  if (profiler_impl_ || !ep_has(25) || !ep_->CreateProfiler) return;
  OrtEpProfilerImpl* impl = nullptr;
  auto failure = ort_ep::call_plugin(name().c_str(), library_path(), "OrtEp::CreateProfiler",
                                     [&] { return ep_->CreateProfiler(ep_, &impl); });
  if (failure) {
    log_warning(fmt::format("provider '{}': CreateProfiler failed ({}): {}; its own events are left out of the "
                            "profile", name(), ort_ep::error_code_name(failure->code), failure->message));
    return;
  }
  if (!impl) return;  // the EP keeps no profile of its own
  if (!impl->StartProfiling || !impl->StartEvent || !impl->StopEvent || !impl->EndProfiling || !impl->Release) {
    log_warning(fmt::format("provider '{}': CreateProfiler answered a profiler without StartProfiling, StartEvent, "
                            "StopEvent, EndProfiling or Release; its own events are left out of the profile", name()));
    if (impl->Release)
      ort_ep::call_plugin_void(name().c_str(), library_path(), "OrtEpProfilerImpl::Release", [&] { impl->Release(impl); });
    return;
  }
  profiler_impl_ = impl;
  profiler_ = &profiler;
  const int64_t offset_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(Profiler::Clock::now() - profiler.origin()).count();
  failure = ort_ep::call_plugin(name().c_str(), library_path(), "OrtEpProfilerImpl::StartProfiling",
                                [&] { return impl->StartProfiling(impl, offset_ns); });
  if (failure) {
    log_warning(fmt::format("provider '{}': StartProfiling failed ({}): {}; its own events are left out of the "
                            "profile", name(), ort_ep::error_code_name(failure->code), failure->message));
    return;
  }
  profiling_.store(true, std::memory_order_release);
}

OrtEpProvider::ProfiledCompute OrtEpProvider::start_profiled_compute() const {
  ProfiledCompute started;
  started.correlation_id = next_correlation_id_++;
  started.start = Profiler::Clock::now();
  OrtEpProfilerImpl* impl = profiler_impl_;
  if (auto failure = ort_ep::call_plugin(name().c_str(), library_path(), "OrtEpProfilerImpl::StartEvent",
                                         [&] { return impl->StartEvent(impl, started.correlation_id); }))
    log_warning(fmt::format("provider '{}': StartEvent failed ({}): {}", name(),
                            ort_ep::error_code_name(failure->code), failure->message));
  return started;
}

void OrtEpProvider::stop_profiled_compute(const ComputeUnit& unit, const ProfiledCompute& started) const {
  const auto end = Profiler::Clock::now();
  OrtProfilingEvent event;  // the host's: the EP reads it (ProfilingEvent_Get*), never frees it
  event.category = OrtProfilingEventCategory_NODE;
  event.process_id = static_cast<int32_t>(getpid());
  event.name = unit.name();
  event.timestamp_us = microseconds_between(profiler_->origin(), started.start);
  event.duration_us = microseconds_between(started.start, end);
  event.args = {{"provider", label()}, {"kind", unit.fused() ? "fused group" : "kernel"}};
  OrtEpProfilerImpl* impl = profiler_impl_;
  if (auto failure = ort_ep::call_plugin(name().c_str(), library_path(), "OrtEpProfilerImpl::StopEvent",
                                         [&] { return impl->StopEvent(impl, started.correlation_id, &event); }))
    log_warning(fmt::format("provider '{}': StopEvent failed ({}): {}", name(),
                            ort_ep::error_code_name(failure->code), failure->message));
}

void OrtEpProvider::end_profiling() const {
  if (!profiling_.exchange(false)) return;
  OrtProfilingEventsContainer container;
  OrtEpProfilerImpl* impl = profiler_impl_;
  if (auto failure = ort_ep::call_plugin(name().c_str(), library_path(), "OrtEpProfilerImpl::EndProfiling",
                                         [&] { return impl->EndProfiling(impl, &container); }))
    log_warning(fmt::format("provider '{}': EndProfiling failed ({}): {}; the events it added are kept", name(),
                            ort_ep::error_code_name(failure->code), failure->message));
  const auto origin = profiler_->origin();
  for (OrtProfilingEvent& e : container.events) {
    Profiler::Args args = std::move(e.args);
    args.emplace_back("provider", label());
    const auto start = origin + std::chrono::microseconds(e.timestamp_us);
    profiler_->record(category_name(e.category), std::move(e.name), start,
                      start + std::chrono::microseconds(e.duration_us), std::move(args));
  }
}

void OrtEpProvider::release_profiler() {
  profiling_.store(false);
  OrtEpProfilerImpl* impl = profiler_impl_;
  profiler_impl_ = nullptr;
  if (impl)
    ort_ep::call_plugin_void(name().c_str(), library_path(), "OrtEpProfilerImpl::Release", [&] { impl->Release(impl); });
}

}  // namespace ephost
