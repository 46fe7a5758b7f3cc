/*
 * ephost_plugin.h — the plugin ABI: what an execution-provider (EP) plugin exports and what the host offers.
 *
 * The contract in one paragraph: a plugin is a shared library exporting one C function,
 * `ephost_plugin_negotiate` (EPHOST_PLUGIN_ENTRY_POINT). The host calls it once, offering the range of
 * ABI versions it speaks and its own function table (EphostHostApi). The plugin answers with the
 * version it will speak and a pointer to its function table (EphostPlugin). From then on the host
 * calls the plugin only through that table, and the plugin calls the host only through EphostHostApi.
 *
 * Rules (learned from Vulkan's loader, SQLite's extension table and ONNX Runtime's plugin EP API):
 *  - Every struct that crosses the boundary starts with `uint32_t struct_size`, except three frozen by name:
 *    EphostTensorView, EphostDeviceBuffer and EphostTensorMemory, small value structs that never grow (a
 *    version that needs more adds a new struct and new functions). Structs only grow at the end; nothing is
 *    reordered or removed, so each version's members are one block appended after the previous version's.
 *    Each block opens with a "since ABI <N>" comment naming the version that added it (grep "since ABI"); a
 *    test freezes the layout of every published version, and holds the exceptions to these three.
 *  - A function table of version N has struct_size EphostHostApiSize(N) / EphostPluginSize(N): it
 *    ends with the last member version N added. A reader checks the negotiated version
 *    (EphostPluginAbiIncludes) or `struct_size` (EPHOST_STRUCT_HAS) before touching a member added
 *    after ABI 1. plugin_api/ABI_VERSIONING.md lists the steps for adding a version.
 *  - No C++ type crosses the boundary and no exception may escape a function of either table. The
 *    host catches anything a plugin throws anyway and turns it into EPHOST_RUNTIME_EXCEPTION, but a
 *    plugin must not rely on that (the SDK's EPHOST_DEFINE_PLUGIN wrapper catches for you).
 *  - Errors are EphostStatus* (NULL = success) created with EphostHostApi::status_create.
 *  - Ownership and lifetime are stated on every function. "Host-owned" pointers must not be freed by
 *    the plugin; "valid during the call" pointers must not be kept after the call returns.
 * Plugin authors: see plugin_api/README.md for a guided tour and sdk/ for C++ helpers.
 */
#ifndef EPHOST_PLUGIN_H_
#define EPHOST_PLUGIN_H_

#include "ephost/ephost_types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The newest plugin ABI version this header describes. ABI 2 adds sequence and optional values (the
 * ABI 2 block at the end of EphostHostApi): a plugin speaking 2 may be handed them in any node it
 * claims, so its get_capability checks value_kind where its kernels take tensors only. ABI 3 adds
 * devices: device enumeration, a provider per device, device memory the host never touches, data
 * transfer and streams (the ABI 3 blocks of EphostPlugin and EphostHostApi). A plugin speaking 3
 * that enumerates no device is a host-memory plugin exactly as in ABI 2. ABI 4 adds profile spans
 * inside a step: a compute may report what it spent its time on, per operator (EphostProfileSpan),
 * and run control: a compute may ask whether its run should stop (kernel_run_check); both are the
 * ABI 4 block of EphostHostApi. A plugin speaking 3 reports nothing, is stopped only between steps,
 * and loses nothing else. ABI 5 adds value_initializer_done: a provider that packed a constant
 * initializer may tell the host it is done with it, so that the host frees the original bytes (the
 * ABI 5 block of EphostHostApi). A plugin speaking 4 never says so and the host keeps every byte. */
#define EPHOST_PLUGIN_ABI_VERSION 5u
/* The oldest plugin ABI version a host built from this header still accepts. */
#define EPHOST_PLUGIN_ABI_MIN_VERSION 1u

/* The version that brought each feature a party may lack, for EphostPluginAbiIncludes. */
#define EPHOST_PLUGIN_ABI_NON_TENSOR_VALUES 2u /* sequence and optional values (EphostValueKind) */
#define EPHOST_PLUGIN_ABI_DEVICES 3u           /* devices, device memory, copies, streams */
#define EPHOST_PLUGIN_ABI_PROFILE_SPANS 4u     /* spans inside a step (kernel_profile_span) */
#define EPHOST_PLUGIN_ABI_RUN_CONTROL 4u       /* kernel_run_check: stop a run early (cancel, deadline) */
#define EPHOST_PLUGIN_ABI_INITIALIZER_RELEASE 5u /* value_initializer_done: the host may free packed weights */

/*
 * The one version check of the plugin ABI: 1 when plugin ABI `version` includes what plugin ABI
 * `since_version` added (the members of its "since ABI" blocks and the behaviour it describes), else
 * 0. Versions are cumulative, since tables only grow, so a version includes every older one.
 * `version` is a negotiated version (EphostHostApi::abi_version, EphostPlugin::abi_version) or a
 * version proposed during negotiation; `since_version` is a version or a feature's constant above.
 * The host, the SDK and C plugins all ask this question through this function, so that the rule
 * lives in one place. Header-only: no symbol.
 */
static inline int EphostPluginAbiIncludes(uint32_t version, uint32_t since_version) {
  return version >= since_version;
}

/* Name of the one symbol a plugin library exports (type: EphostPluginNegotiateFn). */
#define EPHOST_PLUGIN_ENTRY_POINT "ephost_plugin_negotiate"

/* ------------------------------------------------------------------------------------------------
 * Opaque handles. All are host-owned unless stated otherwise.
 * ---------------------------------------------------------------------------------------------- */

/* A read-only view of a graph: the model's main graph, a control-flow subgraph, or the nodes of one
 * fused group (in compile). Valid for the duration of the call that hands it over, unless stated. */
typedef struct EphostGraph EphostGraph;
/* A node of a graph. Same lifetime as the graph it came from. */
typedef struct EphostNode EphostNode;
/* A named value (tensor) of a graph: graph input, initializer, node output or outer-scope value. */
typedef struct EphostValueInfo EphostValueInfo;
/* One attribute of a node. */
typedef struct EphostAttribute EphostAttribute;
/* The sink get_capability writes its claims into (valid during get_capability only). */
typedef struct EphostCapability EphostCapability;
/* Inputs and outputs of one kernel or compiled-group invocation (valid during compute only). */
typedef struct EphostKernelContext EphostKernelContext;
/* A value produced by the host for the plugin (a subgraph's result); released with value_release.
 * ABI 1: always a tensor. ABI 2: a tensor, a sequence of tensors or none (value_held_kind). */
typedef struct EphostValue EphostValue;
/* The sink context_emit writes a group's compiled context into (valid during context_emit only). */
typedef struct EphostContextSink EphostContextSink;

/* Plugin-owned handles: the host never looks inside them. */
typedef struct EphostProvider EphostProvider; /* one provider instance (per session) */
typedef struct EphostKernel EphostKernel;     /* one node's kernel */
/* since ABI 3: an ordered queue of work on one device (a CUDA stream, an OpenCL in-order command
 * queue). Work enqueued on a stream runs in enqueue order; stream_synchronize waits for all of it. */
typedef struct EphostStream EphostStream;

/* Attribute types; numbering is ONNX's AttributeProto.AttributeType. */
typedef enum EphostAttributeType EPHOST_ENUM_BASE {
  EPHOST_ATTR_UNDEFINED = 0,
  EPHOST_ATTR_FLOAT = 1,
  EPHOST_ATTR_INT = 2,
  EPHOST_ATTR_STRING = 3,
  EPHOST_ATTR_TENSOR = 4,
  EPHOST_ATTR_GRAPH = 5,
  EPHOST_ATTR_FLOATS = 6,
  EPHOST_ATTR_INTS = 7,
  EPHOST_ATTR_STRINGS = 8,
  EPHOST_ATTR_TENSORS = 9,
  EPHOST_ATTR_GRAPHS = 10
} EphostAttributeType;

/*
 * A borrowed view of a tensor. `shape` and `data` are owned by whoever produced the view and stay
 * valid for as long as that producer says (stated on each function). For EPHOST_ELEMENT_STRING the
 * data is an array of `const char*`. A scalar has rank 0 and one element. Frozen by name: never grows.
 */
typedef struct EphostTensorView {
  /* since ABI 1 */
  int32_t elem_type;    /* EphostElementType */
  size_t rank;
  const int64_t* shape; /* `rank` entries */
  const void* data;     /* NULL only for an absent optional input */
} EphostTensorView;

/*
 * since ABI 3: a buffer in a device's memory. Opaque to the host: `handle` is whatever the plugin's
 * allocator returned (a cl_mem, a device pointer, a VkBuffer) and the host never dereferences it; it
 * only hands it back to the plugin, `offset` bytes further on when the host places several values in
 * one block (memory patterns). Kernels must honour `offset` (OpenCL: a sub-buffer or an offset
 * argument). Frozen by name: no struct_size, never grows (the rules at the top).
 */
typedef struct EphostDeviceBuffer {
  /* since ABI 3 */
  void* handle;
  uint64_t offset;
} EphostDeviceBuffer;

/*
 * since ABI 3: one device a plugin drives (device_describe). Strings are plugin-owned and stay valid
 * until the library is unloaded.
 */
typedef struct EphostDeviceInfo {
  /* since ABI 3 */
  uint32_t struct_size;          /* set by the host before device_describe */
  int32_t device_type;           /* EphostDeviceType */
  const char* vendor;            /* e.g. "NVIDIA Corporation", "The pocl project" */
  const char* name;              /* e.g. "NVIDIA H100", "pthread-skylake-avx512" */
  const char* driver_version;    /* of the driver found at run time, e.g. "550.54", "3.1+debian" */
  const char* hardware_architecture; /* e.g. "sm_90", "skylake-avx512"; compared by context_judge */
  uint64_t memory_bytes;         /* device memory size, 0 when unknown */
  /* Nonzero when the device's kernels read and write ordinary host memory directly (a CPU device,
   * unified memory): the host then keeps this device's values in host memory and never copies them.
   * Zero: every tensor a provider of this device reads or writes is in its device memory. */
  int32_t host_memory_usable;
  uint32_t memory_kinds;         /* bitmask of EPHOST_MEMORY_KIND_BIT(EphostMemoryKind) it allocates */
} EphostDeviceInfo;

/*
 * since ABI 3: a kernel's view of one tensor and where it lives (kernel_input_memory,
 * kernel_output_device). Valid during compute only. Frozen by name: no struct_size, never grows.
 */
typedef struct EphostTensorMemory {
  /* since ABI 3 */
  int32_t elem_type;        /* EphostElementType; UNDEFINED for an absent optional input */
  size_t rank;
  const int64_t* shape;     /* `rank` entries */
  int32_t location;         /* EphostMemoryLocation */
  uint32_t device;          /* location DEVICE: the plugin's index of the device */
  const void* host_data;    /* location HOST: the elements (as EphostTensorView::data) */
  EphostDeviceBuffer buffer; /* location DEVICE: where the elements are */
} EphostTensorMemory;

/*
 * since ABI 4: one span of work inside a compute call (kernel_profile_span), e.g. one primitive or
 * fused chain of a compiled group. Filled by the plugin; the host copies everything it needs during
 * kernel_profile_span, so every pointer only has to stay valid for that call.
 */
typedef struct EphostProfileSpan {
  /* since ABI 4 */
  uint32_t struct_size;     /* sizeof(EphostProfileSpan) as the plugin knows it */
  int64_t start_ns;         /* when the work began, on the step's clock (kernel_profile_clock_ns) */
  int64_t duration_ns;      /* how long it took, >= 0 */
  const char* name;         /* what ran, e.g. "conv_12 + relu_12"; required */
  /* The ONNX operator it ran, e.g. "Conv"; a chain names each, joined by '+' ("Conv+Relu+Add").
   * Work that is no ONNX operator (a layout change) gets its own word, e.g. "Reorder". NULL: "". */
  const char* op_type;
  /* The ONNX nodes it covers (NodeProto names, as node_name gives them): `num_nodes` NUL-terminated
   * strings. NULL when num_nodes is 0 (work of the step itself, such as a layout change). */
  const char* const* nodes;
  size_t num_nodes;
} EphostProfileSpan;

/* The verdict of a plugin on a compiled EPContext blob (context_judge).
 * Numbering follows ONNX Runtime's OrtCompiledModelCompatibility. */
typedef enum EphostContextVerdict EPHOST_ENUM_BASE {
  EPHOST_CONTEXT_NOT_MINE = 0,          /* not this plugin's format: ask the next plugin */
  EPHOST_CONTEXT_OPTIMAL = 1,           /* load it */
  EPHOST_CONTEXT_PREFER_RECOMPILE = 2,  /* loads and runs, but a recompile would be better */
  EPHOST_CONTEXT_UNSUPPORTED = 3        /* cannot be used: the host falls back (INVALID_GRAPH) */
} EphostContextVerdict;

/*
 * What compile (and context_load) hand back for one fused group: a compute function plus state
 * management, as ONNX Runtime's OrtNodeComputeInfo. The host calls create_state once per session,
 * compute once per run (possibly from several threads at once with the same state: compute must
 * be thread-safe or serialize itself), release_state when the session ends, then release.
 * `user` is plugin-owned and passed back to every function.
 */
typedef struct EphostComputeInfo {
  /* since ABI 1 */
  uint32_t struct_size;
  void* user;
  EphostStatus* (*create_state)(void* user, void** out_state);
  EphostStatus* (*compute)(void* user, void* state, EphostKernelContext* context);
  void (*release_state)(void* user, void* state);
  void (*release)(void* user);
} EphostComputeInfo;

/* ------------------------------------------------------------------------------------------------
 * Plugin metadata: how a plugin describes itself (EphostPlugin::describe).
 * All strings are plugin-owned and must stay valid until the library is unloaded (string literals
 * are the usual choice). Optional strings may be NULL.
 * ---------------------------------------------------------------------------------------------- */
typedef struct EphostPluginInfo {
  /* since ABI 1 */
  uint32_t struct_size;          /* set by the host before describe: sizeof(EphostPluginInfo) it knows */
  const char* name;              /* unique provider name, e.g. "dnnl"; [A-Za-z0-9_.-]+ */
  const char* vendor;            /* e.g. "Contoso" */
  const char* version;           /* plugin version, semver "MAJOR.MINOR.PATCH" */
  int32_t device_type;           /* EphostDeviceType */
  const char* const* context_source_keys; /* EPContext `source` values this plugin loads */
  size_t num_context_source_keys;
  const char* sdk_version;       /* backend SDK version the plugin was built with, e.g. "2.6.3" */
  const char* hardware_architecture; /* e.g. "x86_64-avx2", "sm_90" */
  const char* driver_version;    /* version of the driver found at run time, or NULL */
  int32_t default_priority;      /* higher is asked earlier when the user lists no providers */
} EphostPluginInfo;

/* ------------------------------------------------------------------------------------------------
 * EphostHostApi — what the host offers every plugin. Host-owned; valid from negotiation until the
 * library is unloaded. Every function is thread-safe. Each version's members are a block added at the
 * end; the table a plugin is given ends with the last member of the version it negotiated
 * (struct_size == EphostHostApiSize(abi_version)), and the members past struct_size are NULL.
 * ---------------------------------------------------------------------------------------------- */
typedef struct EphostHostApi {
  /* --- since ABI 1: the table's size and version --- */
  uint32_t struct_size;
  uint32_t abi_version; /* the version negotiated with this plugin */

  /* --- since ABI 1: status --- */
  /* New status with a copy of `message`. Never returns NULL for code != EPHOST_OK; returns NULL for
   * EPHOST_OK. The receiver owns it. */
  EphostStatus* (*status_create)(EphostStatusCode code, const char* message);
  void (*status_release)(EphostStatus* status);
  EphostStatusCode (*status_code)(const EphostStatus* status);
  /* Valid until the status is released. */
  const char* (*status_message)(const EphostStatus* status);

  /* --- since ABI 1: logging --- */
  /* Log `message` (copied) under the plugin's name. Cheap when the level is filtered out. */
  void (*log)(const EphostProvider* provider_or_null, EphostLogLevel level, const char* message);

  /* --- since ABI 1: graph. Nodes are listed in a topological order. --- */
  const char* (*graph_name)(const EphostGraph* graph);
  /* Path of the model file, or "" when the model came from a buffer. */
  const char* (*graph_model_path)(const EphostGraph* graph);
  size_t (*graph_num_nodes)(const EphostGraph* graph);
  const EphostNode* (*graph_node)(const EphostGraph* graph, size_t index);
  size_t (*graph_num_inputs)(const EphostGraph* graph);
  const EphostValueInfo* (*graph_input)(const EphostGraph* graph, size_t index);
  size_t (*graph_num_outputs)(const EphostGraph* graph);
  const EphostValueInfo* (*graph_output)(const EphostGraph* graph, size_t index);
  size_t (*graph_num_initializers)(const EphostGraph* graph);
  const EphostValueInfo* (*graph_initializer)(const EphostGraph* graph, size_t index);
  /* Opset version imported for `domain` ("" or "ai.onnx" for the default domain), -1 if none. */
  int64_t (*graph_opset)(const EphostGraph* graph, const char* domain);
  /* The node that owns this graph as an attribute (If/Loop/Scan), or NULL for a top-level graph. */
  const EphostNode* (*graph_parent_node)(const EphostGraph* graph);

  /* --- since ABI 1: node --- */
  /* Index unique within its graph, stable for the session. */
  size_t (*node_id)(const EphostNode* node);
  const char* (*node_name)(const EphostNode* node);
  const char* (*node_op_type)(const EphostNode* node);
  /* "" for the default ONNX domain. */
  const char* (*node_domain)(const EphostNode* node);
  size_t (*node_num_inputs)(const EphostNode* node);
  /* NULL for an omitted optional input. */
  const EphostValueInfo* (*node_input)(const EphostNode* node, size_t index);
  size_t (*node_num_outputs)(const EphostNode* node);
  /* NULL for an omitted optional output. */
  const EphostValueInfo* (*node_output)(const EphostNode* node, size_t index);
  /* Values of enclosing graphs that this node's subgraphs read (outer-scope values). */
  size_t (*node_num_implicit_inputs)(const EphostNode* node);
  const EphostValueInfo* (*node_implicit_input)(const EphostNode* node, size_t index);
  size_t (*node_num_attributes)(const EphostNode* node);
  const EphostAttribute* (*node_attribute_at)(const EphostNode* node, size_t index);
  /* NULL when absent. */
  const EphostAttribute* (*node_attribute)(const EphostNode* node, const char* name);
  /* The subgraph held by graph attribute `attribute_name` (e.g. "then_branch"), or NULL. */
  const EphostGraph* (*node_subgraph)(const EphostNode* node, const char* attribute_name);
  /* The graph this node belongs to. */
  const EphostGraph* (*node_graph)(const EphostNode* node);

  /* --- since ABI 1: attribute. Getters fail with EPHOST_INVALID_ARGUMENT on a type mismatch. --- */
  const char* (*attribute_name)(const EphostAttribute* attribute);
  EphostAttributeType (*attribute_type)(const EphostAttribute* attribute);
  EphostStatus* (*attribute_int)(const EphostAttribute* attribute, int64_t* out);
  EphostStatus* (*attribute_float)(const EphostAttribute* attribute, float* out);
  /* `*out` points at host-owned bytes (not NUL-terminated in general; use `*out_size`). */
  EphostStatus* (*attribute_string)(const EphostAttribute* attribute, const char** out, size_t* out_size);
  /* `*out` points at a host-owned array valid as long as the graph. */
  EphostStatus* (*attribute_ints)(const EphostAttribute* attribute, const int64_t** out, size_t* out_count);
  EphostStatus* (*attribute_floats)(const EphostAttribute* attribute, const float** out, size_t* out_count);
  size_t (*attribute_num_strings)(const EphostAttribute* attribute);
  EphostStatus* (*attribute_string_at)(const EphostAttribute* attribute, size_t index, const char** out,
                                       size_t* out_size);
  /* A TENSOR attribute's value; the view stays valid as long as the graph. */
  EphostStatus* (*attribute_tensor)(const EphostAttribute* attribute, EphostTensorView* out);

  /* --- since ABI 1: value info --- */
  const char* (*value_name)(const EphostValueInfo* value);
  /* EphostElementType, or EPHOST_ELEMENT_UNDEFINED when unknown or not a tensor. */
  int32_t (*value_elem_type)(const EphostValueInfo* value);
  /* Rank, or -1 when the shape is unknown. */
  int64_t (*value_rank)(const EphostValueInfo* value);
  /* Dimension `index`: its size, or -1 when symbolic or unknown. */
  int64_t (*value_dim)(const EphostValueInfo* value, size_t index);
  /* Dimension `index`'s symbolic name, or "" when none. */
  const char* (*value_dim_param)(const EphostValueInfo* value, size_t index);
  /* The node producing this value, or NULL (graph input, initializer, outer scope). */
  const EphostNode* (*value_producer)(const EphostValueInfo* value);
  size_t (*value_num_consumers)(const EphostValueInfo* value);
  const EphostNode* (*value_consumer)(const EphostValueInfo* value, size_t index);
  int (*value_is_graph_input)(const EphostValueInfo* value);
  int (*value_is_graph_output)(const EphostValueInfo* value);
  /* An initializer that is not also a graph input (its value cannot change between runs), or a value
   * the host computes from constants (when its data is first asked for) while keeping the node that
   * makes it (a QDQ model's DequantizeLinear of a quantized weight, kept so that a provider may fuse
   * it; see plugin_api/README.md, "Constants"). Such a value still has a producer (value_producer); a
   * provider that does not fuse that node may claim it: the host then runs it in no step. */
  int (*value_is_constant_initializer)(const EphostValueInfo* value);
  int (*value_is_outer_scope)(const EphostValueInfo* value);
  /* The data of a constant initializer (as value_is_constant_initializer answers); the view stays
   * valid as long as the session. EPHOST_INVALID_ARGUMENT when the value is not a constant initializer.
   * A value the host computes from constants is computed by the first call (EPHOST_FAIL when that
   * fails): call it only for data you read. */
  EphostStatus* (*value_initializer_data)(const EphostValueInfo* value, EphostTensorView* out);

  /* --- since ABI 1: capability sink, used inside get_capability only --- */
  /* Claim one node, to be run by this provider's kernel (kernel_create). */
  EphostStatus* (*capability_add_node)(EphostCapability* capability, const EphostNode* node);
  /* Claim a group of nodes to fuse and compile into one unit (compile). The host may trim nodes
   * that an earlier provider already took, and refuses a group that would then form a cycle; both
   * are reported in the partition report. */
  EphostStatus* (*capability_add_fused_group)(EphostCapability* capability, const EphostNode* const* nodes,
                                              size_t num_nodes);

  /* --- since ABI 1: kernel context, used inside compute only --- */
  size_t (*kernel_num_inputs)(const EphostKernelContext* context);
  /* Input `index`; `out->data` is NULL for an absent optional input. Valid during compute. */
  EphostStatus* (*kernel_input)(const EphostKernelContext* context, size_t index, EphostTensorView* out);
  size_t (*kernel_num_outputs)(const EphostKernelContext* context);
  /* Allocate output `index` of element type `elem_type` (EphostElementType) with `shape`;
   * `*out_data` is host-owned, 64-byte aligned, valid during compute and must be fully written by
   * the plugin. Calling twice for one output fails. For a string output, `*out_data` is an array of
   * `const char*` (initially all "") that the plugin fills with pointers made by
   * kernel_output_string. */
  EphostStatus* (*kernel_output)(EphostKernelContext* context, size_t index, int32_t elem_type, const int64_t* shape,
                                 size_t rank, void** out_data);
  /* Copy `size` bytes of `data` into storage owned by output `index` (a string tensor) and return it,
   * NUL-terminated, for the plugin to store into that output's element array. */
  EphostStatus* (*kernel_output_string)(EphostKernelContext* context, size_t index, const char* data,
                                        size_t size, const char** out);
  /* Number of threads the provider may use for this computation (session's intra-op setting). */
  int32_t (*kernel_num_threads)(const EphostKernelContext* context);
  /* Run the subgraph held by attribute `attribute_name` of the node being computed (control flow).
   * `inputs` bind the subgraph's formal inputs in order; outer-scope values are bound by the host.
   * On success `outputs[i]` receives one new host value per subgraph output; the plugin releases
   * each with value_release. */
  EphostStatus* (*kernel_run_subgraph)(EphostKernelContext* context, const char* attribute_name,
                                       const EphostTensorView* inputs, size_t num_inputs, EphostValue** outputs,
                                       size_t num_outputs);
  /* View of a host value; valid until value_release. */
  EphostStatus* (*value_tensor)(const EphostValue* value, EphostTensorView* out);
  void (*value_release)(EphostValue* value);

  /* --- since ABI 1: EPContext sink, used inside context_emit only --- */
  /* Append `size` bytes (copied) to this group's compiled context. May be called several times: the
   * pieces are concatenated in call order, and context_judge/context_load later receive exactly that
   * concatenation. The host writes every file (temp file + rename) and, in the context binary file,
   * stores each distinct piece once (content hash): a plugin that hands every weight tensor as its
   * own piece gets deduplication across partitions and across the sessions of a weight-sharing group
   * (ep.share_ep_contexts) for free. */
  EphostStatus* (*context_set_blob)(EphostContextSink* sink, const void* data, size_t size);
  /* Set an attribute of the EPContext node: "ep_sdk_version", "hardware_architecture", "notes"
   * (strings) or "max_size" (a decimal integer). The host fills "ep_sdk_version" and
   * "hardware_architecture" from EphostPluginInfo when the plugin does not set them, and owns
   * "main_context", "ep_cache_context", "embed_mode", "source", "partition_name" and
   * "onnx_model_filename" (setting those fails with EPHOST_INVALID_ARGUMENT). */
  EphostStatus* (*context_set_attribute)(EphostContextSink* sink, const char* name, const char* value);

  /* ==============================================================================================
   * since ABI 2: sequence and optional values. Present when the negotiated version includes them,
   * EphostPluginAbiIncludes(abi_version, EPHOST_PLUGIN_ABI_NON_TENSOR_VALUES) (equivalently
   * EPHOST_STRUCT_HAS(host_api, EphostHostApi, value_create_tensor)).
   *
   * ONNX values are tensors, sequences of tensors (all of one element type), and optionals (a tensor
   * or a sequence that may be absent). At run time an optional that holds something is simply that
   * tensor or sequence; an empty one is EPHOST_VALUE_NONE (EphostValueKind, ephost_types.h).
   *
   * A plugin that negotiated ABI 1 never meets any of this: the host refuses its claims of nodes that
   * read or write a value declared as a sequence or an optional (reported in the partition report),
   * so kernel_input only ever returns tensors to it.
   *
   * Elements of sequences are immutable and may be shared between values, so the functions below
   * hand them out without copying. An EphostValue (host value) owns what it holds: the plugin
   * releases every EphostValue it receives with value_release (ABI 1), also on error paths.
   * ============================================================================================ */

  /* --- since ABI 2: value info: declared types --- */
  /* EPHOST_VALUE_TENSOR, _SEQUENCE or _OPTIONAL; EPHOST_VALUE_UNDEFINED when the model does not say.
   * value_elem_type/value_rank/value_dim describe tensors only (UNDEFINED / -1 for the others). */
  int32_t (*value_kind)(const EphostValueInfo* value);
  /* For an OPTIONAL value: the kind it may hold (TENSOR or SEQUENCE), else EPHOST_VALUE_UNDEFINED. */
  int32_t (*value_optional_kind)(const EphostValueInfo* value);
  /* The element type of the tensors the value is or holds (a tensor's own, a sequence's elements',
   * an optional's contents'); EPHOST_ELEMENT_UNDEFINED when unknown. */
  int32_t (*value_tensor_elem_type)(const EphostValueInfo* value);

  /* --- since ABI 2: kernel context: inputs of any kind, used inside compute only --- */
  /* Run-time kind of input `index`: TENSOR, SEQUENCE, or NONE (an empty optional); UNDEFINED for an
   * absent optional input or an index out of range. kernel_input fails on a SEQUENCE or NONE input. */
  int32_t (*kernel_input_kind)(const EphostKernelContext* context, size_t index);
  /* A sequence input: the element type of its tensors (known even when it is empty) and its length.
   * Either out pointer may be NULL. Fails unless the input is a sequence. */
  EphostStatus* (*kernel_input_sequence)(const EphostKernelContext* context, size_t index,
                                         int32_t* out_elem_type, size_t* out_length);
  /* Element `position` of sequence input `index`. The view is valid during compute. */
  EphostStatus* (*kernel_input_sequence_element)(const EphostKernelContext* context, size_t index, size_t position,
                                                 EphostTensorView* out);
  /* Input `index` (any kind) as a new host value, e.g. to pass it to a subgraph or on to an output.
   * Nothing is copied; the plugin releases it with value_release before compute returns (it refers to
   * memory the host reuses after the call). Fails for an absent optional input. */
  EphostStatus* (*kernel_input_value)(const EphostKernelContext* context, size_t index, EphostValue** out);

  /* --- since ABI 2: kernel context: outputs of any kind, used inside compute only. Each output is set
   * once, by exactly one of kernel_output, kernel_output_sequence, kernel_output_none or
   * kernel_output_value. --- */
  /* Make output `index` a sequence of `length` tensors of `elem_type`. Every element must then be
   * written exactly once, before compute returns, with kernel_output_sequence_element or
   * kernel_output_sequence_element_value (the host checks). */
  EphostStatus* (*kernel_output_sequence)(EphostKernelContext* context, size_t index, int32_t elem_type,
                                          size_t length);
  /* Allocate element `position` of sequence output `index` with `shape`; `*out_data` is host-owned,
   * 64-byte aligned, writable during compute only, and must be fully written. For strings it is an
   * array of `const char*` (initially all "") filled with pointers from
   * kernel_output_sequence_element_string. */
  EphostStatus* (*kernel_output_sequence_element)(EphostKernelContext* context, size_t index, size_t position,
                                                  const int64_t* shape, size_t rank, void** out_data);
  /* Copy `size` bytes of `data` into storage owned by element `position` of string sequence output
   * `index`, and return it NUL-terminated, to be stored into that element's array. */
  EphostStatus* (*kernel_output_sequence_element_string)(EphostKernelContext* context, size_t index,
                                                         size_t position, const char* data, size_t size,
                                                         const char** out);
  /* Set element `position` of sequence output `index` to a tensor of host value `value`: the value
   * itself when it is a tensor (`value_position` 0), or its element `value_position` when it is a
   * sequence. Shared, not copied (a tensor from kernel_input_value is copied). `value` stays the
   * plugin's to release. */
  EphostStatus* (*kernel_output_sequence_element_value)(EphostKernelContext* context, size_t index,
                                                        size_t position, const EphostValue* value,
                                                        size_t value_position);
  /* Make output `index` an empty optional (EPHOST_VALUE_NONE). */
  EphostStatus* (*kernel_output_none)(EphostKernelContext* context, size_t index);
  /* Set output `index` to host value `value` (a tensor, a sequence or none), e.g. a subgraph's
   * result. Shared, not copied (a tensor from kernel_input_value is copied). `value` stays the
   * plugin's to release. */
  EphostStatus* (*kernel_output_value)(EphostKernelContext* context, size_t index, const EphostValue* value);
  /* kernel_run_subgraph with inputs of any kind: `inputs[i]` (host values, not consumed: the plugin
   * still releases them) bind the subgraph's formal inputs in order; outer-scope values are bound by
   * the host. On success `outputs[i]` receives one new host value per subgraph output (any kind). */
  EphostStatus* (*kernel_run_subgraph_values)(EphostKernelContext* context, const char* attribute_name,
                                              const EphostValue* const* inputs, size_t num_inputs,
                                              EphostValue** outputs, size_t num_outputs);

  /* --- since ABI 2: host values of any kind --- */
  /* What `value` holds: TENSOR, SEQUENCE or NONE. */
  int32_t (*value_held_kind)(const EphostValue* value);
  /* A sequence value's element type and length (either out pointer may be NULL). */
  EphostStatus* (*value_sequence)(const EphostValue* value, int32_t* out_elem_type, size_t* out_length);
  /* Element `position` of a sequence value; the view is valid until `value` is released. */
  EphostStatus* (*value_sequence_element)(const EphostValue* value, size_t position, EphostTensorView* out);
  /* Element `position` of a sequence value as a new host value (shared, not copied); released with
   * value_release, independently of `value`. */
  EphostStatus* (*value_sequence_element_value)(const EphostValue* value, size_t position, EphostValue** out);
  /* A new host value holding a copy of tensor `source` (strings included); released with
   * value_release. For feeding subgraphs tensors the plugin computed (an iteration number, a slice). */
  EphostStatus* (*value_create_tensor)(const EphostTensorView* source, EphostValue** out);

  /* ==============================================================================================
   * since ABI 3: device memory in kernels. Present when
   * EphostPluginAbiIncludes(abi_version, EPHOST_PLUGIN_ABI_DEVICES).
   *
   * A provider created for a device whose memory is not host-usable (provider_create_for_device,
   * EphostDeviceInfo::host_memory_usable == 0) is a device provider: every tensor input of its
   * kernels and compiled groups is in that device's memory, and it writes every tensor output there.
   * The host copies what comes from elsewhere (graph inputs, other devices, the CPU) before the step
   * and what goes elsewhere after it, once per value and device, and never touches device memory
   * itself. All other providers see host memory only, exactly as in ABI 2. Sequence and optional
   * values always stay in host memory.
   *
   * For a device provider, kernel_input and kernel_output fail (EPHOST_INVALID_ARGUMENT): use the
   * functions below.
   * ============================================================================================ */

  /* --- since ABI 3: kernel context: tensors with their location, and the run's stream --- */
  /* Input `index` and where it lives; for an absent optional input elem_type is UNDEFINED. The shape
   * and buffer are valid during compute. Fails for a sequence or none input (kernel_input_kind). */
  EphostStatus* (*kernel_input_memory)(const EphostKernelContext* context, size_t index, EphostTensorMemory* out);
  /* Allocate tensor output `index` with `shape` in the device provider's device memory (the host
   * allocates it with the plugin's device_allocate, inside the run's memory-pattern block when one is
   * recorded for these input shapes) and describe it in `out`. The plugin writes every element before
   * compute returns, or enqueues the writes on kernel_stream. Calling it twice for one output fails;
   * so does calling it from a host provider (use kernel_output). */
  EphostStatus* (*kernel_output_device)(EphostKernelContext* context, size_t index, int32_t elem_type,
                                        const int64_t* shape, size_t rank, EphostTensorMemory* out);
  /* The stream of this run on the device provider's device (made with the plugin's stream_create, one
   * per run and device, reused across runs), or NULL for a host provider or a plugin without streams.
   * A kernel may enqueue its work on it and return before the work finishes: the host enqueues the
   * copies of the same run on the same stream, and calls stream_synchronize before it reads anything
   * the stream writes to host memory, before a step of another device reads the results, and before
   * the run returns (before on_run_end). */
  EphostStream* (*kernel_stream)(const EphostKernelContext* context);

  /* ==============================================================================================
   * since ABI 4: profile spans inside a step. Present when
   * EphostPluginAbiIncludes(abi_version, EPHOST_PLUGIN_ABI_PROFILE_SPANS).
   *
   * With session profiling on (session.enable_profiling=1) the host records a span per step (a node's
   * kernel, or a fused group's compute). A compute that runs several operators (a compiled group, a
   * kernel covering several nodes) may report what each one took; the host nests those spans under
   * the step's span in the trace (category "op"), and `ephost bench --per-op` sums them by operator
   * type and by node. Nothing here is required: a compute that reports nothing keeps its one span.
   *
   * Costs nothing when profiling is off: ask kernel_profiling once per compute and skip the clock
   * reads and the reports when it answers 0. Spans should tile the compute (each begins where the
   * previous ended), so that they add up to the step's time.
   * ============================================================================================ */

  /* --- since ABI 4: kernel context: profile spans, used inside compute only --- */
  /* 1 when the session records a profile (spans will be kept), else 0. Constant during a compute
   * call. Cheap: no clock is read. */
  int (*kernel_profiling)(const EphostKernelContext* context);
  /* Now, in nanoseconds since the step's span began, on the clock the host times the step with (so
   * that spans line up with it). 0 when profiling is off. Any thread may call it during compute. */
  int64_t (*kernel_profile_clock_ns)(const EphostKernelContext* context);
  /* Record `span` (read during the call only; the host copies its strings) inside the step's span.
   * Times come from kernel_profile_clock_ns; the host clips a span to lie between the step's start
   * and the moment of this call, so it always nests. Any thread may call it during compute; the span
   * is filed under the thread that runs the step. Does nothing and succeeds when profiling is off.
   * Fails with EPHOST_INVALID_ARGUMENT when span or span->name is NULL, span->struct_size is too small
   * or nodes is NULL with num_nodes > 0. */
  EphostStatus* (*kernel_profile_span)(EphostKernelContext* context, const EphostProfileSpan* span);

  /* ==============================================================================================
   * since ABI 4: run control (EPHOST_PLUGIN_ABI_RUN_CONTROL). Present when
   * EphostPluginAbiIncludes(abi_version, EPHOST_PLUGIN_ABI_RUN_CONTROL).
   *
   * An application may stop a run in progress (EphostRunOptions' terminate, set from another
   * thread) or give it a deadline (its timeout), and a session's creation has a deadline too
   * (session.compile_timeout_ms: constant folding runs kernels then). The host checks both between
   * steps; a long compute learns of them by polling kernel_run_check and stops early. A plugin that
   * never polls still works: the run stops after its compute returns.
   * ============================================================================================ */

  /* --- since ABI 4: run control: whether the run should stop, used inside compute --- */
  /* NULL while the run this compute belongs to may go on. Once it should stop, a new status the
   * plugin owns, saying why with the host's message: EPHOST_CANCELLED (the run's terminate was set)
   * or EPHOST_DEADLINE_EXCEEDED (the run's deadline passed). The plugin should then stop its work as
   * soon as it can (outputs may be left unwritten or partly written) and return that status, or
   * release it and return its own: once the run should stop, the run fails with the host's status
   * whatever compute returns, and the session stays usable for the next runs.
   * Cheap (an atomic load and, for a run with a deadline, a read of a monotonic clock: tens of
   * nanoseconds), so poll it between chunks of long work, e.g. every millisecond or so, or at least
   * between the iterations of a loop the plugin runs itself. Thread-safe: any thread working for this
   * compute may call it while compute is in progress. `context` is the compute's kernel context
   * (single node or fused group); it is never valid after compute returns. */
  EphostStatus* (*kernel_run_check)(const EphostKernelContext* context);

  /* ==============================================================================================
   * since ABI 5: giving constant initializers back (EPHOST_PLUGIN_ABI_INITIALIZER_RELEASE). Present
   * when EphostPluginAbiIncludes(abi_version, EPHOST_PLUGIN_ABI_INITIALIZER_RELEASE).
   *
   * A provider that packs weights into a form of its own (reordered for a GEMM, a device upload)
   * keeps two copies of them in the process: its own and the host's. As ONNX Runtime frees an
   * initializer once every kernel reading it pre-packed it (PrePack's is_packed), a provider may say
   * it is done with a constant initializer; the host then gives that initializer's memory back to the
   * system once nothing else needs it.
   * ============================================================================================ */

  /* --- since ABI 5: constant initializers: done with one --- */
  /* Tells the host that `provider` will not read the data of constant initializer `value` again: it
   * holds everything it needs (a packed copy), for every input shape and thread count it may run
   * with, also when it would build another packed form later. From this call on, every view this
   * provider got from value_initializer_data for `value` may become invalid (the ABI 1 promise, "valid
   * as long as the session", is lifted for this provider and this value only).
   *
   * The host frees the bytes only when every provider whose kernels or fused groups read `value`, and
   * every provider that was handed its data, said it is done; when it is not a graph input or output;
   * and when it can read them back from the model file (a model loaded from a buffer keeps them). A
   * later need (the session plans again after a provider fell back, a provider asks
   * value_initializer_data again) reads them back from the file and checks them against what was
   * freed, or fails with a status naming the initializer; a freed initializer never reads as other
   * bytes. A provider that asks again after this call holds a view with the ABI 1 lifetime again,
   * until it calls this again.
   *
   * Only a provider that was handed the data (value_initializer_data) can be done with it: "done"
   * with bytes a provider never asked for frees nothing (its step may read them as an input).
   *
   * Call it from compile or kernel_create (or later, from any thread, while the provider lives), with
   * `provider` the provider the host passed to that call and `value` any EphostValueInfo of the
   * initializer (the group's or the main graph's). Inside compile or kernel_create it counts for that
   * fused group or kernel; elsewhere for every step of the provider. Calling it again is harmless.
   * A hint, not a transfer: nothing changes hands, and the call is cheap (no data is read). Returns
   * NULL also when the host keeps the bytes (a value that is not a constant initializer, a model from
   * a buffer, another reader); EPHOST_INVALID_ARGUMENT for a NULL or foreign handle: a provider the
   * host did not create or already released (nothing is read through `value` then), another
   * provider than the one whose call is running, a value that is no value info. Thread-safe.
   *
   * A compute that reads the value as an input after its provider said it was done gets the bytes
   * read back from the model file (a warning in the log: a plugin bug), never a crash. */
  EphostStatus* (*value_initializer_done)(EphostProvider* provider, const EphostValueInfo* value);
} EphostHostApi;

/* ------------------------------------------------------------------------------------------------
 * EphostPlugin — what a plugin offers the host. Plugin-owned (usually a static const), valid until
 * the library is unloaded. A NULL optional member means "not supported".
 * ---------------------------------------------------------------------------------------------- */
typedef struct EphostPlugin {
  /* --- since ABI 1: the table's size and version --- */
  uint32_t struct_size; /* at least EphostPluginSize(abi_version) */
  uint32_t abi_version; /* must equal the version answered in negotiation */

  /* --- since ABI 1: description, providers, capability, kernels, compiled groups, runs --- */
  /* Fill `info` (its struct_size is set by the host). Required. Called once after negotiation. */
  EphostStatus* (*describe)(EphostPluginInfo* info);

  /* Create a provider for one session. `keys`/`values` are the provider options (host-owned, valid
   * during the call): every `ep.<name>.<key>` session entry, plus "intra_op_num_threads". Required.
   * The provider is released with provider_release. */
  EphostStatus* (*provider_create)(const char* const* keys, const char* const* values, size_t num_options,
                                   EphostProvider** out_provider);
  void (*provider_release)(EphostProvider* provider);

  /* Claim the nodes of `graph` this provider will run, through `capability`. Required. Answer from `graph`
   * alone: it may be asked again (max_coverage, function bodies) or not at all (plugin_api/README.md, "When
   * get_capability is called"). A failure is logged and reported, and costs that graph, never the session. */
  EphostStatus* (*get_capability)(EphostProvider* provider, const EphostGraph* graph, EphostCapability* capability);

  /* Create the kernel for a node claimed with capability_add_node. The node stays valid for the
   * session's lifetime, so a kernel may keep it. Optional when the plugin never claims single nodes. */
  EphostStatus* (*kernel_create)(EphostProvider* provider, const EphostNode* node, EphostKernel** out_kernel);
  /* Run the kernel. May be called from several threads at once (concurrent runs). */
  EphostStatus* (*kernel_compute)(EphostKernel* kernel, EphostKernelContext* context);
  void (*kernel_release)(EphostKernel* kernel);

  /* Compile a fused group claimed with capability_add_fused_group. `group` is a view over the
   * group's nodes; its inputs/outputs are the group's boundary, in the order the kernel context uses
   * (inputs: values consumed from outside the group in first-use order, constant initializers
   * included; outputs: values the group produces that are used outside it or are graph outputs).
   * `group` is valid during the call only (copy what you need). Optional. */
  EphostStatus* (*compile)(EphostProvider* provider, const EphostGraph* group, const char* fused_name,
                           EphostComputeInfo* out_compute);

  /* Called before and after every Run of a session that uses this provider. Optional. Runs of one
   * session may overlap (concurrent Run calls), so these may be called from several threads at once;
   * on_run_end is called even when the run failed. */
  EphostStatus* (*on_run_start)(EphostProvider* provider);
  EphostStatus* (*on_run_end)(EphostProvider* provider);

  /* --- since ABI 1: EPContext (seed: ONNX Runtime's EPContext design) ---
   * A compiled group is cached as one `com.microsoft` EPContext node. Its inputs are the group's
   * boundary inputs that are NOT constant initializers, in the group's input order (the weights
   * live in the context, so the blob must carry every constant initializer the program needs); its
   * outputs are the group's outputs in order. A compute unit made by context_load receives exactly
   * the EPContext node's inputs and outputs in that order. */

  /* Generation (session option ep.context_enable=1): called once per fused group this provider
   * compiled, after all compiles of the session, with the `fused_name` compile received (it carries
   * the ep.context_node_name_prefix and becomes the node name and `partition_name`). The plugin
   * writes its serialized program into `sink` with context_set_blob / context_set_attribute; `sink`
   * is valid during the call only. A plugin without context_emit (NULL) is never cached: its groups
   * are compiled again on every session, and the host says so in the log. Optional. */
  EphostStatus* (*context_emit)(EphostProvider* provider, const char* fused_name, EphostContextSink* sink);

  /* Loading: judge an EPContext node whose `source` is one of this plugin's context_source_keys,
   * before it is loaded. `context_node` is the EPContext node (read its attributes, e.g.
   * "ep_sdk_version", "hardware_architecture", "partition_name"); `blob`/`blob_size` are the bytes
   * context_emit produced (for embed_mode 0 the host has read and verified the binary file), valid
   * during the call only. Set `*out_verdict`; set `*out_reason` (plugin-owned string valid until the
   * next call on this provider, or NULL) to name the field that decided, e.g. "sdk_version 2.0.0 !=
   * 3.0.0", "hardware_architecture", "driver_version", "format_version", "truncated blob",
   * "checksum". UNSUPPORTED makes the host report INVALID_GRAPH with that reason and run the
   * partition's original nodes on the remaining providers instead (unless
   * session.disable_ep_context_fallback=1); PREFER_RECOMPILE loads but warns (fails with
   * session.fail_on_suboptimal_compiled_model=1); NOT_MINE asks the next plugin with a matching key.
   * Must never crash on arbitrary bytes. Optional: without it every matching context is loaded. */
  EphostStatus* (*context_judge)(EphostProvider* provider, const EphostNode* context_node, const void* blob,
                                 size_t blob_size, EphostContextVerdict* out_verdict, const char** out_reason);

  /* Load a context judged usable into a compute unit, as compile does for a fused group (the host
   * calls create_state/compute/release_state/release the same way). `context_node` and `blob` are
   * valid during the call only: copy what the program needs. A failure is treated like UNSUPPORTED (INVALID_GRAPH, then
   * fallback). Required when context_source_keys is not empty. */
  EphostStatus* (*context_load)(EphostProvider* provider, const EphostNode* context_node, const void* blob,
                                size_t blob_size, EphostComputeInfo* out_compute);

  /* ==============================================================================================
   * since ABI 3: devices, device memory, data transfer and streams (as ONNX Runtime's OrtEpDevice,
   * allocators per OrtMemoryDevice, OrtDataTransferImpl and OrtSyncStreamImpl).
   *
   * A plugin whose device_count is NULL drives no device of its own: the host creates its providers
   * with provider_create and gives them host memory, as in ABI 2. A plugin with device_count must
   * also fill provider_create_for_device, device_describe, device_allocate, device_free,
   * copy_to_device and copy_to_host; the stream functions and copy_between_devices are optional.
   *
   * Devices are numbered 0..count-1 by the plugin, fixed for the library's lifetime. Every function
   * here may be called from several threads at once, also for one device. None of them is called
   * with a device index out of range.
   *
   * Streams. With `stream` NULL a copy is synchronous: done when the function returns. With a stream
   * it may only be enqueued: it runs after the work enqueued on that stream before it, and is done
   * when stream_synchronize returns. Until then the host keeps a host source alive and unchanged and
   * does not read a host destination. A plugin without streams (stream_create NULL) copies
   * synchronously and its kernels see kernel_stream NULL.
   * ============================================================================================ */

  /* --- since ABI 3: devices --- */
  /* How many devices the plugin drives (may be 0: the plugin then offers no provider). Called once,
   * after describe. */
  EphostStatus* (*device_count)(uint32_t* out_count);
  /* Fill `info` (its struct_size is set by the host) for device `device`. Called once per device,
   * after device_count. */
  EphostStatus* (*device_describe)(uint32_t device, EphostDeviceInfo* info);
  /* Create a provider for one session on device `device`, with options as provider_create. The
   * provider's kernels and compiled groups run on that device. Released with provider_release. */
  EphostStatus* (*provider_create_for_device)(uint32_t device, const char* const* keys, const char* const* values,
                                              size_t num_options, EphostProvider** out_provider);

  /* --- since ABI 3: device memory --- */
  /* Allocate `bytes` (> 0) of memory of `kind` (EphostMemoryKind, one the device offers) on device
   * `device`, aligned to at least 64 bytes, and return it in `out`. The buffer is the host's until
   * device_free. Fails with EPHOST_FAIL (or a more precise code) when the memory is exhausted. */
  EphostStatus* (*device_allocate)(uint32_t device, int32_t kind, uint64_t bytes, EphostDeviceBuffer* out);
  /* Free a buffer device_allocate returned, exactly as it returned it. The host has synchronized
   * every stream that used it. Never fails. */
  void (*device_free)(uint32_t device, int32_t kind, EphostDeviceBuffer buffer);

  /* --- since ABI 3: data transfer --- */
  /* Copy `bytes` from host memory `src` to `dst` on device `device`. */
  EphostStatus* (*copy_to_device)(uint32_t device, EphostStream* stream, const void* src, EphostDeviceBuffer dst,
                                  uint64_t bytes);
  /* Copy `bytes` from `src` on device `device` to host memory `dst`. */
  EphostStatus* (*copy_to_host)(uint32_t device, EphostStream* stream, EphostDeviceBuffer src, void* dst,
                                uint64_t bytes);
  /* Copy `bytes` between two devices of this plugin (or within one), on `stream` (of `src_device`,
   * or NULL). Optional: without it the host stages the copy through host memory. */
  EphostStatus* (*copy_between_devices)(EphostStream* stream, uint32_t src_device, EphostDeviceBuffer src,
                                        uint32_t dst_device, EphostDeviceBuffer dst, uint64_t bytes);

  /* --- since ABI 3: streams --- */
  /* A new stream on device `device`; released with stream_release. The host keeps a few per device
   * and uses each for one run at a time. Optional (with stream_synchronize and stream_release). */
  EphostStatus* (*stream_create)(uint32_t device, EphostStream** out_stream);
  /* Wait until everything enqueued on `stream` is done. A failure of enqueued work is reported here
   * (the run then fails with EP_FAIL naming the provider). */
  EphostStatus* (*stream_synchronize)(EphostStream* stream);
  /* Release a stream the host synchronized. */
  void (*stream_release)(EphostStream* stream);
} EphostPlugin;

/* ------------------------------------------------------------------------------------------------
 * Negotiation.
 * ---------------------------------------------------------------------------------------------- */
typedef struct EphostPluginNegotiation {
  /* since ABI 1 */
  uint32_t struct_size;
  /* In: the range of plugin ABI versions the host speaks. */
  uint32_t host_min_abi_version;
  uint32_t host_max_abi_version;
  /* In: the host's function table; valid until the library is unloaded. Once negotiation succeeds
   * the host sets its abi_version to the negotiated version and cuts it to that version's size
   * (EphostHostApiSize). */
  const EphostHostApi* host_api;
  /* Out: the version the plugin will speak, within [host_min, host_max]. */
  uint32_t plugin_abi_version;
  /* Out: the plugin's function table (plugin-owned, valid until unload). */
  const EphostPlugin* plugin;
} EphostPluginNegotiation;

/*
 * The entry point (exported as EPHOST_PLUGIN_ENTRY_POINT). Called once per load. The plugin picks
 * the newest version it speaks that is <= host_max_abi_version; if none is >= host_min_abi_version it
 * returns a status (EPHOST_NOT_IMPLEMENTED) saying which versions it speaks. The host enforces the
 * range too: an answer outside it is refused and the library skipped with that reason.
 */
typedef EphostStatus* (*EphostPluginNegotiateFn)(EphostPluginNegotiation* negotiation);

/* ------------------------------------------------------------------------------------------------
 * The size of each function table as each version defines it: the struct_size a table of that
 * version carries (it ends with the last member of that version's "since ABI" block). 0 for a
 * version this header does not know. Header-only: no symbol. A new version adds a case here
 * (plugin_api/ABI_VERSIONING.md).
 * ---------------------------------------------------------------------------------------------- */
static inline uint32_t EphostHostApiSize(uint32_t abi_version) {
  switch (abi_version) {
    case 1: return (uint32_t)EPHOST_STRUCT_SIZE_THROUGH(EphostHostApi, context_set_attribute);
    case 2: return (uint32_t)EPHOST_STRUCT_SIZE_THROUGH(EphostHostApi, value_create_tensor);
    case 3: return (uint32_t)EPHOST_STRUCT_SIZE_THROUGH(EphostHostApi, kernel_stream);
    case 4: return (uint32_t)EPHOST_STRUCT_SIZE_THROUGH(EphostHostApi, kernel_run_check);
    case 5: return (uint32_t)EPHOST_STRUCT_SIZE_THROUGH(EphostHostApi, value_initializer_done);
    default: return 0;
  }
}

/* EphostPlugin did not grow in ABI 2: both versions end with context_load. ABI 3 appends devices.
 * ABI 4 and 5 grow the host's table only: ABI 3, 4 and 5 plugin tables end with stream_release. */
static inline uint32_t EphostPluginSize(uint32_t abi_version) {
  switch (abi_version) {
    case 1:
    case 2: return (uint32_t)EPHOST_STRUCT_SIZE_THROUGH(EphostPlugin, context_load);
    case 3:
    case 4:
    case 5: return (uint32_t)EPHOST_STRUCT_SIZE_THROUGH(EphostPlugin, stream_release);
    default: return 0;
  }
}

#ifdef __cplusplus
}
#endif

#endif /* EPHOST_PLUGIN_H_ */
