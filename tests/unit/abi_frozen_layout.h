// The published layouts of ephost's two C ABIs, frozen (plugin_api/ABI_VERSIONING.md).
//
// One list per struct and version: the members that version added, in order, each with its exact type
// (parameter names left out). abi_layout_test.cpp mirrors these lists into structs and checks, at
// compile time, that every member of the public headers has the type and offset its frozen version
// gave it and that no member is missing from the lists; at run time, that the headers' "since" blocks
// and the per-version table sizes agree with them.
//
// A published list never changes. A new version appends a new list, e.g.
// EPHOST_FROZEN_HOST_API_ABI_3, and adds it to the mirrors and checks in abi_layout_test.cpp.
#pragma once

// ---- plugin ABI (ephost_plugin.h) ---------------------------------------------------------------------

// The structs frozen by name: they have no struct_size and never grow (ephost_plugin.h's rules), so each
// has one frozen list, the version that added it. Every other struct starts with struct_size.
#define EPHOST_FROZEN_BY_NAME(X) \
  X(EphostTensorView)            \
  X(EphostDeviceBuffer)          \
  X(EphostTensorMemory)

#define EPHOST_FROZEN_TENSOR_VIEW_ABI_1(X)                   \
  X(elem_type, int32_t)                                      \
  X(rank, size_t)                                            \
  X(shape, const int64_t*)                                   \
  X(data, const void*)

#define EPHOST_FROZEN_COMPUTE_INFO_ABI_1(X)                         \
  X(struct_size, uint32_t)                                          \
  X(user, void*)                                                    \
  X(create_state, EphostStatus* (*)(void*, void**))                 \
  X(compute, EphostStatus* (*)(void*, void*, EphostKernelContext*)) \
  X(release_state, void (*)(void*, void*))                          \
  X(release, void (*)(void*))

#define EPHOST_FROZEN_PLUGIN_INFO_ABI_1(X)                   \
  X(struct_size, uint32_t)                                   \
  X(name, const char*)                                       \
  X(vendor, const char*)                                     \
  X(version, const char*)                                    \
  X(device_type, int32_t)                                    \
  X(context_source_keys, const char* const*)                 \
  X(num_context_source_keys, size_t)                         \
  X(sdk_version, const char*)                                \
  X(hardware_architecture, const char*)                      \
  X(driver_version, const char*)                             \
  X(default_priority, int32_t)

#define EPHOST_FROZEN_HOST_API_ABI_1(X)                                                                        \
  X(struct_size, uint32_t)                                                                                     \
  X(abi_version, uint32_t)                                                                                     \
  X(status_create, EphostStatus* (*)(EphostStatusCode, const char*))                                           \
  X(status_release, void (*)(EphostStatus*))                                                                   \
  X(status_code, EphostStatusCode (*)(const EphostStatus*))                                                    \
  X(status_message, const char* (*)(const EphostStatus*))                                                      \
  X(log, void (*)(const EphostProvider*, EphostLogLevel, const char*))                                         \
  X(graph_name, const char* (*)(const EphostGraph*))                                                           \
  X(graph_model_path, const char* (*)(const EphostGraph*))                                                     \
  X(graph_num_nodes, size_t (*)(const EphostGraph*))                                                           \
  X(graph_node, const EphostNode* (*)(const EphostGraph*, size_t))                                             \
  X(graph_num_inputs, size_t (*)(const EphostGraph*))                                                          \
  X(graph_input, const EphostValueInfo* (*)(const EphostGraph*, size_t))                                       \
  X(graph_num_outputs, size_t (*)(const EphostGraph*))                                                         \
  X(graph_output, const EphostValueInfo* (*)(const EphostGraph*, size_t))                                      \
  X(graph_num_initializers, size_t (*)(const EphostGraph*))                                                    \
  X(graph_initializer, const EphostValueInfo* (*)(const EphostGraph*, size_t))                                 \
  X(graph_opset, int64_t (*)(const EphostGraph*, const char*))                                                 \
  X(graph_parent_node, const EphostNode* (*)(const EphostGraph*))                                              \
  X(node_id, size_t (*)(const EphostNode*))                                                                    \
  X(node_name, const char* (*)(const EphostNode*))                                                             \
  X(node_op_type, const char* (*)(const EphostNode*))                                                          \
  X(node_domain, const char* (*)(const EphostNode*))                                                           \
  X(node_num_inputs, size_t (*)(const EphostNode*))                                                            \
  X(node_input, const EphostValueInfo* (*)(const EphostNode*, size_t))                                         \
  X(node_num_outputs, size_t (*)(const EphostNode*))                                                           \
  X(node_output, const EphostValueInfo* (*)(const EphostNode*, size_t))                                        \
  X(node_num_implicit_inputs, size_t (*)(const EphostNode*))                                                   \
  X(node_implicit_input, const EphostValueInfo* (*)(const EphostNode*, size_t))                                \
  X(node_num_attributes, size_t (*)(const EphostNode*))                                                        \
  X(node_attribute_at, const EphostAttribute* (*)(const EphostNode*, size_t))                                  \
  X(node_attribute, const EphostAttribute* (*)(const EphostNode*, const char*))                                \
  X(node_subgraph, const EphostGraph* (*)(const EphostNode*, const char*))                                     \
  X(node_graph, const EphostGraph* (*)(const EphostNode*))                                                     \
  X(attribute_name, const char* (*)(const EphostAttribute*))                                                   \
  X(attribute_type, EphostAttributeType (*)(const EphostAttribute*))                                           \
  X(attribute_int, EphostStatus* (*)(const EphostAttribute*, int64_t*))                                        \
  X(attribute_float, EphostStatus* (*)(const EphostAttribute*, float*))                                        \
  X(attribute_string, EphostStatus* (*)(const EphostAttribute*, const char**, size_t*))                        \
  X(attribute_ints, EphostStatus* (*)(const EphostAttribute*, const int64_t**, size_t*))                       \
  X(attribute_floats, EphostStatus* (*)(const EphostAttribute*, const float**, size_t*))                       \
  X(attribute_num_strings, size_t (*)(const EphostAttribute*))                                                 \
  X(attribute_string_at, EphostStatus* (*)(const EphostAttribute*, size_t, const char**, size_t*))             \
  X(attribute_tensor, EphostStatus* (*)(const EphostAttribute*, EphostTensorView*))                            \
  X(value_name, const char* (*)(const EphostValueInfo*))                                                       \
  X(value_elem_type, int32_t (*)(const EphostValueInfo*))                                                      \
  X(value_rank, int64_t (*)(const EphostValueInfo*))                                                           \
  X(value_dim, int64_t (*)(const EphostValueInfo*, size_t))                                                    \
  X(value_dim_param, const char* (*)(const EphostValueInfo*, size_t))                                          \
  X(value_producer, const EphostNode* (*)(const EphostValueInfo*))                                             \
  X(value_num_consumers, size_t (*)(const EphostValueInfo*))                                                   \
  X(value_consumer, const EphostNode* (*)(const EphostValueInfo*, size_t))                                     \
  X(value_is_graph_input, int (*)(const EphostValueInfo*))                                                     \
  X(value_is_graph_output, int (*)(const EphostValueInfo*))                                                    \
  X(value_is_constant_initializer, int (*)(const EphostValueInfo*))                                            \
  X(value_is_outer_scope, int (*)(const EphostValueInfo*))                                                     \
  X(value_initializer_data, EphostStatus* (*)(const EphostValueInfo*, EphostTensorView*))                      \
  X(capability_add_node, EphostStatus* (*)(EphostCapability*, const EphostNode*))                              \
  X(capability_add_fused_group, EphostStatus* (*)(EphostCapability*, const EphostNode* const*, size_t))        \
  X(kernel_num_inputs, size_t (*)(const EphostKernelContext*))                                                 \
  X(kernel_input, EphostStatus* (*)(const EphostKernelContext*, size_t, EphostTensorView*))                    \
  X(kernel_num_outputs, size_t (*)(const EphostKernelContext*))                                                \
  X(kernel_output, EphostStatus* (*)(EphostKernelContext*, size_t, int32_t, const int64_t*, size_t, void**))   \
  X(kernel_output_string, EphostStatus* (*)(EphostKernelContext*, size_t, const char*, size_t, const char**))  \
  X(kernel_num_threads, int32_t (*)(const EphostKernelContext*))                                               \
  X(kernel_run_subgraph, EphostStatus* (*)(EphostKernelContext*, const char*, const EphostTensorView*, size_t, \
                                           EphostValue**, size_t))                                             \
  X(value_tensor, EphostStatus* (*)(const EphostValue*, EphostTensorView*))                                    \
  X(value_release, void (*)(EphostValue*))                                                                     \
  X(context_set_blob, EphostStatus* (*)(EphostContextSink*, const void*, size_t))                              \
  X(context_set_attribute, EphostStatus* (*)(EphostContextSink*, const char*, const char*))

#define EPHOST_FROZEN_HOST_API_ABI_2(X)                                                                              \
  X(value_kind, int32_t (*)(const EphostValueInfo*))                                                                 \
  X(value_optional_kind, int32_t (*)(const EphostValueInfo*))                                                        \
  X(value_tensor_elem_type, int32_t (*)(const EphostValueInfo*))                                                     \
  X(kernel_input_kind, int32_t (*)(const EphostKernelContext*, size_t))                                              \
  X(kernel_input_sequence, EphostStatus* (*)(const EphostKernelContext*, size_t, int32_t*, size_t*))                 \
  X(kernel_input_sequence_element, EphostStatus* (*)(const EphostKernelContext*, size_t, size_t, EphostTensorView*)) \
  X(kernel_input_value, EphostStatus* (*)(const EphostKernelContext*, size_t, EphostValue**))                        \
  X(kernel_output_sequence, EphostStatus* (*)(EphostKernelContext*, size_t, int32_t, size_t))                        \
  X(kernel_output_sequence_element, EphostStatus* (*)(EphostKernelContext*, size_t, size_t, const int64_t*,          \
                                                      size_t, void**))                                               \
  X(kernel_output_sequence_element_string, EphostStatus* (*)(EphostKernelContext*, size_t, size_t, const char*,      \
                                                             size_t, const char**))                                  \
  X(kernel_output_sequence_element_value, EphostStatus* (*)(EphostKernelContext*, size_t, size_t,                    \
                                                            const EphostValue*, size_t))                             \
  X(kernel_output_none, EphostStatus* (*)(EphostKernelContext*, size_t))                                             \
  X(kernel_output_value, EphostStatus* (*)(EphostKernelContext*, size_t, const EphostValue*))                        \
  X(kernel_run_subgraph_values, EphostStatus* (*)(EphostKernelContext*, const char*, const EphostValue* const*,      \
                                                  size_t, EphostValue**, size_t))                                    \
  X(value_held_kind, int32_t (*)(const EphostValue*))                                                                \
  X(value_sequence, EphostStatus* (*)(const EphostValue*, int32_t*, size_t*))                                        \
  X(value_sequence_element, EphostStatus* (*)(const EphostValue*, size_t, EphostTensorView*))                        \
  X(value_sequence_element_value, EphostStatus* (*)(const EphostValue*, size_t, EphostValue**))                      \
  X(value_create_tensor, EphostStatus* (*)(const EphostTensorView*, EphostValue**))

// EphostPlugin did not grow in ABI 2: its ABI 2 layout is its ABI 1 layout. ABI 3 appends devices.
#define EPHOST_FROZEN_PLUGIN_ABI_1(X)                                                                             \
  X(struct_size, uint32_t)                                                                                        \
  X(abi_version, uint32_t)                                                                                        \
  X(describe, EphostStatus* (*)(EphostPluginInfo*))                                                               \
  X(provider_create, EphostStatus* (*)(const char* const*, const char* const*, size_t, EphostProvider**))         \
  X(provider_release, void (*)(EphostProvider*))                                                                  \
  X(get_capability, EphostStatus* (*)(EphostProvider*, const EphostGraph*, EphostCapability*))                    \
  X(kernel_create, EphostStatus* (*)(EphostProvider*, const EphostNode*, EphostKernel**))                         \
  X(kernel_compute, EphostStatus* (*)(EphostKernel*, EphostKernelContext*))                                       \
  X(kernel_release, void (*)(EphostKernel*))                                                                      \
  X(compile, EphostStatus* (*)(EphostProvider*, const EphostGraph*, const char*, EphostComputeInfo*))             \
  X(on_run_start, EphostStatus* (*)(EphostProvider*))                                                             \
  X(on_run_end, EphostStatus* (*)(EphostProvider*))                                                               \
  X(context_emit, EphostStatus* (*)(EphostProvider*, const char*, EphostContextSink*))                            \
  X(context_judge, EphostStatus* (*)(EphostProvider*, const EphostNode*, const void*, size_t,                     \
                                     EphostContextVerdict*, const char**))                                        \
  X(context_load, EphostStatus* (*)(EphostProvider*, const EphostNode*, const void*, size_t, EphostComputeInfo*))

#define EPHOST_FROZEN_HOST_API_ABI_3(X)                                                                       \
  X(kernel_input_memory, EphostStatus* (*)(const EphostKernelContext*, size_t, EphostTensorMemory*))          \
  X(kernel_output_device, EphostStatus* (*)(EphostKernelContext*, size_t, int32_t, const int64_t*, size_t,     \
                                            EphostTensorMemory*))                                              \
  X(kernel_stream, EphostStream* (*)(const EphostKernelContext*))

#define EPHOST_FROZEN_PLUGIN_ABI_3(X)                                                                           \
  X(device_count, EphostStatus* (*)(uint32_t*))                                                                 \
  X(device_describe, EphostStatus* (*)(uint32_t, EphostDeviceInfo*))                                            \
  X(provider_create_for_device, EphostStatus* (*)(uint32_t, const char* const*, const char* const*, size_t,     \
                                                  EphostProvider**))                                            \
  X(device_allocate, EphostStatus* (*)(uint32_t, int32_t, uint64_t, EphostDeviceBuffer*))                       \
  X(device_free, void (*)(uint32_t, int32_t, EphostDeviceBuffer))                                               \
  X(copy_to_device, EphostStatus* (*)(uint32_t, EphostStream*, const void*, EphostDeviceBuffer, uint64_t))      \
  X(copy_to_host, EphostStatus* (*)(uint32_t, EphostStream*, EphostDeviceBuffer, void*, uint64_t))              \
  X(copy_between_devices, EphostStatus* (*)(EphostStream*, uint32_t, EphostDeviceBuffer, uint32_t,              \
                                            EphostDeviceBuffer, uint64_t))                                      \
  X(stream_create, EphostStatus* (*)(uint32_t, EphostStream**))                                                 \
  X(stream_synchronize, EphostStatus* (*)(EphostStream*))                                                       \
  X(stream_release, void (*)(EphostStream*))

#define EPHOST_FROZEN_HOST_API_ABI_4(X)                                                              \
  X(kernel_profiling, int (*)(const EphostKernelContext*))                                           \
  X(kernel_profile_clock_ns, int64_t (*)(const EphostKernelContext*))                                \
  X(kernel_profile_span, EphostStatus* (*)(EphostKernelContext*, const EphostProfileSpan*))      \
  X(kernel_run_check, EphostStatus* (*)(const EphostKernelContext*))

#define EPHOST_FROZEN_HOST_API_ABI_5(X) \
  X(value_initializer_done, EphostStatus* (*)(EphostProvider*, const EphostValueInfo*))

#define EPHOST_FROZEN_PROFILE_SPAN_ABI_4(X) \
  X(struct_size, uint32_t)                  \
  X(start_ns, int64_t)                      \
  X(duration_ns, int64_t)                   \
  X(name, const char*)                      \
  X(op_type, const char*)                   \
  X(nodes, const char* const*)              \
  X(num_nodes, size_t)

#define EPHOST_FROZEN_DEVICE_BUFFER_ABI_3(X) \
  X(handle, void*)                           \
  X(offset, uint64_t)

#define EPHOST_FROZEN_DEVICE_INFO_ABI_3(X)   \
  X(struct_size, uint32_t)                   \
  X(device_type, int32_t)                    \
  X(vendor, const char*)                     \
  X(name, const char*)                       \
  X(driver_version, const char*)             \
  X(hardware_architecture, const char*)      \
  X(memory_bytes, uint64_t)                  \
  X(host_memory_usable, int32_t)             \
  X(memory_kinds, uint32_t)

#define EPHOST_FROZEN_TENSOR_MEMORY_ABI_3(X) \
  X(elem_type, int32_t)                      \
  X(rank, size_t)                            \
  X(shape, const int64_t*)                   \
  X(location, int32_t)                       \
  X(device, uint32_t)                        \
  X(host_data, const void*)                  \
  X(buffer, EphostDeviceBuffer)

#define EPHOST_FROZEN_NEGOTIATION_ABI_1(X)                   \
  X(struct_size, uint32_t)                                   \
  X(host_min_abi_version, uint32_t)                          \
  X(host_max_abi_version, uint32_t)                          \
  X(host_api, const EphostHostApi*)                          \
  X(plugin_abi_version, uint32_t)                            \
  X(plugin, const EphostPlugin*)

// ---- application API (ephost_c_api.h) -----------------------------------------------------------------

#define EPHOST_FROZEN_PLUGIN_REPORT_API_1(X)                 \
  X(struct_size, uint32_t)                                   \
  X(path, const char*)                                       \
  X(name, const char*)                                       \
  X(vendor, const char*)                                     \
  X(version, const char*)                                    \
  X(device_type, const char*)                                \
  X(sdk_version, const char*)                                \
  X(hardware_architecture, const char*)                      \
  X(driver_version, const char*)                             \
  X(source_keys, const char*)                                \
  X(default_priority, int32_t)                               \
  X(abi_version, uint32_t)                                   \
  X(loaded, int32_t)                                         \
  X(reason, const char*)

#define EPHOST_FROZEN_APP_API_1(X)                                                                              \
  X(struct_size, uint32_t)                                                                                      \
  X(version, uint32_t)                                                                                          \
  X(GetErrorCode, EphostStatusCode (*)(const EphostStatus*))                                                    \
  X(GetErrorMessage, const char* (*)(const EphostStatus*))                                                      \
  X(ReleaseStatus, void (*)(EphostStatus*))                                                                     \
  X(GetErrorCodeName, const char* (*)(EphostStatusCode))                                                        \
  X(FreeString, void (*)(char*))                                                                                \
  X(CreateEnv, EphostStatus* (*)(EphostLogLevel, EphostEnv**))                                                  \
  X(CreateEnvWithPluginDirs, EphostStatus* (*)(EphostLogLevel, const char* const*, EphostEnv**))                \
  X(ReleaseEnv, void (*)(EphostEnv*))                                                                           \
  X(RegisterPluginLibrary, EphostStatus* (*)(EphostEnv*, const char*))                                          \
  X(GetPluginReportCount, size_t (*)(const EphostEnv*))                                                         \
  X(GetPluginReport, EphostStatus* (*)(const EphostEnv*, size_t, EphostPluginReport*))                          \
  X(GetPluginReportJson, EphostStatus* (*)(const EphostEnv*, char**))                                           \
  X(CreateSessionOptions, EphostStatus* (*)(EphostSessionOptions**))                                            \
  X(ReleaseSessionOptions, void (*)(EphostSessionOptions*))                                                     \
  X(AddSessionConfigEntry, EphostStatus* (*)(EphostSessionOptions*, const char*, const char*))                  \
  X(SetIntraOpNumThreads, EphostStatus* (*)(EphostSessionOptions*, int32_t))                                    \
  X(SetGraphOptimizationLevel, EphostStatus* (*)(EphostSessionOptions*, EphostGraphOptimizationLevel))          \
  X(AppendProvider, EphostStatus* (*)(EphostSessionOptions*, const char*, const char* const*,                   \
                                      const char* const*, size_t))                                              \
  X(CreateSession, EphostStatus* (*)(EphostEnv*, const char*, const EphostSessionOptions*, EphostSession**))    \
  X(CreateSessionFromArray, EphostStatus* (*)(EphostEnv*, const void*, size_t, const EphostSessionOptions*,     \
                                              EphostSession**))                                                 \
  X(ReleaseSession, void (*)(EphostSession*))                                                                   \
  X(SessionGetInputCount, size_t (*)(const EphostSession*))                                                     \
  X(SessionGetOutputCount, size_t (*)(const EphostSession*))                                                    \
  X(SessionGetInputName, EphostStatus* (*)(const EphostSession*, size_t, const char**))                         \
  X(SessionGetOutputName, EphostStatus* (*)(const EphostSession*, size_t, const char**))                        \
  X(SessionGetInputType, EphostStatus* (*)(const EphostSession*, size_t, int32_t*, int64_t*, const int64_t**))  \
  X(SessionGetOutputType, EphostStatus* (*)(const EphostSession*, size_t, int32_t*, int64_t*, const int64_t**)) \
  X(SessionGetPartitionReportJson, EphostStatus* (*)(const EphostSession*, char**))                             \
  X(Run, EphostStatus* (*)(EphostSession*, const char* const*, const EphostTensor* const*, size_t,              \
                           const char* const*, size_t, EphostTensor**))                                         \
  X(CreateTensorWithData, EphostStatus* (*)(EphostElementType, const int64_t*, size_t, void*, size_t,           \
                                            EphostTensor**))                                                    \
  X(CreateTensor, EphostStatus* (*)(EphostElementType, const int64_t*, size_t, EphostTensor**))                 \
  X(ReleaseTensor, void (*)(EphostTensor*))                                                                     \
  X(TensorGetElementType, EphostElementType (*)(const EphostTensor*))                                           \
  X(TensorGetShape, void (*)(const EphostTensor*, const int64_t**, size_t*))                                    \
  X(TensorGetData, void* (*)(EphostTensor*))                                                                    \
  X(TensorGetElementCount, size_t (*)(const EphostTensor*))                                                     \
  X(GetElementSize, size_t (*)(EphostElementType))

#define EPHOST_FROZEN_APP_API_2(X)                                                                              \
  X(ValueGetKind, EphostValueKind (*)(const EphostTensor*))                                                     \
  X(CreateSequence, EphostStatus* (*)(EphostElementType, const EphostTensor* const*, size_t, EphostTensor**))   \
  X(CreateOptionalNone, EphostStatus* (*)(EphostTensor**))                                                      \
  X(SequenceGetInfo, EphostStatus* (*)(const EphostTensor*, EphostElementType*, size_t*))                       \
  X(SequenceGetElement, EphostStatus* (*)(const EphostTensor*, size_t, EphostTensor**))                         \
  X(SessionGetInputKind, EphostStatus* (*)(const EphostSession*, size_t, EphostValueKind*, EphostValueKind*,    \
                                           int32_t*))                                                           \
  X(SessionGetOutputKind, EphostStatus* (*)(const EphostSession*, size_t, EphostValueKind*, EphostValueKind*,   \
                                            int32_t*))                                                          \
  X(SessionGetEpContextReportJson, EphostStatus* (*)(const EphostSession*, char**))                             \
  X(InspectEpContextModelJson, EphostStatus* (*)(EphostEnv*, const char*, const EphostSessionOptions*, char**))

#define EPHOST_FROZEN_DEVICE_REPORT_API_3(X) \
  X(struct_size, uint32_t)                   \
  X(plugin, const char*)                     \
  X(index, uint32_t)                         \
  X(device_type, int32_t)                    \
  X(vendor, const char*)                     \
  X(name, const char*)                       \
  X(driver_version, const char*)             \
  X(hardware_architecture, const char*)      \
  X(memory_bytes, uint64_t)                  \
  X(host_memory_usable, int32_t)             \
  X(memory_kinds, uint32_t)

#define EPHOST_FROZEN_APP_API_3(X)                                                                              \
  X(GetDeviceCount, size_t (*)(const EphostEnv*))                                                               \
  X(GetDevice, EphostStatus* (*)(const EphostEnv*, size_t, EphostDeviceReport*))                                \
  X(AppendProviderForDevice, EphostStatus* (*)(EphostSessionOptions*, const char*, uint32_t, const char* const*, \
                                               const char* const*, size_t))                                     \
  X(CreateDeviceTensor, EphostStatus* (*)(EphostEnv*, const char*, uint32_t, EphostElementType, const int64_t*,  \
                                          size_t, EphostTensor**))                                              \
  X(TensorGetLocation, EphostStatus* (*)(const EphostTensor*, EphostMemoryLocation*, const char**, uint32_t*))   \
  X(CopyTensor, EphostStatus* (*)(const EphostTensor*, EphostTensor*))                                          \
  X(CreateIoBinding, EphostStatus* (*)(EphostSession*, EphostIoBinding**))                                      \
  X(ReleaseIoBinding, void (*)(EphostIoBinding*))                                                               \
  X(BindInput, EphostStatus* (*)(EphostIoBinding*, const char*, const EphostTensor*))                           \
  X(BindOutput, EphostStatus* (*)(EphostIoBinding*, const char*, EphostTensor*))                                \
  X(BindOutputToDevice, EphostStatus* (*)(EphostIoBinding*, const char*, const char*, uint32_t))                \
  X(RunWithBinding, EphostStatus* (*)(EphostSession*, EphostIoBinding*))                                        \
  X(IoBindingGetOutput, EphostStatus* (*)(const EphostIoBinding*, const char*, EphostTensor**))                 \
  X(ClearIoBinding, void (*)(EphostIoBinding*))                                                                 \
  X(SessionGetInputDimName, EphostStatus* (*)(const EphostSession*, size_t, size_t, const char**))              \
  X(SessionGetOutputDimName, EphostStatus* (*)(const EphostSession*, size_t, size_t, const char**))             \
  X(SetSessionProgressCallback, EphostStatus* (*)(EphostSessionOptions*, EphostProgressCallback, void*))         \
  X(SessionEndProfiling, EphostStatus* (*)(EphostSession*, char**))                                            \
  X(CreateEnvWithOptions, EphostStatus* (*)(EphostLogLevel, const char* const*, const char* const*,             \
                                            const char* const*, size_t, EphostEnv**))

#define EPHOST_FROZEN_APP_API_4(X)                                                                              \
  X(CreateRunOptions, EphostStatus* (*)(EphostRunOptions**))                                                    \
  X(ReleaseRunOptions, void (*)(EphostRunOptions*))                                                             \
  X(RunOptionsSetTerminate, EphostStatus* (*)(EphostRunOptions*, int32_t))                                      \
  X(RunOptionsSetTag, EphostStatus* (*)(EphostRunOptions*, const char*))                                        \
  X(RunWithOptions, EphostStatus* (*)(EphostSession*, const EphostRunOptions*, const char* const*,              \
                                      const EphostTensor* const*, size_t, const char* const*, size_t,           \
                                      EphostTensor**))                                                          \
  X(RunWithBindingAndOptions, EphostStatus* (*)(EphostSession*, EphostIoBinding*, const EphostRunOptions*))     \
  X(SessionGetModelMetadataJson, EphostStatus* (*)(const EphostSession*, char**))                              \
  X(SetDefaultLogLevel, EphostStatus* (*)(EphostLogLevel))                                                      \
  X(AddInitializer, EphostStatus* (*)(EphostSessionOptions*, const char*, const EphostTensor*))              \
  X(RunOptionsSetTimeout, EphostStatus* (*)(EphostRunOptions*, int64_t))

#define EPHOST_FROZEN_APP_API_5(X)                                                                              \
  X(SessionGetProviderCount, EphostStatus* (*)(const EphostSession*, size_t*))                                  \
  X(SessionGetProviderState, EphostStatus* (*)(const EphostSession*, size_t, EphostProviderState*))             \
  X(SetProviderStateCallback, EphostStatus* (*)(EphostSessionOptions*, EphostProviderStateCallback, void*))

#define EPHOST_FROZEN_APP_API_6(X)                                                                                \
  X(CreateSharedTensor, EphostStatus* (*)(EphostElementType, const int64_t*, size_t, EphostTensor**))            \
  X(TensorIsShared, EphostStatus* (*)(const EphostTensor*, int32_t*))

#define EPHOST_FROZEN_PROVIDER_STATE_API_5(X) \
  X(struct_size, uint32_t)                    \
  X(provider, const char*)                    \
  X(state, int32_t)                           \
  X(failures, int32_t)                        \
  X(process_id, int64_t)                      \
  X(last_failure, const char*)

// ---- enumerations (ephost_types.h, ephost_plugin.h, ephost_c_api.h): every value is frozen --------------

// since ABI 1 / API 1
#define EPHOST_FROZEN_STATUS_CODES(X) \
  X(EPHOST_OK, 0)                     \
  X(EPHOST_FAIL, 1)                   \
  X(EPHOST_INVALID_ARGUMENT, 2)       \
  X(EPHOST_NO_SUCHFILE, 3)            \
  X(EPHOST_NO_MODEL, 4)               \
  X(EPHOST_ENGINE_ERROR, 5)           \
  X(EPHOST_RUNTIME_EXCEPTION, 6)      \
  X(EPHOST_INVALID_PROTOBUF, 7)       \
  X(EPHOST_MODEL_LOADED, 8)           \
  X(EPHOST_NOT_IMPLEMENTED, 9)        \
  X(EPHOST_INVALID_GRAPH, 10)         \
  X(EPHOST_EP_FAIL, 11)

// since ABI 4 / API 4
#define EPHOST_FROZEN_STATUS_CODES_4(X) \
  X(EPHOST_CANCELLED, 100)              \
  X(EPHOST_DEADLINE_EXCEEDED, 101)

// since ABI 1 / API 1
#define EPHOST_FROZEN_ELEMENT_TYPES(X) \
  X(EPHOST_ELEMENT_UNDEFINED, 0)       \
  X(EPHOST_ELEMENT_FLOAT, 1)           \
  X(EPHOST_ELEMENT_UINT8, 2)           \
  X(EPHOST_ELEMENT_INT8, 3)            \
  X(EPHOST_ELEMENT_UINT16, 4)          \
  X(EPHOST_ELEMENT_INT16, 5)           \
  X(EPHOST_ELEMENT_INT32, 6)           \
  X(EPHOST_ELEMENT_INT64, 7)           \
  X(EPHOST_ELEMENT_STRING, 8)          \
  X(EPHOST_ELEMENT_BOOL, 9)            \
  X(EPHOST_ELEMENT_FLOAT16, 10)        \
  X(EPHOST_ELEMENT_DOUBLE, 11)         \
  X(EPHOST_ELEMENT_UINT32, 12)         \
  X(EPHOST_ELEMENT_UINT64, 13)         \
  X(EPHOST_ELEMENT_COMPLEX64, 14)      \
  X(EPHOST_ELEMENT_COMPLEX128, 15)     \
  X(EPHOST_ELEMENT_BFLOAT16, 16)

// since ABI 4 / API 4: the element types of ONNX opsets 19 to 25 (ONNX's numbers)
#define EPHOST_FROZEN_ELEMENT_TYPES_4(X)  \
  X(EPHOST_ELEMENT_FLOAT8E4M3FN, 17)      \
  X(EPHOST_ELEMENT_FLOAT8E4M3FNUZ, 18)    \
  X(EPHOST_ELEMENT_FLOAT8E5M2, 19)        \
  X(EPHOST_ELEMENT_FLOAT8E5M2FNUZ, 20)    \
  X(EPHOST_ELEMENT_UINT4, 21)             \
  X(EPHOST_ELEMENT_INT4, 22)              \
  X(EPHOST_ELEMENT_FLOAT4E2M1, 23)        \
  X(EPHOST_ELEMENT_FLOAT8E8M0, 24)        \
  X(EPHOST_ELEMENT_UINT2, 25)             \
  X(EPHOST_ELEMENT_INT2, 26)

// since ABI 1 / API 1
#define EPHOST_FROZEN_LOG_LEVELS(X) \
  X(EPHOST_LOG_VERBOSE, 0)          \
  X(EPHOST_LOG_INFO, 1)             \
  X(EPHOST_LOG_WARNING, 2)          \
  X(EPHOST_LOG_ERROR, 3)            \
  X(EPHOST_LOG_FATAL, 4)

// since ABI 1 / API 1
#define EPHOST_FROZEN_DEVICE_TYPES(X) \
  X(EPHOST_DEVICE_CPU, 0)             \
  X(EPHOST_DEVICE_GPU, 1)             \
  X(EPHOST_DEVICE_NPU, 2)

// since ABI 3 / API 3
#define EPHOST_FROZEN_DEVICE_TYPES_3(X) \
  X(EPHOST_DEVICE_ACCELERATOR, 3)
#define EPHOST_FROZEN_MEMORY_KINDS(X) \
  X(EPHOST_MEMORY_DEVICE, 0)          \
  X(EPHOST_MEMORY_HOST_ACCESSIBLE, 1)
#define EPHOST_FROZEN_MEMORY_LOCATIONS(X) \
  X(EPHOST_LOCATION_HOST, 0)              \
  X(EPHOST_LOCATION_DEVICE, 1)

// since ABI 2 / API 2
#define EPHOST_FROZEN_VALUE_KINDS(X) \
  X(EPHOST_VALUE_UNDEFINED, 0)       \
  X(EPHOST_VALUE_TENSOR, 1)          \
  X(EPHOST_VALUE_SEQUENCE, 2)        \
  X(EPHOST_VALUE_OPTIONAL, 3)        \
  X(EPHOST_VALUE_NONE, 4)

// since ABI 1
#define EPHOST_FROZEN_ATTRIBUTE_TYPES(X) \
  X(EPHOST_ATTR_UNDEFINED, 0)            \
  X(EPHOST_ATTR_FLOAT, 1)                \
  X(EPHOST_ATTR_INT, 2)                  \
  X(EPHOST_ATTR_STRING, 3)               \
  X(EPHOST_ATTR_TENSOR, 4)               \
  X(EPHOST_ATTR_GRAPH, 5)                \
  X(EPHOST_ATTR_FLOATS, 6)               \
  X(EPHOST_ATTR_INTS, 7)                 \
  X(EPHOST_ATTR_STRINGS, 8)              \
  X(EPHOST_ATTR_TENSORS, 9)              \
  X(EPHOST_ATTR_GRAPHS, 10)

// since ABI 1
#define EPHOST_FROZEN_CONTEXT_VERDICTS(X) \
  X(EPHOST_CONTEXT_NOT_MINE, 0)           \
  X(EPHOST_CONTEXT_OPTIMAL, 1)            \
  X(EPHOST_CONTEXT_PREFER_RECOMPILE, 2)   \
  X(EPHOST_CONTEXT_UNSUPPORTED, 3)

// since API 1
#define EPHOST_FROZEN_OPTIMIZATION_LEVELS(X) \
  X(EPHOST_OPT_DISABLE_ALL, 0)               \
  X(EPHOST_OPT_ENABLE_BASIC, 1)              \
  X(EPHOST_OPT_ENABLE_EXTENDED, 2)           \
  X(EPHOST_OPT_ENABLE_ALL, 99)

// since API 5
#define EPHOST_FROZEN_PROVIDER_STATES(X) \
  X(EPHOST_PROVIDER_IN_PROCESS, 0)       \
  X(EPHOST_PROVIDER_RUNNING, 1)          \
  X(EPHOST_PROVIDER_RESTARTING, 2)       \
  X(EPHOST_PROVIDER_FALLEN_BACK, 3)
