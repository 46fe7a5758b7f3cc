/*
 * ONNX Runtime's plugin-EP ABI, as ephost serves it: the C declarations of the function tables and
 * structs that an ONNX Runtime plugin EP library (one exporting CreateEpFactories / ReleaseEpFactory)
 * exchanges with its host. Written for ephost from the published facts of ONNX Runtime's
 * onnxruntime_c_api.h and onnxruntime_ep_c_api.h (names, signatures, member order, enum values); the
 * layout is what matters, and tests/unit/ort_ep/ort_abi_layout_test.cpp freezes it.
 *
 * Only Linux (ORTCHAR_T is char, the default calling convention). Plain C, so that the test plugins in
 * tests/plugins/ort_ep/ are written against it exactly as a vendor's C plugin would be.
 *
 * Tables: OrtApi (426 entries, API 30), OrtEpApi (74) and OrtModelEditorApi (20) list their entries in
 * ort_*_entries.inc. An entry the host implements is declared with its signature; an entry it does not
 * implement keeps its slot, name and place, typed OrtUnimplementedEntry (a plugin that calls it gets
 * ORT_NOT_IMPLEMENTED naming the function, or 0 / nothing for entries that return no status).
 */
#ifndef EPHOST_ORT_EP_ORT_ABI_H_
#define EPHOST_ORT_EP_ORT_ABI_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The newest API version the host answers (OrtApiBase::GetApi: 22..30, NULL above). */
#define EPHOST_ORT_API_VERSION_MAX 30u
/* The first API version with plugin EPs (ONNX Runtime 1.22). */
#define EPHOST_ORT_API_VERSION_MIN 22u

#define ORTCHAR_T char

typedef enum OrtErrorCode {
  ORT_OK = 0,
  ORT_FAIL = 1,
  ORT_INVALID_ARGUMENT = 2,
  ORT_NO_SUCHFILE = 3,
  ORT_NO_MODEL = 4,
  ORT_ENGINE_ERROR = 5,
  ORT_RUNTIME_EXCEPTION = 6,
  ORT_INVALID_PROTOBUF = 7,
  ORT_MODEL_LOADED = 8,
  ORT_NOT_IMPLEMENTED = 9,
  ORT_INVALID_GRAPH = 10,
  ORT_EP_FAIL = 11,
  ORT_MODEL_LOAD_CANCELED = 12,
  ORT_MODEL_REQUIRES_COMPILATION = 13,
  ORT_NOT_FOUND = 14,
} OrtErrorCode;

/* Element types: the values of ONNX's TensorProto.DataType (UNDEFINED 0, FLOAT 1, ... BFLOAT16 16). */
typedef enum ONNXTensorElementDataType {
  ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED = 0,
  ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT = 1,
  ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT8 = 2,
  ONNX_TENSOR_ELEMENT_DATA_TYPE_INT8 = 3,
  ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT16 = 4,
  ONNX_TENSOR_ELEMENT_DATA_TYPE_INT16 = 5,
  ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32 = 6,
  ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64 = 7,
  ONNX_TENSOR_ELEMENT_DATA_TYPE_STRING = 8,
  ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL = 9,
  ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16 = 10,
  ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE = 11,
  ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT32 = 12,
  ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT64 = 13,
  ONNX_TENSOR_ELEMENT_DATA_TYPE_COMPLEX64 = 14,
  ONNX_TENSOR_ELEMENT_DATA_TYPE_COMPLEX128 = 15,
  ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16 = 16,
} ONNXTensorElementDataType;

typedef enum ONNXType {
  ONNX_TYPE_UNKNOWN = 0,
  ONNX_TYPE_TENSOR = 1,
  ONNX_TYPE_SEQUENCE = 2,
  ONNX_TYPE_MAP = 3,
  ONNX_TYPE_OPAQUE = 4,
  ONNX_TYPE_SPARSETENSOR = 5,
  ONNX_TYPE_OPTIONAL = 6,
} ONNXType;

typedef enum OrtLoggingLevel {
  ORT_LOGGING_LEVEL_VERBOSE = 0,
  ORT_LOGGING_LEVEL_INFO = 1,
  ORT_LOGGING_LEVEL_WARNING = 2,
  ORT_LOGGING_LEVEL_ERROR = 3,
  ORT_LOGGING_LEVEL_FATAL = 4,
} OrtLoggingLevel;

typedef enum OrtOpAttrType {
  ORT_OP_ATTR_UNDEFINED = 0,
  ORT_OP_ATTR_INT = 1,
  ORT_OP_ATTR_INTS = 2,
  ORT_OP_ATTR_FLOAT = 3,
  ORT_OP_ATTR_FLOATS = 4,
  ORT_OP_ATTR_STRING = 5,
  ORT_OP_ATTR_STRINGS = 6,
  ORT_OP_ATTR_GRAPH = 7,
  ORT_OP_ATTR_TENSOR = 8,
} OrtOpAttrType;

typedef enum OrtAllocatorType {
  OrtInvalidAllocator = -1,
  OrtDeviceAllocator = 0,
  OrtArenaAllocator = 1,
  OrtReadOnlyAllocator = 2,
} OrtAllocatorType;

typedef enum OrtMemType {
  OrtMemTypeCPUInput = -2,
  OrtMemTypeCPUOutput = -1,
  OrtMemTypeCPU = -1,
  OrtMemTypeDefault = 0,
} OrtMemType;

typedef enum OrtDeviceMemoryType {
  OrtDeviceMemoryType_DEFAULT = 0,
  OrtDeviceMemoryType_HOST_ACCESSIBLE = 5,
} OrtDeviceMemoryType;

typedef enum OrtMemoryInfoDeviceType {
  OrtMemoryInfoDeviceType_CPU = 0,
  OrtMemoryInfoDeviceType_GPU = 1,
  OrtMemoryInfoDeviceType_FPGA = 2,
  OrtMemoryInfoDeviceType_NPU = 3,
} OrtMemoryInfoDeviceType;

typedef enum OrtHardwareDeviceType {
  OrtHardwareDeviceType_CPU = 0,
  OrtHardwareDeviceType_GPU = 1,
  OrtHardwareDeviceType_NPU = 2,
} OrtHardwareDeviceType;

/* API 24: the bits of an OrtDeviceEpIncompatibilityDetails' reasons bitmask. */
typedef enum OrtDeviceEpIncompatibilityReason {
  OrtDeviceEpIncompatibility_NONE = 0,
  OrtDeviceEpIncompatibility_DRIVER_INCOMPATIBLE = 1 << 0,
  OrtDeviceEpIncompatibility_DEVICE_INCOMPATIBLE = 1 << 1,
  OrtDeviceEpIncompatibility_MISSING_DEPENDENCY = 1 << 2,
  OrtDeviceEpIncompatibility_UNKNOWN = (int)(1u << 31),
} OrtDeviceEpIncompatibilityReason;

typedef enum OrtCompiledModelCompatibility {
  OrtCompiledModelCompatibility_EP_NOT_APPLICABLE = 0,
  OrtCompiledModelCompatibility_EP_SUPPORTED_OPTIMAL = 1,
  OrtCompiledModelCompatibility_EP_SUPPORTED_PREFER_RECOMPILATION = 2,
  OrtCompiledModelCompatibility_EP_UNSUPPORTED = 3,
} OrtCompiledModelCompatibility;

/* API 25: what a profiling event describes. */
typedef enum OrtProfilingEventCategory {
  OrtProfilingEventCategory_SESSION = 0,
  OrtProfilingEventCategory_NODE = 1,
  OrtProfilingEventCategory_KERNEL = 2,
  OrtProfilingEventCategory_API = 3,
} OrtProfilingEventCategory;

typedef enum OrtEpDataLayout {
  OrtEpDataLayout_NCHW = 0,
  OrtEpDataLayout_NHWC = 1,
} OrtEpDataLayout;

/* Opaque objects: the host defines them (host/ort_ep/ort_objects.h); plugins only hold pointers. */
typedef struct OrtStatus OrtStatus;
typedef struct OrtEnv OrtEnv;
typedef struct OrtMemoryInfo OrtMemoryInfo;
typedef struct OrtValue OrtValue;
typedef struct OrtRunOptions OrtRunOptions;
typedef struct OrtTypeInfo OrtTypeInfo;
typedef struct OrtTensorTypeAndShapeInfo OrtTensorTypeAndShapeInfo;
typedef struct OrtSessionOptions OrtSessionOptions;
typedef struct OrtOpAttr OrtOpAttr;
typedef struct OrtLogger OrtLogger;
typedef struct OrtValueInfo OrtValueInfo;
typedef struct OrtNode OrtNode;
typedef struct OrtGraph OrtGraph;
typedef struct OrtHardwareDevice OrtHardwareDevice;
typedef struct OrtEpDevice OrtEpDevice;
typedef struct OrtKeyValuePairs OrtKeyValuePairs;
typedef struct OrtSyncStream OrtSyncStream;
typedef struct OrtKernelContext OrtKernelContext;
typedef struct OrtEpGraphSupportInfo OrtEpGraphSupportInfo;
typedef struct OrtMemoryDevice OrtMemoryDevice;
typedef struct OrtNodeComputeContext OrtNodeComputeContext;
typedef struct OrtKernelRegistry OrtKernelRegistry;
typedef struct OrtSyncStreamImpl OrtSyncStreamImpl;
typedef struct OrtDataTransferImpl OrtDataTransferImpl;
/* Kernel-registry EPs (API 24): the registry, kernel definitions and their builder, the data types a type
 * constraint allows, and the per-node view a kernel is created from. */
typedef struct OrtKernelInfo OrtKernelInfo;
typedef struct OrtKernelDefBuilder OrtKernelDefBuilder;
typedef struct OrtKernelDef OrtKernelDef;
typedef struct OrtDataType OrtDataType;
typedef struct OrtKernelImpl OrtKernelImpl;
typedef struct OrtSharedPrePackedWeightCache OrtSharedPrePackedWeightCache;
/* API 24: why a factory's EP cannot use a hardware device (OrtEpFactory::GetHardwareDeviceIncompatibilityDetails). */
typedef struct OrtDeviceEpIncompatibilityDetails OrtDeviceEpIncompatibilityDetails;
typedef OrtStatus* (*OrtKernelCreateFunc)(void* kernel_create_func_state, const OrtKernelInfo* info,
                                          OrtKernelImpl** kernel_out);
/* API 24: the helpers an EP hands the host's Loop and Scan kernels (CreateLoopKernel / CreateScanKernel), which
 * work on the EP's device memory for them (defined below). */
typedef struct OrtLoopKernelHelper OrtLoopKernelHelper;
typedef struct OrtScanKernelHelper OrtScanKernelHelper;
/* API 25: an ONNX operator schema as the host's schema registry knows it (GetOpSchema), and one of its type
 * constraints. */
typedef struct OrtOpSchema OrtOpSchema;
typedef struct OrtOpSchemaTypeConstraint OrtOpSchemaTypeConstraint;
/* API 25: one profiling event (an EP's, made with CreateProfilingEvent, or the host's, handed to
 * OrtEpProfilerImpl::StopEvent), and the container OrtEpProfilerImpl::EndProfiling adds an EP's events to. */
typedef struct OrtProfilingEvent OrtProfilingEvent;
typedef struct OrtProfilingEventsContainer OrtProfilingEventsContainer;

typedef struct OrtApi OrtApi;
typedef struct OrtEpApi OrtEpApi;
/* What a plugin implements (defined below the tables). */
typedef struct OrtEpFactory OrtEpFactory;
typedef struct OrtEp OrtEp;
typedef struct OrtNodeFusionOptions OrtNodeFusionOptions;
typedef struct OrtNodeComputeInfo OrtNodeComputeInfo;
typedef struct OrtModelEditorApi OrtModelEditorApi;

/* What GetExperimentalFunction answers: cast to the function's real type. */
typedef void (*OrtExperimentalFnPtr)(void);
/*
 * The experimental functions GetExperimentalFunction answers (ONNX Runtime names them "<name>_SinceV<version>"):
 * the EPContext configuration an EP extracts from its session options in CreateEp, and the application's
 * callbacks for reading and writing EPContext binaries (named buffers) it carries. A callback the
 * application registered none of comes back NULL with a NULL state: the EP then reads and writes files.
 */
typedef struct OrtEpContextConfig OrtEpContextConfig;
struct OrtAllocator;
typedef OrtStatus* (*OrtWriteNamedBufferFunc)(void* state, const char* name, const void* buffer, size_t num_bytes);
typedef OrtStatus* (*OrtReadNamedBufferFunc)(void* state, const char* name, struct OrtAllocator* allocator,
                                             void** buffer, size_t* num_bytes);
#define ORT_EXPERIMENTAL_GET_EP_CONTEXT_CONFIG "OrtEpApi_SessionOptions_GetEpContextConfig_SinceV28"
#define ORT_EXPERIMENTAL_RELEASE_EP_CONTEXT_CONFIG "OrtEpApi_ReleaseEpContextConfig_SinceV28"
#define ORT_EXPERIMENTAL_GET_EP_CONTEXT_READ_FUNC "OrtEpApi_EpContextConfig_GetEpContextDataReadFunc_SinceV28"
#define ORT_EXPERIMENTAL_GET_EP_CONTEXT_WRITE_FUNC "OrtEpApi_EpContextConfig_GetEpContextDataWriteFunc_SinceV28"
typedef OrtStatus* (*OrtGetEpContextConfigFn)(const OrtSessionOptions* session_options, OrtEpContextConfig** config);
typedef void (*OrtReleaseEpContextConfigFn)(OrtEpContextConfig* config);
typedef OrtStatus* (*OrtGetEpContextReadFuncFn)(const OrtEpContextConfig* config, OrtReadNamedBufferFunc* read_func,
                                                void** state);
typedef OrtStatus* (*OrtGetEpContextWriteFuncFn)(const OrtEpContextConfig* config, OrtWriteNamedBufferFunc* write_func,
                                                 void** state);

/* The type of every table slot the host does not implement (see the file comment). */
typedef void (*OrtUnimplementedEntry)(void);

/* An allocator: a versioned vtable. Version 1: Alloc, Free, Info; the host fills only those. */
typedef struct OrtAllocator {
  uint32_t version;
  void* (*Alloc)(struct OrtAllocator* this_, size_t size);
  void (*Free)(struct OrtAllocator* this_, void* p);
  const struct OrtMemoryInfo* (*Info)(const struct OrtAllocator* this_);
  void* (*Reserve)(struct OrtAllocator* this_, size_t size);                       /* version 18 */
  OrtStatus* (*GetStats)(const struct OrtAllocator* this_, OrtKeyValuePairs** out); /* version 23 */
  void* (*AllocOnStream)(struct OrtAllocator* this_, size_t size, OrtSyncStream* stream); /* 23 */
  OrtStatus* (*Shrink)(struct OrtAllocator* this_);                                /* 25 */
} OrtAllocator;

/* GetApi(version): the OrtApi table, or NULL for a version outside 22..30. */
typedef struct OrtApiBase {
  const OrtApi* (*GetApi)(uint32_t version);
  const char* (*GetVersionString)(void);
} OrtApiBase;

#define ORT_ENTRY(ret, name, params) ret (*name) params;
#define ORT_STUB_STATUS(name) OrtUnimplementedEntry name;
#define ORT_STUB_VOID(name) OrtUnimplementedEntry name;
#define ORT_STUB_ZERO(name) OrtUnimplementedEntry name;

struct OrtApi {
#include "ort_ep/ort_api_entries.inc"
};

struct OrtEpApi {
#include "ort_ep/ort_ep_api_entries.inc"
};

struct OrtModelEditorApi {
#include "ort_ep/ort_model_editor_entries.inc"
};

#undef ORT_ENTRY
#undef ORT_STUB_STATUS
#undef ORT_STUB_VOID
#undef ORT_STUB_ZERO

/* ---- what a plugin implements: first member ort_version_supported, the API version it was built for;
 * the host reads no member the plugin's version does not have. ---- */

typedef struct OrtNodeFusionOptions {
  uint32_t ort_version_supported;
  bool drop_constant_initializers;
} OrtNodeFusionOptions;

typedef struct OrtNodeComputeInfo {
  uint32_t ort_version_supported;
  OrtStatus* (*CreateState)(struct OrtNodeComputeInfo* this_ptr, OrtNodeComputeContext* compute_context,
                            void** compute_state);
  OrtStatus* (*Compute)(struct OrtNodeComputeInfo* this_ptr, void* compute_state, OrtKernelContext* kernel_context);
  void (*ReleaseState)(struct OrtNodeComputeInfo* this_ptr, void* compute_state);
} OrtNodeComputeInfo;

/* Device memory (API 23). A factory whose EP devices have memory of their own (EpDevice_AddAllocatorInfo with
 * a memory info not on the CPU) allocates it (OrtEpFactory::CreateAllocator), copies between it and host
 * memory (OrtDataTransferImpl) and may queue work on streams of its own (OrtSyncStreamImpl). */
typedef struct OrtSyncNotificationImpl OrtSyncNotificationImpl;
struct OrtSyncNotificationImpl {
  uint32_t ort_version_supported;
  void (*Release)(OrtSyncNotificationImpl* this_ptr);
  OrtStatus* (*Activate)(OrtSyncNotificationImpl* this_ptr);
  OrtStatus* (*WaitOnDevice)(OrtSyncNotificationImpl* this_ptr, OrtSyncStream* consumer_stream);
  OrtStatus* (*WaitOnHost)(OrtSyncNotificationImpl* this_ptr);
};

/* A stream of the EP's: GetHandle is its native queue (a cudaStream_t); Flush waits for the work queued. */
struct OrtSyncStreamImpl {
  uint32_t ort_version_supported;
  void (*Release)(OrtSyncStreamImpl* this_ptr);
  void* (*GetHandle)(OrtSyncStreamImpl* this_ptr);
  OrtStatus* (*CreateNotification)(OrtSyncStreamImpl* this_ptr, OrtSyncNotificationImpl** notification);
  OrtStatus* (*Flush)(OrtSyncStreamImpl* this_ptr);
  OrtStatus* (*OnSessionRunEnd)(OrtSyncStreamImpl* this_ptr);
};

/* Copies between the EP's memory and host memory: CanCopy says which directions it serves; CopyTensors
 * copies num_tensors tensors, streams[i] (NULL array for an EP not stream aware) queuing copy i. */
struct OrtDataTransferImpl {
  uint32_t ort_version_supported;
  void (*Release)(OrtDataTransferImpl* this_ptr);
  bool (*CanCopy)(const OrtDataTransferImpl* this_ptr, const OrtMemoryDevice* src_memory_device,
                  const OrtMemoryDevice* dst_memory_device);
  OrtStatus* (*CopyTensors)(OrtDataTransferImpl* this_ptr, const OrtValue** src_tensors, OrtValue** dst_tensors,
                            OrtSyncStream** streams, size_t num_tensors);
};

/* A kernel of a kernel-registry EP (API 24): made by the OrtKernelCreateFunc registered with
 * KernelRegistry_AddKernel for one node, run with Compute over that node's inputs and outputs, given back
 * with Release. `flags` is ONNX Runtime's own (the EP sets it to 0). PrePackWeight and
 * SetSharedPrePackedWeight are optional (NULL): when the kernel is created the host offers PrePackWeight
 * each constant initializer input (with a cache to share the packed copy through, unless sharing is off);
 * SetSharedPrePackedWeight then hands back the shared copy of what the kernel stored in the cache. */
struct OrtKernelImpl {
  uint32_t ort_version_supported;
  uint32_t flags;
  OrtStatus* (*Compute)(OrtKernelImpl* this_ptr, OrtKernelContext* context);
  void (*Release)(OrtKernelImpl* this_ptr);
  OrtStatus* (*PrePackWeight)(OrtKernelImpl* this_ptr, const OrtValue* tensor, int input_index,
                              OrtAllocator* allocator, OrtSharedPrePackedWeightCache* prepacked_weight_cache,
                              bool* is_packed);
  OrtStatus* (*SetSharedPrePackedWeight)(OrtKernelImpl* this_ptr, const void* const* buffer_data_ptrs,
                                         const size_t* buffer_data_sizes, size_t num_buffers, int input_index);
};

/* API 24: what an EP gives the host's Loop kernel (CreateLoopKernel; the host releases it with the kernel).
 * ConcatOutput writes the scan outputs of every iteration (`per_iteration_outputs`, all of one shape, in
 * iteration order) one after another into `output` (`output_size_in_bytes` bytes, in the EP's memory; the
 * host allocated it as the Loop's output). `stream_handle` is the run's native stream, or NULL. */
struct OrtLoopKernelHelper {
  uint32_t ort_version_supported;
  void (*Release)(OrtLoopKernelHelper* this_ptr);
  OrtStatus* (*ConcatOutput)(OrtLoopKernelHelper* this_ptr, void* stream_handle,
                             const OrtValue* const* per_iteration_outputs, size_t num_per_iteration_outputs,
                             void* output, size_t output_size_in_bytes);
};

/* API 24: what an EP gives the host's Scan kernel (CreateScanKernel; the host releases it with the kernel).
 * Transpose writes `input` with its axes permuted (output axis i is input axis permutation[i]) into `output`,
 * which the host made with the permuted shape and still owns. Called for a scan input or output whose axis
 * (scan_input_axes / scan_output_axes) is not 0. `stream` is the run's stream, or NULL. */
struct OrtScanKernelHelper {
  uint32_t ort_version_supported;
  void (*Release)(OrtScanKernelHelper* this_ptr);
  OrtStatus* (*Transpose)(OrtScanKernelHelper* this_ptr, const size_t* permutation, size_t num_permutation_elems,
                          const OrtValue* input, OrtSyncStream* stream, OrtValue* output);
};

/* API 25: an EP's profiler (OrtEp::CreateProfiler), made when the session profiles. StartProfiling: the
 * session's profile began `ep_profiling_start_offset_ns` before this call (timestamps of the EP's events are
 * microseconds since the session's profile began). StartEvent / StopEvent bracket each host event the EP's
 * work belongs to (a node's run), under one correlation id; StopEvent hands the host's event. EndProfiling:
 * the EP adds its events to the container (ProfilingEventsContainer_AddEvents). Release frees it. */
typedef struct OrtEpProfilerImpl OrtEpProfilerImpl;
struct OrtEpProfilerImpl {
  uint32_t ort_version_supported;
  void (*Release)(OrtEpProfilerImpl* this_ptr);
  OrtStatus* (*StartProfiling)(OrtEpProfilerImpl* this_ptr, int64_t ep_profiling_start_offset_ns);
  OrtStatus* (*StartEvent)(OrtEpProfilerImpl* this_ptr, uint64_t ort_event_correlation_id);
  OrtStatus* (*StopEvent)(OrtEpProfilerImpl* this_ptr, uint64_t ort_event_correlation_id,
                          const OrtProfilingEvent* ort_event);
  OrtStatus* (*EndProfiling)(OrtEpProfilerImpl* this_ptr, OrtProfilingEventsContainer* events_container);
};

/* API 29: which weightless EPContext modes an EP supports (OrtEp::GetWeightlessSupport). EXTERNAL_ONLY: the
 * initializers stored outside the ONNX file (external data) are not copied into the EP's context; ALL: none
 * is (the source model must be at hand when the context is loaded). Later versions describe an EP supporting
 * both as 3 (ALL_OR_EXTERNAL_ONLY); a session asks for one mode, never 3. */
typedef enum OrtWeightlessSupport {
  OrtWeightlessSupport_NONE = 0,
  OrtWeightlessSupport_EXTERNAL_ONLY = 1,
  OrtWeightlessSupport_ALL = 2,
  OrtWeightlessSupport_ALL_OR_EXTERNAL_ONLY = 3,
} OrtWeightlessSupport;

/* Types of OrtEp members the host never calls, declared only for the layout: an enum (its underlying int)
 * and a struct seen through a pointer. */
typedef int32_t OrtGraphCaptureNodeAssignmentPolicy;
typedef struct OrtResourceCount OrtResourceCount;

/* An EP instance (one session). Members by the API version that added them. */
typedef struct OrtEp {
  uint32_t ort_version_supported;
  const char* (*GetName)(const struct OrtEp* this_ptr); /* 22 */
  /* 23 */
  OrtStatus* (*GetCapability)(struct OrtEp* this_ptr, const OrtGraph* graph, OrtEpGraphSupportInfo* graph_support_info);
  OrtStatus* (*Compile)(struct OrtEp* this_ptr, const OrtGraph** graphs, const OrtNode** fused_nodes, size_t count,
                        OrtNodeComputeInfo** node_compute_infos, OrtNode** ep_context_nodes);
  void (*ReleaseNodeComputeInfos)(struct OrtEp* this_ptr, OrtNodeComputeInfo** node_compute_infos,
                                  size_t num_node_compute_infos);
  OrtStatus* (*GetPreferredDataLayout)(struct OrtEp* this_ptr, OrtEpDataLayout* preferred_data_layout);
  OrtStatus* (*ShouldConvertDataLayoutForOp)(struct OrtEp* this_ptr, const char* domain, const char* op_type,
                                             OrtEpDataLayout target_data_layout, int* should_convert);
  OrtStatus* (*SetDynamicOptions)(struct OrtEp* this_ptr, const char* const* option_keys,
                                  const char* const* option_values, size_t num_options);
  OrtStatus* (*OnRunStart)(struct OrtEp* this_ptr, const OrtRunOptions* run_options);
  OrtStatus* (*OnRunEnd)(struct OrtEp* this_ptr, const OrtRunOptions* run_options, bool sync_stream);
  OrtStatus* (*CreateAllocator)(struct OrtEp* this_ptr, const OrtMemoryInfo* memory_info, OrtAllocator** allocator);
  OrtStatus* (*CreateSyncStreamForDevice)(struct OrtEp* this_ptr, const OrtMemoryDevice* memory_device,
                                          OrtSyncStreamImpl** stream);
  const char* (*GetCompiledModelCompatibilityInfo)(struct OrtEp* this_ptr, const OrtGraph* graph);
  /* 24 */
  OrtStatus* (*GetKernelRegistry)(struct OrtEp* this_ptr, const OrtKernelRegistry** kernel_registry);
  OrtStatus* (*IsConcurrentRunSupported)(struct OrtEp* this_ptr, bool* is_supported);
  /* 25 */
  OrtStatus* (*Sync)(struct OrtEp* this_ptr);
  OrtStatus* (*CreateProfiler)(struct OrtEp* this_ptr, OrtEpProfilerImpl** profiler);
  /* 26: graph capture and replay, the resources left to the EP (not called by ephost) */
  bool (*IsGraphCaptureEnabled)(const struct OrtEp* this_ptr);
  bool (*IsGraphCaptured)(const struct OrtEp* this_ptr, int graph_annotation_id);
  OrtStatus* (*ReplayGraph)(struct OrtEp* this_ptr, int graph_annotation_id);
  OrtGraphCaptureNodeAssignmentPolicy (*GetGraphCaptureNodeAssignmentPolicy)(const struct OrtEp* this_ptr);
  OrtStatus* (*GetAvailableResource)(const struct OrtEp* this_ptr, OrtResourceCount* available);
  /* 27 (not called by ephost) */
  OrtStatus* (*OnSessionInitializationEnd)(struct OrtEp* this_ptr);
  OrtStatus* (*GetDefaultMemoryDevice)(const struct OrtEp* this_ptr, const OrtMemoryDevice** device);
  OrtStatus* (*ReleaseCapturedGraph)(struct OrtEp* this_ptr, int graph_annotation_id);
  /* 29: the weightless modes it supports, asked when it compiles for a session that wants one */
  OrtStatus* (*GetWeightlessSupport)(const struct OrtEp* this_ptr, OrtWeightlessSupport* support);
} OrtEp;

/* A factory: what CreateEpFactories hands the host. Members by the API version that added them. */
typedef struct OrtEpFactory {
  uint32_t ort_version_supported;
  /* 22 */
  const char* (*GetName)(const struct OrtEpFactory* this_ptr);
  const char* (*GetVendor)(const struct OrtEpFactory* this_ptr);
  OrtStatus* (*GetSupportedDevices)(struct OrtEpFactory* this_ptr, const OrtHardwareDevice* const* devices,
                                    size_t num_devices, OrtEpDevice** ep_devices, size_t max_ep_devices,
                                    size_t* num_ep_devices);
  OrtStatus* (*CreateEp)(struct OrtEpFactory* this_ptr, const OrtHardwareDevice* const* devices,
                         const OrtKeyValuePairs* const* ep_metadata_pairs, size_t num_devices,
                         const OrtSessionOptions* session_options, const OrtLogger* logger, OrtEp** ep);
  void (*ReleaseEp)(struct OrtEpFactory* this_ptr, OrtEp* ep);
  /* 23 */
  uint32_t (*GetVendorId)(const struct OrtEpFactory* this_ptr);
  const char* (*GetVersion)(const struct OrtEpFactory* this_ptr);
  OrtStatus* (*ValidateCompiledModelCompatibilityInfo)(struct OrtEpFactory* this_ptr,
                                                       const OrtHardwareDevice* const* devices, size_t num_devices,
                                                       const char* compatibility_info,
                                                       OrtCompiledModelCompatibility* model_compatibility);
  OrtStatus* (*CreateAllocator)(struct OrtEpFactory* this_ptr, const OrtMemoryInfo* memory_info,
                                const OrtKeyValuePairs* allocator_options, OrtAllocator** allocator);
  void (*ReleaseAllocator)(struct OrtEpFactory* this_ptr, OrtAllocator* allocator);
  OrtStatus* (*CreateDataTransfer)(struct OrtEpFactory* this_ptr, OrtDataTransferImpl** data_transfer);
  bool (*IsStreamAware)(const struct OrtEpFactory* this_ptr);
  OrtStatus* (*CreateSyncStreamForDevice)(struct OrtEpFactory* this_ptr, const OrtMemoryDevice* memory_device,
                                          const OrtKeyValuePairs* stream_options, OrtSyncStreamImpl** stream);
  /* 24 (optional): why the EP cannot use `hw` (DeviceEpIncompatibilityDetails_SetDetails); `details` comes
   * made by the host, meaning "compatible" until set. ephost asks for each host device the factory's
   * GetSupportedDevices passed over, for the plugin listing. */
  OrtStatus* (*GetHardwareDeviceIncompatibilityDetails)(struct OrtEpFactory* this_ptr, const OrtHardwareDevice* hw,
                                                        OrtDeviceEpIncompatibilityDetails* details);
} OrtEpFactory;

/* The library's exports. */
#define ORT_EP_CREATE_FACTORIES_SYMBOL "CreateEpFactories"
#define ORT_EP_RELEASE_FACTORY_SYMBOL "ReleaseEpFactory"
/* Exported by ONNX Runtime's older provider-bridge libraries, which need ONNX Runtime's internals. */
#define ORT_PROVIDER_BRIDGE_SYMBOL "GetProvider"

typedef OrtStatus* (*CreateEpApiFactoriesFn)(const char* registered_name, const OrtApiBase* ort_api_base,
                                             const OrtLogger* default_logger, OrtEpFactory** factories,
                                             size_t max_factories, size_t* num_factories);
typedef OrtStatus* (*ReleaseEpApiFactoryFn)(OrtEpFactory* factory);

/* Session-option key prefix under which an EP's options reach CreateEp: "ep.<lowercased ep name>.<key>". */
#define ORT_EP_OPTION_PREFIX "ep."
/* Model metadata key under which a compiled model keeps an EP's compatibility string. */
#define ORT_EP_COMPATIBILITY_INFO_PREFIX "ep_compatibility_info."

#ifdef __cplusplus
}
#endif

#endif /* EPHOST_ORT_EP_ORT_ABI_H_ */
