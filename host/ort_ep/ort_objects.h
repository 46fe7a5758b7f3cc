// The objects behind ONNX Runtime's opaque handles, as the adapter makes them: statuses, key-value
// pairs, memory infos and memory devices, the host's CPU allocator, loggers, session options, hardware
// and EP devices, tensor values and their type infos, attributes and nodes made through the model
// editor, and the capability sink. Graph handles are ephost's own IR (ort_graph_handles.h).
//
// Every object begins with a magic word of its own kind, checked on each handle a plugin passes in
// (ort_objects.cpp: checked()), so that a wrong or stale pointer becomes ORT_INVALID_ARGUMENT instead
// of a crash where it can be told.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/tensor.h"
#include "graph/graph.h"
#include "ort_ep/ort_abi.h"

namespace ephost::ort_ep {

enum class Magic : uint32_t {
  kStatus = 0x5354a7e5,
  kKeyValuePairs = 0x4b565031,
  kMemoryInfo = 0x4d494e46,
  kLogger = 0x4c4f4747,
  kSessionOptions = 0x53455353,
  kHardwareDevice = 0x48574456,
  kEpDevice = 0x45504456,
  kValue = 0x56414c55,
  kTypeInfo = 0x54595045,
  kEditorAttr = 0x41545452,
  kEditorNode = 0x4e4f4445,
  kSupportInfo = 0x53555050,
  kComputeContext = 0x43435458,
  kRunOptions = 0x52554e4f,
  kEpContextConfig = 0x45504343,
  kSyncStream = 0x5354524d,
  kKernelRegistry = 0x4b524547,
  kKernelDefBuilder = 0x4b444246,
  kKernelDef = 0x4b444546,
  kDataType = 0x44545950,
  kKernelInfo = 0x4b494e46,
  kPrePackedCache = 0x50504b43,
  kIncompatibilityDetails = 0x49434444,
  kOpSchema = 0x4f505343,
  kOpSchemaTypeConstraint = 0x4f505443,
  kEnv = 0x454e5656,
  kProfilingEvent = 0x50455654,
  kProfilingEventsContainer = 0x50455643,
};

// What an OrtStatus* means to the host: the code and message, read and released once.
struct StatusReading {
  OrtErrorCode code = ORT_OK;
  std::string message;
};

// Makes an OrtStatus (never null) for the plugin to own; the host's own failures become statuses so.
OrtStatus* make_status(OrtErrorCode code, std::string message);
// Reads and releases `status`, a plugin's answer (non-null). A pointer that is no live status made by
// CreateStatus comes back as ORT_EP_FAIL saying so (it is never dereferenced past its magic word).
StatusReading take_status(OrtStatus* status);
// Whether `status` is a live status the host made.
bool is_live_status(const OrtStatus* status);

}  // namespace ephost::ort_ep

// ---- the objects (global names: they complete ONNX Runtime's opaque C structs) ----

struct OrtStatus {
  ephost::ort_ep::Magic magic = ephost::ort_ep::Magic::kStatus;
  OrtErrorCode code = ORT_OK;
  std::string message;
};

struct OrtKeyValuePairs {
  ephost::ort_ep::Magic magic = ephost::ort_ep::Magic::kKeyValuePairs;
  std::vector<std::string> keys, values;
  // c_str() views of keys and values (GetKeyValuePairs), rebuilt after every change.
  std::vector<const char*> key_ptrs, value_ptrs;

  OrtKeyValuePairs() = default;
  OrtKeyValuePairs(const OrtKeyValuePairs& other) : keys(other.keys), values(other.values) { refresh_views(); }
  OrtKeyValuePairs& operator=(const OrtKeyValuePairs& other) {
    keys = other.keys;
    values = other.values;
    refresh_views();
    return *this;
  }
  void set(const std::string& key, const std::string& value);
  void remove(const std::string& key);
  const std::string* find(const std::string& key) const;
  void refresh_views();
};

// Where memory lives. The host serves CPU memory ("Cpu"); plugins may describe their own.
struct OrtMemoryDevice {
  OrtMemoryInfoDeviceType device_type = OrtMemoryInfoDeviceType_CPU;
  OrtDeviceMemoryType memory_type = OrtDeviceMemoryType_DEFAULT;
  uint32_t vendor_id = 0;
  uint32_t device_id = 0;
};

struct OrtMemoryInfo {
  ephost::ort_ep::Magic magic = ephost::ort_ep::Magic::kMemoryInfo;
  std::string name = "Cpu";
  int id = 0;
  OrtMemType mem_type = OrtMemTypeDefault;
  OrtAllocatorType allocator_type = OrtDeviceAllocator;
  size_t alignment = 0;
  OrtMemoryDevice device;
};

struct OrtLogger {
  ephost::ort_ep::Magic magic = ephost::ort_ep::Magic::kLogger;
  std::string id;  // named in each message the plugin logs, e.g. the plugin's name
};

// Session options as a plugin sees them in CreateEp: config entries ("ep.<name>.<key>" and the
// session's own keys), read with GetSessionConfigEntry and GetSessionOptionsConfigEntries. Code inside a
// plugin may also make its own (CreateSessionOptions, AddSessionConfigEntry), as an application does.
struct OrtSessionOptions {
  ephost::ort_ep::Magic magic = ephost::ort_ep::Magic::kSessionOptions;
  OrtKeyValuePairs config;
  // The source model of a weightless EPContext model (SessionOptionsGetWeightlessSourceModelBuffer): the
  // bytes of the file the session's ep.context_source_model_path names, read when the provider is created;
  // empty when the session names none.
  std::string weightless_source_model;
  // What OrtApi::SessionOptionsSetWeightlessSourceModelBuffer set (API 29): the caller's bytes, borrowed
  // (they must outlive the options, as in ONNX Runtime); answered ahead of weightless_source_model.
  const void* weightless_buffer = nullptr;
  size_t weightless_buffer_size = 0;
  // Made by OrtApi::CreateSessionOptions (freed by ReleaseSessionOptions); the host's own are never freed
  // by a plugin.
  bool made_by_plugin = false;
};

struct OrtHardwareDevice {
  ephost::ort_ep::Magic magic = ephost::ort_ep::Magic::kHardwareDevice;
  OrtHardwareDeviceType type = OrtHardwareDeviceType_CPU;
  uint32_t vendor_id = 0;
  uint32_t device_id = 0;
  std::string vendor;
  OrtKeyValuePairs metadata;
  // Made by a plugin with OrtEpApi::CreateHardwareDevice (a device the host did not probe, e.g. a virtual
  // one): ReleaseHardwareDevice deletes it. The host's own devices live for the process.
  bool made_by_plugin = false;
};

// Why a factory's EP cannot use a hardware device, as the factory set it
// (DeviceEpIncompatibilityDetails_SetDetails); made "compatible" (no reasons, code 0, no notes).
struct OrtDeviceEpIncompatibilityDetails {
  ephost::ort_ep::Magic magic = ephost::ort_ep::Magic::kIncompatibilityDetails;
  uint32_t reasons = 0;  // OrtDeviceEpIncompatibilityReason bits
  int32_t error_code = 0;
  std::string notes;
  bool has_notes = false;
  bool owned = false;  // made for the application (ReleaseDeviceEpIncompatibilityDetails deletes it)
};

struct OrtEpDevice {
  ephost::ort_ep::Magic magic = ephost::ort_ep::Magic::kEpDevice;
  OrtEpFactory* factory = nullptr;
  const OrtHardwareDevice* device = nullptr;
  std::string ep_name, ep_vendor;
  OrtKeyValuePairs ep_metadata, ep_options;
  std::vector<OrtMemoryInfo> allocator_infos;  // EpDevice_AddAllocatorInfo, in order
};

// A tensor value handed to or made by a plugin. `tensor` points at `own` for values the plugin owns
// (ReleaseValue frees them) and at an executor's tensor for kernel inputs and outputs (borrowed).
struct OrtValue {
  ephost::ort_ep::Magic magic = ephost::ort_ep::Magic::kValue;
  ephost::Tensor own;
  ephost::Tensor* tensor = nullptr;
  bool owned = false;  // made for the plugin: ReleaseValue deletes it
};

// A type info, and the tensor type-and-shape info it holds (one object serves both handles: the
// tensor info of a type info is a pointer into it).
struct OrtTypeInfo {
  ephost::ort_ep::Magic magic = ephost::ort_ep::Magic::kTypeInfo;
  ONNXType onnx_type = ONNX_TYPE_TENSOR;
  ONNXTensorElementDataType elem_type = ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
  bool has_shape = false;
  std::vector<int64_t> dims;  // -1 where unknown
  bool owned = false;         // made for the plugin (ReleaseTypeInfo / ReleaseTensorTypeAndShapeInfo free it)
};
struct OrtTensorTypeAndShapeInfo : OrtTypeInfo {};

// An attribute a plugin made with CreateOpAttr (for EPContext nodes). Graph attributes are ephost's
// Node::AttributeRef handed out as OrtOpAttr (ort_graph_handles.h).
struct OrtEditorAttr {
  ephost::ort_ep::Magic magic = ephost::ort_ep::Magic::kEditorAttr;
  std::string name;
  OrtOpAttrType type = ORT_OP_ATTR_UNDEFINED;
  int64_t i = 0;
  float f = 0;
  std::string s;
  std::vector<int64_t> ints;
  std::vector<float> floats;
  std::vector<std::string> strings;
};

// A node a plugin made with OrtModelEditorApi::CreateNode (an EPContext node, returned from Compile).
struct OrtEditorNode {
  ephost::ort_ep::Magic magic = ephost::ort_ep::Magic::kEditorNode;
  std::string op_type, domain, name;
  std::vector<std::string> inputs, outputs;
  std::vector<OrtEditorAttr> attributes;
};

// GetCapability's sink: the claims the plugin makes on one graph.
struct OrtEpGraphSupportInfo {
  ephost::ort_ep::Magic magic = ephost::ort_ep::Magic::kSupportInfo;
  const ephost::GraphView* graph = nullptr;
  // The EP's kernel registry (OrtEp::GetKernelRegistry; null for a compiling EP) and name, for
  // EpGraphSupportInfo_LookUpKernel.
  const OrtKernelRegistry* kernel_registry = nullptr;
  std::string ep_name;
  struct Claim {
    bool fused = false;
    std::vector<const ephost::Node*> nodes;
  };
  std::vector<Claim> claims;
};

// What OnRunStart / OnRunEnd are handed: ephost's run options are not mapped (no entries), but the
// plugin gets a valid object rather than NULL.
// What OrtEpApi_SessionOptions_GetEpContextConfig extracts: the application's EPContext data callbacks.
// ephost's applications register none (its EPContext files are written and read by the host), so both
// are NULL and the EP uses its own file path, as ONNX Runtime tells EPs to when none is registered.
struct OrtEpContextConfig {
  ephost::ort_ep::Magic magic = ephost::ort_ep::Magic::kEpContextConfig;
  OrtReadNamedBufferFunc read = nullptr;
  void* read_state = nullptr;
  OrtWriteNamedBufferFunc write = nullptr;
  void* write_state = nullptr;
};

// A stream of an EP with memory of its own, as the host holds it: the EP's OrtSyncStreamImpl
// (CreateSyncStreamForDevice) for the device whose memory `memory_info` describes. Handed to the EP's
// CopyTensors and to its Compute (KernelContext_GetSyncStream); ephost's EphostStream* for that device.
struct OrtSyncStream {
  ephost::ort_ep::Magic magic = ephost::ort_ep::Magic::kSyncStream;
  OrtSyncStreamImpl* impl = nullptr;
  const OrtMemoryInfo* memory_info = nullptr;
  // SyncStream_GetSyncId: how many times the host synchronized this stream (OrtSyncStreamImpl::Flush
  // returned), where ONNX Runtime counts the notifications activated on it. Work queued before the
  // sync_id-th flush is complete for every other stream (see GetSyncIdForLastWaitOnSyncStream).
  std::atomic<uint64_t> sync_id{0};
};
struct OrtRunOptions {
  ephost::ort_ep::Magic magic = ephost::ort_ep::Magic::kRunOptions;
};

// What OrtApi::CreateEnv answers a plugin: a handle on the host's environment, which is one per process
// as ONNX Runtime's is. Logging stays the host's (the application chose its level; a plugin's CreateEnv
// changes nothing), and the EP libraries registered with it are the ONNX Runtime plugin EPs the host has
// loaded (ort_ep/library.h: the factories GetHardwareDeviceEpIncompatibilityDetails asks). Every
// CreateEnv answers the same object and counts a reference; ReleaseEnv gives one back.
struct OrtEnv {
  ephost::ort_ep::Magic magic = ephost::ort_ep::Magic::kEnv;
  std::atomic<int64_t> references{0};
};

// A profiling event (API 25): an EP's (CreateProfilingEvent, `owned`: ReleaseProfilingEvent frees it), or
// the host's, handed to OrtEpProfilerImpl::StopEvent for the node run it brackets. Times are microseconds
// since the session's profile began.
struct OrtProfilingEvent {
  ephost::ort_ep::Magic magic = ephost::ort_ep::Magic::kProfilingEvent;
  OrtProfilingEventCategory category = OrtProfilingEventCategory_NODE;
  int32_t process_id = -1, thread_id = -1;
  std::string name;
  int64_t timestamp_us = 0, duration_us = 0;
  std::vector<std::pair<std::string, std::string>> args;
  bool owned = false;
};

// What OrtEpProfilerImpl::EndProfiling fills: copies of the events the EP adds
// (ProfilingEventsContainer_AddEvents), which the host then files in the session's profile.
struct OrtProfilingEventsContainer {
  ephost::ort_ep::Magic magic = ephost::ort_ep::Magic::kProfilingEventsContainer;
  std::vector<OrtProfilingEvent> events;
};

// CreateState's view of the fused node it makes state for.
struct OrtNodeComputeContext {
  ephost::ort_ep::Magic magic = ephost::ort_ep::Magic::kComputeContext;
  std::string node_name;
};

namespace ephost::ort_ep {

// The object behind `handle` when it carries `magic`, else nullptr. Never reads past the magic word of
// a handle of another kind.
template <typename T>
const T* checked(const void* handle, Magic magic) {
  if (!handle || *static_cast<const Magic*>(handle) != magic) return nullptr;
  return static_cast<const T*>(handle);
}
template <typename T>
T* checked_mut(void* handle, Magic magic) {
  if (!handle || *static_cast<const Magic*>(handle) != magic) return nullptr;
  return static_cast<T*>(handle);
}

// The host's CPU memory info ("Cpu", device allocator, default memory) and allocator (malloc-backed,
// 64-byte aligned), alive for the process.
const OrtMemoryInfo& cpu_memory_info();
OrtAllocator* cpu_allocator();
// The logger handed to CreateEpFactories and CreateEp.
const OrtLogger* default_logger();

// A type info for an ephost static type (tensor element type and dims; non-tensors give
// ONNX_TYPE_SEQUENCE / ONNX_TYPE_OPTIONAL / ONNX_TYPE_UNKNOWN).
OrtTypeInfo type_info_of(const TypeInfo& type);

}  // namespace ephost::ort_ep
