// OrtEpApi entries: EP devices, GetCapability's claims, the compute context's name, and memory devices.
#include <fmt/format.h>

#include <algorithm>

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
