// OrtEpApi entries of kernel-registry EPs (API 24): the registry, kernel definitions and their builder,
// tensor data types for type constraints, the lookup GetCapability may make, and a kernel's EP.
#include <fmt/format.h>

#include <array>

#include "ort_ep/api_impl.h"
#include "ort_ep/graph_handles.h"
#include "ort_ep/kernel_registry.h"
#include "ort_ep/prepacked_weights.h"

namespace ephost::ort_ep::api::ep {
namespace {

OrtStatus* invalid(const char* function, const std::string& what) {
  return make_status(ORT_INVALID_ARGUMENT, fmt::format("OrtEpApi::{}: {}", function, what));
}

template <typename Fn>
OrtStatus* guarded(const char* function, Fn&& fn) noexcept {
  try {
    return fn();
  } catch (const std::exception& e) {
    return make_status(ORT_FAIL, fmt::format("OrtEpApi::{}: {}", function, e.what()));
  }
}

OrtKernelDefBuilder* builder_of(OrtKernelDefBuilder* b) { return checked_mut<OrtKernelDefBuilder>(b, Magic::kKernelDefBuilder); }
const OrtKernelDef* def_of(const OrtKernelDef* d) { return checked<OrtKernelDef>(d, Magic::kKernelDef); }

// Sets a text field of the definition being built; NULL text is refused.
OrtStatus* set_text(const char* function, OrtKernelDefBuilder* builder, const char* text,
                    std::string OrtKernelDef::*field) {
  OrtKernelDefBuilder* b = builder_of(builder);
  if (!b || !text) return invalid(function, "bad kernel definition builder or NULL text");
  return guarded(function, [&]() -> OrtStatus* {
    b->def.*field = text;
    return nullptr;
  });
}

OrtStatus* set_mem_type(const char* function, OrtKernelDefBuilder* builder, size_t index, OrtMemType mem_type,
                        std::map<size_t, OrtMemType> OrtKernelDef::*field) {
  OrtKernelDefBuilder* b = builder_of(builder);
  if (!b) return invalid(function, "bad kernel definition builder");
  if (mem_type != OrtMemTypeDefault && mem_type != OrtMemTypeCPUInput && mem_type != OrtMemTypeCPUOutput)
    return invalid(function, fmt::format("{} is no OrtMemType", static_cast<int>(mem_type)));
  return guarded(function, [&]() -> OrtStatus* {
    (b->def.*field)[index] = mem_type;
    return nullptr;
  });
}

OrtStatus* get_mem_type(const char* function, const OrtKernelDef* kernel_def, size_t index, OrtMemType* mem_type,
                        std::map<size_t, OrtMemType> OrtKernelDef::*field) {
  const OrtKernelDef* d = def_of(kernel_def);
  if (!d || !mem_type) return invalid(function, "bad kernel definition or out");
  const auto& types = d->*field;
  auto it = types.find(index);
  *mem_type = it == types.end() ? OrtMemTypeDefault : it->second;
  return nullptr;
}

OrtStatus* add_aliases(const char* function, OrtKernelDefBuilder* builder, const int* inputs, const int* outputs,
                       size_t count, std::vector<std::pair<int, int>> OrtKernelDef::*field) {
  OrtKernelDefBuilder* b = builder_of(builder);
  if (!b || ((!inputs || !outputs) && count)) return invalid(function, "bad kernel definition builder or indices");
  return guarded(function, [&]() -> OrtStatus* {
    for (size_t i = 0; i < count; ++i) (b->def.*field).emplace_back(inputs[i], outputs[i]);
    return nullptr;
  });
}

}  // namespace

// ---- the registry ----

OrtStatus* CreateKernelRegistry(OrtKernelRegistry** kernel_registry) noexcept {
  if (!kernel_registry) return invalid("CreateKernelRegistry", "out is NULL");
  return guarded("CreateKernelRegistry", [&]() -> OrtStatus* {
    *kernel_registry = new OrtKernelRegistry();
    return nullptr;
  });
}

void ReleaseKernelRegistry(OrtKernelRegistry* input) noexcept {
  if (OrtKernelRegistry* r = checked_mut<OrtKernelRegistry>(input, Magic::kKernelRegistry)) delete r;
}

OrtStatus* KernelRegistry_AddKernel(OrtKernelRegistry* kernel_registry, const OrtKernelDef* kernel_def,
                                    OrtKernelCreateFunc kernel_create_func, void* kernel_create_func_state) noexcept {
  OrtKernelRegistry* r = checked_mut<OrtKernelRegistry>(kernel_registry, Magic::kKernelRegistry);
  const OrtKernelDef* d = def_of(kernel_def);
  if (!r || !d || !kernel_create_func)
    return invalid("KernelRegistry_AddKernel", "bad kernel registry, kernel definition or create function");
  if (d->op_type.empty()) return invalid("KernelRegistry_AddKernel", "the kernel definition names no operator");
  return guarded("KernelRegistry_AddKernel", [&]() -> OrtStatus* {
    r->kernels.push_back({*d, kernel_create_func, kernel_create_func_state});
    return nullptr;
  });
}

// ---- kernel definitions ----

OrtStatus* CreateKernelDefBuilder(OrtKernelDefBuilder** kernel_def_builder_out) noexcept {
  if (!kernel_def_builder_out) return invalid("CreateKernelDefBuilder", "out is NULL");
  return guarded("CreateKernelDefBuilder", [&]() -> OrtStatus* {
    *kernel_def_builder_out = new OrtKernelDefBuilder();
    return nullptr;
  });
}

void ReleaseKernelDefBuilder(OrtKernelDefBuilder* input) noexcept {
  if (OrtKernelDefBuilder* b = builder_of(input)) delete b;
}

OrtStatus* KernelDefBuilder_SetOperatorType(OrtKernelDefBuilder* kernel_def_builder, const char* op_type) noexcept {
  return set_text("KernelDefBuilder_SetOperatorType", kernel_def_builder, op_type, &OrtKernelDef::op_type);
}

OrtStatus* KernelDefBuilder_SetDomain(OrtKernelDefBuilder* kernel_def_builder, const char* domain) noexcept {
  return set_text("KernelDefBuilder_SetDomain", kernel_def_builder, domain, &OrtKernelDef::domain);
}

OrtStatus* KernelDefBuilder_SetSinceVersion(OrtKernelDefBuilder* kernel_def_builder, int since_version_start,
                                            int since_version_end) noexcept {
  OrtKernelDefBuilder* b = builder_of(kernel_def_builder);
  if (!b) return invalid("KernelDefBuilder_SetSinceVersion", "bad kernel definition builder");
  if (since_version_start < 1 || since_version_end < since_version_start)
    return invalid("KernelDefBuilder_SetSinceVersion",
                   fmt::format("versions {} to {}: the start must be 1 or more and the end no less than the start",
                               since_version_start, since_version_end));
  b->def.since_version_start = since_version_start;
  b->def.since_version_end = since_version_end;
  return nullptr;
}

OrtStatus* KernelDefBuilder_SetExecutionProvider(OrtKernelDefBuilder* kernel_def_builder, const char* ep_name) noexcept {
  return set_text("KernelDefBuilder_SetExecutionProvider", kernel_def_builder, ep_name, &OrtKernelDef::ep_name);
}

OrtStatus* KernelDefBuilder_SetInputMemType(OrtKernelDefBuilder* kernel_def_builder, size_t input_index,
                                            OrtMemType mem_type) noexcept {
  return set_mem_type("KernelDefBuilder_SetInputMemType", kernel_def_builder, input_index, mem_type,
                      &OrtKernelDef::input_mem_types);
}

OrtStatus* KernelDefBuilder_SetOutputMemType(OrtKernelDefBuilder* kernel_def_builder, size_t output_index,
                                             OrtMemType mem_type) noexcept {
  return set_mem_type("KernelDefBuilder_SetOutputMemType", kernel_def_builder, output_index, mem_type,
                      &OrtKernelDef::output_mem_types);
}

OrtStatus* KernelDefBuilder_AddTypeConstraint(OrtKernelDefBuilder* kernel_def_builder, const char* arg_name,
                                              const OrtDataType* const* types, size_t num_types) noexcept {
  OrtKernelDefBuilder* b = builder_of(kernel_def_builder);
  if (!b || !arg_name || (!types && num_types))
    return invalid("KernelDefBuilder_AddTypeConstraint", "bad kernel definition builder, name or types");
  return guarded("KernelDefBuilder_AddTypeConstraint", [&]() -> OrtStatus* {
    std::vector<ONNXTensorElementDataType> allowed;
    for (size_t i = 0; i < num_types; ++i) {
      const OrtDataType* t = checked<OrtDataType>(types[i], Magic::kDataType);
      if (!t)
        return invalid("KernelDefBuilder_AddTypeConstraint",
                       fmt::format("type {} of constraint '{}' is no OrtDataType (GetTensorDataType makes them)", i,
                                   arg_name));
      allowed.push_back(t->elem_type);
    }
    b->def.type_constraints.emplace_back(arg_name, std::move(allowed));
    return nullptr;
  });
}

OrtStatus* KernelDefBuilder_AddInputOutputAliases(OrtKernelDefBuilder* kernel_def_builder, int const* input_indices,
                                                  int const* output_indices, size_t num_io_indices) noexcept {
  return add_aliases("KernelDefBuilder_AddInputOutputAliases", kernel_def_builder, input_indices, output_indices,
                     num_io_indices, &OrtKernelDef::aliases);
}

OrtStatus* KernelDefBuilder_AddInputOutputMutableAliases(OrtKernelDefBuilder* kernel_def_builder,
                                                         int const* input_indices, int const* output_indices,
                                                         size_t num_io_indices) noexcept {
  return add_aliases("KernelDefBuilder_AddInputOutputMutableAliases", kernel_def_builder, input_indices,
                     output_indices, num_io_indices, &OrtKernelDef::mutable_aliases);
}

OrtStatus* KernelDefBuilder_Build(OrtKernelDefBuilder* kernel_def_builder, OrtKernelDef** kernel_def_out) noexcept {
  OrtKernelDefBuilder* b = builder_of(kernel_def_builder);
  if (!b || !kernel_def_out) return invalid("KernelDefBuilder_Build", "bad kernel definition builder or out");
  if (b->def.op_type.empty())
    return invalid("KernelDefBuilder_Build", "no operator type set (KernelDefBuilder_SetOperatorType)");
  return guarded("KernelDefBuilder_Build", [&]() -> OrtStatus* {
    *kernel_def_out = new OrtKernelDef(b->def);
    return nullptr;
  });
}

void ReleaseKernelDef(OrtKernelDef* input) noexcept {
  if (OrtKernelDef* d = checked_mut<OrtKernelDef>(input, Magic::kKernelDef)) delete d;
}

const char* KernelDef_GetOperatorType(const OrtKernelDef* kernel_def) noexcept {
  const OrtKernelDef* d = def_of(kernel_def);
  return d ? d->op_type.c_str() : nullptr;
}

const char* KernelDef_GetDomain(const OrtKernelDef* kernel_def) noexcept {
  const OrtKernelDef* d = def_of(kernel_def);
  return d ? d->domain.c_str() : nullptr;
}

OrtStatus* KernelDef_GetSinceVersion(const OrtKernelDef* kernel_def, int* start_version, int* end_version) noexcept {
  const OrtKernelDef* d = def_of(kernel_def);
  if (!d || !start_version || !end_version) return invalid("KernelDef_GetSinceVersion", "bad kernel definition or out");
  *start_version = d->since_version_start;
  *end_version = d->since_version_end;
  return nullptr;
}

const char* KernelDef_GetExecutionProvider(const OrtKernelDef* kernel_def) noexcept {
  const OrtKernelDef* d = def_of(kernel_def);
  return d ? d->ep_name.c_str() : nullptr;
}

OrtStatus* KernelDef_GetInputMemType(const OrtKernelDef* kernel_def, size_t input_index, OrtMemType* mem_type) noexcept {
  return get_mem_type("KernelDef_GetInputMemType", kernel_def, input_index, mem_type, &OrtKernelDef::input_mem_types);
}

OrtStatus* KernelDef_GetOutputMemType(const OrtKernelDef* kernel_def, size_t output_index,
                                      OrtMemType* mem_type) noexcept {
  return get_mem_type("KernelDef_GetOutputMemType", kernel_def, output_index, mem_type,
                      &OrtKernelDef::output_mem_types);
}

// One OrtDataType per tensor element type (ONNX's numbering, 1..26), made once, never released.
OrtStatus* GetTensorDataType(ONNXTensorElementDataType elem_type, const OrtDataType** out) noexcept {
  static const auto* types = [] {
    auto* t = new std::array<OrtDataType, 27>();
    for (size_t i = 0; i < t->size(); ++i) (*t)[i].elem_type = static_cast<ONNXTensorElementDataType>(i);
    return t;
  }();
  if (!out) return invalid("GetTensorDataType", "out is NULL");
  const int index = static_cast<int>(elem_type);
  if (index < 1 || index >= static_cast<int>(types->size()))
    return invalid("GetTensorDataType", fmt::format("{} is no tensor element type", index));
  *out = &(*types)[static_cast<size_t>(index)];
  return nullptr;
}

OrtStatus* EpGraphSupportInfo_LookUpKernel(OrtEpGraphSupportInfo* graph_support_info, const OrtNode* node,
                                           const OrtKernelDef** out_kernel_def) noexcept {
  auto* info = checked_mut<OrtEpGraphSupportInfo>(graph_support_info, Magic::kSupportInfo);
  const Node* n = node_of(node);
  if (!info || !n || !out_kernel_def) return invalid("EpGraphSupportInfo_LookUpKernel", "bad support info, node or out");
  return guarded("EpGraphSupportInfo_LookUpKernel", [&]() -> OrtStatus* {
    const OrtKernelRegistry::Entry* entry =
        info->kernel_registry ? find_kernel(*info->kernel_registry, info->ep_name, *n, nullptr) : nullptr;
    *out_kernel_def = entry ? &entry->def : nullptr;
    return nullptr;
  });
}

// Takes the buffers of one packed weight a kernel offers to share (in its PrePackWeight, sharing mode).
// On success they are the host's (freed with the allocator PrePackWeight was given); on failure still
// the kernel's.
OrtStatus* SharedPrePackedWeightCache_StoreWeightData(OrtSharedPrePackedWeightCache* prepacked_weight_cache,
                                                      void** buffer_data_ptrs, size_t* buffer_data_sizes,
                                                      size_t num_buffers) noexcept {
  const char* fn = "SharedPrePackedWeightCache_StoreWeightData";
  auto* cache = checked_mut<OrtSharedPrePackedWeightCache>(prepacked_weight_cache, Magic::kPrePackedCache);
  if (!cache) return invalid(fn, "bad cache: only the one PrePackWeight was handed (not NULL) takes weights");
  if (!buffer_data_ptrs || !buffer_data_sizes || num_buffers == 0)
    return invalid(fn, "no buffers: pass at least one buffer pointer and its size");
  if (!cache->buffers.empty())
    return invalid(fn, "this cache already holds the weight's buffers (store all of one weight's buffers in one call)");
  for (size_t i = 0; i < num_buffers; ++i)
    if (!buffer_data_ptrs[i] && buffer_data_sizes[i])
      return invalid(fn, fmt::format("buffer {} is NULL with {} bytes", i, buffer_data_sizes[i]));
  return guarded(fn, [&]() -> OrtStatus* {
    std::vector<void*> buffers(buffer_data_ptrs, buffer_data_ptrs + num_buffers);
    std::vector<size_t> sizes(buffer_data_sizes, buffer_data_sizes + num_buffers);
    cache->buffers.swap(buffers);  // no throw from here: the cache owns them only on success
    cache->sizes.swap(sizes);
    return nullptr;
  });
}

OrtStatus* KernelInfo_GetEp(const OrtKernelInfo* info, const OrtEp** ep) noexcept {
  const OrtKernelInfo* k = checked<OrtKernelInfo>(info, Magic::kKernelInfo);
  if (!k || !ep) return invalid("KernelInfo_GetEp", "bad kernel info or out");
  *ep = k->ep;
  return nullptr;
}

// A kernel the EP made itself and never handed the host (one the host took is released by the host).
void ReleaseKernelImpl(OrtKernelImpl* input) noexcept {
  if (input && input->Release) input->Release(input);
}

}  // namespace ephost::ort_ep::api::ep
