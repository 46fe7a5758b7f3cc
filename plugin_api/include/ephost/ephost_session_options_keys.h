/*
 * ephost_session_options_keys.h — every session configuration key libephost understands, one
 * documented constant each (as ONNX Runtime's onnxruntime_session_options_config_keys.h).
 *
 *   api->AddSessionConfigEntry(options, kEphostSessionOptionsDisableCpuEpFallback, "1");
 *
 * Spellings are ONNX Runtime's wherever ONNX Runtime has the same option; the few ephost additions
 * say so. Values are strings; "flag" keys take "0" or "1" (anything else is INVALID_ARGUMENT when the
 * session is created).
 *
 * Namespaces. The host owns `session.*`, `ep.context_*`, `ep.share_*` and `ep.stop_share_*`: a key in
 * one of them that is not listed here is refused by AddSessionConfigEntry with INVALID_ARGUMENT,
 * naming the closest known key (a misspelled option must not be silently ignored). Every other
 * `ep.<provider>.<key>` entry is forwarded to provider <provider> as its option <key> (the provider
 * name compared case-insensitively, as ONNX Runtime does); one naming a provider no plugin offers
 * is logged as a warning listing the loaded providers.
 *
 * Each constant carries the C API version (EPHOST_API_VERSION) whose library first understood it.
 * README.md's option table is checked against this file by a test (tests/unit/session_config_test.cpp).
 * Header-only, no dependencies; C and C++.
 */
#ifndef EPHOST_SESSION_OPTIONS_KEYS_H_
#define EPHOST_SESSION_OPTIONS_KEYS_H_

/* ---- session ------------------------------------------------------------------------------------ */

/* flag, default "0". "1": nodes that no listed provider claims are an INVALID_GRAPH error naming them,
 * instead of going to the built-in CPU plugin. Cannot be combined with listing "cpu" explicitly.
 * Since API 1. */
static const char* const kEphostSessionOptionsDisableCpuEpFallback = "session.disable_cpu_ep_fallback";

/* flag, default "0". "1": the session keeps the bytes of every initializer of its model file, also those
 * that every provider reading them packed and said it was done with (plugin ABI 5,
 * value_initializer_done), which are otherwise freed and read back from the file when needed again.
 * For a model file that may change or go while the session lives, or to compare memory use. ephost
 * addition. Since API 5. */
static const char* const kEphostSessionOptionsKeepInitializers = "session.keep_initializers";

/* path. Folder holding the external data files of a model loaded from a buffer (a model loaded from a
 * file resolves them against its own folder). Since API 1. */
static const char* const kEphostSessionOptionsModelExternalInitializersFileFolderPath =
    "session.model_external_initializers_file_folder_path";

/* flag, default "1". "0" disables memory patterns (one block per run and input-shape signature,
 * offsets recorded on the first run with those shapes). Since API 1. */
static const char* const kEphostSessionOptionsEnableMemPattern = "session.enable_mem_pattern";

/* flag, default "1". "0" disables buffer reuse from lifetime analysis. Since API 1. */
static const char* const kEphostSessionOptionsEnableMemReuse = "session.enable_mem_reuse";

/* "0", "1", "2" or "99" (default), as EphostGraphOptimizationLevel: 0 none, 1 basic (constant
 * folding, no-op elimination), 2 extended (Conv+BatchNormalization fusion), 99 all. Overrides
 * SetGraphOptimizationLevel. Since API 1. */
static const char* const kEphostSessionOptionsGraphOptimizationLevel = "session.graph_optimization_level";

/* integer >= 0, default "0" (all cores). Threads each kernel may use. Overrides SetIntraOpNumThreads.
 * Since API 1. */
static const char* const kEphostSessionOptionsIntraOpNumThreads = "session.intra_op_num_threads";

/* flag, default "1" (ONNX Runtime's key and default). "1": the threads of a kernel's team wait for the
 * next kernel by spinning a few milliseconds before they sleep, so that back-to-back kernels start
 * without a wake-up. "0": they spin only microseconds, which costs each kernel a wake-up (tens of
 * microseconds on a VM) but leaves idle CPUs to whatever else the machine runs. Forwarded to providers
 * as their option "allow_spinning" when "0". The CPU plugin's OpenMP threads are per process: one
 * session with "0" shortens the spinning of every session in the process. Since API 6. */
static const char* const kEphostSessionOptionsIntraOpAllowSpinning = "session.intra_op.allow_spinning";

/* "prefer_cpu", "prefer_gpu", "prefer_npu" or "max_coverage"; default "" (none). How providers are
 * ordered when the session lists none (AppendProvider), and which device of a multi-device plugin a
 * bare plugin name means:
 *   prefer_cpu / prefer_gpu / prefer_npu  plugins with a device of that type first (on that device),
 *                                         then the others by default priority;
 *   max_coverage                          every candidate's get_capability is asked on the model first
 *                                         (a dry run), and providers are ordered by the share of the
 *                                         graph's nodes each would take, ties by default priority.
 * The built-in CPU plugin stays last. The partition report's "selection" says why each provider got
 * its place. ephost addition (ONNX Runtime: SessionOptionsSetEpSelectionPolicy). Since API 3. */
static const char* const kEphostSessionOptionsEpSelectionPolicy = "session.ep_selection_policy";

/* flag, default "0". "1": the session records a trace (as ONNX Runtime's enable_profiling): the
 * session's creation stages, one span per run, one per step a provider runs (node or fused group,
 * with the provider, op type, input shapes and thread), and the copies between devices. Written as a
 * Chrome trace (chrome://tracing, Perfetto) when the session ends or at SessionEndProfiling.
 * Since API 3. */
static const char* const kEphostSessionOptionsEnableProfiling = "session.enable_profiling";

/* path prefix, default "ephost_profile". The trace file is "<prefix>_<date>_<time>.json".
 * Since API 3. */
static const char* const kEphostSessionOptionsProfileFilePrefix = "session.profile_file_prefix";

/* integer >= 0 (milliseconds), default "0" (none). A deadline for the session's creation: a creation
 * still going after this long (transforms, constant folding, partitioning, compiling each step,
 * planning) stops at its next check and fails with EPHOST_DEADLINE_EXCEEDED, naming the stage it
 * reached, instead of running on. Constant folding's kernels poll it too (plugin ABI 4's
 * kernel_run_check). A plugin's own compile call is not interrupted: the deadline is checked when it
 * returns. ephost addition (ONNX Runtime has none; its load cancellation flag is set by hand).
 * Since API 4. */
static const char* const kEphostSessionOptionsCompileTimeoutMs = "session.compile_timeout_ms";

/* string, default "auto" (or $EPHOST_PROVIDER_ISOLATION when the option is not set). Where the
 * session's plugin providers run: "in_process" (in the application's process), "process" (each in a
 * provider host process of its own: a crash or hang in the plugin fails the run it happened in with
 * EP_FAIL, the process is started again, and after 3 failures within a minute the provider's work goes
 * to the CPU plugin) or "auto" (in process). "ep.<provider>.isolation" sets it for one provider, and
 * "ep.<provider>.isolation_timeout_ms" (default 60000) and "ep.<provider>.isolation_compile_timeout_ms"
 * (default 300000) bound its calls out of process; "ep.<provider>.isolation_shared_outputs" = "0" has
 * outputs that stay in shared memory by default (API 6's shared tensors) copied out instead; the plugin
 * never sees these four. The built-in CPU
 * plugin always runs in process. ephost addition. Since API 4. */
static const char* const kEphostSessionOptionsProviderIsolation = "session.provider_isolation";

/* Prefix: "session.free_dimension_override.<dim_name>" = a positive integer (e.g. "1"). Every graph
 * input dimension whose symbolic name (dim_param) is <dim_name> becomes that fixed size when the model
 * is loaded, before shape inference, so the graph's shapes are static and providers plan at session
 * creation (ONNX Runtime's AddFreeDimensionOverrideByName). A run feeding another size for such a
 * dimension is refused, naming the input, the dimension and this key. A name no input dimension
 * carries is logged as a warning. Since API 4. */
static const char* const kEphostSessionOptionsFreeDimensionOverridePrefix = "session.free_dimension_override.";

/* Prefix: "session.free_dimension_override_denotation.<denotation>" = a positive integer. As above,
 * for graph input dimensions whose denotation is <denotation> (e.g. "DATA_BATCH"; ONNX Runtime's
 * AddFreeDimensionOverride). Since API 4. */
static const char* const kEphostSessionOptionsFreeDimensionOverrideDenotationPrefix =
    "session.free_dimension_override_denotation.";

/* ---- EPContext: loading a ctx model ------------------------------------------------------------- */

/* flag, default "0". "1": a cached context that does not fit its plugin fails the session with
 * INVALID_GRAPH, instead of running the source model's nodes on the next providers. Since API 1. */
static const char* const kEphostSessionOptionsDisableEpContextFallback = "session.disable_ep_context_fallback";

/* flag, default "0". "1": a context its plugin would rather recompile (PREFER_RECOMPILE) fails the
 * session instead of being used with a warning. Since API 1. */
static const char* const kEphostSessionOptionsFailOnSuboptimalCompiledModel =
    "session.fail_on_suboptimal_compiled_model";

/* path. The source model the fallback takes nodes from (default: the EPContext nodes'
 * onnx_model_filename, beside the ctx model). ephost addition. Since API 1. */
static const char* const kEphostSessionOptionsEpContextSourceModelPath = "ep.context_source_model_path";

/* flag, default "0". "1": when cached contexts are rejected (another driver, device or format), the
 * session serves at once through the fallback, and a background job recompiles the source model with
 * the same providers and replaces the ctx model and its binaries atomically (binaries first, ctx model
 * last; a lock file keeps two processes from rebuilding one cache at once), so that the next session
 * loads it as optimal. The job's state is in the EP-context report; ending the session cancels it.
 * Needs a ctx model loaded from a file. ephost addition. Since API 3. */
static const char* const kEphostSessionOptionsEpContextRebuild = "ep.context_rebuild";

/* ---- EPContext: generating a ctx model ---------------------------------------------------------- */

/* flag, default "0". "1": after compiling, write the EPContext model and one binary per compiling
 * plugin. Since API 1. */
static const char* const kEphostSessionOptionsEpContextEnable = "ep.context_enable";

/* path. Where the ctx model goes (default <model>_ctx.onnx beside the model; required for a model
 * from a buffer). When loading a ctx model from a buffer: the folder its binaries are resolved
 * from. Since API 1. */
static const char* const kEphostSessionOptionsEpContextFilePath = "ep.context_file_path";

/* flag, default "0". "1": contexts inside the EPContext nodes' ep_cache_context; "0": in
 * <model>_<provider>.bin beside the ctx model. Since API 1. */
static const char* const kEphostSessionOptionsEpContextEmbedMode = "ep.context_embed_mode";

/* string, default "". Prefix of the EPContext node names, of partition_name and of the graph name.
 * Since API 1. */
static const char* const kEphostSessionOptionsEpContextNodeNamePrefix = "ep.context_node_name_prefix";

/* file name, default "" (embedded). The initializers of the nodes that stay ordinary go to this file
 * beside the ctx model; never to the source model's data file. Since API 1. */
static const char* const kEphostSessionOptionsEpContextModelExternalInitializersFileName =
    "ep.context_model_external_initializers_file_name";

/* flag, default "0". "1" lets generation replace an existing ctx model and binary (refused by
 * default). ephost addition. Since API 1. */
static const char* const kEphostSessionOptionsEpContextOverwrite = "ep.context_overwrite";

/* ---- EPContext: weight sharing ------------------------------------------------------------------ */

/* flag, default "0". "1": the sessions of one env compile into (or load from) one shared binary
 * <model1>_<provider>.bin; weights common to several models are stored once. Since API 1. */
static const char* const kEphostSessionOptionsShareEpContexts = "ep.share_ep_contexts";

/* flag, default "0". "1" on the last session of a sharing group: it writes the shared binary.
 * Since API 1. */
static const char* const kEphostSessionOptionsStopShareEpContexts = "ep.stop_share_ep_contexts";

/* ---- provider options --------------------------------------------------------------------------- */

/* Prefix of provider options: "ep.<provider>.<key>" is option <key> for provider <provider>, as ONNX
 * Runtime forwards plugin EP options. Since API 1. */
static const char* const kEphostSessionOptionsProviderOptionPrefix = "ep.";

#endif /* EPHOST_SESSION_OPTIONS_KEYS_H_ */
