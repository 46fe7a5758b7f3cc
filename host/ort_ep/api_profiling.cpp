// The profiling-event entries of OrtEpApi (API 25): an EP's profiler (OrtEp::CreateProfiler) makes events
// (CreateProfilingEvent), reads the host's events it is handed in StopEvent (ProfilingEvent_Get*), and adds
// its own to the container EndProfiling is given (ProfilingEventsContainer_AddEvents). The provider
// (provider/ort_ep_provider.cpp) files the container's events in the session's profile.
#include <fmt/format.h>

#include <memory>

#include "ort_ep/api_impl.h"
#include "ort_ep/ort_objects.h"

namespace ephost::ort_ep::api::ep {
namespace {

OrtStatus* invalid(const char* function, const std::string& what) {
  return make_status(ORT_INVALID_ARGUMENT, fmt::format("OrtEpApi::{}: {}", function, what));
}

const OrtProfilingEvent* event_of(const OrtProfilingEvent* event) {
  return checked<OrtProfilingEvent>(event, Magic::kProfilingEvent);
}

bool known_category(OrtProfilingEventCategory category) {
  return category >= OrtProfilingEventCategory_SESSION && category <= OrtProfilingEventCategory_API;
}

}  // namespace

OrtStatus* CreateProfilingEvent(OrtProfilingEventCategory category, int32_t process_id, int32_t thread_id,
                                const char* event_name, int64_t timestamp_us, int64_t duration_us,
                                const char* const* arg_keys, const char* const* arg_values, size_t num_args,
                                OrtProfilingEvent** out) noexcept {
  if (!out) return invalid("CreateProfilingEvent", "out is NULL");
  *out = nullptr;
  if (!known_category(category))
    return invalid("CreateProfilingEvent", fmt::format("category {} is no OrtProfilingEventCategory (SESSION 0, NODE 1, "
                                                       "KERNEL 2, API 3)", static_cast<int>(category)));
  if (!event_name) return invalid("CreateProfilingEvent", "event_name is NULL");
  if (duration_us < 0)
    return invalid("CreateProfilingEvent", fmt::format("event '{}' lasts {} us: a duration is never negative",
                                                       event_name, duration_us));
  if (num_args > 0 && (!arg_keys || !arg_values))
    return invalid("CreateProfilingEvent", fmt::format("{} arguments, but arg_keys or arg_values is NULL", num_args));
  for (size_t i = 0; i < num_args; ++i)
    if (!arg_keys[i] || !arg_values[i])
      return invalid("CreateProfilingEvent", fmt::format("argument {} of event '{}' has a NULL key or value", i,
                                                         event_name));
  try {
    auto e = std::make_unique<OrtProfilingEvent>();
    e->category = category;
    e->process_id = process_id;
    e->thread_id = thread_id;
    e->name = event_name;
    e->timestamp_us = timestamp_us;
    e->duration_us = duration_us;
    for (size_t i = 0; i < num_args; ++i) e->args.emplace_back(arg_keys[i], arg_values[i]);
    e->owned = true;
    *out = e.release();
    return nullptr;
  } catch (const std::exception& err) {
    return make_status(ORT_FAIL, fmt::format("OrtEpApi::CreateProfilingEvent: {}", err.what()));
  }
}

// Frees only the EP's events: the host's (handed to StopEvent) stay the host's.
void ReleaseProfilingEvent(OrtProfilingEvent* input) noexcept {
  const OrtProfilingEvent* e = event_of(input);
  if (!e || !e->owned) return;
  input->magic = Magic{};
  delete input;
}

OrtStatus* ProfilingEvent_GetCategory(const OrtProfilingEvent* event, OrtProfilingEventCategory* out) noexcept {
  const OrtProfilingEvent* e = event_of(event);
  if (!e || !out) return invalid("ProfilingEvent_GetCategory", "event is no OrtProfilingEvent, or out is NULL");
  *out = e->category;
  return nullptr;
}

// The name lives as long as the event.
OrtStatus* ProfilingEvent_GetName(const OrtProfilingEvent* event, const char** out) noexcept {
  const OrtProfilingEvent* e = event_of(event);
  if (!e || !out) return invalid("ProfilingEvent_GetName", "event is no OrtProfilingEvent, or out is NULL");
  *out = e->name.c_str();
  return nullptr;
}

OrtStatus* ProfilingEvent_GetTimestampUs(const OrtProfilingEvent* event, int64_t* out) noexcept {
  const OrtProfilingEvent* e = event_of(event);
  if (!e || !out) return invalid("ProfilingEvent_GetTimestampUs", "event is no OrtProfilingEvent, or out is NULL");
  *out = e->timestamp_us;
  return nullptr;
}

OrtStatus* ProfilingEvent_GetDurationUs(const OrtProfilingEvent* event, int64_t* out) noexcept {
  const OrtProfilingEvent* e = event_of(event);
  if (!e || !out) return invalid("ProfilingEvent_GetDurationUs", "event is no OrtProfilingEvent, or out is NULL");
  *out = e->duration_us;
  return nullptr;
}

// The value of argument `key`, NULL (no error) when the event has none of that name.
OrtStatus* ProfilingEvent_GetArgValue(const OrtProfilingEvent* event, const char* key, const char** out) noexcept {
  const OrtProfilingEvent* e = event_of(event);
  if (!e || !key || !out)
    return invalid("ProfilingEvent_GetArgValue", "event is no OrtProfilingEvent, or key or out is NULL");
  *out = nullptr;
  for (const auto& [k, v] : e->args)
    if (k == key) {
      *out = v.c_str();
      break;
    }
  return nullptr;
}

// Copies the events into the container (the EP releases its own afterwards). All or nothing: one bad event
// adds none.
OrtStatus* ProfilingEventsContainer_AddEvents(OrtProfilingEventsContainer* events_container,
                                              const OrtProfilingEvent* const* events, size_t num_events) noexcept {
  auto* container = checked_mut<OrtProfilingEventsContainer>(events_container, Magic::kProfilingEventsContainer);
  if (!container)
    return invalid("ProfilingEventsContainer_AddEvents",
                   "events_container is not the container the host handed OrtEpProfilerImpl::EndProfiling");
  if (num_events > 0 && !events)
    return invalid("ProfilingEventsContainer_AddEvents", fmt::format("events is NULL but num_events is {}", num_events));
  for (size_t i = 0; i < num_events; ++i)
    if (!event_of(events[i]))
      return invalid("ProfilingEventsContainer_AddEvents",
                     fmt::format("event {} is not an OrtProfilingEvent made by CreateProfilingEvent", i));
  try {
    container->events.reserve(container->events.size() + num_events);
    for (size_t i = 0; i < num_events; ++i) {
      OrtProfilingEvent copy = *events[i];
      copy.owned = false;
      container->events.push_back(std::move(copy));
    }
    return nullptr;
  } catch (const std::exception& e) {
    return make_status(ORT_FAIL, fmt::format("OrtEpApi::ProfilingEventsContainer_AddEvents: {}", e.what()));
  }
}

}  // namespace ephost::ort_ep::api::ep
