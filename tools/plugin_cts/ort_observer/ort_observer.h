/*
 * The ONNX Runtime observer: what the conformance kit registers in front of an ONNX Runtime plugin EP
 * library (one exporting CreateEpFactories / ReleaseEpFactory), as observer.h does for ephost plugins.
 * It exports CreateEpFactories and ReleaseEpFactory itself, so that libephost adopts it through its
 * adapter like the plugin; its CreateEpFactories loads the library EPHOST_CTS_TARGET names, creates the
 * plugin's factories with the host's OrtApiBase and hands the host proxies of them. The proxies (of the
 * factories, of the OrtEps they create, of the OrtNodeComputeInfos Compile makes) record every call and
 * pass it on unchanged, with the plugin's own object as `this_ptr`.
 *
 * The calls are recorded as ephost plugin calls (plugin_call.h), so that the lifecycle rules of
 * plugin_call_rules.h judge them: CreateEp / ReleaseEp as provider_create / provider_release, Compile as one
 * compile per fused node, ReleaseNodeComputeInfos as one release per compute info, CreateState / Compute /
 * ReleaseState, OnRunStart / OnRunEnd, and a kernel-registry EP's kernels as kernel_create (on the plugin's
 * OrtEp) / kernel_compute / kernel_release: the plugin gets an OrtApiBase whose OrtEpApi registers a proxy
 * create function for each KernelRegistry_AddKernel, making proxies of its OrtKernelImpls (pre-packing
 * passes through them unrecorded). Handles are the plugin's own pointers. The kit reads them with
 * ephost_cts_calls and the counts with ephost_cts_observation (observer.h's functions, same signatures;
 * the counts use EphostCtsMember: DESCRIBE counts GetSupportedDevices, CONTEXT_EMIT
 * GetCompiledModelCompatibilityInfo, CONTEXT_JUDGE ValidateCompiledModelCompatibilityInfo).
 */
#ifndef EPHOST_CTS_ORT_OBSERVER_H_
#define EPHOST_CTS_ORT_OBSERVER_H_

#include "ort_ep/ort_abi.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Run once, at the start of the host's next ValidateCompiledModelCompatibilityInfo, before the call is
 * passed on: the plugin's own factory, the devices and the compatibility string the host hands it, and the
 * host's OrtApiBase (to release the statuses the hook's own calls get). */
typedef void (*EphostCtsOrtValidateHook)(void* user, const OrtApiBase* host, OrtEpFactory* factory,
                                         const OrtHardwareDevice* const* devices, size_t num_devices,
                                         const char* compatibility_info);
typedef void (*EphostCtsSetOrtValidateHookFn)(EphostCtsOrtValidateHook hook, void* user);

/* The observer's own name for its exports (the kit tells it from the ephost observer by this symbol). */
#define EPHOST_CTS_ORT_HOOK_SYMBOL "ephost_cts_set_ort_validate_hook"

#ifdef __cplusplus
}
#endif

#endif /* EPHOST_CTS_ORT_OBSERVER_H_ */
