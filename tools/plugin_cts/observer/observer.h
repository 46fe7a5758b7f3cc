/*
 * The observer: a plugin library that stands in front of the plugin under test. The conformance kit
 * registers it with libephost instead of the plugin (EPHOST_CTS_TARGET names the plugin); its
 * negotiation loads the plugin and answers with the plugin observer's table
 * (tools/plugin_observer/plugin_interposer.h, the one the tests' recording plugins use): its members
 * record and count every call (the ABI 3 device calls included), the computes in flight and the
 * failures, and pass every call on unchanged. The plugin describes itself, so the host sees it under
 * its own name.
 *
 * The kit, in the same process, reads the counts (ephost_cts_observation) and the calls
 * (ephost_cts_calls, for the lifecycle rules of plugin_call_rules.h), and can run its own calls inside
 * the host's next context_judge, with the host's node and the plugin's provider, which are only valid
 * there (ephost_cts_set_judge_hook).
 */
#ifndef EPHOST_CTS_OBSERVER_H_
#define EPHOST_CTS_OBSERVER_H_

#include <stdint.h>

#include "ephost/ephost_plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

#define EPHOST_CTS_TARGET_ENV "EPHOST_CTS_TARGET"

/* The members of EphostPlugin and EphostComputeInfo the observer counts. */
typedef enum EphostCtsMember {
  EPHOST_CTS_DESCRIBE, EPHOST_CTS_PROVIDER_CREATE, EPHOST_CTS_PROVIDER_RELEASE, EPHOST_CTS_GET_CAPABILITY,
  EPHOST_CTS_KERNEL_CREATE, EPHOST_CTS_KERNEL_COMPUTE, EPHOST_CTS_KERNEL_RELEASE, EPHOST_CTS_COMPILE,
  EPHOST_CTS_CREATE_STATE, EPHOST_CTS_COMPUTE, EPHOST_CTS_RELEASE_STATE, EPHOST_CTS_RELEASE,
  EPHOST_CTS_ON_RUN_START, EPHOST_CTS_ON_RUN_END, EPHOST_CTS_CONTEXT_EMIT, EPHOST_CTS_CONTEXT_JUDGE,
  EPHOST_CTS_CONTEXT_LOAD, EPHOST_CTS_MEMBER_COUNT
} EphostCtsMember;

typedef struct EphostCtsObservation {
  uint64_t calls[EPHOST_CTS_MEMBER_COUNT];
  uint64_t failures[EPHOST_CTS_MEMBER_COUNT]; /* calls that returned an error status */
  uint64_t max_kernel_computes_in_flight;
  uint64_t max_computes_in_flight;             /* compiled (and context-loaded) units */
  uint64_t max_runs_in_flight;                 /* between on_run_start and on_run_end, per plugin */
  uint64_t run_ends_without_start;             /* on_run_end on a provider with no run started */
} EphostCtsObservation;

/* Counts so far (a snapshot). */
typedef void (*EphostCtsObservationFn)(EphostCtsObservation* out);

/* Runs `hook` once, at the start of the host's next context_judge call, before the call is passed on. */
typedef void (*EphostCtsJudgeHook)(void* user, const EphostHostApi* host, const EphostPlugin* plugin,
                                   EphostProvider* provider, const EphostNode* context_node, const void* blob,
                                   size_t blob_size);
typedef void (*EphostCtsSetJudgeHookFn)(EphostCtsJudgeHook hook, void* user);

#ifdef __cplusplus
}

#include <vector>

#include "plugin_call.h"

/* Every call recorded so far, in the order they returned (C++: the kit and the observer are built
 * together). */
typedef void (*EphostCtsCallsFn)(std::vector<ephost::observer::PluginCall>* out);
#endif

#endif /* EPHOST_CTS_OBSERVER_H_ */
