/*
 * ephost_c_api.h — the application ABI of libephost.
 *
 *   const EphostApi* api = EphostGetApi(EPHOST_API_VERSION);
 *
 * returns a table of functions that only grows at the end. An application built against an older
 * header asks for its older version and gets a table it can use; asking for a version newer than the
 * library returns NULL (never a crash) — call EphostGetVersionString() to say which library you got.
 *
 * Conventions:
 *  - Every function that can fail returns EphostStatus* (NULL = success). The caller owns a non-NULL
 *    status and releases it with ReleaseStatus.
 *  - Outputs are the last parameters, named out_*. On failure they are left untouched.
 *  - Objects are opaque and released with their Release* function; Release*(NULL) is a no-op.
 *  - Strings returned as `char**` are allocated by the library and freed with FreeString. Strings
 *    returned as `const char**` are owned by the object they came from and live as long as it.
 *  - Thread safety: an env and a session may be used from several threads at once; Run is safe to
 *    call concurrently on one session. Session options and values are not synchronized.
 */
#ifndef EPHOST_C_API_H_
#define EPHOST_C_API_H_

#include "ephost/ephost_env_options_keys.h"
#include "ephost/ephost_types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The newest application API version this header describes. Version 2 adds sequence and optional
 * values and the EPContext reports (the "since API 2" blocks of EphostApi); version 3 devices, device
 * tensors and bound runs, the names of symbolic dimensions, progress and profiling, and env options
 * (CreateEnvWithOptions); version 4 run options that terminate a run in progress, the model's
 * metadata, the default log level, initializers the application supplies (AddInitializer) and run
 * deadlines (RunOptionsSetTimeout); version 5 the state of a session's providers that run in a provider
 * host process, and a callback on its changes (SessionGetProviderState, SetProviderStateCallback);
 * version 6 tensors in shared memory, which providers in a provider host process read and write in
 * place (CreateSharedTensor). */
#define EPHOST_API_VERSION 6u

typedef struct EphostEnv EphostEnv;
typedef struct EphostSessionOptions EphostSessionOptions;
typedef struct EphostSession EphostSession;
/* A value: a tensor, or (version 2) a sequence of tensors or an empty optional (EphostValueKind).
 * Since API 3 a tensor may live in a device's memory (CreateDeviceTensor): TensorGetData then
 * returns NULL, and CopyTensor moves data between host and devices. */
typedef struct EphostTensor EphostTensor;
/* since API 3: the inputs and outputs of runs bound ahead of time (as ONNX Runtime's IoBinding), so
 * that repeated runs keep their data on a device. */
typedef struct EphostIoBinding EphostIoBinding;
/* since API 4: options of runs (as ONNX Runtime's OrtRunOptions): a tag naming the run, a
 * terminate flag that stops the runs using them, and a timeout that gives each run a deadline. */
typedef struct EphostRunOptions EphostRunOptions;

/* Graph optimization levels, as ONNX Runtime's GraphOptimizationLevel. */
typedef enum EphostGraphOptimizationLevel EPHOST_ENUM_BASE {
  EPHOST_OPT_DISABLE_ALL = 0,
  EPHOST_OPT_ENABLE_BASIC = 1,    /* constant folding, no-op elimination */
  EPHOST_OPT_ENABLE_EXTENDED = 2,
  EPHOST_OPT_ENABLE_ALL = 99      /* default */
} EphostGraphOptimizationLevel;

/* One entry of the discovery report. Strings are owned by the env and live as long as it. */
typedef struct EphostPluginReport {
  /* since API 1 */
  uint32_t struct_size;
  const char* path;         /* library path, or "<built-in>" */
  const char* name;         /* plugin name, or "" when it could not describe itself */
  const char* vendor;
  const char* version;
  const char* device_type;  /* "cpu", "gpu", "npu" */
  const char* sdk_version;
  const char* hardware_architecture;
  const char* driver_version;
  const char* source_keys;  /* comma-separated EPContext source keys */
  int32_t default_priority;
  uint32_t abi_version;     /* negotiated plugin ABI version, 0 when negotiation failed */
  int32_t loaded;           /* 1 when usable, 0 when skipped */
  const char* reason;       /* why it was skipped ("" when loaded) */
} EphostPluginReport;

/* since API 3: progress of a long session creation (SetSessionProgressCallback). */
typedef void (*EphostProgressCallback)(const char* stage, size_t done, size_t total, void* user);

/* since API 3: one device of a loaded plugin (GetDevice). Strings are owned by the env and live as
 * long as it. */
typedef struct EphostDeviceReport {
  /* since API 3 */
  uint32_t struct_size;      /* set by the caller */
  const char* plugin;        /* the plugin (provider) name */
  uint32_t index;            /* the plugin's index of the device: "<plugin>:<index>" names it */
  int32_t device_type;       /* EphostDeviceType */
  const char* vendor;
  const char* name;
  const char* driver_version;
  const char* hardware_architecture;
  uint64_t memory_bytes;     /* 0 when unknown */
  int32_t host_memory_usable; /* 1: the device works on host memory (no copies) */
  uint32_t memory_kinds;     /* bitmask of EPHOST_MEMORY_KIND_BIT(EphostMemoryKind) */
} EphostDeviceReport;

/* since API 5: where a session's provider runs and how it is doing (EphostProviderState.state). A
 * provider in a provider host process (session.provider_isolation=process, ep.<name>.isolation) is
 * running; restarting after its process crashed, was killed or missed a call's deadline (the next call
 * starts a new process); or fallen back after too many failures (its work runs on the next providers,
 * ending with the CPU plugin). */
typedef enum EphostProviderStateKind EPHOST_ENUM_BASE {
  EPHOST_PROVIDER_IN_PROCESS = 0,   /* runs in the application's process: its state never changes */
  EPHOST_PROVIDER_RUNNING = 1,
  EPHOST_PROVIDER_RESTARTING = 2,
  EPHOST_PROVIDER_FALLEN_BACK = 3
} EphostProviderStateKind;

/* since API 5: the state of one provider of a session (SessionGetProviderState, and what an
 * EphostProviderStateCallback is told). */
typedef struct EphostProviderState {
  /* since API 5 */
  uint32_t struct_size;       /* set by the caller of SessionGetProviderState; by the library for a callback */
  const char* provider;       /* the provider's name */
  int32_t state;              /* EphostProviderStateKind */
  int32_t failures;           /* failures of its provider host processes since the session began */
  int64_t process_id;         /* the provider host process now, -1 when none runs (or in process) */
  const char* last_failure;   /* the last failure's message (names the plugin, the call and the signal or
                               * deadline), "" when none */
} EphostProviderState;

/* since API 5: called when the state of a provider of a session changes (SetProviderStateCallback):
 * `state` is the state after the change (a failure: restarting or fallen back; a new process that
 * took over: running). Called on the thread of the call that saw the change (a run, or the session's
 * creation), without the library's locks held; `state` and its strings live until the callback
 * returns. The callback must not release the session. */
typedef void (*EphostProviderStateCallback)(const EphostProviderState* state, void* user);

/*
 * The function table. Each version's members are a block added at the end, opened by a "since API
 * <N>" comment (grep "since API"). EphostGetApi(N) returns a table that ends with the last member of
 * version N: struct_size == EphostApiSize(N), and the members past it are NULL.
 */
typedef struct EphostApi {
  /* ---- since API 1: the table's size and version ---- */
  uint32_t struct_size;
  uint32_t version; /* the version asked for */

  /* ---- since API 1: status ---- */
  EphostStatusCode (*GetErrorCode)(const EphostStatus* status);
  /* Valid until the status is released. */
  const char* (*GetErrorMessage)(const EphostStatus* status);
  void (*ReleaseStatus)(EphostStatus* status);
  /* Name of a code, e.g. "INVALID_GRAPH". Static storage. */
  const char* (*GetErrorCodeName)(EphostStatusCode code);
  void (*FreeString)(char* string);

  /* ---- since API 1: env: logging and plugin discovery ---- */
  /* Creates an env and runs discovery: EPHOST_PLUGIN_PATH (':'-separated on POSIX, ';' on Windows),
   * then the default plugin directory installed beside libephost, plus the built-in CPU plugin.
   * Plugins that cannot be used are skipped and reported, never fatal. */
  EphostStatus* (*CreateEnv)(EphostLogLevel min_log_level, EphostEnv** out_env);
  /* Like CreateEnv, but searches only `plugin_dirs` (NULL-terminated list; may be empty), ignoring
   * EPHOST_PLUGIN_PATH and the default directory. For hermetic tests and sandboxed applications. */
  EphostStatus* (*CreateEnvWithPluginDirs)(EphostLogLevel min_log_level, const char* const* plugin_dirs,
                                           EphostEnv** out_env);
  /* Release the env. Sessions created from it keep what they need of it alive: they stay usable, and
   * the env's plugins are unloaded when the last of them is released. */
  void (*ReleaseEnv)(EphostEnv* env);
  /* Load one plugin library explicitly. The attempt is added to the discovery report whether or not it
   * succeeds; the returned status says why it failed. */
  EphostStatus* (*RegisterPluginLibrary)(EphostEnv* env, const char* path);
  size_t (*GetPluginReportCount)(const EphostEnv* env);
  /* `out->struct_size` must be set by the caller. */
  EphostStatus* (*GetPluginReport)(const EphostEnv* env, size_t index, EphostPluginReport* out);
  /* The whole discovery report as a JSON array. Free with FreeString. */
  EphostStatus* (*GetPluginReportJson)(const EphostEnv* env, char** out_json);

  /* ---- since API 1: session options ---- */
  EphostStatus* (*CreateSessionOptions)(EphostSessionOptions** out_options);
  void (*ReleaseSessionOptions)(EphostSessionOptions* options);
  /* A configuration entry with ONNX Runtime's key spellings, e.g. "session.disable_cpu_ep_fallback",
   * "ep.context_enable". Keys at most 128 bytes, values at most 1024. Later entries win. */
  EphostStatus* (*AddSessionConfigEntry)(EphostSessionOptions* options, const char* key, const char* value);
  EphostStatus* (*SetIntraOpNumThreads)(EphostSessionOptions* options, int32_t num_threads);
  EphostStatus* (*SetGraphOptimizationLevel)(EphostSessionOptions* options, EphostGraphOptimizationLevel level);
  /* Append a provider to the registration-priority list (earlier = asked first). `keys`/`values` are
   * its options (copied). Naming an unknown provider fails at session creation with the list of
   * providers found. */
  /* Since API 3 `provider_name` may also name a device of the plugin: "<plugin>:<device index>". */
  EphostStatus* (*AppendProvider)(EphostSessionOptions* options, const char* provider_name, const char* const* keys,
                                  const char* const* values, size_t num_options);

  /* ---- since API 1: session ---- */
  EphostStatus* (*CreateSession)(EphostEnv* env, const char* model_path, const EphostSessionOptions* options,
                                 EphostSession** out_session);
  /* `model_data` is copied; it may be freed when the call returns. */
  EphostStatus* (*CreateSessionFromArray)(EphostEnv* env, const void* model_data, size_t model_size,
                                          const EphostSessionOptions* options, EphostSession** out_session);
  void (*ReleaseSession)(EphostSession* session);
  size_t (*SessionGetInputCount)(const EphostSession* session);
  size_t (*SessionGetOutputCount)(const EphostSession* session);
  /* Names are owned by the session. */
  EphostStatus* (*SessionGetInputName)(const EphostSession* session, size_t index, const char** out_name);
  EphostStatus* (*SessionGetOutputName)(const EphostSession* session, size_t index, const char** out_name);
  /* Declared type of an input/output: element type, rank (-1 unknown) and dims (-1 for symbolic).
   * `*out_dims` is owned by the session. */
  EphostStatus* (*SessionGetInputType)(const EphostSession* session, size_t index, int32_t* out_elem_type,
                                       int64_t* out_rank, const int64_t** out_dims);
  EphostStatus* (*SessionGetOutputType)(const EphostSession* session, size_t index, int32_t* out_elem_type,
                                        int64_t* out_rank, const int64_t** out_dims);
  /* The partition report (node -> provider, refused claims and why) as JSON. Free with FreeString. */
  EphostStatus* (*SessionGetPartitionReportJson)(const EphostSession* session, char** out_json);
  /* Run. Inputs are bound by name; every graph input without an initializer must be given.
   * `outputs[i]` receives a new tensor for `output_names[i]` (release with ReleaseTensor); since
   * version 2, inputs and outputs declared as sequences or optionals are values of those kinds.
   * Thread-safe. */
  EphostStatus* (*Run)(EphostSession* session, const char* const* input_names, const EphostTensor* const* inputs,
                       size_t num_inputs, const char* const* output_names, size_t num_outputs,
                       EphostTensor** outputs);

  /* ---- since API 1: tensors ---- */
  /* A tensor over the caller's buffer (not copied, not freed): it must outlive the tensor.
   * `data_size` must equal the element count times the element size. */
  EphostStatus* (*CreateTensorWithData)(EphostElementType elem_type, const int64_t* shape, size_t rank, void* data,
                                        size_t data_size, EphostTensor** out_tensor);
  /* A tensor whose zero-filled buffer the library allocates (64-byte aligned). */
  EphostStatus* (*CreateTensor)(EphostElementType elem_type, const int64_t* shape, size_t rank,
                                EphostTensor** out_tensor);
  void (*ReleaseTensor)(EphostTensor* tensor);
  EphostElementType (*TensorGetElementType)(const EphostTensor* tensor);
  /* `*out_shape` is owned by the tensor. */
  void (*TensorGetShape)(const EphostTensor* tensor, const int64_t** out_shape, size_t* out_rank);
  void* (*TensorGetData)(EphostTensor* tensor);
  size_t (*TensorGetElementCount)(const EphostTensor* tensor);
  /* Size in bytes of one element (sizeof(char*) for strings), 0 for unknown types and (since API 4) for the
   * packed sub-byte types int4, uint4, float4e2m1, int2 and uint2: size those with EphostTensorDataSize. */
  size_t (*GetElementSize)(EphostElementType elem_type);

  /* ---- since API 2: sequence and optional values ----
   * ONNX values are tensors, sequences of tensors and optionals (a tensor or a sequence that may be
   * absent). An EphostTensor handle holds any of them at run time: a tensor, a sequence
   * (EPHOST_VALUE_SEQUENCE), or an empty optional (EPHOST_VALUE_NONE); an optional that holds
   * something is simply that tensor or sequence. Run takes and returns such handles as the model
   * declares its inputs and outputs (SessionGetInputKind); a model with tensors only never returns
   * anything else. On a handle that is not a tensor, TensorGetElementType returns
   * EPHOST_ELEMENT_UNDEFINED, TensorGetShape rank 0 and a NULL shape, TensorGetData NULL and
   * TensorGetElementCount 0. ReleaseTensor releases handles of every kind. */
  /* EPHOST_VALUE_TENSOR, EPHOST_VALUE_SEQUENCE or EPHOST_VALUE_NONE; UNDEFINED for NULL. */
  EphostValueKind (*ValueGetKind)(const EphostTensor* value);
  /* A sequence of `count` tensors of `elem_type` (count may be 0). Each element is copied, so the
   * caller may release `elements` and their buffers afterwards. */
  EphostStatus* (*CreateSequence)(EphostElementType elem_type, const EphostTensor* const* elements, size_t count,
                                  EphostTensor** out_sequence);
  /* An empty optional (EPHOST_VALUE_NONE), for an optional input given no value. */
  EphostStatus* (*CreateOptionalNone)(EphostTensor** out_value);
  /* A sequence's element type (known even when it is empty) and length; either out may be NULL. */
  EphostStatus* (*SequenceGetInfo)(const EphostTensor* sequence, EphostElementType* out_elem_type,
                                   size_t* out_length);
  /* Element `index` of a sequence as a new tensor handle (release with ReleaseTensor). It shares the
   * element's buffer, which stays valid after the sequence is released; do not modify it. */
  EphostStatus* (*SequenceGetElement)(const EphostTensor* sequence, size_t index, EphostTensor** out_tensor);
  /* Declared kind of an input/output: EPHOST_VALUE_TENSOR, _SEQUENCE or _OPTIONAL (UNDEFINED when the
   * model does not say); for an OPTIONAL, `*out_optional_kind` is what it holds (TENSOR or SEQUENCE);
   * `*out_elem_type` is the element type of the tensor(s) it is or holds. Out pointers may be NULL.
   * SessionGetInputType describes tensors only (element type 0, rank -1 for the other kinds). */
  EphostStatus* (*SessionGetInputKind)(const EphostSession* session, size_t index, EphostValueKind* out_kind,
                                       EphostValueKind* out_optional_kind, int32_t* out_elem_type);
  EphostStatus* (*SessionGetOutputKind)(const EphostSession* session, size_t index, EphostValueKind* out_kind,
                                        EphostValueKind* out_optional_kind, int32_t* out_elem_type);
  /* ---- since API 2: EPContext ---- */
  /* What happened to each EPContext node of the session's model, as a JSON array of
   * {"node", "source", "provider", "verdict" (optimal | prefer_recompile | unsupported | not_mine |
   * load_failed | no_provider | unreadable), "reason", "loaded", "status" ("OK" or "INVALID_GRAPH"),
   * "fell_back", "fallback_nodes"}. Empty for an ordinary model. A context that could not be used
   * is also logged at warning level. Free with FreeString.
   * Later additions to each entry: "fallback_node_names", "rebuild" (ep.context_rebuild), and
   * "provider_fell_back": null while the provider that loaded the context serves it; once that provider
   * fell back after creation (an isolated provider whose process failed too often), {"provider", "why",
   * "runs_on" ("cpu": the node's source nodes run on the CPU plugin), "source_model" (its path)}. */
  EphostStatus* (*SessionGetEpContextReportJson)(const EphostSession* session, char** out_json);
  /* Describe the EPContext nodes of the model at `model_path` without creating a session: each
   * node's attributes and context size, and the verdict of every loaded plugin whose source keys
   * match (context_judge). `options` may be NULL. JSON (see `ephost inspect`); free with FreeString. */
  EphostStatus* (*InspectEpContextModelJson)(EphostEnv* env, const char* model_path,
                                             const EphostSessionOptions* options, char** out_json);

  /* ---- since API 3: devices ----
   * Plugins that speak plugin ABI 3 enumerate the devices they drive; a provider runs on one device.
   * Name a device "<plugin>:<index>" (e.g. "opencl:1") where a provider name is taken: AppendProvider,
   * `ephost --providers`. A bare plugin name means its device 0, or the device the selection policy
   * (session.ep_selection_policy) prefers. */
  /* How many devices the env's loaded plugins drive, in all. */
  size_t (*GetDeviceCount)(const EphostEnv* env);
  /* Device `index` (0..GetDeviceCount-1). `out->struct_size` must be set by the caller. */
  EphostStatus* (*GetDevice)(const EphostEnv* env, size_t index, EphostDeviceReport* out);
  /* AppendProvider for one device of the plugin: `device` is the plugin's index of it. */
  EphostStatus* (*AppendProviderForDevice)(EphostSessionOptions* options, const char* provider_name, uint32_t device,
                                           const char* const* keys, const char* const* values, size_t num_keys);

  /* ---- since API 3: device tensors ---- */
  /* A tensor of `elem_type` and `shape` in the memory of device `device` of plugin `provider_name`,
   * allocated by the plugin's allocator (contents undefined). Released with ReleaseTensor, which frees
   * the device memory; the tensor keeps the env's plugins loaded, so ReleaseEnv before it is safe.
   * String tensors cannot live on a device. */
  EphostStatus* (*CreateDeviceTensor)(EphostEnv* env, const char* provider_name, uint32_t device,
                                      EphostElementType elem_type, const int64_t* shape, size_t rank,
                                      EphostTensor** out_tensor);
  /* Where a tensor lives: EPHOST_LOCATION_HOST (then *out_provider is NULL) or
   * EPHOST_LOCATION_DEVICE with its plugin name (env-owned) and device index. Any out pointer may be
   * NULL. Fails for a sequence or none. */
  EphostStatus* (*TensorGetLocation)(const EphostTensor* tensor, EphostMemoryLocation* out_location,
                                     const char** out_provider, uint32_t* out_device);
  /* Copy the elements of `src` into `dst`: same element type (not string) and shape, any locations
   * (host to device, device to host, between devices). Synchronous: done when it returns. */
  EphostStatus* (*CopyTensor)(const EphostTensor* src, EphostTensor* dst);

  /* ---- since API 3: bound runs (IoBinding) ---- */
  /* A binding for `session`, which must outlive it. Not synchronized: one thread at a time per
   * binding (one binding per thread for concurrent runs). */
  EphostStatus* (*CreateIoBinding)(EphostSession* session, EphostIoBinding** out_binding);
  void (*ReleaseIoBinding)(EphostIoBinding* binding);
  /* Bind input `name` to `value` (host or device tensor, sequence, none). The binding holds its own
   * reference: the caller may release `value`. A device tensor on the device of the input's
   * consumers is used in place, with no copy. */
  EphostStatus* (*BindInput)(EphostIoBinding* binding, const char* name, const EphostTensor* value);
  /* Bind output `name` to `value`, a tensor of the output's type and shape (host or device): each run
   * writes into it (copying there when the output is produced elsewhere). */
  EphostStatus* (*BindOutput)(EphostIoBinding* binding, const char* name, EphostTensor* value);
  /* Bind output `name` to a location instead: each run hands over a new tensor on device `device` of
   * plugin `provider_name`, or on the host when `provider_name` is NULL. An output produced on that
   * device is handed over without any copy. */
  EphostStatus* (*BindOutputToDevice)(EphostIoBinding* binding, const char* name, const char* provider_name,
                                      uint32_t device);
  /* Run with the bound inputs (every required input must be bound) and outputs (unbound outputs are
   * not produced for the caller). */
  EphostStatus* (*RunWithBinding)(EphostSession* session, EphostIoBinding* binding);
  /* The value of output `name` after the last RunWithBinding: a new reference the caller releases
   * (for a BindOutput tensor, that same tensor). */
  EphostStatus* (*IoBindingGetOutput)(const EphostIoBinding* binding, const char* name, EphostTensor** out_value);
  /* Forget every bound input and output. */
  void (*ClearIoBinding)(EphostIoBinding* binding);

  /* ---- since API 3: names of symbolic dimensions ----
   * SessionGetInputType gives -1 for a dimension that is symbolic; these say which symbol it is
   * (ONNX's dim_param, e.g. "batch"), as ONNX Runtime's Python API shows input shapes such as
   * ["batch", 3, "h", "w"]. */
  /* Dimension `dim` of input `index`: `*out_name` is its symbolic name, or "" when the dimension is
   * fixed or unnamed. Owned by the session. INVALID_ARGUMENT when `index` is out of range or `dim` is
   * not below the input's rank (SessionGetInputType), also for an input of unknown rank. */
  EphostStatus* (*SessionGetInputDimName)(const EphostSession* session, size_t index, size_t dim,
                                          const char** out_name);
  /* The same for output `index`. */
  EphostStatus* (*SessionGetOutputDimName)(const EphostSession* session, size_t index, size_t dim,
                                           const char** out_name);

  /* ---- since API 3: progress and profiling ---- */
  /* Called during CreateSession on the thread creating the session: `stage` ("compile") has done
   * `done` of `total` units (fused groups and kernels); each stage is first reported with done 0.
   * `callback` NULL removes it. The callback must not call back into the session being created, and
   * `user` must stay valid while sessions are created with these options. */
  EphostStatus* (*SetSessionProgressCallback)(EphostSessionOptions* options, EphostProgressCallback callback,
                                              void* user);
  /* With session.enable_profiling=1: writes the trace recorded so far (a Chrome trace) and returns its
   * path; free with FreeString. INVALID_ARGUMENT when profiling is off. */
  EphostStatus* (*SessionEndProfiling)(EphostSession* session, char** out_path);

  /* ---- since API 3: env options ---- */
  /* Like CreateEnv (`plugin_dirs` NULL: EPHOST_PLUGIN_PATH, then the default directory) or
   * CreateEnvWithPluginDirs (`plugin_dirs` a NULL-terminated list), with env options: `num_options`
   * pairs of `keys` (ephost_env_options_keys.h: how plugins are probed, the scan timeout, the registry
   * cache, the hang warning) and `values`, copied. Each overrides its environment variable. An unknown
   * key or an invalid value is INVALID_ARGUMENT naming it, and no env is created. */
  EphostStatus* (*CreateEnvWithOptions)(EphostLogLevel min_log_level, const char* const* plugin_dirs,
                                        const char* const* keys, const char* const* values, size_t num_options,
                                        EphostEnv** out_env);

  /* ---- since API 4: run options and model metadata ---- */
  /* Run options (as ONNX Runtime's OrtRunOptions): terminate off, no tag. Release with
   * ReleaseRunOptions once no run uses them. */
  EphostStatus* (*CreateRunOptions)(EphostRunOptions** out_options);
  void (*ReleaseRunOptions)(EphostRunOptions* options);
  /* Sets (1) or clears (0) terminate. Safe to call from any thread while runs with these options are
   * in progress: each such run stops and fails with EPHOST_CANCELLED "run terminated by
   * RunOptions.terminate..."; a run started while it is set fails before its first step. Runs check
   * the flag before every step (subgraphs' steps included), between the iterations of Loop and Scan,
   * and inside long kernels of providers that poll it (plugin ABI 4's kernel_run_check: the built-in
   * CPU plugin polls between the pieces of its parallel loops, which are never smaller than a
   * kernel's grain, so a kernel with few, large pieces (a 1-D pool over one huge row) may run to
   * its end); a step of a provider that does not poll finishes first. The
   * session stays usable: the next run is an ordinary one. The flag stays set until cleared. */
  EphostStatus* (*RunOptionsSetTerminate)(EphostRunOptions* options, int32_t terminate);
  /* A tag naming the runs in their errors (ONNX Runtime's run_tag / logid); copied, at most 1024
   * bytes; "" for none. Not synchronized: set it while no run uses these options. */
  EphostStatus* (*RunOptionsSetTag)(EphostRunOptions* options, const char* tag);
  /* Run with run options (`run_options` may be NULL: Run). */
  EphostStatus* (*RunWithOptions)(EphostSession* session, const EphostRunOptions* run_options,
                                  const char* const* input_names, const EphostTensor* const* inputs, size_t num_inputs,
                                  const char* const* output_names, size_t num_outputs, EphostTensor** outputs);
  /* RunWithBinding with run options (`run_options` may be NULL: RunWithBinding). */
  EphostStatus* (*RunWithBindingAndOptions)(EphostSession* session, EphostIoBinding* binding,
                                            const EphostRunOptions* run_options);
  /* The model's metadata as a JSON object (as ONNX Runtime's ModelMetadata): "producer_name",
   * "producer_version", "domain", "description" (the model's doc_string), "graph_name",
   * "graph_description" (the graph's doc_string), "version" (model_version, an integer) and
   * "custom_metadata_map" (metadata_props, an object of strings). Free with FreeString. */
  EphostStatus* (*SessionGetModelMetadataJson)(const EphostSession* session, char** out_json);
  /* The process-wide minimum log level (as ONNX Runtime's default logger severity), which the last
   * env created set until now. INVALID_ARGUMENT for a value that is no EphostLogLevel. */
  EphostStatus* (*SetDefaultLogLevel)(EphostLogLevel level);
  /* A value for initializer `name` of the sessions created with these options (as ONNX Runtime's
   * AddInitializer): it replaces the model's initializer of that name (same element type and shape),
   * or makes the graph input `name` a constant (of its declared type and shape); anything else fails
   * at session creation, naming the model's initializers and inputs. `value` is a host tensor, copied
   * now; a later call for the same name replaces it. */
  EphostStatus* (*AddInitializer)(EphostSessionOptions* options, const char* name, const EphostTensor* value);

  /* ---- since API 4: run deadlines ---- */
  /* Gives each run using these options a deadline: a run still going `timeout_ms` milliseconds after
   * it started stops and fails with EPHOST_DEADLINE_EXCEEDED "run ... exceeded its deadline of N ms".
   * Checked where terminate is (between steps, between Loop and Scan iterations, inside long kernels
   * of providers that poll), so a run ends within about one piece of a kernel's work (see
   * RunOptionsSetTerminate) of its deadline. 0 (the
   * default) sets none; a negative value is INVALID_ARGUMENT. Safe to call from any thread; a run
   * reads it when it starts. The session stays usable after a run that missed its deadline. (The
   * deadline of session creation is the session option session.compile_timeout_ms.) */
  EphostStatus* (*RunOptionsSetTimeout)(EphostRunOptions* options, int64_t timeout_ms);

  /* ---- since API 5: provider state ---- */
  /* The number of providers the session uses (the partition report's "providers", in that order). */
  EphostStatus* (*SessionGetProviderCount)(const EphostSession* session, size_t* out_count);
  /* The state of provider `index` now. The caller sets `out_state->struct_size` (sizeof, or
   * EPHOST_STRUCT_SIZE_THROUGH of the last member it knows); the library fills the members that fit.
   * The strings are owned by the session and live as long as it. INVALID_ARGUMENT when `index` is
   * out of range or struct_size is too small for `provider`. Safe to call while runs are in progress. */
  EphostStatus* (*SessionGetProviderState)(const EphostSession* session, size_t index, EphostProviderState* out_state);
  /* Calls `callback` with `user` whenever the state of a provider of a session created with these
   * options changes (only providers in a provider host process change). NULL removes it. `user` must
   * stay valid as long as such sessions live. */
  EphostStatus* (*SetProviderStateCallback)(EphostSessionOptions* options, EphostProviderStateCallback callback,
                                            void* user);

  /* ---- since API 6: tensors in shared memory ----
   * A provider in a provider host process (session.provider_isolation=process) reads and writes host
   * tensors through memory shared with that process. An ordinary host tensor is copied into it for each
   * run and the outputs are copied out of it; a shared tensor already is such memory, so it crosses in
   * place, as ONNX Runtime's IoBinding keeps a device's inputs where they are:
   *  - given to Run/RunWithOptions or BindInput, the provider reads it where it is (a copy to an
   *    isolated device goes straight from it);
   *  - bound with BindOutput to an output of its element type and shape, the provider writes the output
   *    into it (a copy from an isolated device goes straight into it); IoBindingGetOutput returns it.
   * The partition report's providers[].isolation counts both ways ("bytes_copied", "bytes_in_place").
   * An output such a provider makes that is not bound, and that nothing but the application and that
   * provider's own steps reads, may be handed back in shared memory the library allocated for it (after
   * the output's first compute, from 4 KiB; "ep.<provider>.isolation_shared_outputs" = "0" turns it off):
   * an ordinary output tensor the caller owns and releases as any other, for which TensorIsShared says 1.
   * For providers in process a shared tensor is an ordinary host tensor. */
  /* A host tensor of `elem_type` (not string) and `shape`, zero-filled, whose memory is shared (a sealed
   * memfd of its own, whole pages; Linux). Not tied to an env or session: any session of the process
   * may use it, and it may outlive them. Read and write its elements through TensorGetData; release it
   * with ReleaseTensor.
   * Ownership and lifetime: the caller owns the tensor. Its memory lives as long as the tensor and as
   * long as anything the library holds that uses it (a binding it is bound in, a run in progress, an
   * output handed back), so releasing the tensor while it is bound is safe. A CreateTensorWithData
   * tensor over part of a shared tensor's memory crosses in place too, while that memory lives (it must
   * outlive the tensor made over it, as any buffer given to CreateTensorWithData); one whose data runs
   * past the shared tensor's end is refused there with INVALID_ARGUMENT.
   * A provider host process only maps the memory: one that crashes, is killed or restarts mid-run never
   * unmaps it here, so the tensor stays valid and readable (that run fails with EP_FAIL, and an output
   * tensor's elements are then unspecified); the next process maps it again when a run uses it. While
   * it serves a run that uses the tensor, the provider host can change its elements, as a plugin in
   * process can; it can never shrink it or make the library read past it (the memory is sealed at its
   * size, and every offset a provider host names is checked).
   * FAIL when the system refuses the memory; INVALID_ARGUMENT for a string type or a bad shape. */
  EphostStatus* (*CreateSharedTensor)(EphostElementType elem_type, const int64_t* shape, size_t rank,
                                      EphostTensor** out_tensor);
  /* `*out_shared` = 1 when the elements of `tensor` lie in shared memory (a shared tensor, or a
   * CreateTensorWithData tensor over part of one), else 0. INVALID_ARGUMENT for a sequence or none. */
  EphostStatus* (*TensorIsShared)(const EphostTensor* tensor, int32_t* out_shared);
} EphostApi;

/* The size of the function table as each version defines it: the struct_size of the table
 * EphostGetApi(version) returns (it ends with the last member of that version's "since API" block).
 * 0 for a version this header does not know. Header-only: no symbol. A new version adds a case here
 * (plugin_api/ABI_VERSIONING.md). */
static inline uint32_t EphostApiSize(uint32_t version) {
  switch (version) {
    case 1: return (uint32_t)EPHOST_STRUCT_SIZE_THROUGH(EphostApi, GetElementSize);
    case 2: return (uint32_t)EPHOST_STRUCT_SIZE_THROUGH(EphostApi, InspectEpContextModelJson);
    case 3: return (uint32_t)EPHOST_STRUCT_SIZE_THROUGH(EphostApi, CreateEnvWithOptions);
    case 4: return (uint32_t)EPHOST_STRUCT_SIZE_THROUGH(EphostApi, RunOptionsSetTimeout);
    case 5: return (uint32_t)EPHOST_STRUCT_SIZE_THROUGH(EphostApi, SetProviderStateCallback);
    case 6: return (uint32_t)EPHOST_STRUCT_SIZE_THROUGH(EphostApi, TensorIsShared);
    default: return 0;
  }
}

/* The function table for `version` (1..EPHOST_API_VERSION), or NULL for an unknown version. The
 * table is library-owned static storage, valid as long as the library is loaded; its struct_size is
 * EphostApiSize(version) and its `version` is `version`. */
EPHOST_EXPORT const EphostApi* EphostGetApi(uint32_t version);
/* The library's version, e.g. "0.1.0". Static storage. */
EPHOST_EXPORT const char* EphostGetVersionString(void);

#ifdef __cplusplus
}
#endif

#endif /* EPHOST_C_API_H_ */
