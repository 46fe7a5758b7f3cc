// OrtApi entries for values: tensors and their type-and-shape infos, memory infos, the CPU allocator,
// and the kernel context a Compute call reads and writes.
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

#include "core/error.h"
#include "core/tensor_copy.h"
#include "ort_ep/api_impl.h"
#include "ort_ep/kernel_context.h"
#include "ort_ep/ort_device.h"
#include "ort_ep/ort_objects.h"

namespace ephost::ort_ep::api {
namespace {

OrtStatus* invalid(const char* function, const std::string& what) {
  return make_status(ORT_INVALID_ARGUMENT, fmt::format("OrtApi::{}: {}", function, what));
}

const OrtValue* value_of(const OrtValue* v) {
  const OrtValue* value = checked<OrtValue>(v, Magic::kValue);
  return value && value->tensor ? value : nullptr;
}

const OrtTypeInfo* type_of(const void* info) { return checked<OrtTypeInfo>(info, Magic::kTypeInfo); }

OrtTensorTypeAndShapeInfo* new_shape_info(const Tensor& t) {
  auto* info = new OrtTensorTypeAndShapeInfo();
  info->onnx_type = ONNX_TYPE_TENSOR;
  info->elem_type = static_cast<ONNXTensorElementDataType>(t.elem_type());
  info->has_shape = true;
  info->dims = t.shape();
  info->owned = true;
  return info;
}

OrtKernelContext* kernel_context(const OrtKernelContext* context) {
  if (!context || context->magic != OrtKernelContext::kMagic) return nullptr;
  return const_cast<OrtKernelContext*>(context);
}

// Runs `fn`; an ephost::Error or other exception becomes a status (ORT_FAIL, or the error's code mapped).
template <typename Fn>
OrtStatus* guarded(const char* function, Fn&& fn) noexcept {
  try {
    return fn();
  } catch (const std::exception& e) {
    return make_status(ORT_FAIL, fmt::format("OrtApi::{}: {}", function, e.what()));
  } catch (...) {
    return make_status(ORT_FAIL, fmt::format("OrtApi::{}: unknown exception", function));
  }
}

}  // namespace

// ---- tensors ----

OrtStatus* IsTensor(const OrtValue* value, int* out) noexcept {
  if (!value_of(value) || !out) return invalid("IsTensor", "bad value or out");
  *out = 1;  // the adapter hands out tensors only
  return nullptr;
}

OrtStatus* GetValueType(const OrtValue* value, enum ONNXType* out) noexcept {
  if (!value_of(value) || !out) return invalid("GetValueType", "bad value or out");
  *out = ONNX_TYPE_TENSOR;
  return nullptr;
}

OrtStatus* GetTensorMutableData(OrtValue* value, void** out) noexcept {
  const OrtValue* v = value_of(value);
  if (!v || !out) return invalid("GetTensorMutableData", "bad value or out");
  // A tensor on the EP's own device: the pointer its allocator handed out (ort_device.h).
  if (v->tensor->on_device()) {
    *out = device_pointer(*v->tensor);
    return *out ? nullptr : invalid("GetTensorMutableData", "the tensor is in the memory of another plugin's device");
  }
  *out = v->tensor->data();
  return nullptr;
}

OrtStatus* GetTensorData(const OrtValue* value, const void** out) noexcept {
  const OrtValue* v = value_of(value);
  if (!v || !out) return invalid("GetTensorData", "bad value or out");
  if (v->tensor->on_device()) {
    *out = device_pointer(*v->tensor);
    return *out ? nullptr : invalid("GetTensorData", "the tensor is in the memory of another plugin's device");
  }
  *out = v->tensor->data();
  return nullptr;
}

OrtStatus* GetTensorSizeInBytes(const OrtValue* ort_value, size_t* size) noexcept {
  const OrtValue* v = value_of(ort_value);
  if (!v || !size) return invalid("GetTensorSizeInBytes", "bad value or size");
  if (v->tensor->elem_type() == EPHOST_ELEMENT_STRING)
    return invalid("GetTensorSizeInBytes", "string tensors have no size in bytes");
  *size = v->tensor->byte_size();
  return nullptr;
}

OrtStatus* GetTensorTypeAndShape(const OrtValue* value, OrtTensorTypeAndShapeInfo** out) noexcept {
  const OrtValue* v = value_of(value);
  if (!v || !out) return invalid("GetTensorTypeAndShape", "bad value or out");
  return guarded("GetTensorTypeAndShape", [&]() -> OrtStatus* {
    *out = new_shape_info(*v->tensor);
    return nullptr;
  });
}

OrtStatus* GetTensorMemoryInfo(const OrtValue* value, const OrtMemoryInfo** mem_info) noexcept {
  const OrtValue* v = value_of(value);
  if (!v || !mem_info) return invalid("GetTensorMemoryInfo", "bad value or mem_info");
  *mem_info = &memory_info_of(*v->tensor);
  return nullptr;
}

void ReleaseValue(OrtValue* input) noexcept {
  OrtValue* v = checked_mut<OrtValue>(input, Magic::kValue);
  if (v && v->owned) delete v;
}

// ---- type infos ----

OrtStatus* CastTypeInfoToTensorInfo(const OrtTypeInfo* type_info, const OrtTensorTypeAndShapeInfo** out) noexcept {
  const OrtTypeInfo* t = type_of(type_info);
  if (!t || !out) return invalid("CastTypeInfoToTensorInfo", "bad type info or out");
  // NULL for a type that is not a tensor, as ONNX Runtime answers.
  *out = t->onnx_type == ONNX_TYPE_TENSOR ? static_cast<const OrtTensorTypeAndShapeInfo*>(t) : nullptr;
  return nullptr;
}

OrtStatus* GetOnnxTypeFromTypeInfo(const OrtTypeInfo* type_info, enum ONNXType* out) noexcept {
  const OrtTypeInfo* t = type_of(type_info);
  if (!t || !out) return invalid("GetOnnxTypeFromTypeInfo", "bad type info or out");
  *out = t->onnx_type;
  return nullptr;
}

OrtStatus* GetTensorElementType(const OrtTensorTypeAndShapeInfo* info, enum ONNXTensorElementDataType* out) noexcept {
  const OrtTypeInfo* t = type_of(info);
  if (!t || !out) return invalid("GetTensorElementType", "bad info or out");
  *out = t->elem_type;
  return nullptr;
}

OrtStatus* GetDimensionsCount(const OrtTensorTypeAndShapeInfo* info, size_t* out) noexcept {
  const OrtTypeInfo* t = type_of(info);
  if (!t || !out) return invalid("GetDimensionsCount", "bad info or out");
  *out = t->dims.size();
  return nullptr;
}

OrtStatus* GetDimensions(const OrtTensorTypeAndShapeInfo* info, int64_t* dim_values, size_t dim_values_length) noexcept {
  const OrtTypeInfo* t = type_of(info);
  if (!t || (!dim_values && dim_values_length)) return invalid("GetDimensions", "bad info or dim_values");
  // ONNX Runtime copies min(length, rank) dims.
  const size_t n = std::min(dim_values_length, t->dims.size());
  for (size_t i = 0; i < n; ++i) dim_values[i] = t->dims[i];
  return nullptr;
}

OrtStatus* GetTensorShapeElementCount(const OrtTensorTypeAndShapeInfo* info, size_t* out) noexcept {
  const OrtTypeInfo* t = type_of(info);
  if (!t || !out) return invalid("GetTensorShapeElementCount", "bad info or out");
  // -1 dims (unknown) make the count unknown: ONNX Runtime answers -1 as SIZE_MAX's two's complement.
  int64_t count = 1;
  for (int64_t d : t->dims) {
    if (d < 0) {
      count = -1;
      break;
    }
    count *= d;
  }
  *out = static_cast<size_t>(count);
  return nullptr;
}

bool TensorTypeAndShape_HasShape(const OrtTensorTypeAndShapeInfo* info) noexcept {
  const OrtTypeInfo* t = type_of(info);
  return t && t->has_shape;
}

void ReleaseTypeInfo(OrtTypeInfo* input) noexcept {
  OrtTypeInfo* t = checked_mut<OrtTypeInfo>(input, Magic::kTypeInfo);
  if (t && t->owned) delete t;  // the host's own (a graph value's type) stay
}

void ReleaseTensorTypeAndShapeInfo(OrtTensorTypeAndShapeInfo* input) noexcept {
  OrtTypeInfo* t = checked_mut<OrtTypeInfo>(input, Magic::kTypeInfo);
  if (t && t->owned) delete static_cast<OrtTensorTypeAndShapeInfo*>(t);
}

// ---- memory infos ----

OrtStatus* CreateMemoryInfo(const char* name, enum OrtAllocatorType type, int id, enum OrtMemType mem_type,
                            OrtMemoryInfo** out) noexcept {
  if (!name || !out) return invalid("CreateMemoryInfo", "name or out is NULL");
  return guarded("CreateMemoryInfo", [&]() -> OrtStatus* {
    auto* info = new OrtMemoryInfo();
    info->name = name;
    info->allocator_type = type;
    info->id = id;
    info->mem_type = mem_type;
    // "Cpu" (and the CPU memory types) is host memory; any other name is a device's, of the vendor's kind.
    const bool cpu = info->name == "Cpu" || mem_type == OrtMemTypeCPUInput || mem_type == OrtMemTypeCPUOutput;
    info->device.device_type = cpu ? OrtMemoryInfoDeviceType_CPU : OrtMemoryInfoDeviceType_GPU;
    info->device.device_id = static_cast<uint32_t>(id);
    *out = info;
    return nullptr;
  });
}

OrtStatus* CreateCpuMemoryInfo(enum OrtAllocatorType type, enum OrtMemType mem_type, OrtMemoryInfo** out) noexcept {
  return CreateMemoryInfo("Cpu", type, 0, mem_type, out);
}

OrtStatus* CreateMemoryInfo_V2(const char* name, enum OrtMemoryInfoDeviceType device_type, uint32_t vendor_id,
                               int32_t device_id, enum OrtDeviceMemoryType mem_type, size_t alignment,
                               enum OrtAllocatorType allocator_type, OrtMemoryInfo** out) noexcept {
  if (!name || !out) return invalid("CreateMemoryInfo_V2", "name or out is NULL");
  return guarded("CreateMemoryInfo_V2", [&]() -> OrtStatus* {
    auto* info = new OrtMemoryInfo();
    info->name = name;
    info->allocator_type = allocator_type;
    info->id = device_id;
    info->alignment = alignment;
    info->device = OrtMemoryDevice{device_type, mem_type, vendor_id, static_cast<uint32_t>(device_id)};
    *out = info;
    return nullptr;
  });
}

OrtStatus* CompareMemoryInfo(const OrtMemoryInfo* info1, const OrtMemoryInfo* info2, int* out) noexcept {
  const OrtMemoryInfo* a = checked<OrtMemoryInfo>(info1, Magic::kMemoryInfo);
  const OrtMemoryInfo* b = checked<OrtMemoryInfo>(info2, Magic::kMemoryInfo);
  if (!a || !b || !out) return invalid("CompareMemoryInfo", "bad memory info or out");
  const bool same = a->name == b->name && a->id == b->id && a->mem_type == b->mem_type &&
                    a->allocator_type == b->allocator_type && a->device.device_type == b->device.device_type &&
                    a->device.memory_type == b->device.memory_type && a->device.vendor_id == b->device.vendor_id;
  *out = same ? 0 : -1;  // ONNX Runtime: 0 when equal
  return nullptr;
}

OrtStatus* MemoryInfoGetName(const OrtMemoryInfo* ptr, const char** out) noexcept {
  const OrtMemoryInfo* m = checked<OrtMemoryInfo>(ptr, Magic::kMemoryInfo);
  if (!m || !out) return invalid("MemoryInfoGetName", "bad memory info or out");
  *out = m->name.c_str();
  return nullptr;
}
OrtStatus* MemoryInfoGetId(const OrtMemoryInfo* ptr, int* out) noexcept {
  const OrtMemoryInfo* m = checked<OrtMemoryInfo>(ptr, Magic::kMemoryInfo);
  if (!m || !out) return invalid("MemoryInfoGetId", "bad memory info or out");
  *out = m->id;
  return nullptr;
}
OrtStatus* MemoryInfoGetMemType(const OrtMemoryInfo* ptr, OrtMemType* out) noexcept {
  const OrtMemoryInfo* m = checked<OrtMemoryInfo>(ptr, Magic::kMemoryInfo);
  if (!m || !out) return invalid("MemoryInfoGetMemType", "bad memory info or out");
  *out = m->mem_type;
  return nullptr;
}
OrtStatus* MemoryInfoGetType(const OrtMemoryInfo* ptr, OrtAllocatorType* out) noexcept {
  const OrtMemoryInfo* m = checked<OrtMemoryInfo>(ptr, Magic::kMemoryInfo);
  if (!m || !out) return invalid("MemoryInfoGetType", "bad memory info or out");
  *out = m->allocator_type;
  return nullptr;
}
void MemoryInfoGetDeviceType(const OrtMemoryInfo* ptr, OrtMemoryInfoDeviceType* out) noexcept {
  const OrtMemoryInfo* m = checked<OrtMemoryInfo>(ptr, Magic::kMemoryInfo);
  if (m && out) *out = m->device.device_type;
}
OrtDeviceMemoryType MemoryInfoGetDeviceMemType(const OrtMemoryInfo* ptr) noexcept {
  const OrtMemoryInfo* m = checked<OrtMemoryInfo>(ptr, Magic::kMemoryInfo);
  return m ? m->device.memory_type : OrtDeviceMemoryType_DEFAULT;
}
uint32_t MemoryInfoGetVendorId(const OrtMemoryInfo* ptr) noexcept {
  const OrtMemoryInfo* m = checked<OrtMemoryInfo>(ptr, Magic::kMemoryInfo);
  return m ? m->device.vendor_id : 0;
}
void ReleaseMemoryInfo(OrtMemoryInfo* input) noexcept {
  OrtMemoryInfo* m = checked_mut<OrtMemoryInfo>(input, Magic::kMemoryInfo);
  if (m && m != &cpu_memory_info()) delete m;
}

// ---- allocator ----

OrtStatus* GetAllocatorWithDefaultOptions(OrtAllocator** out) noexcept {
  if (!out) return invalid("GetAllocatorWithDefaultOptions", "out is NULL");
  *out = cpu_allocator();
  return nullptr;
}
OrtStatus* AllocatorAlloc(OrtAllocator* ort_allocator, size_t size, void** out) noexcept {
  if (!ort_allocator || !ort_allocator->Alloc || !out) return invalid("AllocatorAlloc", "bad allocator or out");
  *out = ort_allocator->Alloc(ort_allocator, size);
  return *out ? nullptr : make_status(ORT_FAIL, fmt::format("OrtApi::AllocatorAlloc: out of memory ({} bytes)", size));
}
OrtStatus* AllocatorFree(OrtAllocator* ort_allocator, void* p) noexcept {
  if (!ort_allocator || !ort_allocator->Free) return invalid("AllocatorFree", "bad allocator");
  ort_allocator->Free(ort_allocator, p);
  return nullptr;
}
OrtStatus* AllocatorGetInfo(const OrtAllocator* ort_allocator, const struct OrtMemoryInfo** out) noexcept {
  if (!ort_allocator || !ort_allocator->Info || !out) return invalid("AllocatorGetInfo", "bad allocator or out");
  *out = ort_allocator->Info(ort_allocator);
  return nullptr;
}

// The host's allocators (the CPU's, a device's) live for the process: releasing one does nothing. No
// entry of ephost's hands out an allocator the plugin must release (CreateAllocator is not served).
void ReleaseAllocator(OrtAllocator* input) noexcept { (void)input; }

// ---- the kernel context ----

namespace {

// The allocator of memory `mem_info` in this step: the host's CPU allocator for CPU memory, the device's
// for the memory of the device the step runs on; null for memory the step cannot reach.
OrtAllocator* allocator_for(const OrtKernelContext& k, const OrtMemoryInfo& mem_info) {
  if (mem_info.device.device_type == OrtMemoryInfoDeviceType_CPU) return cpu_allocator();
  if (k.device_memory && k.device_allocator && ep::MemoryDevice_AreEqual(&k.device_memory->device, &mem_info.device))
    return k.device_allocator;
  return nullptr;
}

std::string no_allocator(const OrtKernelContext& k, const OrtMemoryInfo& mem_info) {
  return fmt::format("no allocator for memory '{}' (device type {}, memory type {}) in this step: it has the "
                     "CPU's{}",
                     mem_info.name, static_cast<int>(mem_info.device.device_type),
                     static_cast<int>(mem_info.device.memory_type),
                     k.device_memory ? fmt::format(" and its device's ('{}')", k.device_memory->name) : std::string());
}

}  // namespace

OrtStatus* KernelContext_GetAllocator(const OrtKernelContext* context, const OrtMemoryInfo* mem_info,
                                      OrtAllocator** out) noexcept {
  OrtKernelContext* k = kernel_context(context);
  const OrtMemoryInfo* m = checked<OrtMemoryInfo>(mem_info, Magic::kMemoryInfo);
  if (!k || !m || !out) return invalid("KernelContext_GetAllocator", "bad kernel context, memory info or out");
  *out = allocator_for(*k, *m);
  return *out ? nullptr : invalid("KernelContext_GetAllocator", no_allocator(*k, *m));
}

// A scratch buffer of `count_or_bytes` bytes from the allocator of `mem_info`; the kernel frees it with
// that allocator (KernelContext_GetAllocator) when done. 0 bytes: NULL.
OrtStatus* KernelContext_GetScratchBuffer(const OrtKernelContext* context, const OrtMemoryInfo* mem_info,
                                          size_t count_or_bytes, void** out) noexcept {
  OrtKernelContext* k = kernel_context(context);
  const OrtMemoryInfo* m = checked<OrtMemoryInfo>(mem_info, Magic::kMemoryInfo);
  if (!k || !m || !out) return invalid("KernelContext_GetScratchBuffer", "bad kernel context, memory info or out");
  *out = nullptr;
  if (count_or_bytes == 0) return nullptr;
  OrtAllocator* allocator = allocator_for(*k, *m);
  if (!allocator) return invalid("KernelContext_GetScratchBuffer", no_allocator(*k, *m));
  *out = allocator->Alloc(allocator, count_or_bytes);
  return *out ? nullptr
              : make_status(ORT_FAIL, fmt::format("OrtApi::KernelContext_GetScratchBuffer: out of memory ({} bytes "
                                                  "of '{}')",
                                                  count_or_bytes, m->name));
}

// fn(usr_data, i) for every i in [0, total), in `num_batch` contiguous batches (0: one per thread) spread
// over the session's intra-op threads (the calling thread among them); returns when all are done.
OrtStatus* KernelContext_ParallelFor(const OrtKernelContext* context, void (*fn)(void*, size_t), size_t total,
                                     size_t num_batch, void* usr_data) noexcept {
  OrtKernelContext* k = kernel_context(context);
  if (!k || !fn) return invalid("KernelContext_ParallelFor", "bad kernel context or function");
  if (total == 0) return nullptr;
  return guarded("KernelContext_ParallelFor", [&]() -> OrtStatus* {
    const size_t threads = std::max<size_t>(1, static_cast<size_t>(std::max(1, k->context->num_threads())));
    const size_t batches = std::min(total, num_batch ? num_batch : threads);
    if (batches <= 1 || threads <= 1) {
      for (size_t i = 0; i < total; ++i) fn(usr_data, i);
      return nullptr;
    }
    std::atomic<size_t> next_batch{0};
    auto work = [&] {
      for (size_t b = next_batch++; b < batches; b = next_batch++) {
        const size_t begin = total * b / batches, end = total * (b + 1) / batches;
        for (size_t i = begin; i < end; ++i) fn(usr_data, i);
      }
    };
    std::vector<std::thread> helpers;
    const size_t helper_count = std::min(threads, batches) - 1;
    try {
      for (size_t t = 0; t < helper_count; ++t) helpers.emplace_back(work);
    } catch (...) {
      // No more threads: the ones started and this one finish the batches.
    }
    work();
    for (std::thread& t : helpers) t.join();
    return nullptr;
  });
}

// Resources of the step's stream by (version, id), as ONNX Runtime's device EPs publish them (a CUDA
// handle, ...). An ONNX Runtime plugin EP's stream is its own OrtSyncStreamImpl, which publishes none: the
// answer is NULL, as ONNX Runtime answers for a resource the stream does not have. The stream's handle is
// KernelContext_GetGPUComputeStream's.
OrtStatus* KernelContext_GetResource(const OrtKernelContext* context, int resource_version, int resource_id,
                                     void** resource) noexcept {
  (void)resource_version, (void)resource_id;
  if (!kernel_context(context) || !resource) return invalid("KernelContext_GetResource", "bad kernel context or out");
  *resource = nullptr;
  return nullptr;
}

OrtStatus* KernelContext_GetInputCount(const OrtKernelContext* context, size_t* out) noexcept {
  OrtKernelContext* k = kernel_context(context);
  if (!k || !out) return invalid("KernelContext_GetInputCount", "bad kernel context or out");
  *out = k->inputs.size();
  return nullptr;
}

OrtStatus* KernelContext_GetOutputCount(const OrtKernelContext* context, size_t* out) noexcept {
  OrtKernelContext* k = kernel_context(context);
  if (!k || !out) return invalid("KernelContext_GetOutputCount", "bad kernel context or out");
  *out = k->outputs.size();
  return nullptr;
}

OrtStatus* KernelContext_GetInput(const OrtKernelContext* context, size_t index, const OrtValue** out) noexcept {
  OrtKernelContext* k = kernel_context(context);
  if (!k || !out) return invalid("KernelContext_GetInput", "bad kernel context or out");
  if (index >= k->inputs.size())
    return invalid("KernelContext_GetInput", fmt::format("input {} of {}", index, k->inputs.size()));
  return guarded("KernelContext_GetInput", [&]() -> OrtStatus* {
    if (!k->inputs[index]) {
      const RuntimeValue* value = k->context->input(index);
      if (!value || !value->is_tensor()) {
        *out = nullptr;  // an absent optional input, as ONNX Runtime answers it
        return nullptr;
      }
      OrtValue& v = k->values.emplace_back();
      // Borrowed: the executor owns the tensor for the whole compute call.
      v.tensor = const_cast<Tensor*>(&value->tensor());
      k->inputs[index] = &v;
    }
    *out = k->inputs[index];
    return nullptr;
  });
}

// The run's stream on the EP's device (ort_device.h), or NULL on host memory or for an EP without streams.
OrtStatus* KernelContext_GetSyncStream(const OrtKernelContext* context, OrtSyncStream** out) noexcept {
  OrtKernelContext* k = kernel_context(context);
  if (!k || !out) return invalid("KernelContext_GetSyncStream", "bad kernel context or out");
  return guarded("KernelContext_GetSyncStream", [&]() -> OrtStatus* {
    *out = k->context->memory_device() ? reinterpret_cast<OrtSyncStream*>(k->context->stream()) : nullptr;
    return nullptr;
  });
}

OrtStatus* KernelContext_GetGPUComputeStream(const OrtKernelContext* context, void** out) noexcept {
  if (!out) return invalid("KernelContext_GetGPUComputeStream", "out is NULL");
  OrtSyncStream* stream = nullptr;
  if (OrtStatus* failed = KernelContext_GetSyncStream(context, &stream)) return failed;
  *out = stream ? SyncStream_GetHandle(stream) : nullptr;
  return nullptr;
}

void* SyncStream_GetHandle(OrtSyncStream* stream) noexcept {
  OrtSyncStream* s = checked_mut<OrtSyncStream>(stream, Magic::kSyncStream);
  if (!s || !s->impl->GetHandle) return nullptr;
  try {
    return s->impl->GetHandle(s->impl);
  } catch (...) {
    return nullptr;
  }
}

namespace {

// An Alias output (OrtKernelContext::alias_outputs) placed in a buffer of its own: the input's bytes.
void fill_alias_output(OrtKernelContext& k, size_t index, Tensor& output) {
  if (!k.alias_outputs) return;
  for (const auto& [input, out] : *k.alias_outputs) {
    if (out < 0 || static_cast<size_t>(out) != index || input < 0 ||
        static_cast<size_t>(input) >= k.context->num_inputs())
      continue;
    const RuntimeValue* value = k.context->input(static_cast<size_t>(input));
    if (!value || !value->is_tensor()) return;
    const Tensor& source = value->tensor();
    if (source.byte_size() != output.byte_size() || source.elem_type() != output.elem_type() ||
        source.elem_type() == EPHOST_ELEMENT_STRING || !source.byte_size())
      return;
    if (!source.on_device() && !output.on_device()) {
      if (source.data() != output.data()) std::memcpy(output.data(), source.data(), source.byte_size());
      return;
    }
    const EphostDeviceBuffer from = source.device_buffer(), to = output.device_buffer();
    if (source.device() == output.device() && from.handle == to.handle && from.offset == to.offset) return;
    // The output's buffer seen with the input's shape (an alias may reshape), copied on the step's stream.
    const Tensor target = output.on_device()
                              ? Tensor::on_device(*output.device(), output.elem_type(), source.shape(), to,
                                                  output.holder())
                              : Tensor::borrow(output.elem_type(), source.shape(), output.data(), output.holder());
    copy_tensor(source, target, k.context->stream(), "alias output");
    return;
  }
}

}  // namespace

OrtStatus* KernelContext_GetOutput(OrtKernelContext* context, size_t index, const int64_t* dim_values,
                                   size_t dim_count, OrtValue** out) noexcept {
  OrtKernelContext* k = kernel_context(context);
  if (!k || !out || (!dim_values && dim_count)) return invalid("KernelContext_GetOutput", "bad kernel context or out");
  if (index >= k->outputs.size())
    return invalid("KernelContext_GetOutput", fmt::format("output {} of {}", index, k->outputs.size()));
  return guarded("KernelContext_GetOutput", [&]() -> OrtStatus* {
    std::vector<int64_t> shape(dim_values, dim_values + dim_count);
    if (!k->outputs[index]) {
      const int32_t elem_type = index < k->output_elem_types->size() ? (*k->output_elem_types)[index] : 0;
      if (elem_type == 0)
        return make_status(ORT_FAIL, fmt::format("OrtApi::KernelContext_GetOutput: the element type of output {} is "
                                                 "not known to the graph",
                                                 index));
      Tensor& t = k->context->allocate_output(index, elem_type, shape);
      fill_alias_output(*k, index, t);
      OrtValue& v = k->values.emplace_back();
      v.tensor = &t;
      k->outputs[index] = &v;
    } else if (k->outputs[index]->tensor->shape() != shape) {
      return invalid("KernelContext_GetOutput",
                     fmt::format("output {} was already made with another shape", index));
    }
    *out = k->outputs[index];
    return nullptr;
  });
}

}  // namespace ephost::ort_ep::api
