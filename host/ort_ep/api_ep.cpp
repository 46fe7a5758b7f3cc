// OrtEpApi entries: EP devices, GetCapability's claims, the compute context's name, and memory devices.
#include <fmt/format.h>

#include <algorithm>
#include <memory>

#include "ort_ep/api_impl.h"
#include "ort_ep/graph_handles.h"
#include "ort_ep/ort_device.h"
#include "ort_ep/ort_objects.h"

namespace ephost::ort_ep::api::ep {
namespace {

OrtStatus* invalid(const char* function, const std::string& what) {
  return make_status(ORT_INVALID_ARGUMENT, fmt::format("OrtEpApi::{}: {}", function, what));
}

// The claimed nodes, each checked to be a node of the graph GetCapability was asked about.
OrtStatus* claimed_nodes(const char* function, const OrtEpGraphSupportInfo& info, const OrtNode* const* nodes,
                         size_t num_nodes, std::vector<const Node*>& out) {
  for (size_t i = 0; i < num_nodes; ++i) {
    const Node* n = node_of(nodes[i]);
    if (!n || std::find(info.graph->nodes.begin(), info.graph->nodes.end(), n) == info.graph->nodes.end())
      return invalid(function, fmt::format("node {} of the claim is not a node of graph '{}'", i, info.graph->name));
    out.push_back(n);
  }
  return nullptr;
}

}  // namespace

OrtStatus* CreateEpDevice(OrtEpFactory* ep_factory, const OrtHardwareDevice* hardware_device,
                          const OrtKeyValuePairs* ep_metadata, const OrtKeyValuePairs* ep_options,
                          OrtEpDevice** ep_device) noexcept {
  if (!ep_factory || !ep_device || !checked<OrtHardwareDevice>(hardware_device, Magic::kHardwareDevice))
    return invalid("CreateEpDevice", "bad factory, hardware device or out");
  try {
    auto d = std::make_unique<OrtEpDevice>();
    d->factory = ep_factory;
    d->device = hardware_device;
    const char* name = ep_factory->GetName ? ep_factory->GetName(ep_factory) : nullptr;
    const char* vendor = ep_factory->GetVendor ? ep_factory->GetVendor(ep_factory) : nullptr;
    d->ep_name = name ? name : "";
    d->ep_vendor = vendor ? vendor : "";
    if (const auto* m = checked<OrtKeyValuePairs>(ep_metadata, Magic::kKeyValuePairs)) d->ep_metadata = *m;
    if (const auto* o = checked<OrtKeyValuePairs>(ep_options, Magic::kKeyValuePairs)) d->ep_options = *o;
    *ep_device = d.release();
    return nullptr;
  } catch (const std::exception& e) {
    return make_status(ORT_FAIL, e.what());
  }
}

void ReleaseEpDevice(OrtEpDevice* input) noexcept {
  if (OrtEpDevice* d = checked_mut<OrtEpDevice>(input, Magic::kEpDevice)) delete d;
}

OrtStatus* EpGraphSupportInfo_AddNodesToFuse(OrtEpGraphSupportInfo* graph_support_info, const OrtNode* const* nodes,
                                             size_t num_nodes, const OrtNodeFusionOptions* node_fusion_options) noexcept {
  (void)node_fusion_options;  // constant initializers are always inputs of a fused group in ephost
  auto* info = checked_mut<OrtEpGraphSupportInfo>(graph_support_info, Magic::kSupportInfo);
  if (!info || (!nodes && num_nodes)) return invalid("EpGraphSupportInfo_AddNodesToFuse", "bad support info or nodes");
  if (num_nodes == 0) return invalid("EpGraphSupportInfo_AddNodesToFuse", "no nodes");
  try {
    OrtEpGraphSupportInfo::Claim claim;
    claim.fused = true;
    if (OrtStatus* s = claimed_nodes("EpGraphSupportInfo_AddNodesToFuse", *info, nodes, num_nodes, claim.nodes))
      return s;
    info->claims.push_back(std::move(claim));
    return nullptr;
  } catch (const std::exception& e) {
    return make_status(ORT_FAIL, e.what());
  }
}

OrtStatus* EpGraphSupportInfo_AddSingleNode(OrtEpGraphSupportInfo* graph_support_info, const OrtNode* node) noexcept {
  auto* info = checked_mut<OrtEpGraphSupportInfo>(graph_support_info, Magic::kSupportInfo);
  if (!info) return invalid("EpGraphSupportInfo_AddSingleNode", "bad support info");
  try {
    OrtEpGraphSupportInfo::Claim claim;
    if (OrtStatus* s = claimed_nodes("EpGraphSupportInfo_AddSingleNode", *info, &node, 1, claim.nodes)) return s;
    info->claims.push_back(std::move(claim));
    return nullptr;
  } catch (const std::exception& e) {
    return make_status(ORT_FAIL, e.what());
  }
}

const char* NodeComputeContext_NodeName(const OrtNodeComputeContext* context) noexcept {
  const auto* c = checked<OrtNodeComputeContext>(context, Magic::kComputeContext);
  return c ? c->node_name.c_str() : nullptr;
}

OrtStatus* EpDevice_AddAllocatorInfo(OrtEpDevice* ep_device, const OrtMemoryInfo* allocator_memory_info) noexcept {
  OrtEpDevice* d = checked_mut<OrtEpDevice>(ep_device, Magic::kEpDevice);
  const OrtMemoryInfo* m = checked<OrtMemoryInfo>(allocator_memory_info, Magic::kMemoryInfo);
  if (!d || !m) return invalid("EpDevice_AddAllocatorInfo", "bad EP device or memory info");
  try {
    // One per memory type, as ONNX Runtime keeps them: a second of the same type replaces the first.
    for (auto& existing : d->allocator_infos)
      if (existing.device.memory_type == m->device.memory_type) {
        existing = *m;
        return nullptr;
      }
    d->allocator_infos.push_back(*m);
    return nullptr;
  } catch (const std::exception& e) {
    return make_status(ORT_FAIL, e.what());
  }
}

const OrtMemoryDevice* MemoryInfo_GetMemoryDevice(const OrtMemoryInfo* memory_info) noexcept {
  const OrtMemoryInfo* m = checked<OrtMemoryInfo>(memory_info, Magic::kMemoryInfo);
  return m ? &m->device : nullptr;
}

const OrtMemoryDevice* Value_GetMemoryDevice(const OrtValue* value) noexcept {
  const OrtValue* v = checked<OrtValue>(value, Magic::kValue);
  // Host memory, or the memory of the EP's own device the tensor lives on (ort_device.h).
  return v && v->tensor ? &memory_info_of(*v->tensor).device : nullptr;
}

bool MemoryDevice_AreEqual(const OrtMemoryDevice* a, const OrtMemoryDevice* b) noexcept {
  if (!a || !b) return a == b;
  return a->device_type == b->device_type && a->memory_type == b->memory_type && a->vendor_id == b->vendor_id &&
         a->device_id == b->device_id;
}
OrtMemoryInfoDeviceType MemoryDevice_GetDeviceType(const OrtMemoryDevice* memory_device) noexcept {
  return memory_device ? memory_device->device_type : OrtMemoryInfoDeviceType_CPU;
}
OrtDeviceMemoryType MemoryDevice_GetMemoryType(const OrtMemoryDevice* memory_device) noexcept {
  return memory_device ? memory_device->memory_type : OrtDeviceMemoryType_DEFAULT;
}
uint32_t MemoryDevice_GetVendorId(const OrtMemoryDevice* memory_device) noexcept {
  return memory_device ? memory_device->vendor_id : 0;
}
uint32_t MemoryDevice_GetDeviceId(const OrtMemoryDevice* memory_device) noexcept {
  return memory_device ? memory_device->device_id : 0;
}

const OrtSyncStreamImpl* SyncStream_GetImpl(const OrtSyncStream* stream) noexcept {
  const OrtSyncStream* s = checked<OrtSyncStream>(stream, Magic::kSyncStream);
  return s ? s->impl : nullptr;
}

// The sync id: how many times the host synchronized the stream (ort_objects.h). 0 for a NULL or foreign
// stream, as for one never synchronized.
uint64_t SyncStream_GetSyncId(const OrtSyncStream* stream) noexcept {
  const OrtSyncStream* s = checked<OrtSyncStream>(stream, Magic::kSyncStream);
  return s ? s->sync_id.load() : 0;
}

// ephost never makes one stream wait on another's notification: it synchronizes the producer on the host
// (Flush) before anything reads what it wrote. So every stream has waited on the producer as far as the
// producer's last flush, and the answer is the producer's sync id (0: never synchronized, so a consumer must
// still wait). A stream and itself need no wait: 0, as ONNX Runtime answers for a stream it never waited on.
uint64_t GetSyncIdForLastWaitOnSyncStream(const OrtSyncStream* producer_stream,
                                          const OrtSyncStream* consumer_stream) noexcept {
  const OrtSyncStream* producer = checked<OrtSyncStream>(producer_stream, Magic::kSyncStream);
  const OrtSyncStream* consumer = checked<OrtSyncStream>(consumer_stream, Magic::kSyncStream);
  if (!producer || !consumer || producer == consumer) return 0;
  return producer->sync_id.load();
}

// A device the host did not probe (a virtual device, a device behind the EP's own driver), described by the
// plugin for its GetSupportedDevices answer: its EP devices are offered and selectable as any other. The
// plugin owns it (ReleaseHardwareDevice, once the EP devices made over it are gone: at the earliest in
// ReleaseEpFactory).
OrtStatus* CreateHardwareDevice(OrtHardwareDeviceType type, uint32_t vendor_id, uint32_t device_id,
                                const char* vendor_name, const OrtKeyValuePairs* metadata,
                                OrtHardwareDevice** hardware_device) noexcept {
  if (!hardware_device) return invalid("CreateHardwareDevice", "hardware_device (the out pointer) is NULL");
  *hardware_device = nullptr;
  if (type != OrtHardwareDeviceType_CPU && type != OrtHardwareDeviceType_GPU && type != OrtHardwareDeviceType_NPU)
    return invalid("CreateHardwareDevice", fmt::format("type {} is no OrtHardwareDeviceType (CPU 0, GPU 1, NPU 2)",
                                                       static_cast<int>(type)));
  if (!vendor_name) return invalid("CreateHardwareDevice", "vendor_name is NULL");
  if (metadata && !checked<OrtKeyValuePairs>(metadata, Magic::kKeyValuePairs))
    return invalid("CreateHardwareDevice", "metadata is not an OrtKeyValuePairs made by CreateKeyValuePairs");
  try {
    auto d = std::make_unique<OrtHardwareDevice>();
    d->type = type;
    d->vendor_id = vendor_id;
    d->device_id = device_id;
    d->vendor = vendor_name;
    if (metadata) d->metadata = *metadata;
    d->made_by_plugin = true;
    *hardware_device = d.release();
    return nullptr;
  } catch (const std::exception& e) {
    return make_status(ORT_FAIL, fmt::format("OrtEpApi::CreateHardwareDevice: {}", e.what()));
  }
}

// Frees only devices made by CreateHardwareDevice: the host's own are never freed by a plugin.
void ReleaseHardwareDevice(OrtHardwareDevice* input) noexcept {
  OrtHardwareDevice* d = checked_mut<OrtHardwareDevice>(input, Magic::kHardwareDevice);
  if (!d || !d->made_by_plugin) return;
  d->magic = Magic{};
  delete d;
}

// The source model of a weightless EPContext model: the buffer SessionOptionsSetWeightlessSourceModelBuffer set,
// else what the session's ep.context_source_model_path names (the host reads it for the EP when the provider
// is created), or NULL and 0 when there is neither, as ONNX Runtime answers.
OrtStatus* SessionOptionsGetWeightlessSourceModelBuffer(const OrtSessionOptions* session_options,
                                                        const void** source_model_data,
                                                        size_t* source_model_data_length) noexcept {
  const OrtSessionOptions* o = checked<OrtSessionOptions>(session_options, Magic::kSessionOptions);
  if (!o) return invalid("SessionOptionsGetWeightlessSourceModelBuffer", "session_options is not the OrtSessionOptions "
                         "the host handed CreateEp");
  if (!source_model_data || !source_model_data_length)
    return invalid("SessionOptionsGetWeightlessSourceModelBuffer", "source_model_data or source_model_data_length is NULL");
  if (o->weightless_buffer) {  // set with SessionOptionsSetWeightlessSourceModelBuffer: it comes first
    *source_model_data = o->weightless_buffer;
    *source_model_data_length = o->weightless_buffer_size;
    return nullptr;
  }
  *source_model_data = o->weightless_source_model.empty() ? nullptr : o->weightless_source_model.data();
  *source_model_data_length = o->weightless_source_model.size();
  return nullptr;
}

OrtStatus* GetEnvConfigEntries(OrtKeyValuePairs** config_entries) noexcept {
  if (!config_entries) return invalid("GetEnvConfigEntries", "out is NULL");
  try {
    *config_entries = new OrtKeyValuePairs();  // ephost's env has no ONNX Runtime config entries
    return nullptr;
  } catch (const std::exception& e) {
    return make_status(ORT_FAIL, e.what());
  }
}

}  // namespace ephost::ort_ep::api::ep
