// Kernel-registry EPs (ONNX Runtime API 24): the objects behind OrtKernelRegistry, OrtKernelDefBuilder,
// OrtKernelDef, OrtDataType and OrtKernelInfo, and how a node finds its kernel in an EP's registry.
//
// An EP that runs nodes one by one (instead of compiling fused groups) builds a registry in CreateEp:
// one kernel definition per operator (type, domain, since-version range, type constraints, memory types)
// with the function that creates its kernel. GetCapability claims nodes with
// EpGraphSupportInfo_AddSingleNode; the adapter (provider/ort_ep_provider.*) matches each claimed node
// against the registry as ONNX Runtime does (find_kernel), refusing the claim with the reason when no
// kernel fits, and creates the kernel from an OrtKernelInfo view of the node.
#pragma once

#include <climits>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "graph/graph.h"
#include "ort_ep/ort_objects.h"

// One element type a type constraint allows. Only tensor types: GetTensorDataType hands out one object
// per element type, alive for the process.
struct OrtDataType {
  ephost::ort_ep::Magic magic = ephost::ort_ep::Magic::kDataType;
  ONNXTensorElementDataType elem_type = ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
};

// What a kernel runs on: operator, domain ("" for ai.onnx), the since-versions it covers (inclusive),
// the EP it belongs to, the element types each type parameter may take ("T" -> {float, ...}), and the
// memory of inputs / outputs it wants other than the EP's default memory.
struct OrtKernelDef {
  ephost::ort_ep::Magic magic = ephost::ort_ep::Magic::kKernelDef;
  std::string op_type, domain, ep_name;
  int since_version_start = 1;
  int since_version_end = INT_MAX;
  std::vector<std::pair<std::string, std::vector<ONNXTensorElementDataType>>> type_constraints;
  std::map<size_t, OrtMemType> input_mem_types, output_mem_types;
  // (input, output) pairs: Alias (the output is the input's bytes) and MayInplace (the kernel may write
  // the output over the input). The planner gives the output the input's buffer when the node is the
  // input's last reader (plan::PlanStep::in_place); otherwise the output has its own buffer, which
  // for an Alias output KernelContext_GetOutput fills with the input's bytes.
  std::vector<std::pair<int, int>> aliases, mutable_aliases;
};

struct OrtKernelDefBuilder {
  ephost::ort_ep::Magic magic = ephost::ort_ep::Magic::kKernelDefBuilder;
  OrtKernelDef def;
};

struct OrtKernelRegistry {
  ephost::ort_ep::Magic magic = ephost::ort_ep::Magic::kKernelRegistry;
  struct Entry {
    OrtKernelDef def;  // a copy: the EP may release its definition after adding it
    OrtKernelCreateFunc create = nullptr;
    void* create_state = nullptr;
  };
  std::vector<Entry> kernels;
};

// The node a kernel is created for, as the create function and the kernel see it (KernelInfo_*): its
// attributes, inputs and outputs, the EP, the session's configuration. Lives as long as the kernel.
struct OrtKernelInfo {
  ephost::ort_ep::Magic magic = ephost::ort_ep::Magic::kKernelInfo;
  const ephost::Node* node = nullptr;
  const OrtEp* ep = nullptr;
  int since_version = -1;
  const OrtKeyValuePairs* config = nullptr;  // the session's config entries (the EP's options among them)
  // The allocator of the kernel's default memory (KernelInfoGetAllocator with OrtMemTypeDefault): the
  // host's CPU allocator, or the factory's allocator of the device's own memory. Null: the CPU's.
  OrtAllocator* default_allocator = nullptr;
  // Made by CopyKernelInfo (ReleaseKernelInfo deletes it); the host's own are never deleted by the plugin.
  bool is_copy = false;
  // The constant inputs handed out (KernelInfoGetConstantInput_tensor), by input index; borrowed tensors.
  std::map<size_t, std::unique_ptr<OrtValue>> constant_inputs;

  OrtKernelInfo() = default;
  // A copy views the same node (valid while the session lives); its constant inputs are handed out anew.
  OrtKernelInfo(const OrtKernelInfo& other)
      : node(other.node), ep(other.ep), since_version(other.since_version), config(other.config),
        default_allocator(other.default_allocator) {}
  OrtKernelInfo& operator=(const OrtKernelInfo&) = delete;
};

namespace ephost::ort_ep {

// The since-version of the operator version `node` resolves to (the newest schema at or below the
// model's opset of its domain), as ONNX Runtime matches kernels; the opset itself for an operator with
// no schema; -1 when the model imports no opset of its domain.
int node_since_version(const Node& node);

// The registry entry that runs `node` for EP `ep_name`, or null with `why_not` saying which check failed
// for the closest candidate (operator and domain, EP name, since-version range, a type constraint).
const OrtKernelRegistry::Entry* find_kernel(const OrtKernelRegistry& registry, const std::string& ep_name,
                                            const Node& node, std::string* why_not);

}  // namespace ephost::ort_ep
