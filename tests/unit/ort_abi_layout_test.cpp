// The frozen layout of the ONNX Runtime tables the host serves (host/ort_ep/include/ort_ep/ort_abi.h): the
// slot of every entry the host implements, the last entry of each API version's table, and each table's
// size. These numbers are ONNX Runtime's (its tables are append-only); a change here breaks every plugin
// EP built against its headers. Generated once from the entry lists, then kept by hand.
#include <gtest/gtest.h>

#include <cstddef>

#include "ort_ep/api_tables.h"
#include "ort_ep/ort_abi.h"

namespace {

constexpr size_t slot(size_t offset) { return offset / sizeof(void*); }

TEST(OrtAbiLayout, TableSizes) {
  EXPECT_EQ(sizeof(OrtApi), 426 * sizeof(void*));
  EXPECT_EQ(sizeof(OrtEpApi), 74 * sizeof(void*));
  EXPECT_EQ(sizeof(OrtModelEditorApi), 20 * sizeof(void*));
  EXPECT_EQ(sizeof(OrtApiBase), 2 * sizeof(void*));
}

TEST(OrtAbiLayout, EachVersionEndsWhereOnnxRuntimesDoes) {
  EXPECT_EQ(slot(offsetof(OrtApi, GetEpApi)) + 1, 318u);  // API 22: 318 entries
  EXPECT_EQ(slot(offsetof(OrtApi, CreateExternalInitializerInfo)) + 1, 390u);  // API 23: 390 entries
  EXPECT_EQ(slot(offsetof(OrtApi, GetTensorElementTypeAndShapeDataReference)) + 1, 415u);  // API 24: 415 entries
  EXPECT_EQ(slot(offsetof(OrtApi, SetPerSessionThreadPoolCallbacks)) + 1, 419u);  // API 25/26: 419 entries
  EXPECT_EQ(slot(offsetof(OrtApi, KernelContext_GetSyncStream)) + 1, 424u);  // API 28: 424 entries
  EXPECT_EQ(slot(offsetof(OrtApi, SessionOptionsSetWeightlessSourceModelBuffer)) + 1, 425u);  // API 29: 425 entries
  EXPECT_EQ(slot(offsetof(OrtApi, KernelContext_GetPreallocatedOutput)) + 1, 426u);  // API 30: 426 entries
  EXPECT_EQ(slot(offsetof(OrtEpApi, ReleaseEpDevice)) + 1, 2u);  // API 22: 2 entries
  EXPECT_EQ(slot(offsetof(OrtEpApi, GetSyncIdForLastWaitOnSyncStream)) + 1, 16u);  // API 23: 16 entries
  EXPECT_EQ(slot(offsetof(OrtEpApi, GetEnvConfigEntries)) + 1, 50u);  // API 24: 50 entries
  EXPECT_EQ(slot(offsetof(OrtEpApi, ProfilingEventsContainer_AddEvents)) + 1, 73u);  // API 25..28: 73 entries
  EXPECT_EQ(slot(offsetof(OrtEpApi, SessionOptionsGetWeightlessSourceModelBuffer)) + 1, 74u);  // API 29/30: 74 entries
  // What the host says of each version agrees.
  for (uint32_t v : {22u, 23u, 24u, 25u, 26u, 28u, 29u, 30u}) {
    EXPECT_GT(ephost::ort_ep::ort_api_size_of_version(v), 0u) << v;
    EXPECT_LE(ephost::ort_ep::ort_api_size_of_version(v), sizeof(OrtApi) / sizeof(void*)) << v;
    EXPECT_LE(ephost::ort_ep::ort_ep_api_size_of_version(v), sizeof(OrtEpApi) / sizeof(void*)) << v;
  }
  EXPECT_EQ(ephost::ort_ep::ort_api_size_of_version(22), 318u);
  EXPECT_EQ(ephost::ort_ep::ort_api_size_of_version(30), 426u);
  EXPECT_EQ(ephost::ort_ep::ort_ep_api_size_of_version(24), 50u);
  EXPECT_EQ(ephost::ort_ep::ort_api_size_of_version(31), 0u);
}

TEST(OrtAbiLayout, ImplementedOrtApiEntries) {
  EXPECT_EQ(slot(offsetof(OrtApi, CreateStatus)), 0u);
  EXPECT_EQ(slot(offsetof(OrtApi, GetErrorCode)), 1u);
  EXPECT_EQ(slot(offsetof(OrtApi, GetErrorMessage)), 2u);
  EXPECT_EQ(slot(offsetof(OrtApi, IsTensor)), 50u);
  EXPECT_EQ(slot(offsetof(OrtApi, GetTensorMutableData)), 51u);
  EXPECT_EQ(slot(offsetof(OrtApi, CastTypeInfoToTensorInfo)), 55u);
  EXPECT_EQ(slot(offsetof(OrtApi, GetOnnxTypeFromTypeInfo)), 56u);
  EXPECT_EQ(slot(offsetof(OrtApi, GetTensorElementType)), 60u);
  EXPECT_EQ(slot(offsetof(OrtApi, GetDimensionsCount)), 61u);
  EXPECT_EQ(slot(offsetof(OrtApi, GetDimensions)), 62u);
  EXPECT_EQ(slot(offsetof(OrtApi, GetTensorShapeElementCount)), 64u);
  EXPECT_EQ(slot(offsetof(OrtApi, GetTensorTypeAndShape)), 65u);
  EXPECT_EQ(slot(offsetof(OrtApi, GetValueType)), 67u);
  EXPECT_EQ(slot(offsetof(OrtApi, CreateMemoryInfo)), 68u);
  EXPECT_EQ(slot(offsetof(OrtApi, CreateCpuMemoryInfo)), 69u);
  EXPECT_EQ(slot(offsetof(OrtApi, CompareMemoryInfo)), 70u);
  EXPECT_EQ(slot(offsetof(OrtApi, MemoryInfoGetName)), 71u);
  EXPECT_EQ(slot(offsetof(OrtApi, MemoryInfoGetId)), 72u);
  EXPECT_EQ(slot(offsetof(OrtApi, MemoryInfoGetMemType)), 73u);
  EXPECT_EQ(slot(offsetof(OrtApi, MemoryInfoGetType)), 74u);
  EXPECT_EQ(slot(offsetof(OrtApi, AllocatorAlloc)), 75u);
  EXPECT_EQ(slot(offsetof(OrtApi, AllocatorFree)), 76u);
  EXPECT_EQ(slot(offsetof(OrtApi, AllocatorGetInfo)), 77u);
  EXPECT_EQ(slot(offsetof(OrtApi, GetAllocatorWithDefaultOptions)), 78u);
  EXPECT_EQ(slot(offsetof(OrtApi, KernelContext_GetInputCount)), 88u);
  EXPECT_EQ(slot(offsetof(OrtApi, KernelContext_GetOutputCount)), 89u);
  EXPECT_EQ(slot(offsetof(OrtApi, KernelContext_GetInput)), 90u);
  EXPECT_EQ(slot(offsetof(OrtApi, KernelContext_GetOutput)), 91u);
  EXPECT_EQ(slot(offsetof(OrtApi, ReleaseStatus)), 93u);
  EXPECT_EQ(slot(offsetof(OrtApi, ReleaseMemoryInfo)), 94u);
  EXPECT_EQ(slot(offsetof(OrtApi, ReleaseValue)), 96u);
  EXPECT_EQ(slot(offsetof(OrtApi, ReleaseTypeInfo)), 98u);
  EXPECT_EQ(slot(offsetof(OrtApi, ReleaseTensorTypeAndShapeInfo)), 99u);
  EXPECT_EQ(slot(offsetof(OrtApi, CreateOpAttr)), 211u);
  EXPECT_EQ(slot(offsetof(OrtApi, ReleaseOpAttr)), 212u);
  EXPECT_EQ(slot(offsetof(OrtApi, MemoryInfoGetDeviceType)), 225u);
  EXPECT_EQ(slot(offsetof(OrtApi, HasSessionConfigEntry)), 237u);
  EXPECT_EQ(slot(offsetof(OrtApi, GetSessionConfigEntry)), 238u);
  EXPECT_EQ(slot(offsetof(OrtApi, Logger_LogMessage)), 247u);
  EXPECT_EQ(slot(offsetof(OrtApi, Logger_GetLoggingSeverityLevel)), 248u);
  EXPECT_EQ(slot(offsetof(OrtApi, GetBuildInfoString)), 254u);
  EXPECT_EQ(slot(offsetof(OrtApi, ReadOpAttr)), 272u);
  EXPECT_EQ(slot(offsetof(OrtApi, ReleaseNode)), 286u);
  EXPECT_EQ(slot(offsetof(OrtApi, GetValueInfoName)), 289u);
  EXPECT_EQ(slot(offsetof(OrtApi, GetValueInfoTypeInfo)), 290u);
  EXPECT_EQ(slot(offsetof(OrtApi, GetModelEditorApi)), 291u);
  EXPECT_EQ(slot(offsetof(OrtApi, CreateKeyValuePairs)), 295u);
  EXPECT_EQ(slot(offsetof(OrtApi, AddKeyValuePair)), 296u);
  EXPECT_EQ(slot(offsetof(OrtApi, GetKeyValue)), 297u);
  EXPECT_EQ(slot(offsetof(OrtApi, GetKeyValuePairs)), 298u);
  EXPECT_EQ(slot(offsetof(OrtApi, RemoveKeyValuePair)), 299u);
  EXPECT_EQ(slot(offsetof(OrtApi, ReleaseKeyValuePairs)), 300u);
  EXPECT_EQ(slot(offsetof(OrtApi, HardwareDevice_Type)), 307u);
  // The environment a plugin may ask (host/ort_ep/api_env.cpp).
  EXPECT_EQ(slot(offsetof(OrtApi, CreateEnv)), 3u);
  EXPECT_EQ(slot(offsetof(OrtApi, ReleaseEnv)), 92u);
  EXPECT_EQ(slot(offsetof(OrtApi, GetNumHardwareDevices)), 397u);
  EXPECT_EQ(slot(offsetof(OrtApi, GetHardwareDevices)), 398u);
  EXPECT_EQ(slot(offsetof(OrtApi, GetHardwareDeviceEpIncompatibilityDetails)), 399u);
  // Session options a plugin makes itself, and the weightless source model's buffer (API 29).
  EXPECT_EQ(slot(offsetof(OrtApi, CreateSessionOptions)), 10u);
  EXPECT_EQ(slot(offsetof(OrtApi, ReleaseSessionOptions)), 100u);
  EXPECT_EQ(slot(offsetof(OrtApi, AddSessionConfigEntry)), 130u);
  EXPECT_EQ(slot(offsetof(OrtApi, SessionOptionsSetWeightlessSourceModelBuffer)), 424u);
  EXPECT_EQ(slot(offsetof(OrtApi, HardwareDevice_VendorId)), 308u);
  EXPECT_EQ(slot(offsetof(OrtApi, HardwareDevice_Vendor)), 309u);
  EXPECT_EQ(slot(offsetof(OrtApi, HardwareDevice_DeviceId)), 310u);
  EXPECT_EQ(slot(offsetof(OrtApi, HardwareDevice_Metadata)), 311u);
  EXPECT_EQ(slot(offsetof(OrtApi, EpDevice_EpName)), 312u);
  EXPECT_EQ(slot(offsetof(OrtApi, EpDevice_EpVendor)), 313u);
  EXPECT_EQ(slot(offsetof(OrtApi, EpDevice_EpMetadata)), 314u);
  EXPECT_EQ(slot(offsetof(OrtApi, EpDevice_EpOptions)), 315u);
  EXPECT_EQ(slot(offsetof(OrtApi, EpDevice_Device)), 316u);
  EXPECT_EQ(slot(offsetof(OrtApi, GetEpApi)), 317u);
  EXPECT_EQ(slot(offsetof(OrtApi, GetTensorSizeInBytes)), 318u);
  EXPECT_EQ(slot(offsetof(OrtApi, CreateMemoryInfo_V2)), 320u);
  EXPECT_EQ(slot(offsetof(OrtApi, MemoryInfoGetDeviceMemType)), 321u);
  EXPECT_EQ(slot(offsetof(OrtApi, MemoryInfoGetVendorId)), 322u);
  EXPECT_EQ(slot(offsetof(OrtApi, ValueInfo_GetValueProducer)), 323u);
  EXPECT_EQ(slot(offsetof(OrtApi, ValueInfo_GetValueNumConsumers)), 324u);
  EXPECT_EQ(slot(offsetof(OrtApi, ValueInfo_GetValueConsumers)), 325u);
  EXPECT_EQ(slot(offsetof(OrtApi, ValueInfo_GetInitializerValue)), 326u);
  EXPECT_EQ(slot(offsetof(OrtApi, ValueInfo_IsRequiredGraphInput)), 328u);
  EXPECT_EQ(slot(offsetof(OrtApi, ValueInfo_IsOptionalGraphInput)), 329u);
  EXPECT_EQ(slot(offsetof(OrtApi, ValueInfo_IsGraphOutput)), 330u);
  EXPECT_EQ(slot(offsetof(OrtApi, ValueInfo_IsConstantInitializer)), 331u);
  EXPECT_EQ(slot(offsetof(OrtApi, ValueInfo_IsFromOuterScope)), 332u);
  EXPECT_EQ(slot(offsetof(OrtApi, Graph_GetName)), 333u);
  EXPECT_EQ(slot(offsetof(OrtApi, Graph_GetModelPath)), 334u);
  EXPECT_EQ(slot(offsetof(OrtApi, Graph_GetOnnxIRVersion)), 335u);
  EXPECT_EQ(slot(offsetof(OrtApi, Graph_GetNumOperatorSets)), 336u);
  EXPECT_EQ(slot(offsetof(OrtApi, Graph_GetOperatorSets)), 337u);
  EXPECT_EQ(slot(offsetof(OrtApi, Graph_GetNumInputs)), 338u);
  EXPECT_EQ(slot(offsetof(OrtApi, Graph_GetInputs)), 339u);
  EXPECT_EQ(slot(offsetof(OrtApi, Graph_GetNumOutputs)), 340u);
  EXPECT_EQ(slot(offsetof(OrtApi, Graph_GetOutputs)), 341u);
  EXPECT_EQ(slot(offsetof(OrtApi, Graph_GetNumInitializers)), 342u);
  EXPECT_EQ(slot(offsetof(OrtApi, Graph_GetInitializers)), 343u);
  EXPECT_EQ(slot(offsetof(OrtApi, Graph_GetNumNodes)), 344u);
  EXPECT_EQ(slot(offsetof(OrtApi, Graph_GetNodes)), 345u);
  EXPECT_EQ(slot(offsetof(OrtApi, Graph_GetParentNode)), 346u);
  EXPECT_EQ(slot(offsetof(OrtApi, Node_GetId)), 348u);
  EXPECT_EQ(slot(offsetof(OrtApi, Node_GetName)), 349u);
  EXPECT_EQ(slot(offsetof(OrtApi, Node_GetOperatorType)), 350u);
  EXPECT_EQ(slot(offsetof(OrtApi, Node_GetDomain)), 351u);
  EXPECT_EQ(slot(offsetof(OrtApi, Node_GetNumInputs)), 353u);
  EXPECT_EQ(slot(offsetof(OrtApi, Node_GetInputs)), 354u);
  EXPECT_EQ(slot(offsetof(OrtApi, Node_GetNumOutputs)), 355u);
  EXPECT_EQ(slot(offsetof(OrtApi, Node_GetOutputs)), 356u);
  EXPECT_EQ(slot(offsetof(OrtApi, Node_GetNumImplicitInputs)), 357u);
  EXPECT_EQ(slot(offsetof(OrtApi, Node_GetImplicitInputs)), 358u);
  EXPECT_EQ(slot(offsetof(OrtApi, Node_GetNumAttributes)), 359u);
  EXPECT_EQ(slot(offsetof(OrtApi, Node_GetAttributes)), 360u);
  EXPECT_EQ(slot(offsetof(OrtApi, Node_GetAttributeByName)), 361u);
  EXPECT_EQ(slot(offsetof(OrtApi, OpAttr_GetType)), 363u);
  EXPECT_EQ(slot(offsetof(OrtApi, OpAttr_GetName)), 364u);
  EXPECT_EQ(slot(offsetof(OrtApi, Node_GetNumSubgraphs)), 365u);
  EXPECT_EQ(slot(offsetof(OrtApi, Node_GetSubgraphs)), 366u);
  EXPECT_EQ(slot(offsetof(OrtApi, Node_GetGraph)), 367u);
  EXPECT_EQ(slot(offsetof(OrtApi, Node_GetEpName)), 368u);
  EXPECT_EQ(slot(offsetof(OrtApi, GetTensorData)), 378u);
  EXPECT_EQ(slot(offsetof(OrtApi, GetSessionOptionsConfigEntries)), 379u);
  EXPECT_EQ(slot(offsetof(OrtApi, TensorTypeAndShape_HasShape)), 390u);
  EXPECT_EQ(slot(offsetof(OrtApi, GetExperimentalFunction)), 422u);
  // Device memory: the run's stream and where a tensor lives.
  EXPECT_EQ(slot(offsetof(OrtApi, KernelContext_GetGPUComputeStream)), 193u);
  EXPECT_EQ(slot(offsetof(OrtApi, GetTensorMemoryInfo)), 194u);
  EXPECT_EQ(slot(offsetof(OrtApi, SyncStream_GetHandle)), 384u);
  EXPECT_EQ(slot(offsetof(OrtApi, KernelContext_GetSyncStream)), 423u);
  // Kernel-registry EPs: what a kernel reads of its node (OrtKernelInfo), and its logger.
  EXPECT_EQ(slot(offsetof(OrtApi, KernelInfoGetAttribute_float)), 85u);
  EXPECT_EQ(slot(offsetof(OrtApi, KernelInfoGetAttribute_int64)), 86u);
  EXPECT_EQ(slot(offsetof(OrtApi, KernelInfoGetAttribute_string)), 87u);
  EXPECT_EQ(slot(offsetof(OrtApi, KernelInfoGetAttributeArray_float)), 162u);
  EXPECT_EQ(slot(offsetof(OrtApi, KernelInfoGetAttributeArray_int64)), 163u);
  EXPECT_EQ(slot(offsetof(OrtApi, KernelInfo_GetInputCount)), 230u);
  EXPECT_EQ(slot(offsetof(OrtApi, KernelInfo_GetOutputCount)), 231u);
  EXPECT_EQ(slot(offsetof(OrtApi, KernelInfo_GetInputName)), 232u);
  EXPECT_EQ(slot(offsetof(OrtApi, KernelInfo_GetOutputName)), 233u);
  EXPECT_EQ(slot(offsetof(OrtApi, KernelInfo_GetInputTypeInfo)), 234u);
  EXPECT_EQ(slot(offsetof(OrtApi, KernelInfo_GetOutputTypeInfo)), 235u);
  EXPECT_EQ(slot(offsetof(OrtApi, KernelInfo_GetNodeName)), 244u);
  EXPECT_EQ(slot(offsetof(OrtApi, KernelInfo_GetLogger)), 245u);
  EXPECT_EQ(slot(offsetof(OrtApi, KernelContext_GetLogger)), 246u);
  EXPECT_EQ(slot(offsetof(OrtApi, KernelInfoGetConstantInput_tensor)), 249u);
  EXPECT_EQ(slot(offsetof(OrtApi, Node_GetSinceVersion)), 352u);
  EXPECT_EQ(slot(offsetof(OrtApi, KernelInfo_GetConfigEntries)), 391u);
  EXPECT_EQ(slot(offsetof(OrtApi, KernelInfo_GetOperatorDomain)), 392u);
  EXPECT_EQ(slot(offsetof(OrtApi, KernelInfo_GetOperatorType)), 393u);
  EXPECT_EQ(slot(offsetof(OrtApi, KernelInfo_GetOperatorSinceVersion)), 394u);
  // Kernel-registry EPs: tensor and string-array attributes, copies of a kernel info, allocators, scratch
  // buffers, ParallelFor and resources of the kernel context.
  EXPECT_EQ(slot(offsetof(OrtApi, ReleaseAllocator)), 132u);
  EXPECT_EQ(slot(offsetof(OrtApi, CopyKernelInfo)), 217u);
  EXPECT_EQ(slot(offsetof(OrtApi, ReleaseKernelInfo)), 218u);
  EXPECT_EQ(slot(offsetof(OrtApi, KernelInfoGetAttribute_tensor)), 236u);
  EXPECT_EQ(slot(offsetof(OrtApi, KernelContext_GetAllocator)), 253u);
  EXPECT_EQ(slot(offsetof(OrtApi, KernelContext_GetResource)), 265u);
  EXPECT_EQ(slot(offsetof(OrtApi, KernelContext_ParallelFor)), 274u);
  EXPECT_EQ(slot(offsetof(OrtApi, KernelContext_GetScratchBuffer)), 277u);
  EXPECT_EQ(slot(offsetof(OrtApi, KernelInfoGetAllocator)), 278u);
  EXPECT_EQ(slot(offsetof(OrtApi, KernelInfoGetAttributeArray_string)), 417u);
}

TEST(OrtAbiLayout, ImplementedOrtEpApiEntries) {
  EXPECT_EQ(slot(offsetof(OrtEpApi, CreateEpDevice)), 0u);
  EXPECT_EQ(slot(offsetof(OrtEpApi, ReleaseEpDevice)), 1u);
  EXPECT_EQ(slot(offsetof(OrtEpApi, EpGraphSupportInfo_AddNodesToFuse)), 2u);
  EXPECT_EQ(slot(offsetof(OrtEpApi, EpGraphSupportInfo_AddSingleNode)), 3u);
  EXPECT_EQ(slot(offsetof(OrtEpApi, NodeComputeContext_NodeName)), 4u);
  EXPECT_EQ(slot(offsetof(OrtEpApi, EpDevice_AddAllocatorInfo)), 5u);
  EXPECT_EQ(slot(offsetof(OrtEpApi, MemoryInfo_GetMemoryDevice)), 6u);
  EXPECT_EQ(slot(offsetof(OrtEpApi, Value_GetMemoryDevice)), 7u);
  EXPECT_EQ(slot(offsetof(OrtEpApi, MemoryDevice_AreEqual)), 8u);
  EXPECT_EQ(slot(offsetof(OrtEpApi, MemoryDevice_GetDeviceType)), 9u);
  EXPECT_EQ(slot(offsetof(OrtEpApi, MemoryDevice_GetMemoryType)), 10u);
  EXPECT_EQ(slot(offsetof(OrtEpApi, MemoryDevice_GetVendorId)), 11u);
  EXPECT_EQ(slot(offsetof(OrtEpApi, MemoryDevice_GetDeviceId)), 12u);
  EXPECT_EQ(slot(offsetof(OrtEpApi, SyncStream_GetImpl)), 13u);
  EXPECT_EQ(slot(offsetof(OrtEpApi, SyncStream_GetSyncId)), 14u);
  EXPECT_EQ(slot(offsetof(OrtEpApi, GetSyncIdForLastWaitOnSyncStream)), 15u);
  EXPECT_EQ(slot(offsetof(OrtEpApi, CreateHardwareDevice)), 16u);
  EXPECT_EQ(slot(offsetof(OrtEpApi, ReleaseHardwareDevice)), 17u);
  // Kernel-registry EPs (API 24): the registry, kernel definitions, data types, the lookup.
  EXPECT_EQ(slot(offsetof(OrtEpApi, CreateKernelRegistry)), 18u);
  EXPECT_EQ(slot(offsetof(OrtEpApi, ReleaseKernelRegistry)), 19u);
  EXPECT_EQ(slot(offsetof(OrtEpApi, KernelRegistry_AddKernel)), 20u);
  EXPECT_EQ(slot(offsetof(OrtEpApi, CreateKernelDefBuilder)), 21u);
  EXPECT_EQ(slot(offsetof(OrtEpApi, ReleaseKernelDefBuilder)), 22u);
  EXPECT_EQ(slot(offsetof(OrtEpApi, KernelDefBuilder_SetOperatorType)), 23u);
  EXPECT_EQ(slot(offsetof(OrtEpApi, KernelDefBuilder_SetDomain)), 24u);
  EXPECT_EQ(slot(offsetof(OrtEpApi, KernelDefBuilder_SetSinceVersion)), 25u);
  EXPECT_EQ(slot(offsetof(OrtEpApi, KernelDefBuilder_SetExecutionProvider)), 26u);
  EXPECT_EQ(slot(offsetof(OrtEpApi, KernelDefBuilder_SetInputMemType)), 27u);
  EXPECT_EQ(slot(offsetof(OrtEpApi, KernelDefBuilder_SetOutputMemType)), 28u);
  EXPECT_EQ(slot(offsetof(OrtEpApi, KernelDefBuilder_AddTypeConstraint)), 29u);
  EXPECT_EQ(slot(offsetof(OrtEpApi, KernelDefBuilder_AddInputOutputAliases)), 30u);
  EXPECT_EQ(slot(offsetof(OrtEpApi, KernelDefBuilder_AddInputOutputMutableAliases)), 31u);
  EXPECT_EQ(slot(offsetof(OrtEpApi, KernelDefBuilder_Build)), 32u);
  EXPECT_EQ(slot(offsetof(OrtEpApi, ReleaseKernelDef)), 33u);
  EXPECT_EQ(slot(offsetof(OrtEpApi, KernelDef_GetOperatorType)), 34u);
  EXPECT_EQ(slot(offsetof(OrtEpApi, KernelDef_GetDomain)), 35u);
  EXPECT_EQ(slot(offsetof(OrtEpApi, KernelDef_GetSinceVersion)), 36u);
  EXPECT_EQ(slot(offsetof(OrtEpApi, KernelDef_GetExecutionProvider)), 37u);
  EXPECT_EQ(slot(offsetof(OrtEpApi, KernelDef_GetInputMemType)), 38u);
  EXPECT_EQ(slot(offsetof(OrtEpApi, KernelDef_GetOutputMemType)), 39u);
  EXPECT_EQ(slot(offsetof(OrtEpApi, GetTensorDataType)), 40u);
  EXPECT_EQ(slot(offsetof(OrtEpApi, EpGraphSupportInfo_LookUpKernel)), 41u);
  EXPECT_EQ(slot(offsetof(OrtEpApi, SharedPrePackedWeightCache_StoreWeightData)), 42u);
  EXPECT_EQ(slot(offsetof(OrtEpApi, KernelInfo_GetEp)), 43u);
  EXPECT_EQ(slot(offsetof(OrtEpApi, DeviceEpIncompatibilityDetails_SetDetails)), 44u);
  // Control-flow kernels the host makes (API 24).
  EXPECT_EQ(slot(offsetof(OrtEpApi, CreateIfKernel)), 45u);
  EXPECT_EQ(slot(offsetof(OrtEpApi, CreateLoopKernel)), 46u);
  EXPECT_EQ(slot(offsetof(OrtEpApi, CreateScanKernel)), 47u);
  EXPECT_EQ(slot(offsetof(OrtEpApi, ReleaseKernelImpl)), 48u);
  EXPECT_EQ(slot(offsetof(OrtEpApi, GetEnvConfigEntries)), 49u);
  // Operator schemas (API 25).
  EXPECT_EQ(slot(offsetof(OrtEpApi, GetOpSchema)), 50u);
  EXPECT_EQ(slot(offsetof(OrtEpApi, ReleaseOpSchema)), 51u);
  EXPECT_EQ(slot(offsetof(OrtEpApi, OpSchema_GetSinceVersion)), 52u);
  EXPECT_EQ(slot(offsetof(OrtEpApi, OpSchema_GetNumInputs)), 53u);
  EXPECT_EQ(slot(offsetof(OrtEpApi, OpSchema_GetInputName)), 54u);
  EXPECT_EQ(slot(offsetof(OrtEpApi, OpSchema_GetInputTypeConstraint)), 55u);
  EXPECT_EQ(slot(offsetof(OrtEpApi, OpSchema_GetNumOutputs)), 56u);
  EXPECT_EQ(slot(offsetof(OrtEpApi, OpSchema_GetOutputName)), 57u);
  EXPECT_EQ(slot(offsetof(OrtEpApi, OpSchema_GetOutputTypeConstraint)), 58u);
  EXPECT_EQ(slot(offsetof(OrtEpApi, OpSchema_GetTypeConstraintCount)), 59u);
  EXPECT_EQ(slot(offsetof(OrtEpApi, OpSchema_GetTypeConstraint)), 60u);
  EXPECT_EQ(slot(offsetof(OrtEpApi, OpSchemaTypeConstraint_GetTypeParamName)), 61u);
  EXPECT_EQ(slot(offsetof(OrtEpApi, OpSchemaTypeConstraint_GetAllowedTypes)), 62u);
  EXPECT_EQ(slot(offsetof(OrtEpApi, OpSchemaTypeConstraint_GetInputIndices)), 63u);
  EXPECT_EQ(slot(offsetof(OrtEpApi, OpSchemaTypeConstraint_GetOutputIndices)), 64u);
  // API 25: profiling events; API 29: the weightless source model.
  EXPECT_EQ(slot(offsetof(OrtEpApi, CreateProfilingEvent)), 65u);
  EXPECT_EQ(slot(offsetof(OrtEpApi, ReleaseProfilingEvent)), 66u);
  EXPECT_EQ(slot(offsetof(OrtEpApi, ProfilingEvent_GetCategory)), 67u);
  EXPECT_EQ(slot(offsetof(OrtEpApi, ProfilingEvent_GetName)), 68u);
  EXPECT_EQ(slot(offsetof(OrtEpApi, ProfilingEvent_GetTimestampUs)), 69u);
  EXPECT_EQ(slot(offsetof(OrtEpApi, ProfilingEvent_GetDurationUs)), 70u);
  EXPECT_EQ(slot(offsetof(OrtEpApi, ProfilingEvent_GetArgValue)), 71u);
  EXPECT_EQ(slot(offsetof(OrtEpApi, ProfilingEventsContainer_AddEvents)), 72u);
  EXPECT_EQ(slot(offsetof(OrtEpApi, SessionOptionsGetWeightlessSourceModelBuffer)), 73u);
}

TEST(OrtAbiLayout, ImplementedModelEditorEntries) {
  EXPECT_EQ(slot(offsetof(OrtModelEditorApi, CreateNode)), 6u);
}

TEST(OrtAbiLayout, PluginStructs) {
  // OrtEp and OrtEpFactory members the host reads, by the version that added them.
  EXPECT_EQ(offsetof(OrtEp, GetName), sizeof(void*));
  EXPECT_EQ(slot(offsetof(OrtEp, GetCapability)), 2u);
  EXPECT_EQ(slot(offsetof(OrtEp, Compile)), 3u);
  EXPECT_EQ(slot(offsetof(OrtEp, ReleaseNodeComputeInfos)), 4u);
  EXPECT_EQ(slot(offsetof(OrtEp, OnRunStart)), 8u);
  EXPECT_EQ(slot(offsetof(OrtEp, OnRunEnd)), 9u);
  EXPECT_EQ(slot(offsetof(OrtEp, GetCompiledModelCompatibilityInfo)), 12u);
  EXPECT_EQ(slot(offsetof(OrtEp, GetKernelRegistry)), 13u);
  EXPECT_EQ(slot(offsetof(OrtEp, IsConcurrentRunSupported)), 14u);
  EXPECT_EQ(slot(offsetof(OrtEp, Sync)), 15u);  // API 25
  EXPECT_EQ(slot(offsetof(OrtEp, CreateProfiler)), 16u);
  EXPECT_EQ(slot(offsetof(OrtEp, GetWeightlessSupport)), 25u);  // API 29, after 26's five and 27's three
  EXPECT_EQ(sizeof(OrtEp), 26 * sizeof(void*));
  EXPECT_EQ(slot(offsetof(OrtEpProfilerImpl, Release)), 1u);
  EXPECT_EQ(slot(offsetof(OrtEpProfilerImpl, StartProfiling)), 2u);
  EXPECT_EQ(slot(offsetof(OrtEpProfilerImpl, StartEvent)), 3u);
  EXPECT_EQ(slot(offsetof(OrtEpProfilerImpl, StopEvent)), 4u);
  EXPECT_EQ(slot(offsetof(OrtEpProfilerImpl, EndProfiling)), 5u);
  EXPECT_EQ(sizeof(OrtEpProfilerImpl), 6 * sizeof(void*));
  EXPECT_EQ(static_cast<int>(OrtProfilingEventCategory_API), 3);
  EXPECT_EQ(slot(offsetof(OrtEpFactory, GetName)), 1u);
  EXPECT_EQ(slot(offsetof(OrtEpFactory, GetSupportedDevices)), 3u);
  EXPECT_EQ(slot(offsetof(OrtEpFactory, CreateEp)), 4u);
  EXPECT_EQ(slot(offsetof(OrtEpFactory, ReleaseEp)), 5u);
  EXPECT_EQ(slot(offsetof(OrtEpFactory, GetVersion)), 7u);
  EXPECT_EQ(slot(offsetof(OrtEpFactory, ValidateCompiledModelCompatibilityInfo)), 8u);
  EXPECT_EQ(slot(offsetof(OrtEpFactory, CreateAllocator)), 9u);
  EXPECT_EQ(slot(offsetof(OrtEpFactory, ReleaseAllocator)), 10u);
  EXPECT_EQ(slot(offsetof(OrtEpFactory, CreateDataTransfer)), 11u);
  EXPECT_EQ(slot(offsetof(OrtEpFactory, IsStreamAware)), 12u);
  EXPECT_EQ(slot(offsetof(OrtEpFactory, CreateSyncStreamForDevice)), 13u);
  // What a factory with memory of its own implements (API 23).
  EXPECT_EQ(slot(offsetof(OrtDataTransferImpl, Release)), 1u);
  EXPECT_EQ(slot(offsetof(OrtDataTransferImpl, CanCopy)), 2u);
  EXPECT_EQ(slot(offsetof(OrtDataTransferImpl, CopyTensors)), 3u);
  EXPECT_EQ(sizeof(OrtDataTransferImpl), 4 * sizeof(void*));
  EXPECT_EQ(slot(offsetof(OrtSyncStreamImpl, Release)), 1u);
  EXPECT_EQ(slot(offsetof(OrtSyncStreamImpl, GetHandle)), 2u);
  EXPECT_EQ(slot(offsetof(OrtSyncStreamImpl, CreateNotification)), 3u);
  EXPECT_EQ(slot(offsetof(OrtSyncStreamImpl, Flush)), 4u);
  EXPECT_EQ(slot(offsetof(OrtSyncStreamImpl, OnSessionRunEnd)), 5u);
  EXPECT_EQ(sizeof(OrtSyncStreamImpl), 6 * sizeof(void*));
  EXPECT_EQ(slot(offsetof(OrtSyncNotificationImpl, WaitOnHost)), 4u);
  EXPECT_EQ(slot(offsetof(OrtNodeComputeInfo, CreateState)), 1u);
  EXPECT_EQ(slot(offsetof(OrtNodeComputeInfo, Compute)), 2u);
  EXPECT_EQ(slot(offsetof(OrtNodeComputeInfo, ReleaseState)), 3u);
  EXPECT_EQ(offsetof(OrtNodeFusionOptions, drop_constant_initializers), 4u);
  // A kernel of a kernel-registry EP (API 24): two 32-bit words, then its functions.
  EXPECT_EQ(offsetof(OrtKernelImpl, flags), 4u);
  EXPECT_EQ(slot(offsetof(OrtKernelImpl, Compute)), 1u);
  EXPECT_EQ(slot(offsetof(OrtKernelImpl, Release)), 2u);
  EXPECT_EQ(slot(offsetof(OrtKernelImpl, PrePackWeight)), 3u);
  EXPECT_EQ(slot(offsetof(OrtKernelImpl, SetSharedPrePackedWeight)), 4u);
  EXPECT_EQ(sizeof(OrtKernelImpl), 5 * sizeof(void*));
  // The helpers an EP hands the host's Loop and Scan kernels (API 24).
  EXPECT_EQ(slot(offsetof(OrtLoopKernelHelper, Release)), 1u);
  EXPECT_EQ(slot(offsetof(OrtLoopKernelHelper, ConcatOutput)), 2u);
  EXPECT_EQ(sizeof(OrtLoopKernelHelper), 3 * sizeof(void*));
  EXPECT_EQ(slot(offsetof(OrtScanKernelHelper, Release)), 1u);
  EXPECT_EQ(slot(offsetof(OrtScanKernelHelper, Transpose)), 2u);
  EXPECT_EQ(sizeof(OrtScanKernelHelper), 3 * sizeof(void*));
  EXPECT_EQ(slot(offsetof(OrtAllocator, Alloc)), 1u);
  EXPECT_EQ(slot(offsetof(OrtAllocator, Info)), 3u);
}

// The experimental functions have no slot: GetExperimentalFunction (slot 422) finds them by these names,
// ONNX Runtime's "<name>_SinceV<version>"; each must keep answering under its name.
TEST(OrtAbiLayout, ExperimentalFunctionNames) {
  EXPECT_STREQ(ORT_EXPERIMENTAL_GET_EP_CONTEXT_CONFIG, "OrtEpApi_SessionOptions_GetEpContextConfig_SinceV28");
  EXPECT_STREQ(ORT_EXPERIMENTAL_RELEASE_EP_CONTEXT_CONFIG, "OrtEpApi_ReleaseEpContextConfig_SinceV28");
  EXPECT_STREQ(ORT_EXPERIMENTAL_GET_EP_CONTEXT_READ_FUNC, "OrtEpApi_EpContextConfig_GetEpContextDataReadFunc_SinceV28");
  EXPECT_STREQ(ORT_EXPERIMENTAL_GET_EP_CONTEXT_WRITE_FUNC,
               "OrtEpApi_EpContextConfig_GetEpContextDataWriteFunc_SinceV28");
  for (const char* name : {ORT_EXPERIMENTAL_GET_EP_CONTEXT_CONFIG, ORT_EXPERIMENTAL_RELEASE_EP_CONTEXT_CONFIG,
                           ORT_EXPERIMENTAL_GET_EP_CONTEXT_READ_FUNC, ORT_EXPERIMENTAL_GET_EP_CONTEXT_WRITE_FUNC})
    EXPECT_NE(ephost::ort_ep::experimental_function(name), nullptr) << name;
}

TEST(OrtAbiLayout, CountsOfImplementedEntries) {
  const auto c = ephost::ort_ep::implemented_counts();
  EXPECT_EQ(c.api_total, 426u);
  EXPECT_EQ(c.ep_api_total, 74u);
  EXPECT_EQ(c.editor_total, 20u);
  EXPECT_EQ(c.api, 160u);
  EXPECT_EQ(c.ep_api, 74u);
  EXPECT_EQ(c.editor, 1u);
}

}  // namespace
