// OrtApi entries a kernel-registry EP's kernels read their node through (OrtKernelInfo): attributes,
// inputs and outputs (names, types, constant values), the node's name, operator, domain and version,
// the session's configuration, loggers; and Node_GetSinceVersion, answered the same way.
#include <fmt/format.h>
#include <onnx/onnx_pb.h>

#include <cstring>
#include <memory>

#include "ort_ep/api_impl.h"
#include "ort_ep/graph_handles.h"
#include "ort_ep/kernel_context.h"
#include "ort_ep/kernel_registry.h"
#include "model/initializer_release.h"
#include "model/tensor_proto.h"

namespace ephost::ort_ep::api {
namespace {

OrtStatus* invalid(const char* function, const std::string& what) {
  return make_status(ORT_INVALID_ARGUMENT, fmt::format("OrtApi::{}: {}", function, what));
}

const OrtKernelInfo* info_of(const OrtKernelInfo* info) {
  const OrtKernelInfo* k = checked<OrtKernelInfo>(info, Magic::kKernelInfo);
  return k && k->node ? k : nullptr;
}

// ONNX Runtime's protocol for text out: `*size` becomes the length with its terminator; with no buffer
// that is all, with a buffer too short it is an error, else the text is copied.
OrtStatus* copy_text(const char* function, const std::string& text, char* out, size_t* size) {
  if (!size) return invalid(function, "size is NULL");
  const size_t needed = text.size() + 1;
  const size_t room = *size;
  *size = needed;
  if (!out) return nullptr;
  if (room < needed)
    return invalid(function, fmt::format("the buffer holds {} bytes, '{}' needs {}", room, text, needed));
  std::memcpy(out, text.c_str(), needed);
  return nullptr;
}

// The same protocol for arrays, counted in elements.
template <typename T, typename Src>
OrtStatus* copy_array(const char* function, const Src& values, T* out, size_t* size) {
  if (!size) return invalid(function, "size is NULL");
  const size_t needed = static_cast<size_t>(values.size());
  const size_t room = *size;
  *size = needed;
  if (!out) return nullptr;
  if (room < needed) return invalid(function, fmt::format("the buffer holds {} elements, {} are needed", room, needed));
  for (size_t i = 0; i < needed; ++i) out[i] = static_cast<T>(values[static_cast<int>(i)]);
  return nullptr;
}

// The node's attribute `name` of proto type `type`, or a status saying it is missing or of another type.
OrtStatus* attribute(const char* function, const OrtKernelInfo* info, const char* name,
                     onnx::AttributeProto::AttributeType type, const onnx::AttributeProto** out) {
  const OrtKernelInfo* k = info_of(info);
  if (!k || !name) return invalid(function, "bad kernel info or name");
  const onnx::AttributeProto* a = k->node->attribute(name);
  if (!a)
    return make_status(ORT_FAIL, fmt::format("OrtApi::{}: node '{}' ({}) has no attribute '{}'", function,
                                             k->node->name, k->node->op_type, name));
  if (a->type() != type)
    return make_status(ORT_FAIL, fmt::format("OrtApi::{}: attribute '{}' of node '{}' is a {}, not a {}", function,
                                             name, k->node->name, onnx::AttributeProto::AttributeType_Name(a->type()),
                                             onnx::AttributeProto::AttributeType_Name(type)));
  *out = a;
  return nullptr;
}

// The node's input (or output) `index`, which may be null for an omitted optional one.
OrtStatus* value(const char* function, const OrtKernelInfo* info, size_t index, bool input, const Value** out) {
  const OrtKernelInfo* k = info_of(info);
  if (!k) return invalid(function, "bad kernel info");
  const std::vector<Value*>& values = input ? k->node->inputs : k->node->outputs;
  if (index >= values.size())
    return invalid(function, fmt::format("{} {} of {}", input ? "input" : "output", index, values.size()));
  *out = values[index];
  return nullptr;
}

OrtStatus* value_name(const char* function, const OrtKernelInfo* info, size_t index, bool input, char* out,
                      size_t* size) {
  const Value* v = nullptr;
  if (OrtStatus* s = value(function, info, index, input, &v)) return s;
  return copy_text(function, v ? v->name : std::string(), out, size);
}

OrtStatus* value_type(const char* function, const OrtKernelInfo* info, size_t index, bool input,
                      OrtTypeInfo** type_info) {
  if (!type_info) return invalid(function, "out is NULL");
  const Value* v = nullptr;
  if (OrtStatus* s = value(function, info, index, input, &v)) return s;
  if (!v) return invalid(function, fmt::format("{} {} is omitted: it has no type", input ? "input" : "output", index));
  try {
    auto* t = new OrtTypeInfo(type_info_of(v->type));
    t->owned = true;  // the plugin releases it (ReleaseTypeInfo)
    *type_info = t;
    return nullptr;
  } catch (const std::exception& e) {
    return make_status(ORT_FAIL, e.what());
  }
}

}  // namespace

// ---- attributes ----

OrtStatus* KernelInfoGetAttribute_float(const OrtKernelInfo* info, const char* name, float* out) noexcept {
  const onnx::AttributeProto* a = nullptr;
  if (!out) return invalid("KernelInfoGetAttribute_float", "out is NULL");
  if (OrtStatus* s = attribute("KernelInfoGetAttribute_float", info, name, onnx::AttributeProto::FLOAT, &a)) return s;
  *out = a->f();
  return nullptr;
}

OrtStatus* KernelInfoGetAttribute_int64(const OrtKernelInfo* info, const char* name, int64_t* out) noexcept {
  const onnx::AttributeProto* a = nullptr;
  if (!out) return invalid("KernelInfoGetAttribute_int64", "out is NULL");
  if (OrtStatus* s = attribute("KernelInfoGetAttribute_int64", info, name, onnx::AttributeProto::INT, &a)) return s;
  *out = a->i();
  return nullptr;
}

OrtStatus* KernelInfoGetAttribute_string(const OrtKernelInfo* info, const char* name, char* out, size_t* size) noexcept {
  const onnx::AttributeProto* a = nullptr;
  if (OrtStatus* s = attribute("KernelInfoGetAttribute_string", info, name, onnx::AttributeProto::STRING, &a)) return s;
  return copy_text("KernelInfoGetAttribute_string", a->s(), out, size);
}

OrtStatus* KernelInfoGetAttributeArray_float(const OrtKernelInfo* info, const char* name, float* out,
                                             size_t* size) noexcept {
  const onnx::AttributeProto* a = nullptr;
  if (OrtStatus* s = attribute("KernelInfoGetAttributeArray_float", info, name, onnx::AttributeProto::FLOATS, &a))
    return s;
  return copy_array("KernelInfoGetAttributeArray_float", a->floats(), out, size);
}

OrtStatus* KernelInfoGetAttributeArray_int64(const OrtKernelInfo* info, const char* name, int64_t* out,
                                             size_t* size) noexcept {
  const onnx::AttributeProto* a = nullptr;
  if (OrtStatus* s = attribute("KernelInfoGetAttributeArray_int64", info, name, onnx::AttributeProto::INTS, &a))
    return s;
  return copy_array("KernelInfoGetAttributeArray_int64", a->ints(), out, size);
}

// A tensor attribute as a new value (the plugin releases it with ReleaseValue), its elements in memory of
// `allocator` (CPU memory: ephost reads attributes on the host) and freed with it when released.
OrtStatus* KernelInfoGetAttribute_tensor(const OrtKernelInfo* info, const char* name, OrtAllocator* allocator,
                                         OrtValue** out) noexcept {
  const char* fn = "KernelInfoGetAttribute_tensor";
  const onnx::AttributeProto* a = nullptr;
  if (!out || !allocator || !allocator->Alloc || !allocator->Free) return invalid(fn, "bad allocator or out");
  if (OrtStatus* s = attribute(fn, info, name, onnx::AttributeProto::TENSOR, &a)) return s;
  const OrtMemoryInfo* where = allocator->Info ? allocator->Info(allocator) : nullptr;
  if (where && where->device.device_type != OrtMemoryInfoDeviceType_CPU)
    return invalid(fn, fmt::format("the allocator's memory '{}' is not CPU memory; ask with a CPU allocator "
                                   "(GetAllocatorWithDefaultOptions)", where->name));
  try {
    Tensor t = tensor_from_proto(a->t());
    auto value = std::make_unique<OrtValue>();
    value->owned = true;
    if (t.elem_type() == EPHOST_ELEMENT_STRING || allocator == cpu_allocator()) {
      value->own = std::move(t);
    } else {
      const size_t bytes = t.byte_size();
      void* data = allocator->Alloc(allocator, bytes ? bytes : 1);
      if (!data) return make_status(ORT_FAIL, fmt::format("OrtApi::{}: the allocator returned NULL for {} bytes", fn, bytes));
      std::shared_ptr<void> keep(data, [allocator](void* p) { allocator->Free(allocator, p); });
      if (bytes) std::memcpy(data, t.data(), bytes);
      value->own = Tensor::borrow(t.elem_type(), t.shape(), data, std::move(keep));
    }
    value->tensor = &value->own;
    *out = value.release();
    return nullptr;
  } catch (const std::exception& e) {
    return make_status(ORT_FAIL, fmt::format("OrtApi::{}: attribute '{}': {}", fn, name, e.what()));
  }
}

// An array of strings attribute: `*out` an array of `*size` NUL-terminated strings, the array and each
// string allocated with `allocator` (the plugin frees each string, then the array, with it); NULL and 0
// for an empty array.
OrtStatus* KernelInfoGetAttributeArray_string(const OrtKernelInfo* info, const char* name, OrtAllocator* allocator,
                                              char*** out, size_t* size) noexcept {
  const char* fn = "KernelInfoGetAttributeArray_string";
  const onnx::AttributeProto* a = nullptr;
  if (!out || !size || !allocator || !allocator->Alloc || !allocator->Free) return invalid(fn, "bad allocator or out");
  if (OrtStatus* s = attribute(fn, info, name, onnx::AttributeProto::STRINGS, &a)) return s;
  const size_t count = static_cast<size_t>(a->strings_size());
  *out = nullptr;
  *size = 0;
  if (count == 0) return nullptr;
  auto** strings = static_cast<char**>(allocator->Alloc(allocator, count * sizeof(char*)));
  if (!strings) return make_status(ORT_FAIL, fmt::format("OrtApi::{}: the allocator returned NULL", fn));
  for (size_t i = 0; i < count; ++i) {
    const std::string& text = a->strings(static_cast<int>(i));
    strings[i] = static_cast<char*>(allocator->Alloc(allocator, text.size() + 1));
    if (!strings[i]) {
      for (size_t j = 0; j < i; ++j) allocator->Free(allocator, strings[j]);
      allocator->Free(allocator, strings);
      return make_status(ORT_FAIL, fmt::format("OrtApi::{}: the allocator returned NULL", fn));
    }
    std::memcpy(strings[i], text.c_str(), text.size() + 1);
  }
  *out = strings;
  *size = count;
  return nullptr;
}

// ---- the kernel info itself ----

// A copy the plugin owns (ReleaseKernelInfo), viewing the same node: valid as long as the session.
OrtStatus* CopyKernelInfo(const OrtKernelInfo* info, OrtKernelInfo** info_copy) noexcept {
  const OrtKernelInfo* k = info_of(info);
  if (!k || !info_copy) return invalid("CopyKernelInfo", "bad kernel info or out");
  try {
    auto* copy = new OrtKernelInfo(*k);
    copy->is_copy = true;
    *info_copy = copy;
    return nullptr;
  } catch (const std::exception& e) {
    return make_status(ORT_FAIL, fmt::format("OrtApi::CopyKernelInfo: {}", e.what()));
  }
}

// Only copies are released; a kernel info the host handed a create function is the host's.
void ReleaseKernelInfo(OrtKernelInfo* input) noexcept {
  OrtKernelInfo* k = checked_mut<OrtKernelInfo>(input, Magic::kKernelInfo);
  if (k && k->is_copy) delete k;
}

// The allocator of the kernel's memory: OrtMemTypeDefault the EP device's (the CPU's on host memory),
// OrtMemTypeCPUInput / CPUOutput the host's CPU allocator. The host's allocators live for the process
// (ReleaseAllocator on them does nothing).
OrtStatus* KernelInfoGetAllocator(const OrtKernelInfo* info, OrtMemType mem_type, OrtAllocator** out) noexcept {
  const OrtKernelInfo* k = info_of(info);
  if (!k || !out) return invalid("KernelInfoGetAllocator", "bad kernel info or out");
  if (mem_type != OrtMemTypeDefault && mem_type != OrtMemTypeCPUInput && mem_type != OrtMemTypeCPUOutput)
    return invalid("KernelInfoGetAllocator", fmt::format("{} is no OrtMemType", static_cast<int>(mem_type)));
  *out = mem_type == OrtMemTypeDefault && k->default_allocator ? k->default_allocator : cpu_allocator();
  return nullptr;
}

// ---- inputs and outputs ----

OrtStatus* KernelInfo_GetInputCount(const OrtKernelInfo* info, size_t* out) noexcept {
  const OrtKernelInfo* k = info_of(info);
  if (!k || !out) return invalid("KernelInfo_GetInputCount", "bad kernel info or out");
  *out = k->node->inputs.size();
  return nullptr;
}

OrtStatus* KernelInfo_GetOutputCount(const OrtKernelInfo* info, size_t* out) noexcept {
  const OrtKernelInfo* k = info_of(info);
  if (!k || !out) return invalid("KernelInfo_GetOutputCount", "bad kernel info or out");
  *out = k->node->outputs.size();
  return nullptr;
}

OrtStatus* KernelInfo_GetInputName(const OrtKernelInfo* info, size_t index, char* out, size_t* size) noexcept {
  return value_name("KernelInfo_GetInputName", info, index, true, out, size);
}

OrtStatus* KernelInfo_GetOutputName(const OrtKernelInfo* info, size_t index, char* out, size_t* size) noexcept {
  return value_name("KernelInfo_GetOutputName", info, index, false, out, size);
}

OrtStatus* KernelInfo_GetInputTypeInfo(const OrtKernelInfo* info, size_t index, OrtTypeInfo** type_info) noexcept {
  return value_type("KernelInfo_GetInputTypeInfo", info, index, true, type_info);
}

OrtStatus* KernelInfo_GetOutputTypeInfo(const OrtKernelInfo* info, size_t index, OrtTypeInfo** type_info) noexcept {
  return value_type("KernelInfo_GetOutputTypeInfo", info, index, false, type_info);
}

// A constant initializer input comes back as a value the kernel info owns (alive as long as the kernel);
// any other input as is_constant 0 and NULL.
OrtStatus* KernelInfoGetConstantInput_tensor(const OrtKernelInfo* info, size_t index, int* is_constant,
                                             const OrtValue** out) noexcept {
  if (!is_constant || !out) return invalid("KernelInfoGetConstantInput_tensor", "NULL out");
  const Value* v = nullptr;
  if (OrtStatus* s = value("KernelInfoGetConstantInput_tensor", info, index, true, &v)) return s;
  *is_constant = 0;
  *out = nullptr;
  if (!v || !v->is_constant_initializer()) return nullptr;
  try {
    auto& held = const_cast<OrtKernelInfo*>(info)->constant_inputs[index];
    if (!held) {
      held = std::make_unique<OrtValue>();
      held->tensor = v->initializer.get();  // borrowed: the graph keeps its initializers for the session
    }
    // Freed once the kernels reading it pre-packed it (model/initializer_release.h): read back, and
    // this reader holds a view again.
    // Noted first, so that no freeing on another thread takes the bytes again.
    if (InitializerRelease* release = initializer_release_of(*v))
      release->note_handout(v->initializer.get(), {current_initializer_reader(), current_initializer_step()});
    v->initializer->ensure_data();
    *is_constant = 1;
    *out = held.get();
    return nullptr;
  } catch (const std::exception& e) {
    return make_status(ORT_FAIL, e.what());
  }
}

// ---- the node ----

OrtStatus* KernelInfo_GetNodeName(const OrtKernelInfo* info, char* out, size_t* size) noexcept {
  const OrtKernelInfo* k = info_of(info);
  if (!k) return invalid("KernelInfo_GetNodeName", "bad kernel info");
  return copy_text("KernelInfo_GetNodeName", k->node->name, out, size);
}

OrtStatus* KernelInfo_GetOperatorDomain(const OrtKernelInfo* info, char* out, size_t* size) noexcept {
  const OrtKernelInfo* k = info_of(info);
  if (!k) return invalid("KernelInfo_GetOperatorDomain", "bad kernel info");
  return copy_text("KernelInfo_GetOperatorDomain", k->node->domain, out, size);
}

OrtStatus* KernelInfo_GetOperatorType(const OrtKernelInfo* info, char* out, size_t* size) noexcept {
  const OrtKernelInfo* k = info_of(info);
  if (!k) return invalid("KernelInfo_GetOperatorType", "bad kernel info");
  return copy_text("KernelInfo_GetOperatorType", k->node->op_type, out, size);
}

OrtStatus* KernelInfo_GetOperatorSinceVersion(const OrtKernelInfo* info, int* since_version) noexcept {
  const OrtKernelInfo* k = info_of(info);
  if (!k || !since_version) return invalid("KernelInfo_GetOperatorSinceVersion", "bad kernel info or out");
  *since_version = k->since_version;
  return nullptr;
}

OrtStatus* KernelInfo_GetConfigEntries(const OrtKernelInfo* info, OrtKeyValuePairs** out) noexcept {
  const OrtKernelInfo* k = info_of(info);
  if (!k || !out) return invalid("KernelInfo_GetConfigEntries", "bad kernel info or out");
  try {
    *out = k->config ? new OrtKeyValuePairs(*k->config) : new OrtKeyValuePairs();  // ReleaseKeyValuePairs
    return nullptr;
  } catch (const std::exception& e) {
    return make_status(ORT_FAIL, e.what());
  }
}

OrtStatus* KernelInfo_GetLogger(const OrtKernelInfo* info, const OrtLogger** logger) noexcept {
  if (!info_of(info) || !logger) return invalid("KernelInfo_GetLogger", "bad kernel info or out");
  *logger = default_logger();
  return nullptr;
}

OrtStatus* KernelContext_GetLogger(const OrtKernelContext* context, const OrtLogger** logger) noexcept {
  if (!context || context->magic != OrtKernelContext::kMagic || !logger)
    return invalid("KernelContext_GetLogger", "bad kernel context or out");
  *logger = default_logger();
  return nullptr;
}

OrtStatus* Node_GetSinceVersion(const OrtNode* node, int* since_version) noexcept {
  const Node* n = node_of(node);
  if (!n || !since_version) return invalid("Node_GetSinceVersion", "bad node or out");
  try {
    *since_version = node_since_version(*n);
    return nullptr;
  } catch (const std::exception& e) {
    return make_status(ORT_FAIL, e.what());
  }
}

}  // namespace ephost::ort_ep::api
