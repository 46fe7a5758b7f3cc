/*
 * The EP profiler of the ORT_TEST_PROFILER build of ort_test_ep.c (API 25: OrtEp::CreateProfiler), as a
 * GPU EP's profiler works: it times its own work per host event and reports it at the end.
 *
 * StartProfiling learns where the session's profile began (now - offset, on CLOCK_MONOTONIC, the host's
 * clock). For each compute the host brackets with StartEvent / StopEvent (one correlation id) it reads the
 * host's event (ProfilingEvent_GetName, _GetCategory, _GetTimestampUs, _GetDurationUs, _GetArgValue) and
 * makes an event of its own (CreateProfilingEvent): category KERNEL, named "<ep>:<host event's name>", its
 * own times measured from the profile's start, arguments "correlation_id", "ort_event" (the host event's
 * name), "ort_provider" (its "provider" argument) and "ort_category". EndProfiling adds them all
 * (ProfilingEventsContainer_AddEvents) and one SESSION event "<ep> profile" with argument "events" (how
 * many kernel events), then releases its events (ReleaseProfilingEvent).
 *
 * StartProfiling first checks that bad arguments give ORT_INVALID_ARGUMENT statuses (an unknown category,
 * a negative duration, a NULL name, a NULL container); it fails, and so reports nothing, when one does not.
 *
 * Included by ort_test_ep.c after `api` and `ep_api` are declared. Plain C.
 */
#ifndef ORT_TEST_PROFILER_H_
#define ORT_TEST_PROFILER_H_

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define PROFILER_MAX_EVENTS 256
#define PROFILER_MAX_OPEN 64

typedef struct TestProfiler {
  OrtEpProfilerImpl base;
  const char* ep_name;
  int64_t profile_start_ns; /* CLOCK_MONOTONIC */
  pthread_mutex_t mutex;
  struct {
    uint64_t id;
    int64_t start_ns;
  } open[PROFILER_MAX_OPEN];
  OrtProfilingEvent* events[PROFILER_MAX_EVENTS];
  size_t num_events;
} TestProfiler;

static int64_t profiler_now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* Whether `status` is an ORT_INVALID_ARGUMENT status (released). */
static int profiler_is_invalid_argument(OrtStatus* status) {
  int invalid = status && api->GetErrorCode(status) == ORT_INVALID_ARGUMENT;
  if (status) api->ReleaseStatus(status);
  return invalid;
}

static OrtStatus* profiler_check_bad_arguments(void) {
  OrtProfilingEvent* e = NULL;
  const char* keys[1] = {"k"};
  const char* values[1] = {NULL};
  if (!profiler_is_invalid_argument(
          ep_api->CreateProfilingEvent((OrtProfilingEventCategory)9, -1, -1, "x", 0, 1, NULL, NULL, 0, &e)))
    return api->CreateStatus(ORT_EP_FAIL, "CreateProfilingEvent took category 9");
  if (!profiler_is_invalid_argument(
          ep_api->CreateProfilingEvent(OrtProfilingEventCategory_KERNEL, -1, -1, "x", 0, -5, NULL, NULL, 0, &e)))
    return api->CreateStatus(ORT_EP_FAIL, "CreateProfilingEvent took a negative duration");
  if (!profiler_is_invalid_argument(
          ep_api->CreateProfilingEvent(OrtProfilingEventCategory_KERNEL, -1, -1, NULL, 0, 1, NULL, NULL, 0, &e)))
    return api->CreateStatus(ORT_EP_FAIL, "CreateProfilingEvent took a NULL name");
  if (!profiler_is_invalid_argument(
          ep_api->CreateProfilingEvent(OrtProfilingEventCategory_KERNEL, -1, -1, "x", 0, 1, keys, values, 1, &e)))
    return api->CreateStatus(ORT_EP_FAIL, "CreateProfilingEvent took a NULL argument value");
  if (!profiler_is_invalid_argument(ep_api->ProfilingEventsContainer_AddEvents(NULL, NULL, 0)))
    return api->CreateStatus(ORT_EP_FAIL, "ProfilingEventsContainer_AddEvents took a NULL container");
  return NULL;
}

static void profiler_release(OrtEpProfilerImpl* this_ptr) {
  TestProfiler* p = (TestProfiler*)this_ptr;
  size_t i;
  for (i = 0; i < p->num_events; ++i) ep_api->ReleaseProfilingEvent(p->events[i]);
  pthread_mutex_destroy(&p->mutex);
  free(p);
}

static OrtStatus* profiler_start(OrtEpProfilerImpl* this_ptr, int64_t offset_ns) {
  TestProfiler* p = (TestProfiler*)this_ptr;
  if (offset_ns < 0) return api->CreateStatus(ORT_EP_FAIL, "StartProfiling: a negative offset");
  p->profile_start_ns = profiler_now_ns() - offset_ns;
  return profiler_check_bad_arguments();
}

static OrtStatus* profiler_start_event(OrtEpProfilerImpl* this_ptr, uint64_t id) {
  TestProfiler* p = (TestProfiler*)this_ptr;
  pthread_mutex_lock(&p->mutex);
  p->open[id % PROFILER_MAX_OPEN].id = id;
  p->open[id % PROFILER_MAX_OPEN].start_ns = profiler_now_ns();
  pthread_mutex_unlock(&p->mutex);
  return NULL;
}

static OrtStatus* profiler_stop_event(OrtEpProfilerImpl* this_ptr, uint64_t id, const OrtProfilingEvent* ort_event) {
  TestProfiler* p = (TestProfiler*)this_ptr;
  const int64_t end_ns = profiler_now_ns();
  const char* ort_name = NULL;
  const char* ort_provider = NULL;
  const char* missing = "";
  OrtProfilingEventCategory ort_category;
  int64_t ort_ts = 0, ort_dur = 0, start_ns;
  char name[160], id_text[24], category_text[8];
  const char* keys[4] = {"correlation_id", "ort_event", "ort_provider", "ort_category"};
  const char* values[4];
  OrtProfilingEvent* mine = NULL;
  OrtStatus* status;
  RETURN_IF(ep_api->ProfilingEvent_GetName(ort_event, &ort_name));
  RETURN_IF(ep_api->ProfilingEvent_GetCategory(ort_event, &ort_category));
  RETURN_IF(ep_api->ProfilingEvent_GetTimestampUs(ort_event, &ort_ts));
  RETURN_IF(ep_api->ProfilingEvent_GetDurationUs(ort_event, &ort_dur));
  RETURN_IF(ep_api->ProfilingEvent_GetArgValue(ort_event, "provider", &ort_provider));
  RETURN_IF(ep_api->ProfilingEvent_GetArgValue(ort_event, "no such argument", &missing));
  if (!ort_name || !ort_provider || missing || ort_ts < 0 || ort_dur < 0)
    return api->CreateStatus(ORT_EP_FAIL, "StopEvent: the host's event has no name or provider, or times below 0, "
                                          "or an argument it was never given");
  pthread_mutex_lock(&p->mutex);
  start_ns = p->open[id % PROFILER_MAX_OPEN].id == id ? p->open[id % PROFILER_MAX_OPEN].start_ns : end_ns;
  pthread_mutex_unlock(&p->mutex);
  snprintf(name, sizeof name, "%s:%s", p->ep_name, ort_name);
  snprintf(id_text, sizeof id_text, "%llu", (unsigned long long)id);
  snprintf(category_text, sizeof category_text, "%d", (int)ort_category);
  values[0] = id_text, values[1] = ort_name, values[2] = ort_provider, values[3] = category_text;
  status = ep_api->CreateProfilingEvent(OrtProfilingEventCategory_KERNEL, (int32_t)getpid(), -1, name,
                                        (start_ns - p->profile_start_ns) / 1000, (end_ns - start_ns) / 1000, keys,
                                        values, 4, &mine);
  if (status) return status;
  pthread_mutex_lock(&p->mutex);
  if (p->num_events < PROFILER_MAX_EVENTS) {
    p->events[p->num_events++] = mine;
    mine = NULL;
  }
  pthread_mutex_unlock(&p->mutex);
  if (mine) ep_api->ReleaseProfilingEvent(mine);
  return NULL;
}

static OrtStatus* profiler_end(OrtEpProfilerImpl* this_ptr, OrtProfilingEventsContainer* container) {
  TestProfiler* p = (TestProfiler*)this_ptr;
  OrtProfilingEvent* summary = NULL;
  char name[96], count[24];
  const char* keys[1] = {"events"};
  const char* values[1] = {count};
  size_t i;
  OrtStatus* status;
  snprintf(name, sizeof name, "%s profile", p->ep_name);
  snprintf(count, sizeof count, "%zu", p->num_events);
  status = ep_api->CreateProfilingEvent(OrtProfilingEventCategory_SESSION, (int32_t)getpid(), -1, name, 0,
                                        (profiler_now_ns() - p->profile_start_ns) / 1000, keys, values, 1, &summary);
  if (!status) status = ep_api->ProfilingEventsContainer_AddEvents(container, (const OrtProfilingEvent* const*)p->events,
                                                                   p->num_events);
  if (!status) status = ep_api->ProfilingEventsContainer_AddEvents(container, (const OrtProfilingEvent* const*)&summary, 1);
  if (summary) ep_api->ReleaseProfilingEvent(summary);
  for (i = 0; i < p->num_events; ++i) ep_api->ReleaseProfilingEvent(p->events[i]);
  p->num_events = 0;
  return status;
}

static OrtStatus* ep_create_profiler(OrtEp* this_ptr, OrtEpProfilerImpl** out) {
  TestProfiler* p = (TestProfiler*)calloc(1, sizeof *p);
  if (!p) return api->CreateStatus(ORT_EP_FAIL, "out of memory");
  p->base.ort_version_supported = ORT_TEST_ASK_API;
  p->base.Release = profiler_release;
  p->base.StartProfiling = profiler_start;
  p->base.StartEvent = profiler_start_event;
  p->base.StopEvent = profiler_stop_event;
  p->base.EndProfiling = profiler_end;
  p->ep_name = this_ptr->GetName(this_ptr);
  pthread_mutex_init(&p->mutex, NULL);
  *out = &p->base;
  return NULL;
}

#endif /* ORT_TEST_PROFILER_H_ */
