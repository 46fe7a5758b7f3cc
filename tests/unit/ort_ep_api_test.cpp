// The OrtApi / OrtEpApi / OrtModelEditorApi entries the host implements (host/ort_ep/), each called
// through the table a plugin gets from GetApi, with its result checked: statuses, key-value pairs,
// loggers, session options, devices, memory infos, the allocator, tensors and type infos, the kernel
// context, the graph views (a graph with an If whose branches read an outer value), attributes, the
// claims sink, EPContext nodes made with CreateNode, kernel registries and what a kernel reads of its node
// (attributes, allocators, copies), the kernel context's allocators, scratch buffers, ParallelFor and
// resources, and the shared pre-packed weight cache. Also: GetApi's versions and the stubs.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <string>
#include <vector>

#include "plugin_abi/handles.h"
#include "graph/graph.h"
#include "model/model.h"
#include "model_builders.h"
#include "ort_ep/api_tables.h"
#include "ort_ep/call_arena.h"
#include "ort_ep/graph_handles.h"
#include "ort_ep/hardware_devices.h"
#include "ort_ep/library.h"
#include "ort_ep/kernel_context.h"
#include "ort_ep/kernel_registry.h"
#include "ort_ep/ort_objects.h"
#include "ort_ep/prepacked_weights.h"

using namespace ephost;
using namespace ephost_test;

namespace {

const OrtApi* api() { return ort_ep::ort_api_base()->GetApi(30); }
const OrtEpApi* ep_api() { return api()->GetEpApi(); }

// Expects `status` to be OK (NULL); otherwise reports its message and releases it.
#define EXPECT_OK(expr)                                                                   \
  do {                                                                                    \
    OrtStatus* s_ = (expr);                                                               \
    EXPECT_EQ(s_, nullptr) << #expr << ": " << (s_ ? api()->GetErrorMessage(s_) : ""); \
    if (s_) api()->ReleaseStatus(s_);                                                     \
  } while (0)

// Expects `status` to fail with `code`, its message containing `part`; releases it.
void expect_fails(OrtStatus* s, OrtErrorCode code, const std::string& part) {
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(api()->GetErrorCode(s), code) << api()->GetErrorMessage(s);
  EXPECT_NE(std::string(api()->GetErrorMessage(s)).find(part), std::string::npos) << api()->GetErrorMessage(s);
  api()->ReleaseStatus(s);
}

TEST(OrtEpApiTables, GetApiAnswersVersions22To30AndNullOutside) {
  const OrtApiBase* base = ort_ep::ort_api_base();
  for (uint32_t v = 22; v <= 30; ++v) EXPECT_EQ(base->GetApi(v), api()) << v;
  EXPECT_EQ(base->GetApi(31), nullptr);
  EXPECT_EQ(base->GetApi(21), nullptr);
  EXPECT_STREQ(base->GetVersionString(), "1.30.0");
  EXPECT_EQ(ort_ep::requested_api_version(), 21u);  // the last one asked on this thread
  EXPECT_NE(api()->GetModelEditorApi(), nullptr);
  EXPECT_NE(std::string(api()->GetBuildInfoString()).find("ephost"), std::string::npos);
  EXPECT_EQ(api()->GetExperimentalFunction("NoSuchFunction"), nullptr);
  EXPECT_EQ(api()->GetExperimentalFunction(nullptr), nullptr);
}

// The EPContext configuration real plugins look up by name (ONNX Runtime 1.28's experimental functions):
// made from the session options CreateEp gets, carrying no data callbacks (ephost registers none).
TEST(OrtEpApiTables, ExperimentalEpContextConfigFunctionsAnswerByName) {
  auto get_config =
      reinterpret_cast<OrtGetEpContextConfigFn>(api()->GetExperimentalFunction(ORT_EXPERIMENTAL_GET_EP_CONTEXT_CONFIG));
  auto release = reinterpret_cast<OrtReleaseEpContextConfigFn>(
      api()->GetExperimentalFunction(ORT_EXPERIMENTAL_RELEASE_EP_CONTEXT_CONFIG));
  auto get_read = reinterpret_cast<OrtGetEpContextReadFuncFn>(
      api()->GetExperimentalFunction("OrtEpApi_EpContextConfig_GetEpContextDataReadFunc_SinceV28"));
  auto get_write = reinterpret_cast<OrtGetEpContextWriteFuncFn>(
      api()->GetExperimentalFunction("OrtEpApi_EpContextConfig_GetEpContextDataWriteFunc_SinceV28"));
  ASSERT_TRUE(get_config && release && get_read && get_write);
  EXPECT_EQ(api()->GetExperimentalFunction("OrtEpApi_SessionOptions_GetEpContextConfig"), nullptr);  // no version

  OrtSessionOptions options;
  OrtEpContextConfig* config = nullptr;
  EXPECT_OK(get_config(&options, &config));
  ASSERT_NE(config, nullptr);
  OrtReadNamedBufferFunc read = reinterpret_cast<OrtReadNamedBufferFunc>(1);
  OrtWriteNamedBufferFunc write = reinterpret_cast<OrtWriteNamedBufferFunc>(1);
  void* read_state = &options;
  void* write_state = &options;
  EXPECT_OK(get_read(config, &read, &read_state));
  EXPECT_OK(get_write(config, &write, &write_state));
  EXPECT_EQ(read, nullptr);
  EXPECT_EQ(read_state, nullptr);
  EXPECT_EQ(write, nullptr);
  EXPECT_EQ(write_state, nullptr);

  int not_options = 0;
  OrtEpContextConfig* other = nullptr;
  expect_fails(get_config(reinterpret_cast<const OrtSessionOptions*>(&not_options), &other), ORT_INVALID_ARGUMENT,
               "session_options");
  EXPECT_EQ(other, nullptr);
  expect_fails(get_read(reinterpret_cast<const OrtEpContextConfig*>(&options), &read, &read_state),
               ORT_INVALID_ARGUMENT, "GetEpContextDataReadFunc_SinceV28: config is not one");
  expect_fails(get_write(config, nullptr, &write_state), ORT_INVALID_ARGUMENT, "write_func or state is NULL");
  release(config);
  release(nullptr);  // may be NULL, as ONNX Runtime's
}

TEST(OrtEpApiTables, EverySlotIsFilledAndStubsNameTheirFunction) {
  const auto* slots = reinterpret_cast<void* const*>(api());
  for (size_t i = 0; i < sizeof(OrtApi) / sizeof(void*); ++i) EXPECT_NE(slots[i], nullptr) << "OrtApi slot " << i;
  const auto* ep_slots = reinterpret_cast<void* const*>(ep_api());
  for (size_t i = 0; i < sizeof(OrtEpApi) / sizeof(void*); ++i) EXPECT_NE(ep_slots[i], nullptr) << "OrtEpApi slot " << i;
  const auto* ed_slots = reinterpret_cast<void* const*>(api()->GetModelEditorApi());
  for (size_t i = 0; i < sizeof(OrtModelEditorApi) / sizeof(void*); ++i) EXPECT_NE(ed_slots[i], nullptr) << i;
  // A status stub (CreateSession), a value stub (GetTrainingApi: NULL) and a void stub (ClearBoundInputs).
  using CreateSessionFn = OrtStatus* (*)(const OrtEnv*, const char*, const OrtSessionOptions*, void**);
  void* session = nullptr;
  expect_fails(reinterpret_cast<CreateSessionFn>(api()->CreateSession)(nullptr, "x.onnx", nullptr, &session),
               ORT_NOT_IMPLEMENTED, "OrtApi::CreateSession is not implemented");
  using GetTrainingApiFn = const void* (*)(uint32_t);
  EXPECT_EQ(reinterpret_cast<GetTrainingApiFn>(api()->GetTrainingApi)(30), nullptr);
  using ClearFn = void (*)(void*);
  reinterpret_cast<ClearFn>(api()->ClearBoundInputs)(nullptr);
}

TEST(OrtEpApiObjects, Statuses) {
  OrtStatus* s = api()->CreateStatus(ORT_INVALID_GRAPH, "bad graph");
  EXPECT_EQ(api()->GetErrorCode(s), ORT_INVALID_GRAPH);
  EXPECT_STREQ(api()->GetErrorMessage(s), "bad graph");
  EXPECT_TRUE(ort_ep::is_live_status(s));
  api()->ReleaseStatus(s);
  EXPECT_FALSE(ort_ep::is_live_status(s));
  // A pointer that is no status is told apart, never read.
  int not_a_status = 0;
  const ort_ep::StatusReading r = ort_ep::take_status(reinterpret_cast<OrtStatus*>(&not_a_status));
  EXPECT_EQ(r.code, ORT_EP_FAIL);
  EXPECT_NE(r.message.find("not a status made by OrtApi::CreateStatus"), std::string::npos);
}

TEST(OrtEpApiObjects, KeyValuePairs) {
  OrtKeyValuePairs* kv = nullptr;
  api()->CreateKeyValuePairs(&kv);
  ASSERT_NE(kv, nullptr);
  api()->AddKeyValuePair(kv, "a", "1");
  api()->AddKeyValuePair(kv, "b", "2");
  api()->AddKeyValuePair(kv, "a", "3");  // replaces
  api()->AddKeyValuePair(kv, "", "ignored");
  EXPECT_STREQ(api()->GetKeyValue(kv, "a"), "3");
  EXPECT_EQ(api()->GetKeyValue(kv, "missing"), nullptr);
  const char* const* keys = nullptr;
  const char* const* values = nullptr;
  size_t n = 0;
  api()->GetKeyValuePairs(kv, &keys, &values, &n);
  ASSERT_EQ(n, 2u);
  EXPECT_STREQ(keys[1], "b");
  EXPECT_STREQ(values[1], "2");
  api()->RemoveKeyValuePair(kv, "a");
  api()->GetKeyValuePairs(kv, &keys, &values, &n);
  ASSERT_EQ(n, 1u);
  EXPECT_STREQ(keys[0], "b");
  api()->ReleaseKeyValuePairs(kv);
}

TEST(OrtEpApiObjects, LoggerAndSessionOptions) {
  const OrtLogger* logger = ort_ep::default_logger();
  EXPECT_OK(api()->Logger_LogMessage(logger, ORT_LOGGING_LEVEL_VERBOSE, "hello", __FILE__, __LINE__, "test"));
  OrtLoggingLevel level = ORT_LOGGING_LEVEL_FATAL;
  EXPECT_OK(api()->Logger_GetLoggingSeverityLevel(logger, &level));
  EXPECT_EQ(level, ORT_LOGGING_LEVEL_WARNING);
  expect_fails(api()->Logger_LogMessage(reinterpret_cast<const OrtLogger*>("junk"), ORT_LOGGING_LEVEL_INFO, "x",
                                        nullptr, 0, nullptr),
               ORT_INVALID_ARGUMENT, "logger");

  OrtSessionOptions options;
  options.config.set("ep.ortadd.mode", "fast");
  int has = 0;
  EXPECT_OK(api()->HasSessionConfigEntry(&options, "ep.ortadd.mode", &has));
  EXPECT_EQ(has, 1);
  EXPECT_OK(api()->HasSessionConfigEntry(&options, "ep.ortadd.other", &has));
  EXPECT_EQ(has, 0);
  size_t size = 0;
  EXPECT_OK(api()->GetSessionConfigEntry(&options, "ep.ortadd.mode", nullptr, &size));
  EXPECT_EQ(size, 5u);
  char small[2];
  size = sizeof small;
  expect_fails(api()->GetSessionConfigEntry(&options, "ep.ortadd.mode", small, &size), ORT_INVALID_ARGUMENT, "needed");
  char value[16];
  size = sizeof value;
  EXPECT_OK(api()->GetSessionConfigEntry(&options, "ep.ortadd.mode", value, &size));
  EXPECT_STREQ(value, "fast");
  OrtKeyValuePairs* all = nullptr;
  EXPECT_OK(api()->GetSessionOptionsConfigEntries(&options, &all));
  EXPECT_STREQ(api()->GetKeyValue(all, "ep.ortadd.mode"), "fast");
  api()->ReleaseKeyValuePairs(all);
  OrtKeyValuePairs* env = nullptr;
  EXPECT_OK(ep_api()->GetEnvConfigEntries(&env));
  size_t n = 9;
  const char* const* k = nullptr;
  const char* const* v = nullptr;
  api()->GetKeyValuePairs(env, &k, &v, &n);
  EXPECT_EQ(n, 0u);
  api()->ReleaseKeyValuePairs(env);
}

TEST(OrtEpApiObjects, HardwareAndEpDevices) {
  OrtHardwareDevice hw;
  hw.type = OrtHardwareDeviceType_GPU;
  hw.vendor_id = 0x10de;
  hw.device_id = 7;
  hw.vendor = "NVIDIA";
  hw.metadata.set("Description", "a GPU");
  EXPECT_EQ(api()->HardwareDevice_Type(&hw), OrtHardwareDeviceType_GPU);
  EXPECT_EQ(api()->HardwareDevice_VendorId(&hw), 0x10deu);
  EXPECT_EQ(api()->HardwareDevice_DeviceId(&hw), 7u);
  EXPECT_STREQ(api()->HardwareDevice_Vendor(&hw), "NVIDIA");
  EXPECT_STREQ(api()->GetKeyValue(api()->HardwareDevice_Metadata(&hw), "Description"), "a GPU");

  OrtEpFactory factory{};
  factory.ort_version_supported = 30;
  factory.GetName = [](const OrtEpFactory*) { return "myep"; };
  factory.GetVendor = [](const OrtEpFactory*) { return "me"; };
  OrtKeyValuePairs metadata, options;
  metadata.set("version", "2");
  options.set("opt", "on");
  OrtEpDevice* d = nullptr;
  EXPECT_OK(ep_api()->CreateEpDevice(&factory, &hw, &metadata, &options, &d));
  ASSERT_NE(d, nullptr);
  EXPECT_STREQ(api()->EpDevice_EpName(d), "myep");
  EXPECT_STREQ(api()->EpDevice_EpVendor(d), "me");
  EXPECT_STREQ(api()->GetKeyValue(api()->EpDevice_EpMetadata(d), "version"), "2");
  EXPECT_STREQ(api()->GetKeyValue(api()->EpDevice_EpOptions(d), "opt"), "on");
  EXPECT_EQ(api()->EpDevice_Device(d), &hw);
  OrtMemoryInfo* gpu_memory = nullptr;
  EXPECT_OK(api()->CreateMemoryInfo_V2("Gpu", OrtMemoryInfoDeviceType_GPU, 0x10de, 0, OrtDeviceMemoryType_DEFAULT, 256,
                                       OrtDeviceAllocator, &gpu_memory));
  EXPECT_OK(ep_api()->EpDevice_AddAllocatorInfo(d, gpu_memory));
  ASSERT_EQ(d->allocator_infos.size(), 1u);
  EXPECT_EQ(d->allocator_infos[0].device.vendor_id, 0x10deu);
  api()->ReleaseMemoryInfo(gpu_memory);
  ep_api()->ReleaseEpDevice(d);
  expect_fails(ep_api()->CreateEpDevice(&factory, reinterpret_cast<const OrtHardwareDevice*>("junk"), nullptr, nullptr,
                                        &d),
               ORT_INVALID_ARGUMENT, "hardware device");
}

TEST(OrtEpApiObjects, MemoryInfosAndMemoryDevices) {
  OrtMemoryInfo* cpu = nullptr;
  EXPECT_OK(api()->CreateCpuMemoryInfo(OrtArenaAllocator, OrtMemTypeDefault, &cpu));
  const char* name = nullptr;
  EXPECT_OK(api()->MemoryInfoGetName(cpu, &name));
  EXPECT_STREQ(name, "Cpu");
  int id = -1;
  EXPECT_OK(api()->MemoryInfoGetId(cpu, &id));
  EXPECT_EQ(id, 0);
  OrtMemType mem_type = OrtMemTypeCPUInput;
  EXPECT_OK(api()->MemoryInfoGetMemType(cpu, &mem_type));
  EXPECT_EQ(mem_type, OrtMemTypeDefault);
  OrtAllocatorType type = OrtInvalidAllocator;
  EXPECT_OK(api()->MemoryInfoGetType(cpu, &type));
  EXPECT_EQ(type, OrtArenaAllocator);
  OrtMemoryInfoDeviceType device_type = OrtMemoryInfoDeviceType_NPU;
  api()->MemoryInfoGetDeviceType(cpu, &device_type);
  EXPECT_EQ(device_type, OrtMemoryInfoDeviceType_CPU);
  EXPECT_EQ(api()->MemoryInfoGetDeviceMemType(cpu), OrtDeviceMemoryType_DEFAULT);
  EXPECT_EQ(api()->MemoryInfoGetVendorId(cpu), 0u);

  OrtMemoryInfo* named = nullptr;
  EXPECT_OK(api()->CreateMemoryInfo("Cpu", OrtArenaAllocator, 0, OrtMemTypeDefault, &named));
  int cmp = 1;
  EXPECT_OK(api()->CompareMemoryInfo(cpu, named, &cmp));
  EXPECT_EQ(cmp, 0);
  OrtMemoryInfo* npu = nullptr;
  EXPECT_OK(api()->CreateMemoryInfo_V2("Npu", OrtMemoryInfoDeviceType_NPU, 0x1234, 1, OrtDeviceMemoryType_HOST_ACCESSIBLE,
                                       0, OrtDeviceAllocator, &npu));
  EXPECT_OK(api()->CompareMemoryInfo(cpu, npu, &cmp));
  EXPECT_NE(cmp, 0);
  EXPECT_EQ(api()->MemoryInfoGetVendorId(npu), 0x1234u);
  EXPECT_EQ(api()->MemoryInfoGetDeviceMemType(npu), OrtDeviceMemoryType_HOST_ACCESSIBLE);

  const OrtMemoryDevice* a = ep_api()->MemoryInfo_GetMemoryDevice(cpu);
  const OrtMemoryDevice* b = ep_api()->MemoryInfo_GetMemoryDevice(named);
  const OrtMemoryDevice* c = ep_api()->MemoryInfo_GetMemoryDevice(npu);
  EXPECT_TRUE(ep_api()->MemoryDevice_AreEqual(a, b));
  EXPECT_FALSE(ep_api()->MemoryDevice_AreEqual(a, c));
  EXPECT_EQ(ep_api()->MemoryDevice_GetDeviceType(c), OrtMemoryInfoDeviceType_NPU);
  EXPECT_EQ(ep_api()->MemoryDevice_GetMemoryType(c), OrtDeviceMemoryType_HOST_ACCESSIBLE);
  EXPECT_EQ(ep_api()->MemoryDevice_GetVendorId(c), 0x1234u);
  EXPECT_EQ(ep_api()->MemoryDevice_GetDeviceId(c), 1u);
  api()->ReleaseMemoryInfo(cpu);
  api()->ReleaseMemoryInfo(named);
  api()->ReleaseMemoryInfo(npu);
}

TEST(OrtEpApiObjects, Allocator) {
  OrtAllocator* allocator = nullptr;
  EXPECT_OK(api()->GetAllocatorWithDefaultOptions(&allocator));
  ASSERT_NE(allocator, nullptr);
  void* p = nullptr;
  EXPECT_OK(api()->AllocatorAlloc(allocator, 100, &p));
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u);
  std::memset(p, 1, 100);
  EXPECT_OK(api()->AllocatorFree(allocator, p));
  const OrtMemoryInfo* info = nullptr;
  EXPECT_OK(api()->AllocatorGetInfo(allocator, &info));
  const char* name = nullptr;
  EXPECT_OK(api()->MemoryInfoGetName(info, &name));
  EXPECT_STREQ(name, "Cpu");
}

// A kernel context over two host tensors, as the executor gives one.
class FakeContext final : public EphostKernelContext {
 public:
  std::vector<RuntimeValue> ins;
  std::vector<Tensor> outs;
  size_t num_inputs() const override { return ins.size(); }
  const RuntimeValue* input(size_t i) const override { return &ins.at(i); }
  size_t num_outputs() const override { return outs.size(); }
  Tensor& allocate_output(size_t i, int32_t elem_type, std::vector<int64_t> shape) override {
    return outs.at(i) = Tensor::allocate(elem_type, std::move(shape));
  }
  Tensor* allocated_output(size_t i) override { return outs.at(i).empty() ? nullptr : &outs[i]; }
  void set_output(size_t, RuntimeValue) override {}
  void begin_sequence_output(size_t, int32_t, size_t) override {}
  TensorSequence& sequence_output(size_t) override { throw std::runtime_error("no sequences"); }
  int threads = 1;
  int32_t num_threads() const override { return threads; }
  std::vector<RuntimeValue> run_subgraph(const std::string&, std::vector<RuntimeValue>) override { return {}; }
  const Device* memory_device() const override { return nullptr; }
  EphostStream* stream() override { return nullptr; }
  const RunLimits* run_limits() const override { return nullptr; }
};

TEST(OrtEpApiValues, KernelContextTensorsAndTypeInfos) {
  FakeContext fake;
  Tensor x = Tensor::allocate(EPHOST_ELEMENT_FLOAT, {2, 3});
  for (int i = 0; i < 6; ++i) x.data_as<float>()[i] = static_cast<float>(i);
  fake.ins.emplace_back(x);
  fake.outs.resize(1);
  const std::vector<int32_t> out_types = {EPHOST_ELEMENT_FLOAT};
  OrtKernelContext context(&fake, &out_types);

  size_t n = 0;
  EXPECT_OK(api()->KernelContext_GetInputCount(&context, &n));
  EXPECT_EQ(n, 1u);
  EXPECT_OK(api()->KernelContext_GetOutputCount(&context, &n));
  EXPECT_EQ(n, 1u);
  const OrtValue* in = nullptr;
  EXPECT_OK(api()->KernelContext_GetInput(&context, 0, &in));
  expect_fails(api()->KernelContext_GetInput(&context, 1, &in), ORT_INVALID_ARGUMENT, "input 1 of 1");
  int is_tensor = 0;
  EXPECT_OK(api()->IsTensor(in, &is_tensor));
  EXPECT_EQ(is_tensor, 1);
  enum ONNXType onnx_type = ONNX_TYPE_UNKNOWN;
  EXPECT_OK(api()->GetValueType(in, &onnx_type));
  EXPECT_EQ(onnx_type, ONNX_TYPE_TENSOR);
  size_t bytes = 0;
  EXPECT_OK(api()->GetTensorSizeInBytes(in, &bytes));
  EXPECT_EQ(bytes, 24u);
  const void* data = nullptr;
  EXPECT_OK(api()->GetTensorData(in, &data));
  EXPECT_EQ(static_cast<const float*>(data)[5], 5.0f);
  EXPECT_EQ(ep_api()->MemoryDevice_GetDeviceType(ep_api()->Value_GetMemoryDevice(in)), OrtMemoryInfoDeviceType_CPU);

  OrtTensorTypeAndShapeInfo* shape = nullptr;
  EXPECT_OK(api()->GetTensorTypeAndShape(in, &shape));
  enum ONNXTensorElementDataType elem = ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
  EXPECT_OK(api()->GetTensorElementType(shape, &elem));
  EXPECT_EQ(elem, ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT);
  EXPECT_OK(api()->GetDimensionsCount(shape, &n));
  EXPECT_EQ(n, 2u);
  int64_t dims[2] = {0, 0};
  EXPECT_OK(api()->GetDimensions(shape, dims, 2));
  EXPECT_EQ(dims[1], 3);
  EXPECT_OK(api()->GetTensorShapeElementCount(shape, &n));
  EXPECT_EQ(n, 6u);
  EXPECT_TRUE(api()->TensorTypeAndShape_HasShape(shape));
  api()->ReleaseTensorTypeAndShapeInfo(shape);

  OrtValue* out = nullptr;
  const int64_t out_dims[] = {3, 2};
  EXPECT_OK(api()->KernelContext_GetOutput(&context, 0, out_dims, 2, &out));
  void* out_data = nullptr;
  EXPECT_OK(api()->GetTensorMutableData(out, &out_data));
  static_cast<float*>(out_data)[0] = 42.0f;
  EXPECT_EQ(fake.outs[0].shape(), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(fake.outs[0].data_as<float>()[0], 42.0f);
  OrtValue* again = nullptr;
  EXPECT_OK(api()->KernelContext_GetOutput(&context, 0, out_dims, 2, &again));
  EXPECT_EQ(again, out);
  const int64_t other_dims[] = {6};
  expect_fails(api()->KernelContext_GetOutput(&context, 0, other_dims, 1, &again), ORT_INVALID_ARGUMENT,
               "another shape");
  api()->ReleaseValue(out);  // borrowed: stays the context's

  // A type info of a graph value type.
  TypeInfo t;
  t.kind = EPHOST_VALUE_TENSOR;
  t.elem_type = EPHOST_ELEMENT_INT64;
  t.has_shape = true;
  t.dims = {-1, 4};
  OrtTypeInfo info = ort_ep::type_info_of(t);
  EXPECT_OK(api()->GetOnnxTypeFromTypeInfo(&info, &onnx_type));
  EXPECT_EQ(onnx_type, ONNX_TYPE_TENSOR);
  const OrtTensorTypeAndShapeInfo* tensor = nullptr;
  EXPECT_OK(api()->CastTypeInfoToTensorInfo(&info, &tensor));
  ASSERT_NE(tensor, nullptr);
  EXPECT_OK(api()->GetTensorShapeElementCount(tensor, &n));
  EXPECT_EQ(n, static_cast<size_t>(-1));  // an unknown dim
  api()->ReleaseTypeInfo(&info);  // the host's own: not freed
  EXPECT_EQ(info.magic, ort_ep::Magic::kTypeInfo);
}

// Where a value lives and the run's stream, on host memory: the CPU memory info, no stream. (On an EP's
// own device: tests/integration/ort_plugin_ep_device_test.cpp, whose plugin checks them in Compute.)
TEST(OrtEpApiValues, MemoryInfoAndStreamsOfHostValues) {
  FakeContext fake;
  fake.ins.emplace_back(Tensor::allocate(EPHOST_ELEMENT_FLOAT, {2}));
  const std::vector<int32_t> out_types;
  OrtKernelContext context(&fake, &out_types);
  const OrtValue* in = nullptr;
  EXPECT_OK(api()->KernelContext_GetInput(&context, 0, &in));
  const OrtMemoryInfo* info = nullptr;
  EXPECT_OK(api()->GetTensorMemoryInfo(in, &info));
  const char* name = nullptr;
  EXPECT_OK(api()->MemoryInfoGetName(info, &name));
  EXPECT_STREQ(name, "Cpu");
  EXPECT_TRUE(ep_api()->MemoryDevice_AreEqual(ep_api()->MemoryInfo_GetMemoryDevice(info),
                                              ep_api()->Value_GetMemoryDevice(in)));
  expect_fails(api()->GetTensorMemoryInfo(nullptr, &info), ORT_INVALID_ARGUMENT, "GetTensorMemoryInfo");
  OrtSyncStream* stream = reinterpret_cast<OrtSyncStream*>(1);
  EXPECT_OK(api()->KernelContext_GetSyncStream(&context, &stream));
  EXPECT_EQ(stream, nullptr);
  void* handle = reinterpret_cast<void*>(1);
  EXPECT_OK(api()->KernelContext_GetGPUComputeStream(&context, &handle));
  EXPECT_EQ(handle, nullptr);
  expect_fails(api()->KernelContext_GetSyncStream(nullptr, &stream), ORT_INVALID_ARGUMENT, "KernelContext_GetSyncStream");

  // A stream the host made for an EP (ort_device.h): its implementation and native handle.
  static int native = 0;
  OrtSyncStreamImpl impl{};
  impl.ort_version_supported = 30;
  impl.GetHandle = [](OrtSyncStreamImpl*) -> void* { return &native; };
  OrtSyncStream wrapped;
  wrapped.impl = &impl;
  EXPECT_EQ(ep_api()->SyncStream_GetImpl(&wrapped), &impl);
  EXPECT_EQ(api()->SyncStream_GetHandle(&wrapped), &native);
  EXPECT_EQ(api()->SyncStream_GetHandle(nullptr), nullptr);
  EXPECT_EQ(ep_api()->SyncStream_GetImpl(reinterpret_cast<const OrtSyncStream*>(&impl)), nullptr);  // not a stream
}

// X, C (initializer) -> Add -> A; If(cond) then Relu(A) else Neg(A) -> Y; Transpose(A, perm) -> T with
// attributes of every kind a plugin reads.
onnx::ModelProto graph_model() {
  auto m = make_model(13);
  auto* g = m.mutable_graph();
  g->set_name("main");
  add_input(g, "X");
  add_input(g, "cond", kBool, {});
  add_initializer(g, float_tensor("C", {3}, {1, 2, 3}));
  add_node(g, "Add", {"X", "C"}, {"A"}, "add");
  onnx::GraphProto then_branch, else_branch;
  then_branch.set_name("then");
  add_node(&then_branch, "Relu", {"A"}, {"t"}, "relu");
  add_output(&then_branch, "t");
  else_branch.set_name("else");
  add_node(&else_branch, "Neg", {"A"}, {"e"}, "neg");
  add_output(&else_branch, "e");
  auto* if_node = add_node(g, "If", {"cond"}, {"Y"}, "if");
  attr_graph(if_node, "then_branch", then_branch);
  attr_graph(if_node, "else_branch", else_branch);
  auto* t = add_node(g, "Transpose", {"A"}, {"T"}, "transpose");
  attr_ints(t, "perm", {1, 0});
  auto* lr = add_node(g, "LeakyRelu", {"T"}, {"L"}, "leaky");
  attr_float(lr, "alpha", 0.25f);
  auto* cast = add_node(g, "Cast", {"L"}, {"K"}, "cast");
  attr_int(cast, "to", kFloat);
  auto* s = cast->add_attribute();
  s->set_name("note");
  s->set_type(onnx::AttributeProto::STRING);
  s->set_s("hello");
  auto* ss = cast->add_attribute();
  ss->set_name("notes");
  ss->set_type(onnx::AttributeProto::STRINGS);
  ss->add_strings("a");
  ss->add_strings("bc");
  add_output(g, "Y");
  add_output(g, "K", kFloat, {3, 2});
  return m;
}

struct BuiltGraph {
  std::unique_ptr<Model> model;
  std::unique_ptr<Graph> main;
  const Node* node(const std::string& name) const {
    for (const auto& n : main->nodes)
      if (n->name == name) return n.get();
    return nullptr;
  }
};

BuiltGraph build_graph() {
  BuiltGraph b;
  b.model = std::make_unique<Model>();
  *b.model->proto = graph_model();
  b.model->path = "/models/graph.onnx";
  b.model->read_header();
  b.main = build_graph_ir(*b.model);
  return b;
}

TEST(OrtEpApiGraph, GraphsNodesAndValueInfos) {
  BuiltGraph b = build_graph();
  ort_ep::CallArena arena;
  const OrtGraph* g = ort_ep::to_ort(b.main->view.get());
  const char* text = nullptr;
  EXPECT_OK(api()->Graph_GetName(g, &text));
  EXPECT_STREQ(text, "main");
  EXPECT_OK(api()->Graph_GetModelPath(g, &text));
  EXPECT_STREQ(text, "/models/graph.onnx");
  int64_t ir = 0;
  EXPECT_OK(api()->Graph_GetOnnxIRVersion(g, &ir));
  EXPECT_EQ(ir, 8);
  size_t n = 0;
  EXPECT_OK(api()->Graph_GetNumOperatorSets(g, &n));
  ASSERT_EQ(n, 1u);
  const char* domains[1];
  int64_t versions[1];
  EXPECT_OK(api()->Graph_GetOperatorSets(g, domains, versions, 1));
  EXPECT_STREQ(domains[0], "");
  EXPECT_EQ(versions[0], 13);
  EXPECT_OK(api()->Graph_GetNumInputs(g, &n));
  ASSERT_EQ(n, 2u);
  const OrtValueInfo* inputs[2];
  EXPECT_OK(api()->Graph_GetInputs(g, inputs, 2));
  EXPECT_OK(api()->GetValueInfoName(inputs[0], &text));
  EXPECT_STREQ(text, "X");
  expect_fails(api()->Graph_GetInputs(g, inputs, 1), ORT_INVALID_ARGUMENT, "2 are needed");
  EXPECT_OK(api()->Graph_GetNumOutputs(g, &n));
  ASSERT_EQ(n, 2u);
  const OrtValueInfo* outputs[2];
  EXPECT_OK(api()->Graph_GetOutputs(g, outputs, 2));
  bool flag = false;
  EXPECT_OK(api()->ValueInfo_IsGraphOutput(outputs[1], &flag));
  EXPECT_TRUE(flag);
  EXPECT_OK(api()->Graph_GetNumInitializers(g, &n));
  ASSERT_EQ(n, 1u);
  const OrtValueInfo* init[1];
  EXPECT_OK(api()->Graph_GetInitializers(g, init, 1));
  EXPECT_OK(api()->ValueInfo_IsConstantInitializer(init[0], &flag));
  EXPECT_TRUE(flag);
  EXPECT_OK(api()->ValueInfo_IsRequiredGraphInput(inputs[0], &flag));
  EXPECT_TRUE(flag);
  EXPECT_OK(api()->ValueInfo_IsOptionalGraphInput(inputs[0], &flag));
  EXPECT_FALSE(flag);
  const OrtValue* c_value = nullptr;
  EXPECT_OK(api()->ValueInfo_GetInitializerValue(init[0], &c_value));
  const void* c_data = nullptr;
  EXPECT_OK(api()->GetTensorData(c_value, &c_data));
  EXPECT_EQ(static_cast<const float*>(c_data)[2], 3.0f);
  const OrtValue* none = nullptr;
  expect_fails(api()->ValueInfo_GetInitializerValue(inputs[0], &none), ORT_INVALID_ARGUMENT, "not an initializer");
  const OrtTypeInfo* type = nullptr;
  EXPECT_OK(api()->GetValueInfoTypeInfo(inputs[0], &type));
  const OrtTensorTypeAndShapeInfo* tensor = nullptr;
  EXPECT_OK(api()->CastTypeInfoToTensorInfo(type, &tensor));
  enum ONNXTensorElementDataType elem;
  EXPECT_OK(api()->GetTensorElementType(tensor, &elem));
  EXPECT_EQ(elem, ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT);

  EXPECT_OK(api()->Graph_GetNumNodes(g, &n));
  ASSERT_EQ(n, 5u);
  std::vector<const OrtNode*> nodes(n);
  EXPECT_OK(api()->Graph_GetNodes(g, nodes.data(), n));
  const OrtNode* add = ort_ep::to_ort(b.node("add"));
  EXPECT_EQ(nodes[0], add);  // topological order
  size_t id = 99;
  EXPECT_OK(api()->Node_GetId(add, &id));
  EXPECT_EQ(id, b.node("add")->index);
  EXPECT_OK(api()->Node_GetName(add, &text));
  EXPECT_STREQ(text, "add");
  EXPECT_OK(api()->Node_GetOperatorType(add, &text));
  EXPECT_STREQ(text, "Add");
  EXPECT_OK(api()->Node_GetDomain(add, &text));
  EXPECT_STREQ(text, "");
  EXPECT_OK(api()->Node_GetNumInputs(add, &n));
  ASSERT_EQ(n, 2u);
  const OrtValueInfo* add_in[2];
  EXPECT_OK(api()->Node_GetInputs(add, add_in, 2));
  EXPECT_EQ(add_in[1], init[0]);
  EXPECT_OK(api()->Node_GetNumOutputs(add, &n));
  ASSERT_EQ(n, 1u);
  const OrtValueInfo* a_value = nullptr;
  EXPECT_OK(api()->Node_GetOutputs(add, &a_value, 1));
  const OrtNode* producer = nullptr;
  size_t producer_output = 9;
  EXPECT_OK(api()->ValueInfo_GetValueProducer(a_value, &producer, &producer_output));
  EXPECT_EQ(producer, add);
  EXPECT_EQ(producer_output, 0u);
  EXPECT_OK(api()->ValueInfo_GetValueNumConsumers(a_value, &n));
  EXPECT_EQ(n, 1u);  // Transpose reads it; If reads it implicitly, not as an input
  const OrtNode* consumer = nullptr;
  int64_t consumer_input = -1;
  EXPECT_OK(api()->ValueInfo_GetValueConsumers(a_value, &consumer, &consumer_input, 1));
  EXPECT_EQ(consumer, ort_ep::to_ort(b.node("transpose")));
  EXPECT_EQ(consumer_input, 0);
  const OrtGraph* owner = nullptr;
  EXPECT_OK(api()->Node_GetGraph(add, &owner));
  EXPECT_EQ(owner, g);
  EXPECT_OK(api()->Node_GetEpName(add, &text));
  EXPECT_EQ(text, nullptr);

  // The If: implicit inputs and subgraphs, whose parent is the If and whose A comes from the outer scope.
  const OrtNode* if_node = ort_ep::to_ort(b.node("if"));
  EXPECT_OK(api()->Node_GetNumImplicitInputs(if_node, &n));
  ASSERT_EQ(n, 1u);
  const OrtValueInfo* implicit = nullptr;
  EXPECT_OK(api()->Node_GetImplicitInputs(if_node, &implicit, 1));
  EXPECT_EQ(implicit, a_value);
  EXPECT_OK(api()->Node_GetNumSubgraphs(if_node, &n));
  ASSERT_EQ(n, 2u);
  const OrtGraph* subgraphs[2];
  const char* attr_names[2];
  EXPECT_OK(api()->Node_GetSubgraphs(if_node, subgraphs, 2, attr_names));
  EXPECT_STREQ(attr_names[0], "then_branch");
  const OrtNode* parent = nullptr;
  EXPECT_OK(api()->Graph_GetParentNode(subgraphs[0], &parent));
  EXPECT_EQ(parent, if_node);
  EXPECT_OK(api()->Graph_GetParentNode(g, &parent));
  EXPECT_EQ(parent, nullptr);
  const OrtNode* relu = nullptr;
  EXPECT_OK(api()->Graph_GetNodes(subgraphs[0], &relu, 1));
  const OrtValueInfo* outer = nullptr;
  EXPECT_OK(api()->Node_GetInputs(relu, &outer, 1));
  EXPECT_OK(api()->ValueInfo_IsFromOuterScope(outer, &flag));
  EXPECT_TRUE(flag);
  EXPECT_OK(api()->ValueInfo_IsFromOuterScope(a_value, &flag));
  EXPECT_FALSE(flag);

  // Node handles of another kind are refused, not read.
  expect_fails(api()->Node_GetName(reinterpret_cast<const OrtNode*>(&b), &text), ORT_INVALID_ARGUMENT, "bad node");
}

TEST(OrtEpApiGraph, Attributes) {
  BuiltGraph b = build_graph();
  const OrtNode* cast = ort_ep::to_ort(b.node("cast"));
  size_t n = 0;
  EXPECT_OK(api()->Node_GetNumAttributes(cast, &n));
  ASSERT_EQ(n, 3u);
  std::vector<const OrtOpAttr*> attrs(n);
  EXPECT_OK(api()->Node_GetAttributes(cast, attrs.data(), n));
  const char* name = nullptr;
  EXPECT_OK(api()->OpAttr_GetName(attrs[0], &name));
  EXPECT_STREQ(name, "to");
  OrtOpAttrType type = ORT_OP_ATTR_UNDEFINED;
  EXPECT_OK(api()->OpAttr_GetType(attrs[0], &type));
  EXPECT_EQ(type, ORT_OP_ATTR_INT);
  int64_t to = 0;
  size_t size = 0;
  EXPECT_OK(api()->ReadOpAttr(attrs[0], ORT_OP_ATTR_INT, &to, sizeof to, &size));
  EXPECT_EQ(to, kFloat);
  expect_fails(api()->ReadOpAttr(attrs[0], ORT_OP_ATTR_FLOAT, &to, sizeof to, &size), ORT_INVALID_ARGUMENT,
               "not of the type");
  const OrtOpAttr* note = nullptr;
  EXPECT_OK(api()->Node_GetAttributeByName(cast, "note", &note));
  EXPECT_OK(api()->ReadOpAttr(note, ORT_OP_ATTR_STRING, nullptr, 0, &size));
  EXPECT_EQ(size, 5u);
  char text[8] = {};
  EXPECT_OK(api()->ReadOpAttr(note, ORT_OP_ATTR_STRING, text, sizeof text, &size));
  EXPECT_STREQ(text, "hello");
  const OrtOpAttr* notes = nullptr;
  EXPECT_OK(api()->Node_GetAttributeByName(cast, "notes", &notes));
  char joined[8] = {};
  EXPECT_OK(api()->ReadOpAttr(notes, ORT_OP_ATTR_STRINGS, joined, sizeof joined, &size));
  EXPECT_EQ(size, 5u);
  EXPECT_STREQ(joined + 2, "bc");
  const OrtOpAttr* missing = nullptr;
  expect_fails(api()->Node_GetAttributeByName(cast, "nope", &missing), ORT_NOT_FOUND, "no attribute 'nope'");
  EXPECT_EQ(missing, nullptr);

  const OrtOpAttr* perm = nullptr;
  EXPECT_OK(api()->Node_GetAttributeByName(ort_ep::to_ort(b.node("transpose")), "perm", &perm));
  int64_t values[2] = {};
  EXPECT_OK(api()->ReadOpAttr(perm, ORT_OP_ATTR_INTS, values, sizeof values, &size));
  EXPECT_EQ(values[0], 1);
  expect_fails(api()->ReadOpAttr(perm, ORT_OP_ATTR_INTS, values, 8, &size), ORT_INVALID_ARGUMENT, "needs 16");
  const OrtOpAttr* alpha = nullptr;
  EXPECT_OK(api()->Node_GetAttributeByName(ort_ep::to_ort(b.node("leaky")), "alpha", &alpha));
  float a = 0;
  EXPECT_OK(api()->ReadOpAttr(alpha, ORT_OP_ATTR_FLOAT, &a, sizeof a, &size));
  EXPECT_EQ(a, 0.25f);
}

TEST(OrtEpApiGraph, ClaimsAreCheckedAgainstTheGraph) {
  BuiltGraph b = build_graph();
  OrtEpGraphSupportInfo info;
  info.graph = b.main->view.get();
  const OrtNode* fused[] = {ort_ep::to_ort(b.node("add")), ort_ep::to_ort(b.node("transpose"))};
  EXPECT_OK(ep_api()->EpGraphSupportInfo_AddNodesToFuse(&info, fused, 2, nullptr));
  EXPECT_OK(ep_api()->EpGraphSupportInfo_AddSingleNode(&info, ort_ep::to_ort(b.node("leaky"))));
  ASSERT_EQ(info.claims.size(), 2u);
  EXPECT_TRUE(info.claims[0].fused);
  EXPECT_EQ(info.claims[0].nodes.size(), 2u);
  EXPECT_FALSE(info.claims[1].fused);
  // A node of a subgraph is no node of the main graph.
  const Node* relu = b.node("if")->subgraphs[0].second->nodes[0].get();
  expect_fails(ep_api()->EpGraphSupportInfo_AddSingleNode(&info, ort_ep::to_ort(relu)), ORT_INVALID_ARGUMENT,
               "is not a node of graph 'main'");
  expect_fails(ep_api()->EpGraphSupportInfo_AddNodesToFuse(&info, fused, 0, nullptr), ORT_INVALID_ARGUMENT,
               "no nodes");
  EXPECT_EQ(info.claims.size(), 2u);

  OrtNodeComputeContext context;
  context.node_name = "fused_0";
  EXPECT_STREQ(ep_api()->NodeComputeContext_NodeName(&context), "fused_0");
}

TEST(OrtEpApiEditor, EpContextNodeFromCreateNode) {
  OrtOpAttr* attrs[4] = {};
  const int64_t embed = 1;
  const std::string blob = "binary";
  EXPECT_OK(api()->CreateOpAttr("embed_mode", &embed, 1, ORT_OP_ATTR_INT, &attrs[0]));
  EXPECT_OK(api()->CreateOpAttr("ep_cache_context", blob.data(), static_cast<int>(blob.size()), ORT_OP_ATTR_STRING,
                                &attrs[1]));
  const float scale = 0.5f;
  EXPECT_OK(api()->CreateOpAttr("scale", &scale, 1, ORT_OP_ATTR_FLOAT, &attrs[2]));
  const int64_t ints[] = {1, 2};
  EXPECT_OK(api()->CreateOpAttr("ints", ints, 2, ORT_OP_ATTR_INTS, &attrs[3]));
  const char* name = nullptr;
  EXPECT_OK(api()->OpAttr_GetName(attrs[1], &name));
  EXPECT_STREQ(name, "ep_cache_context");
  OrtOpAttrType type = ORT_OP_ATTR_UNDEFINED;
  EXPECT_OK(api()->OpAttr_GetType(attrs[2], &type));
  EXPECT_EQ(type, ORT_OP_ATTR_FLOAT);
  OrtOpAttr* graph_attr = nullptr;
  expect_fails(api()->CreateOpAttr("g", nullptr, 0, ORT_OP_ATTR_GRAPH, &graph_attr), ORT_NOT_IMPLEMENTED,
               "not supported");

  const char* inputs[] = {"X"};
  const char* outputs[] = {"Y"};
  OrtNode* node = nullptr;
  EXPECT_OK(api()->GetModelEditorApi()->CreateNode("EPContext", "com.microsoft", "ctx_0", inputs, 1, outputs, 1, attrs,
                                                   4, &node));
  const OrtEditorNode* made = ort_ep::editor_node_of(node);
  ASSERT_NE(made, nullptr);
  EXPECT_EQ(made->op_type, "EPContext");
  EXPECT_EQ(made->domain, "com.microsoft");
  ASSERT_EQ(made->attributes.size(), 4u);
  EXPECT_EQ(made->attributes[0].i, 1);
  EXPECT_EQ(made->attributes[1].s, "binary");
  EXPECT_EQ(made->attributes[3].ints, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(attrs[0], nullptr);  // taken over by the node
  api()->ReleaseNode(node);
  OrtOpAttr* loose = nullptr;
  EXPECT_OK(api()->CreateOpAttr("x", &embed, 1, ORT_OP_ATTR_INT, &loose));
  api()->ReleaseOpAttr(loose);
}

// ---- kernel-registry EPs (API 24) ----

// A kernel definition built through the table, then read back.
OrtKernelDef* build_def(const char* op, int start, int end, std::vector<ONNXTensorElementDataType> types) {
  OrtKernelDefBuilder* b = nullptr;
  EXPECT_OK(ep_api()->CreateKernelDefBuilder(&b));
  std::vector<const OrtDataType*> data_types;
  for (auto t : types) {
    const OrtDataType* d = nullptr;
    EXPECT_OK(ep_api()->GetTensorDataType(t, &d));
    data_types.push_back(d);
  }
  EXPECT_OK(ep_api()->KernelDefBuilder_SetOperatorType(b, op));
  EXPECT_OK(ep_api()->KernelDefBuilder_SetDomain(b, ""));
  EXPECT_OK(ep_api()->KernelDefBuilder_SetSinceVersion(b, start, end));
  EXPECT_OK(ep_api()->KernelDefBuilder_SetExecutionProvider(b, "ortkern"));
  EXPECT_OK(ep_api()->KernelDefBuilder_AddTypeConstraint(b, "T", data_types.data(), data_types.size()));
  OrtKernelDef* def = nullptr;
  EXPECT_OK(ep_api()->KernelDefBuilder_Build(b, &def));
  ep_api()->ReleaseKernelDefBuilder(b);
  return def;
}

OrtStatus* no_kernel(void*, const OrtKernelInfo*, OrtKernelImpl**) { return nullptr; }

TEST(OrtEpApiKernels, DefinitionsAreBuiltAndReadBack) {
  OrtKernelDefBuilder* b = nullptr;
  EXPECT_OK(ep_api()->CreateKernelDefBuilder(&b));
  OrtKernelDef* def = nullptr;
  expect_fails(ep_api()->KernelDefBuilder_Build(b, &def), ORT_INVALID_ARGUMENT, "no operator type set");
  EXPECT_OK(ep_api()->KernelDefBuilder_SetOperatorType(b, "If"));
  EXPECT_OK(ep_api()->KernelDefBuilder_SetDomain(b, "ai.onnx"));
  expect_fails(ep_api()->KernelDefBuilder_SetSinceVersion(b, 5, 3), ORT_INVALID_ARGUMENT, "versions 5 to 3");
  EXPECT_OK(ep_api()->KernelDefBuilder_SetSinceVersion(b, 19, 20));
  EXPECT_OK(ep_api()->KernelDefBuilder_SetExecutionProvider(b, "ortkern"));
  EXPECT_OK(ep_api()->KernelDefBuilder_SetInputMemType(b, 0, OrtMemTypeCPUInput));
  EXPECT_OK(ep_api()->KernelDefBuilder_SetOutputMemType(b, 0, OrtMemTypeDefault));
  expect_fails(ep_api()->KernelDefBuilder_SetOutputMemType(b, 1, static_cast<OrtMemType>(7)), ORT_INVALID_ARGUMENT,
               "7 is no OrtMemType");
  const int in[] = {1}, out[] = {0};
  EXPECT_OK(ep_api()->KernelDefBuilder_AddInputOutputAliases(b, in, out, 1));
  EXPECT_OK(ep_api()->KernelDefBuilder_AddInputOutputMutableAliases(b, in, out, 1));
  const OrtDataType* bogus[] = {reinterpret_cast<const OrtDataType*>(&def)};
  expect_fails(ep_api()->KernelDefBuilder_AddTypeConstraint(b, "B", bogus, 1), ORT_INVALID_ARGUMENT,
               "is no OrtDataType");
  const OrtDataType* boolean = nullptr;
  EXPECT_OK(ep_api()->GetTensorDataType(ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL, &boolean));
  EXPECT_OK(ep_api()->KernelDefBuilder_AddTypeConstraint(b, "B", &boolean, 1));
  expect_fails(ep_api()->GetTensorDataType(ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED, &boolean), ORT_INVALID_ARGUMENT,
               "0 is no tensor element type");
  EXPECT_OK(ep_api()->KernelDefBuilder_Build(b, &def));
  ep_api()->ReleaseKernelDefBuilder(b);
  ASSERT_NE(def, nullptr);
  EXPECT_STREQ(ep_api()->KernelDef_GetOperatorType(def), "If");
  EXPECT_STREQ(ep_api()->KernelDef_GetDomain(def), "ai.onnx");
  EXPECT_STREQ(ep_api()->KernelDef_GetExecutionProvider(def), "ortkern");
  int start = 0, end = 0;
  EXPECT_OK(ep_api()->KernelDef_GetSinceVersion(def, &start, &end));
  EXPECT_EQ(start, 19);
  EXPECT_EQ(end, 20);
  OrtMemType mem = OrtMemTypeDefault;
  EXPECT_OK(ep_api()->KernelDef_GetInputMemType(def, 0, &mem));
  EXPECT_EQ(mem, OrtMemTypeCPUInput);
  EXPECT_OK(ep_api()->KernelDef_GetInputMemType(def, 1, &mem));
  EXPECT_EQ(mem, OrtMemTypeDefault);
  EXPECT_OK(ep_api()->KernelDef_GetOutputMemType(def, 0, &mem));
  EXPECT_EQ(mem, OrtMemTypeDefault);
  const auto* d = reinterpret_cast<const OrtKernelDef*>(def);
  ASSERT_EQ(d->aliases.size(), 1u);
  EXPECT_EQ(d->mutable_aliases[0], std::make_pair(1, 0));
  ASSERT_EQ(d->type_constraints.size(), 1u);
  EXPECT_EQ(d->type_constraints[0].first, "B");

  OrtKernelRegistry* registry = nullptr;
  EXPECT_OK(ep_api()->CreateKernelRegistry(&registry));
  expect_fails(ep_api()->KernelRegistry_AddKernel(registry, def, nullptr, nullptr), ORT_INVALID_ARGUMENT,
               "create function");
  int state = 0;
  EXPECT_OK(ep_api()->KernelRegistry_AddKernel(registry, def, no_kernel, &state));
  ep_api()->ReleaseKernelDef(def);  // the registry keeps a copy
  ASSERT_EQ(registry->kernels.size(), 1u);
  EXPECT_EQ(registry->kernels[0].def.op_type, "If");
  EXPECT_EQ(registry->kernels[0].create_state, &state);
  ep_api()->ReleaseKernelRegistry(registry);
}

// The graph with its intermediate values typed, as a session partitions it (after shape inference).
BuiltGraph build_inferred_graph() {
  BuiltGraph b;
  b.model = std::make_unique<Model>();
  *b.model->proto = graph_model();
  onnx::shape_inference::InferShapes(*b.model->proto);
  b.model->read_header();
  b.main = build_graph_ir(*b.model);
  return b;
}

TEST(OrtEpApiKernels, NodesFindTheirKernelByOperatorVersionAndTypes) {
  BuiltGraph b = build_inferred_graph();  // opset 13
  OrtKernelRegistry* registry = nullptr;
  EXPECT_OK(ep_api()->CreateKernelRegistry(&registry));
  for (OrtKernelDef* def : {build_def("LeakyRelu", 6, 15, {ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT}),
                            build_def("Add", 7, 12, {ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT}),
                            build_def("Transpose", 13, 13, {ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64})}) {
    EXPECT_OK(ep_api()->KernelRegistry_AddKernel(registry, def, no_kernel, nullptr));
    ep_api()->ReleaseKernelDef(def);
  }
  OrtEpGraphSupportInfo info;
  info.graph = b.main->view.get();
  info.kernel_registry = registry;
  info.ep_name = "ortkern";
  const OrtKernelDef* found = nullptr;
  EXPECT_OK(ep_api()->EpGraphSupportInfo_LookUpKernel(&info, ort_ep::to_ort(b.node("leaky")), &found));
  ASSERT_NE(found, nullptr);
  EXPECT_STREQ(ep_api()->KernelDef_GetOperatorType(found), "LeakyRelu");
  for (const char* other : {"add", "transpose", "cast"}) {
    EXPECT_OK(ep_api()->EpGraphSupportInfo_LookUpKernel(&info, ort_ep::to_ort(b.node(other)), &found));
    EXPECT_EQ(found, nullptr) << other;
  }
  std::string why;
  EXPECT_EQ(ort_ep::find_kernel(*registry, "ortkern", *b.node("add"), &why), nullptr);
  EXPECT_EQ(why, "its kernels for Add cover since-versions 7 to 12, and the node's operator is version 13");
  EXPECT_EQ(ort_ep::find_kernel(*registry, "ortkern", *b.node("transpose"), &why), nullptr);
  EXPECT_EQ(why, "its kernel for Transpose: its type constraint T allows {int64}, and input 0 'A' is float");
  EXPECT_EQ(ort_ep::find_kernel(*registry, "ortkern", *b.node("cast"), &why), nullptr);
  EXPECT_EQ(why, "its kernel registry has no kernel for Cast (domain 'ai.onnx')");
  EXPECT_EQ(ort_ep::find_kernel(*registry, "other", *b.node("leaky"), &why), nullptr);
  EXPECT_EQ(why, "its kernel for LeakyRelu is registered for EP 'ortkern', not 'other'");
  // The version a node resolves to: LeakyRelu-6 and Add-13 under opset 13, in a subgraph as in the main graph.
  int since = 0;
  EXPECT_OK(api()->Node_GetSinceVersion(ort_ep::to_ort(b.node("leaky")), &since));
  EXPECT_EQ(since, 6);
  EXPECT_OK(api()->Node_GetSinceVersion(ort_ep::to_ort(b.node("add")), &since));
  EXPECT_EQ(since, 13);
  EXPECT_OK(api()->Node_GetSinceVersion(ort_ep::to_ort(b.node("if")->subgraphs[0].second->nodes[0].get()), &since));
  EXPECT_EQ(since, 13);  // Relu-13
  ep_api()->ReleaseKernelRegistry(registry);
}

// Reads a text getter as ONNX Runtime's C++ wrapper does: its size, then the text.
template <typename Getter>
std::string read_text(Getter get) {
  size_t size = 0;
  EXPECT_OK(get(nullptr, &size));
  std::string text(size, '\0');
  EXPECT_OK(get(text.data(), &size));
  EXPECT_EQ(size, text.size());
  text.resize(size ? size - 1 : 0);
  return text;
}

TEST(OrtEpApiKernels, KernelInfoDescribesItsNode) {
  BuiltGraph b = build_inferred_graph();
  OrtKeyValuePairs config;
  config.set("ep.ortkern.claim", "all");
  const OrtEp* ep = reinterpret_cast<const OrtEp*>(&config);  // any address: it is handed back
  auto info_of = [&](const char* node) {
    OrtKernelInfo info;
    info.node = b.node(node);
    info.ep = ep;
    info.since_version = ort_ep::node_since_version(*info.node);
    info.config = &config;
    return info;
  };
  OrtKernelInfo add = info_of("add");
  EXPECT_EQ(read_text([&](char* out, size_t* size) { return api()->KernelInfo_GetNodeName(&add, out, size); }), "add");
  EXPECT_EQ(read_text([&](char* out, size_t* size) { return api()->KernelInfo_GetOperatorType(&add, out, size); }),
            "Add");
  EXPECT_EQ(read_text([&](char* out, size_t* size) { return api()->KernelInfo_GetOperatorDomain(&add, out, size); }),
            "");
  int since = 0;
  EXPECT_OK(api()->KernelInfo_GetOperatorSinceVersion(&add, &since));
  EXPECT_EQ(since, 13);
  size_t n = 0;
  EXPECT_OK(api()->KernelInfo_GetInputCount(&add, &n));
  EXPECT_EQ(n, 2u);
  EXPECT_OK(api()->KernelInfo_GetOutputCount(&add, &n));
  EXPECT_EQ(n, 1u);
  EXPECT_EQ(read_text([&](char* out, size_t* size) { return api()->KernelInfo_GetInputName(&add, 1, out, size); }),
            "C");
  EXPECT_EQ(read_text([&](char* out, size_t* size) { return api()->KernelInfo_GetOutputName(&add, 0, out, size); }),
            "A");
  char short_buffer[1];
  size_t size = sizeof short_buffer;
  expect_fails(api()->KernelInfo_GetInputName(&add, 0, short_buffer, &size), ORT_INVALID_ARGUMENT, "needs 2");
  EXPECT_EQ(size, 2u);
  expect_fails(api()->KernelInfo_GetInputName(&add, 2, nullptr, &size), ORT_INVALID_ARGUMENT, "input 2 of 2");
  for (bool input : {true, false}) {
    OrtTypeInfo* type = nullptr;
    EXPECT_OK(input ? api()->KernelInfo_GetInputTypeInfo(&add, 0, &type) : api()->KernelInfo_GetOutputTypeInfo(&add, 0, &type));
    const OrtTensorTypeAndShapeInfo* tensor = nullptr;
    EXPECT_OK(api()->CastTypeInfoToTensorInfo(type, &tensor));
    ONNXTensorElementDataType elem = ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
    EXPECT_OK(api()->GetTensorElementType(tensor, &elem));
    EXPECT_EQ(elem, ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT);
    api()->ReleaseTypeInfo(type);
  }
  int is_constant = -1;
  const OrtValue* constant = nullptr;
  EXPECT_OK(api()->KernelInfoGetConstantInput_tensor(&add, 0, &is_constant, &constant));
  EXPECT_EQ(is_constant, 0);
  EXPECT_EQ(constant, nullptr);
  EXPECT_OK(api()->KernelInfoGetConstantInput_tensor(&add, 1, &is_constant, &constant));
  EXPECT_EQ(is_constant, 1);
  const void* data = nullptr;
  EXPECT_OK(api()->GetTensorData(constant, &data));
  EXPECT_EQ(static_cast<const float*>(data)[2], 3.0f);
  const OrtEp* owner = nullptr;
  EXPECT_OK(ep_api()->KernelInfo_GetEp(&add, &owner));
  EXPECT_EQ(owner, ep);
  OrtKeyValuePairs* entries = nullptr;
  EXPECT_OK(api()->KernelInfo_GetConfigEntries(&add, &entries));
  EXPECT_STREQ(api()->GetKeyValue(entries, "ep.ortkern.claim"), "all");
  api()->ReleaseKeyValuePairs(entries);
  const OrtLogger* logger = nullptr;
  EXPECT_OK(api()->KernelInfo_GetLogger(&add, &logger));
  EXPECT_NE(logger, nullptr);

  OrtKernelInfo cast = info_of("cast");
  int64_t to = 0;
  EXPECT_OK(api()->KernelInfoGetAttribute_int64(&cast, "to", &to));
  EXPECT_EQ(to, kFloat);
  float f = 0;
  expect_fails(api()->KernelInfoGetAttribute_float(&cast, "to", &f), ORT_FAIL, "is a INT, not a FLOAT");
  expect_fails(api()->KernelInfoGetAttribute_int64(&cast, "nope", &to), ORT_FAIL, "has no attribute 'nope'");
  EXPECT_EQ(read_text([&](char* out, size_t* size) {
              return api()->KernelInfoGetAttribute_string(&cast, "note", out, size);
            }),
            "hello");
  OrtKernelInfo leaky = info_of("leaky");
  EXPECT_OK(api()->KernelInfoGetAttribute_float(&leaky, "alpha", &f));
  EXPECT_EQ(f, 0.25f);
  OrtKernelInfo transpose = info_of("transpose");
  int64_t perm[2] = {};
  size = 0;
  EXPECT_OK(api()->KernelInfoGetAttributeArray_int64(&transpose, "perm", nullptr, &size));
  EXPECT_EQ(size, 2u);
  size = 1;
  expect_fails(api()->KernelInfoGetAttributeArray_int64(&transpose, "perm", perm, &size), ORT_INVALID_ARGUMENT,
               "2 are needed");
  EXPECT_OK(api()->KernelInfoGetAttributeArray_int64(&transpose, "perm", perm, &size));
  EXPECT_EQ(perm[0], 1);
  EXPECT_EQ(perm[1], 0);

  // A FLOATS attribute, on a node of its own.
  onnx::NodeProto proto;
  auto* scales = proto.add_attribute();
  scales->set_name("scales");
  scales->set_type(onnx::AttributeProto::FLOATS);
  scales->add_floats(0.5f);
  scales->add_floats(2.0f);
  Node node;
  node.name = "resize";
  node.proto = &proto;
  OrtKernelInfo resize;
  resize.node = &node;
  float values[2] = {};
  size = 2;
  EXPECT_OK(api()->KernelInfoGetAttributeArray_float(&resize, "scales", values, &size));
  EXPECT_EQ(values[1], 2.0f);
}

OrtStatus* no_compute(OrtKernelImpl*, OrtKernelContext*) { return nullptr; }
bool released = false;
void note_release(OrtKernelImpl*) { released = true; }

TEST(OrtEpApiKernels, ReleaseKernelImplAndTheContextsLogger) {
  OrtKernelImpl kernel{30, 0, no_compute, note_release, nullptr, nullptr};
  ep_api()->ReleaseKernelImpl(&kernel);
  EXPECT_TRUE(released);
  FakeContext fake;
  const std::vector<int32_t> out_types;
  OrtKernelContext context(&fake, &out_types);
  const OrtLogger* logger = nullptr;
  EXPECT_OK(api()->KernelContext_GetLogger(&context, &logger));
  EXPECT_NE(logger, nullptr);
  expect_fails(api()->KernelContext_GetLogger(reinterpret_cast<const OrtKernelContext*>(&fake), &logger),
               ORT_INVALID_ARGUMENT, "bad kernel context");
}

// A CPU allocator that counts what it hands out, as a plugin's own allocator would be.
struct CountingAllocator {
  OrtAllocator base{};
  int live = 0, total = 0;
  CountingAllocator() {
    base.version = 1;
    base.Alloc = [](OrtAllocator* a, size_t n) -> void* {
      auto* self = reinterpret_cast<CountingAllocator*>(a);
      ++self->live, ++self->total;
      return std::malloc(n);
    };
    base.Free = [](OrtAllocator* a, void* p) {
      --reinterpret_cast<CountingAllocator*>(a)->live;
      std::free(p);
    };
    base.Info = [](const OrtAllocator*) { return &ort_ep::cpu_memory_info(); };
  }
};

TEST(OrtEpApiKernels, TensorAndStringArrayAttributes) {
  onnx::NodeProto proto;
  auto* value = proto.add_attribute();
  value->set_name("value");
  value->set_type(onnx::AttributeProto::TENSOR);
  *value->mutable_t() = float_tensor("v", {2, 2}, {1, 2, 3, 4});
  auto* names = proto.add_attribute();
  names->set_name("names");
  names->set_type(onnx::AttributeProto::STRINGS);
  names->add_strings("alpha");
  names->add_strings("");
  names->add_strings("gamma");
  auto* none = proto.add_attribute();
  none->set_name("none");
  none->set_type(onnx::AttributeProto::STRINGS);
  Node node;
  node.name = "constant";
  node.proto = &proto;
  OrtKernelInfo info;
  info.node = &node;

  CountingAllocator counting;
  for (OrtAllocator* allocator : {ort_ep::cpu_allocator(), &counting.base}) {
    OrtValue* tensor = nullptr;
    EXPECT_OK(api()->KernelInfoGetAttribute_tensor(&info, "value", allocator, &tensor));
    ASSERT_NE(tensor, nullptr);
    OrtTensorTypeAndShapeInfo* shape = nullptr;
    EXPECT_OK(api()->GetTensorTypeAndShape(tensor, &shape));
    int64_t dims[2] = {};
    EXPECT_OK(api()->GetDimensions(shape, dims, 2));
    EXPECT_EQ(dims[0], 2);
    EXPECT_EQ(dims[1], 2);
    api()->ReleaseTensorTypeAndShapeInfo(shape);
    const void* data = nullptr;
    EXPECT_OK(api()->GetTensorData(tensor, &data));
    EXPECT_EQ(static_cast<const float*>(data)[3], 4.0f);
    if (allocator == &counting.base) {
      EXPECT_EQ(counting.live, 1);  // the elements are the allocator's
    }
    api()->ReleaseValue(tensor);
  }
  EXPECT_EQ(counting.live, 0);
  OrtValue* tensor = nullptr;
  expect_fails(api()->KernelInfoGetAttribute_tensor(&info, "names", ort_ep::cpu_allocator(), &tensor), ORT_FAIL,
               "is a STRINGS, not a TENSOR");

  char** strings = nullptr;
  size_t count = 0;
  EXPECT_OK(api()->KernelInfoGetAttributeArray_string(&info, "names", &counting.base, &strings, &count));
  ASSERT_EQ(count, 3u);
  EXPECT_STREQ(strings[0], "alpha");
  EXPECT_STREQ(strings[1], "");
  EXPECT_STREQ(strings[2], "gamma");
  EXPECT_EQ(counting.live, 4);  // the array and each string, the plugin's to free
  for (size_t i = 0; i < count; ++i) counting.base.Free(&counting.base, strings[i]);
  counting.base.Free(&counting.base, strings);
  EXPECT_EQ(counting.live, 0);
  EXPECT_OK(api()->KernelInfoGetAttributeArray_string(&info, "none", &counting.base, &strings, &count));
  EXPECT_EQ(strings, nullptr);
  EXPECT_EQ(count, 0u);
  expect_fails(api()->KernelInfoGetAttributeArray_string(&info, "value", &counting.base, &strings, &count), ORT_FAIL,
               "is a TENSOR, not a STRINGS");
  expect_fails(api()->KernelInfoGetAttributeArray_string(&info, "names", nullptr, &strings, &count),
               ORT_INVALID_ARGUMENT, "bad allocator");
}

TEST(OrtEpApiKernels, CopiesOfAKernelInfoAndItsAllocators) {
  BuiltGraph b = build_inferred_graph();
  OrtKernelInfo add;
  add.node = b.node("add");
  add.since_version = 13;
  OrtKernelInfo* copy = nullptr;
  EXPECT_OK(api()->CopyKernelInfo(&add, &copy));
  ASSERT_NE(copy, nullptr);
  EXPECT_NE(copy, &add);
  EXPECT_EQ(read_text([&](char* out, size_t* size) { return api()->KernelInfo_GetNodeName(copy, out, size); }), "add");
  int since = 0;
  EXPECT_OK(api()->KernelInfo_GetOperatorSinceVersion(copy, &since));
  EXPECT_EQ(since, 13);
  int is_constant = 0;
  const OrtValue* constant = nullptr;
  EXPECT_OK(api()->KernelInfoGetConstantInput_tensor(copy, 1, &is_constant, &constant));
  EXPECT_EQ(is_constant, 1);
  api()->ReleaseKernelInfo(copy);
  api()->ReleaseKernelInfo(&add);  // the host's own: not deleted (it lives on the stack here)
  EXPECT_OK(api()->KernelInfo_GetOperatorSinceVersion(&add, &since));

  OrtAllocator* allocator = nullptr;
  EXPECT_OK(api()->KernelInfoGetAllocator(&add, OrtMemTypeDefault, &allocator));
  EXPECT_EQ(allocator, ort_ep::cpu_allocator());  // host memory: the CPU's
  CountingAllocator device;
  add.default_allocator = &device.base;  // as the adapter sets it on a device with memory of its own
  EXPECT_OK(api()->KernelInfoGetAllocator(&add, OrtMemTypeDefault, &allocator));
  EXPECT_EQ(allocator, &device.base);
  EXPECT_OK(api()->KernelInfoGetAllocator(&add, OrtMemTypeCPUInput, &allocator));
  EXPECT_EQ(allocator, ort_ep::cpu_allocator());
  api()->ReleaseAllocator(allocator);  // the host's: nothing happens
  expect_fails(api()->KernelInfoGetAllocator(&add, static_cast<OrtMemType>(7), &allocator), ORT_INVALID_ARGUMENT,
               "7 is no OrtMemType");
}

TEST(OrtEpApiValues, KernelContextAllocatorsScratchBuffersAndResources) {
  FakeContext fake;
  const std::vector<int32_t> out_types;
  OrtKernelContext context(&fake, &out_types);
  OrtMemoryInfo* cpu = nullptr;
  EXPECT_OK(api()->CreateMemoryInfo_V2("Cpu", OrtMemoryInfoDeviceType_CPU, 0, 0, OrtDeviceMemoryType_DEFAULT, 0,
                                       OrtDeviceAllocator, &cpu));
  OrtMemoryInfo* gpu = nullptr;
  EXPECT_OK(api()->CreateMemoryInfo_V2("TestGpu", OrtMemoryInfoDeviceType_GPU, 0x1234, 0, OrtDeviceMemoryType_DEFAULT,
                                       0, OrtDeviceAllocator, &gpu));
  OrtAllocator* allocator = nullptr;
  EXPECT_OK(api()->KernelContext_GetAllocator(&context, cpu, &allocator));
  EXPECT_EQ(allocator, ort_ep::cpu_allocator());
  expect_fails(api()->KernelContext_GetAllocator(&context, gpu, &allocator), ORT_INVALID_ARGUMENT,
               "no allocator for memory 'TestGpu'");
  void* scratch = nullptr;
  EXPECT_OK(api()->KernelContext_GetScratchBuffer(&context, cpu, 256, &scratch));
  ASSERT_NE(scratch, nullptr);
  std::memset(scratch, 7, 256);
  ort_ep::cpu_allocator()->Free(ort_ep::cpu_allocator(), scratch);  // the kernel frees it
  EXPECT_OK(api()->KernelContext_GetScratchBuffer(&context, cpu, 0, &scratch));
  EXPECT_EQ(scratch, nullptr);

  // On a device with memory of its own, as the adapter serves it: that memory's allocator too.
  CountingAllocator device;
  context.device_memory = gpu;
  context.device_allocator = &device.base;
  EXPECT_OK(api()->KernelContext_GetAllocator(&context, gpu, &allocator));
  EXPECT_EQ(allocator, &device.base);
  EXPECT_OK(api()->KernelContext_GetScratchBuffer(&context, gpu, 64, &scratch));
  EXPECT_EQ(device.live, 1);
  device.base.Free(&device.base, scratch);
  OrtMemoryInfo* other_gpu = nullptr;
  EXPECT_OK(api()->CreateMemoryInfo_V2("OtherGpu", OrtMemoryInfoDeviceType_GPU, 0x1234, 1,
                                       OrtDeviceMemoryType_DEFAULT, 0, OrtDeviceAllocator, &other_gpu));
  expect_fails(api()->KernelContext_GetScratchBuffer(&context, other_gpu, 64, &scratch), ORT_INVALID_ARGUMENT,
               "and its device's ('TestGpu')");

  void* resource = &fake;
  EXPECT_OK(api()->KernelContext_GetResource(&context, 1, 10000, &resource));
  EXPECT_EQ(resource, nullptr);  // an ONNX Runtime plugin EP's stream publishes no resources
  api()->ReleaseMemoryInfo(cpu);
  api()->ReleaseMemoryInfo(gpu);
  api()->ReleaseMemoryInfo(other_gpu);
}

struct Visits {
  std::vector<std::atomic<int>> counts;
  explicit Visits(size_t n) : counts(n) {}
};

TEST(OrtEpApiValues, ParallelForVisitsEveryIndexOnce) {
  FakeContext fake;
  const std::vector<int32_t> out_types;
  OrtKernelContext context(&fake, &out_types);
  auto visit = [](void* data, size_t i) { ++static_cast<Visits*>(data)->counts[i]; };
  for (int threads : {1, 4})
    for (size_t batches : {size_t{0}, size_t{1}, size_t{7}, size_t{5000}}) {
      fake.threads = threads;
      Visits visits(1000);
      EXPECT_OK(api()->KernelContext_ParallelFor(&context, visit, 1000, batches, &visits));
      for (size_t i = 0; i < 1000; ++i) ASSERT_EQ(visits.counts[i].load(), 1) << i << " threads " << threads;
    }
  EXPECT_OK(api()->KernelContext_ParallelFor(&context, visit, 0, 0, nullptr));  // nothing to do
  expect_fails(api()->KernelContext_ParallelFor(&context, nullptr, 10, 0, nullptr), ORT_INVALID_ARGUMENT,
               "bad kernel context or function");
}

TEST(OrtEpApiKernels, SharedPrePackedWeightsAreStoredAndSharedByContent) {
  CountingAllocator allocator;
  auto packed = [&](float value) {
    auto* p = static_cast<float*>(allocator.base.Alloc(&allocator.base, 4 * sizeof(float)));
    for (int i = 0; i < 4; ++i) p[i] = value;
    return p;
  };
  const size_t before = ort_ep::shared_prepacked_weight_count();
  std::shared_ptr<const ort_ep::SharedPrePackedWeight> first, second, other;
  {
    OrtSharedPrePackedWeightCache cache(&allocator.base);
    void* buffers[1] = {packed(1.0f)};
    size_t sizes[1] = {4 * sizeof(float)};
    expect_fails(ep_api()->SharedPrePackedWeightCache_StoreWeightData(&cache, buffers, sizes, 0),
                 ORT_INVALID_ARGUMENT, "no buffers");
    expect_fails(ep_api()->SharedPrePackedWeightCache_StoreWeightData(nullptr, buffers, sizes, 1),
                 ORT_INVALID_ARGUMENT, "bad cache");
    EXPECT_OK(ep_api()->SharedPrePackedWeightCache_StoreWeightData(&cache, buffers, sizes, 1));
    expect_fails(ep_api()->SharedPrePackedWeightCache_StoreWeightData(&cache, buffers, sizes, 1),
                 ORT_INVALID_ARGUMENT, "already holds");
    first = ort_ep::share_prepacked_weight("MatMul", cache);
    EXPECT_TRUE(cache.buffers.empty());  // adopted
  }
  EXPECT_EQ(allocator.live, 1);
  {
    // The same bytes packed again (another kernel, another session): the first copy, the new one freed.
    OrtSharedPrePackedWeightCache cache(&allocator.base);
    void* buffers[1] = {packed(1.0f)};
    size_t sizes[1] = {4 * sizeof(float)};
    EXPECT_OK(ep_api()->SharedPrePackedWeightCache_StoreWeightData(&cache, buffers, sizes, 1));
    second = ort_ep::share_prepacked_weight("MatMul", cache);
    EXPECT_EQ(second, first);
    EXPECT_EQ(allocator.live, 1);
    // Other bytes, or the same bytes packed by another operator: a weight of their own.
    OrtSharedPrePackedWeightCache cache2(&allocator.base);
    void* buffers2[1] = {packed(2.0f)};
    EXPECT_OK(ep_api()->SharedPrePackedWeightCache_StoreWeightData(&cache2, buffers2, sizes, 1));
    other = ort_ep::share_prepacked_weight("MatMul", cache2);
    EXPECT_NE(other, first);
    OrtSharedPrePackedWeightCache cache3(&allocator.base);
    void* buffers3[1] = {packed(1.0f)};
    EXPECT_OK(ep_api()->SharedPrePackedWeightCache_StoreWeightData(&cache3, buffers3, sizes, 1));
    EXPECT_NE(ort_ep::share_prepacked_weight("Gemm", cache3), first);  // released at once: no kernel keeps it
  }
  EXPECT_EQ(ort_ep::shared_prepacked_weight_count(), before + 2);
  EXPECT_EQ(allocator.live, 2);
  first.reset();
  EXPECT_EQ(allocator.live, 2);  // `second` still uses it
  second.reset();
  other.reset();
  EXPECT_EQ(allocator.live, 0);  // the last user gone: freed with the allocator that made them
  EXPECT_EQ(ort_ep::shared_prepacked_weight_count(), before);
  {
    // A cache whose kernel then reports "not packed" (or fails) frees what it was given.
    OrtSharedPrePackedWeightCache cache(&allocator.base);
    void* buffers[1] = {packed(3.0f)};
    size_t sizes[1] = {4 * sizeof(float)};
    EXPECT_OK(ep_api()->SharedPrePackedWeightCache_StoreWeightData(&cache, buffers, sizes, 1));
  }
  EXPECT_EQ(allocator.live, 0);
}

}  // namespace

namespace {

// The allowed types of `c`, as GetAllowedTypes hands them out.
std::vector<std::string> allowed_types(const OrtOpSchemaTypeConstraint* c) {
  const char* const* types = nullptr;
  size_t n = 0;
  EXPECT_OK(ep_api()->OpSchemaTypeConstraint_GetAllowedTypes(c, &types, &n));
  return std::vector<std::string>(types, types + n);
}

std::vector<size_t> indices_of(const OrtOpSchemaTypeConstraint* c, bool inputs) {
  const size_t* p = nullptr;
  size_t n = 0;
  EXPECT_OK(inputs ? ep_api()->OpSchemaTypeConstraint_GetInputIndices(c, &p, &n)
                   : ep_api()->OpSchemaTypeConstraint_GetOutputIndices(c, &p, &n));
  return std::vector<size_t>(p, p + n);
}

}  // namespace

TEST(OrtEpApiSchemas, AnOperatorsSchemaItsFormalsAndTypeConstraints) {
  OrtOpSchema* add = nullptr;
  EXPECT_OK(ep_api()->GetOpSchema("Add", 16, "", &add));
  ASSERT_NE(add, nullptr);
  int since = 0;
  EXPECT_OK(ep_api()->OpSchema_GetSinceVersion(add, &since));
  EXPECT_EQ(since, 14);  // the newest Add at or below 16
  size_t n = 0;
  EXPECT_OK(ep_api()->OpSchema_GetNumInputs(add, &n));
  EXPECT_EQ(n, 2u);
  EXPECT_OK(ep_api()->OpSchema_GetNumOutputs(add, &n));
  EXPECT_EQ(n, 1u);
  const char* name = nullptr;
  EXPECT_OK(ep_api()->OpSchema_GetInputName(add, 1, &name));
  EXPECT_STREQ(name, "B");
  EXPECT_OK(ep_api()->OpSchema_GetOutputName(add, 0, &name));
  EXPECT_STREQ(name, "C");
  expect_fails(ep_api()->OpSchema_GetInputName(add, 2, &name), ORT_INVALID_ARGUMENT, "input index 2 out of range");
  EXPECT_OK(ep_api()->OpSchema_GetTypeConstraintCount(add, &n));
  ASSERT_EQ(n, 1u);
  const OrtOpSchemaTypeConstraint* t = nullptr;
  EXPECT_OK(ep_api()->OpSchema_GetTypeConstraint(add, 0, &t));
  expect_fails(ep_api()->OpSchema_GetTypeConstraint(add, 1, &t), ORT_INVALID_ARGUMENT, "out of range");
  EXPECT_OK(ep_api()->OpSchemaTypeConstraint_GetTypeParamName(t, &name));
  EXPECT_STREQ(name, "T");
  const std::vector<std::string> types = allowed_types(t);
  EXPECT_NE(std::find(types.begin(), types.end(), "tensor(float)"), types.end());
  EXPECT_NE(std::find(types.begin(), types.end(), "tensor(uint8)"), types.end());  // added in Add-14
  EXPECT_EQ(indices_of(t, true), (std::vector<size_t>{0, 1}));
  EXPECT_EQ(indices_of(t, false), (std::vector<size_t>{0}));
  const OrtOpSchemaTypeConstraint* of_input = nullptr;
  EXPECT_OK(ep_api()->OpSchema_GetInputTypeConstraint(add, 1, &of_input));
  EXPECT_EQ(of_input, t);
  EXPECT_OK(ep_api()->OpSchema_GetOutputTypeConstraint(add, 0, &of_input));
  EXPECT_EQ(of_input, t);
  ep_api()->ReleaseOpSchema(add);

  // An older version, the domain spelled "ai.onnx"; an input of a fixed type has no constraint.
  OrtOpSchema* reshape = nullptr;
  EXPECT_OK(ep_api()->GetOpSchema("Reshape", 13, "ai.onnx", &reshape));
  ASSERT_NE(reshape, nullptr);
  EXPECT_OK(ep_api()->OpSchema_GetSinceVersion(reshape, &since));
  EXPECT_EQ(since, 13);
  const OrtOpSchemaTypeConstraint* shape_constraint = t;
  EXPECT_OK(ep_api()->OpSchema_GetInputTypeConstraint(reshape, 1, &shape_constraint));
  EXPECT_EQ(shape_constraint, nullptr) << "Reshape's shape is tensor(int64), no type parameter";
  ep_api()->ReleaseOpSchema(reshape);

  // A schema ephost registers itself (onnx 1.12 stops at opset 17).
  OrtOpSchema* bitwise = nullptr;
  EXPECT_OK(ep_api()->GetOpSchema("BitwiseAnd", 21, "", &bitwise));
  ASSERT_NE(bitwise, nullptr);
  EXPECT_OK(ep_api()->OpSchema_GetSinceVersion(bitwise, &since));
  EXPECT_EQ(since, 18);
  ep_api()->ReleaseOpSchema(bitwise);

  // None: NULL without an error; below the first version; bad arguments.
  OrtOpSchema* none = add;
  EXPECT_OK(ep_api()->GetOpSchema("NoSuchOperator", 21, "", &none));
  EXPECT_EQ(none, nullptr);
  none = add;
  EXPECT_OK(ep_api()->GetOpSchema("BitwiseAnd", 17, "", &none));
  EXPECT_EQ(none, nullptr);
  expect_fails(ep_api()->GetOpSchema(nullptr, 13, "", &none), ORT_INVALID_ARGUMENT, "GetOpSchema");
  expect_fails(ep_api()->OpSchema_GetSinceVersion(reinterpret_cast<const OrtOpSchema*>(&since), &since),
               ORT_INVALID_ARGUMENT, "OpSchema_GetSinceVersion");
  ep_api()->ReleaseOpSchema(nullptr);
}

namespace {
OrtStatus* no_concat(OrtLoopKernelHelper*, void*, const OrtValue* const*, size_t, void*, size_t) { return nullptr; }
OrtStatus* no_transpose(OrtScanKernelHelper*, const size_t*, size_t, const OrtValue*, OrtSyncStream*, OrtValue*) {
  return nullptr;
}
int helpers_released = 0;
void release_loop_helper(OrtLoopKernelHelper*) { ++helpers_released; }
void release_scan_helper(OrtScanKernelHelper*) { ++helpers_released; }
}  // namespace

// The host makes If / Loop / Scan kernels for a node of that operator; it takes the EP's helper with the kernel
// and releases it with it. A wrong node, a helper without its function, Scan-8: refused, the helper left to
// the EP. (Running them: tests/integration/ort_plugin_ep_control_flow_test.cpp.)
TEST(OrtEpApiKernels, ControlFlowKernelsAreMadeForTheirOperatorsOnly) {
  BuiltGraph b = build_graph();  // an If whose branches read an outer value, a Transpose, ...
  const Node* if_node = b.node("if");
  const Node* other = b.node("transpose");
  ASSERT_NE(if_node, nullptr);
  ASSERT_NE(other, nullptr);
  OrtKernelInfo info;
  info.node = if_node;
  info.since_version = ort_ep::node_since_version(*if_node);
  OrtKernelImpl* kernel = nullptr;
  EXPECT_OK(ep_api()->CreateIfKernel(&info, &kernel));
  ASSERT_NE(kernel, nullptr);
  EXPECT_NE(kernel->Compute, nullptr);
  ep_api()->ReleaseKernelImpl(kernel);

  OrtLoopKernelHelper loop_helper{30, release_loop_helper, no_concat};
  expect_fails(ep_api()->CreateLoopKernel(&info, &loop_helper, &kernel), ORT_INVALID_ARGUMENT, "not an ai.onnx Loop");
  OrtLoopKernelHelper no_function{30, release_loop_helper, nullptr};
  expect_fails(ep_api()->CreateLoopKernel(&info, &no_function, &kernel), ORT_INVALID_ARGUMENT,
               "with Release and ConcatOutput");
  OrtScanKernelHelper scan_helper{30, release_scan_helper, no_transpose};
  expect_fails(ep_api()->CreateScanKernel(&info, &scan_helper, &kernel), ORT_INVALID_ARGUMENT, "not an ai.onnx Scan");
  EXPECT_EQ(helpers_released, 0) << "a refused helper stays the EP's";
  OrtKernelInfo not_if = info;
  not_if.node = other;
  expect_fails(ep_api()->CreateIfKernel(&not_if, &kernel), ORT_INVALID_ARGUMENT, "not an ai.onnx If");
  expect_fails(ep_api()->CreateIfKernel(nullptr, &kernel), ORT_INVALID_ARGUMENT, "OrtEpApi::CreateIfKernel");
}

// ---- devices a plugin describes, stream sync ids, profiling events, the weightless source model, the env ----
namespace {

TEST(OrtEpApiDevices, APluginDescribesAHardwareDeviceTheHostDidNotProbe) {
  OrtKeyValuePairs* metadata = nullptr;
  api()->CreateKeyValuePairs(&metadata);
  api()->AddKeyValuePair(metadata, "IsVirtual", "1");
  OrtHardwareDevice* hw = nullptr;
  EXPECT_OK(ep_api()->CreateHardwareDevice(OrtHardwareDeviceType_NPU, 0xB358, 0x51, "Contoso", metadata, &hw));
  api()->ReleaseKeyValuePairs(metadata);  // the device keeps its own copy
  ASSERT_NE(hw, nullptr);
  EXPECT_EQ(api()->HardwareDevice_Type(hw), OrtHardwareDeviceType_NPU);
  EXPECT_EQ(api()->HardwareDevice_VendorId(hw), 0xB358u);
  EXPECT_EQ(api()->HardwareDevice_DeviceId(hw), 0x51u);
  EXPECT_STREQ(api()->HardwareDevice_Vendor(hw), "Contoso");
  const char* is_virtual = api()->GetKeyValue(api()->HardwareDevice_Metadata(hw), "IsVirtual");
  ASSERT_NE(is_virtual, nullptr);
  EXPECT_STREQ(is_virtual, "1");
  // An EP device over it, as GetSupportedDevices makes one.
  OrtEpFactory factory{};
  OrtEpDevice* ep_device = nullptr;
  EXPECT_OK(ep_api()->CreateEpDevice(&factory, hw, nullptr, nullptr, &ep_device));
  ASSERT_NE(ep_device, nullptr);
  EXPECT_EQ(api()->EpDevice_Device(ep_device), hw);
  ep_api()->ReleaseEpDevice(ep_device);
  ep_api()->ReleaseHardwareDevice(hw);
  // Bad arguments: statuses, never a crash.
  OrtHardwareDevice* bad = nullptr;
  expect_fails(ep_api()->CreateHardwareDevice(static_cast<OrtHardwareDeviceType>(7), 1, 1, "x", nullptr, &bad),
               ORT_INVALID_ARGUMENT, "type 7 is no OrtHardwareDeviceType");
  expect_fails(ep_api()->CreateHardwareDevice(OrtHardwareDeviceType_GPU, 1, 1, nullptr, nullptr, &bad),
               ORT_INVALID_ARGUMENT, "vendor_name is NULL");
  expect_fails(ep_api()->CreateHardwareDevice(OrtHardwareDeviceType_GPU, 1, 1, "x", nullptr, nullptr),
               ORT_INVALID_ARGUMENT, "out pointer");
  EXPECT_EQ(bad, nullptr);
  // The host's own devices are never freed by a plugin's release.
  const OrtHardwareDevice* cpu = ort_ep::host_hardware_devices().front();
  ep_api()->ReleaseHardwareDevice(const_cast<OrtHardwareDevice*>(cpu));
  EXPECT_EQ(api()->HardwareDevice_Type(cpu), OrtHardwareDeviceType_CPU);
  ep_api()->ReleaseHardwareDevice(nullptr);
}

TEST(OrtEpApiStreams, SyncIdsCountTheHostsSynchronizations) {
  OrtSyncStream producer, consumer;
  EXPECT_EQ(ep_api()->SyncStream_GetSyncId(&producer), 0u);
  producer.sync_id = 3;
  consumer.sync_id = 1;
  EXPECT_EQ(ep_api()->SyncStream_GetSyncId(&producer), 3u);
  // Synchronized on the host three times: every other stream has waited for those.
  EXPECT_EQ(ep_api()->GetSyncIdForLastWaitOnSyncStream(&producer, &consumer), 3u);
  EXPECT_EQ(ep_api()->GetSyncIdForLastWaitOnSyncStream(&consumer, &producer), 1u);
  EXPECT_EQ(ep_api()->GetSyncIdForLastWaitOnSyncStream(&producer, &producer), 0u);
  EXPECT_EQ(ep_api()->SyncStream_GetSyncId(nullptr), 0u);
  EXPECT_EQ(ep_api()->GetSyncIdForLastWaitOnSyncStream(nullptr, &consumer), 0u);
  OrtSessionOptions not_a_stream;
  EXPECT_EQ(ep_api()->SyncStream_GetSyncId(reinterpret_cast<const OrtSyncStream*>(&not_a_stream)), 0u);
}

TEST(OrtEpApiProfiling, EventsAreMadeReadAndCopiedIntoTheContainer) {
  const char* keys[] = {"op", "bytes"};
  const char* values[] = {"Add", "96"};
  OrtProfilingEvent* e = nullptr;
  EXPECT_OK(ep_api()->CreateProfilingEvent(OrtProfilingEventCategory_KERNEL, 12, 7, "add kernel", 150, 42, keys,
                                           values, 2, &e));
  ASSERT_NE(e, nullptr);
  OrtProfilingEventCategory category = OrtProfilingEventCategory_SESSION;
  const char* name = nullptr;
  const char* value = nullptr;
  int64_t ts = 0, dur = 0;
  EXPECT_OK(ep_api()->ProfilingEvent_GetCategory(e, &category));
  EXPECT_EQ(category, OrtProfilingEventCategory_KERNEL);
  EXPECT_OK(ep_api()->ProfilingEvent_GetName(e, &name));
  EXPECT_STREQ(name, "add kernel");
  EXPECT_OK(ep_api()->ProfilingEvent_GetTimestampUs(e, &ts));
  EXPECT_EQ(ts, 150);
  EXPECT_OK(ep_api()->ProfilingEvent_GetDurationUs(e, &dur));
  EXPECT_EQ(dur, 42);
  EXPECT_OK(ep_api()->ProfilingEvent_GetArgValue(e, "bytes", &value));
  EXPECT_STREQ(value, "96");
  EXPECT_OK(ep_api()->ProfilingEvent_GetArgValue(e, "missing", &value));
  EXPECT_EQ(value, nullptr);

  OrtProfilingEventsContainer container;
  const OrtProfilingEvent* list[] = {e};
  EXPECT_OK(ep_api()->ProfilingEventsContainer_AddEvents(&container, list, 1));
  ep_api()->ReleaseProfilingEvent(e);  // the container holds a copy
  ASSERT_EQ(container.events.size(), 1u);
  EXPECT_EQ(container.events[0].name, "add kernel");
  EXPECT_EQ(container.events[0].args.size(), 2u);
  EXPECT_FALSE(container.events[0].owned);
  // The host's events (handed to StopEvent) are never freed by the EP's release.
  ep_api()->ReleaseProfilingEvent(&container.events[0]);
  EXPECT_EQ(container.events[0].magic, ort_ep::Magic::kProfilingEvent);

  // Bad arguments: statuses, nothing added.
  OrtProfilingEvent* bad = nullptr;
  expect_fails(ep_api()->CreateProfilingEvent(static_cast<OrtProfilingEventCategory>(9), 0, 0, "x", 0, 1, nullptr,
                                              nullptr, 0, &bad),
               ORT_INVALID_ARGUMENT, "category 9");
  expect_fails(ep_api()->CreateProfilingEvent(OrtProfilingEventCategory_NODE, 0, 0, "x", 0, -1, nullptr, nullptr, 0,
                                              &bad),
               ORT_INVALID_ARGUMENT, "never negative");
  expect_fails(ep_api()->CreateProfilingEvent(OrtProfilingEventCategory_NODE, 0, 0, "x", 0, 1, nullptr, nullptr, 2,
                                              &bad),
               ORT_INVALID_ARGUMENT, "arg_keys or arg_values is NULL");
  expect_fails(ep_api()->ProfilingEvent_GetName(nullptr, &name), ORT_INVALID_ARGUMENT, "ProfilingEvent_GetName");
  const OrtProfilingEvent* stale[] = {reinterpret_cast<const OrtProfilingEvent*>(&container)};
  expect_fails(ep_api()->ProfilingEventsContainer_AddEvents(&container, stale, 1), ORT_INVALID_ARGUMENT,
               "event 0 is not an OrtProfilingEvent");
  expect_fails(ep_api()->ProfilingEventsContainer_AddEvents(nullptr, list, 1), ORT_INVALID_ARGUMENT,
               "events_container");
  EXPECT_EQ(container.events.size(), 1u);
}

TEST(OrtEpApiSessionOptions, TheWeightlessSourceModelIsWhatTheSessionNamed) {
  OrtSessionOptions options;
  const void* data = reinterpret_cast<const void*>(1);
  size_t size = 99;
  EXPECT_OK(ep_api()->SessionOptionsGetWeightlessSourceModelBuffer(&options, &data, &size));
  EXPECT_EQ(data, nullptr);
  EXPECT_EQ(size, 0u);
  options.weightless_source_model = "onnx bytes";
  EXPECT_OK(ep_api()->SessionOptionsGetWeightlessSourceModelBuffer(&options, &data, &size));
  ASSERT_EQ(size, 10u);
  EXPECT_EQ(std::string(static_cast<const char*>(data), size), "onnx bytes");
  expect_fails(ep_api()->SessionOptionsGetWeightlessSourceModelBuffer(nullptr, &data, &size), ORT_INVALID_ARGUMENT,
               "session_options");
  expect_fails(ep_api()->SessionOptionsGetWeightlessSourceModelBuffer(&options, nullptr, &size),
               ORT_INVALID_ARGUMENT, "NULL");
}

// OrtApi 424: a buffer set on the options comes ahead of the file the session named; options a plugin
// makes itself take entries and are its own to free, the host's are neither.
TEST(OrtEpApiSessionOptions, ABufferSetOnTheOptionsIsTheWeightlessSourceModel) {
  OrtSessionOptions host_made;
  host_made.weightless_source_model = "file bytes";
  static const char kBuffer[] = "buffer bytes";
  const void* data = nullptr;
  size_t size = 0;
  EXPECT_OK(api()->SessionOptionsSetWeightlessSourceModelBuffer(&host_made, kBuffer, 12));
  EXPECT_OK(ep_api()->SessionOptionsGetWeightlessSourceModelBuffer(&host_made, &data, &size));
  EXPECT_EQ(data, kBuffer);  // borrowed, not copied
  EXPECT_EQ(size, 12u);
  expect_fails(api()->SessionOptionsSetWeightlessSourceModelBuffer(&host_made, nullptr, 12), ORT_INVALID_ARGUMENT,
               "source_model_data");
  expect_fails(api()->SessionOptionsSetWeightlessSourceModelBuffer(&host_made, kBuffer, 0), ORT_INVALID_ARGUMENT,
               "source_model_data_length is 0");
  expect_fails(api()->SessionOptionsSetWeightlessSourceModelBuffer(nullptr, kBuffer, 12), ORT_INVALID_ARGUMENT,
               "options");
  expect_fails(api()->AddSessionConfigEntry(&host_made, "k", "v"), ORT_INVALID_ARGUMENT, "CreateSessionOptions");
  api()->ReleaseSessionOptions(&host_made);  // the host's: left alone
  EXPECT_OK(ep_api()->SessionOptionsGetWeightlessSourceModelBuffer(&host_made, &data, &size));

  OrtSessionOptions* own = nullptr;
  EXPECT_OK(api()->CreateSessionOptions(&own));
  ASSERT_NE(own, nullptr);
  EXPECT_OK(api()->AddSessionConfigEntry(own, "ep.enable_weightless_mode", "2"));
  int has = 0;
  EXPECT_OK(api()->HasSessionConfigEntry(own, "ep.enable_weightless_mode", &has));
  EXPECT_EQ(has, 1);
  EXPECT_OK(ep_api()->SessionOptionsGetWeightlessSourceModelBuffer(own, &data, &size));
  EXPECT_EQ(data, nullptr);
  EXPECT_EQ(size, 0u);
  EXPECT_OK(api()->SessionOptionsSetWeightlessSourceModelBuffer(own, kBuffer, sizeof kBuffer));
  EXPECT_OK(ep_api()->SessionOptionsGetWeightlessSourceModelBuffer(own, &data, &size));
  EXPECT_EQ(data, kBuffer);
  EXPECT_EQ(size, sizeof kBuffer);
  api()->ReleaseSessionOptions(own);
  expect_fails(api()->CreateSessionOptions(nullptr), ORT_INVALID_ARGUMENT, "NULL");
}

// A factory made in this test: "envtest", no device supported; it says why for CPUs only when `explains`.
struct EnvTestFactory {
  OrtEpFactory base{};
  bool explains = true;
};
EnvTestFactory env_test_factory;

OrtStatus* env_test_create(const char*, const OrtApiBase*, const OrtLogger*, OrtEpFactory** factories, size_t max,
                           size_t* num) {
  auto& f = env_test_factory.base;
  f.ort_version_supported = 24;
  f.GetName = [](const OrtEpFactory*) { return "envtest"; };
  f.GetVendor = [](const OrtEpFactory*) { return "tests"; };
  f.GetSupportedDevices = [](OrtEpFactory*, const OrtHardwareDevice* const*, size_t, OrtEpDevice**, size_t,
                             size_t* n) -> OrtStatus* {
    *n = 0;
    return nullptr;
  };
  f.CreateEp = [](OrtEpFactory*, const OrtHardwareDevice* const*, const OrtKeyValuePairs* const*, size_t,
                  const OrtSessionOptions*, const OrtLogger*, OrtEp**) -> OrtStatus* { return nullptr; };
  f.ReleaseEp = [](OrtEpFactory*, OrtEp*) {};
  f.GetHardwareDeviceIncompatibilityDetails = [](OrtEpFactory*, const OrtHardwareDevice* hw,
                                                 OrtDeviceEpIncompatibilityDetails* details) -> OrtStatus* {
    if (!env_test_factory.explains || api()->HardwareDevice_Type(hw) != OrtHardwareDeviceType_CPU) return nullptr;
    return ep_api()->DeviceEpIncompatibilityDetails_SetDetails(details, OrtDeviceEpIncompatibility_DRIVER_INCOMPATIBLE,
                                                               5, "envtest wants a newer driver");
  };
  if (max < 1) return api()->CreateStatus(ORT_INVALID_ARGUMENT, "no room");
  factories[0] = &f;
  *num = 1;
  return nullptr;
}
OrtStatus* env_test_release(OrtEpFactory*) { return nullptr; }

TEST(OrtEpApiEnv, AnEnvAnswersTheHostsDevicesAndWhyAnEpCannotUseThem) {
  OrtEnv* env = nullptr;
  OrtEnv* again = nullptr;
  EXPECT_OK(api()->CreateEnv(ORT_LOGGING_LEVEL_WARNING, "test", &env));
  EXPECT_OK(api()->CreateEnv(ORT_LOGGING_LEVEL_ERROR, "test", &again));
  ASSERT_NE(env, nullptr);
  EXPECT_EQ(env, again);  // one environment per process, as ONNX Runtime's
  api()->ReleaseEnv(again);
  size_t n = 0;
  EXPECT_OK(api()->GetNumHardwareDevices(env, &n));
  const auto& host = ort_ep::host_hardware_devices();
  ASSERT_EQ(n, host.size());
  std::vector<const OrtHardwareDevice*> devices(n);
  EXPECT_OK(api()->GetHardwareDevices(env, devices.data(), n));
  EXPECT_EQ(devices, host);
  const OrtHardwareDevice* cpu = devices.front();
  EXPECT_EQ(api()->HardwareDevice_Type(cpu), OrtHardwareDeviceType_CPU);
  expect_fails(api()->GetHardwareDevices(env, devices.data(), 0), ORT_INVALID_ARGUMENT, "GetNumHardwareDevices first");

  OrtDeviceEpIncompatibilityDetails* details = nullptr;
  expect_fails(api()->GetHardwareDeviceEpIncompatibilityDetails(env, "envtest", cpu, &details), ORT_INVALID_ARGUMENT,
               "no execution provider named 'envtest' is registered");
  {
    ort_ep::OrtEpLibrary library(env_test_create, env_test_release, "/nowhere/libenvtest.so");
    // The discovery report's line and the application's answer are the factory's one answer.
    ASSERT_EQ(library.unsupported_devices(0).size(), 1u);
    EXPECT_NE(library.unsupported_devices(0)[0].find("driver incompatible: envtest wants a newer driver (error 5)"),
              std::string::npos)
        << library.unsupported_devices(0)[0];
    EXPECT_OK(api()->GetHardwareDeviceEpIncompatibilityDetails(env, "envtest", cpu, &details));
    ASSERT_NE(details, nullptr);
    uint32_t reasons = 0;
    int32_t code = 0;
    const char* notes = nullptr;
    EXPECT_OK(api()->DeviceEpIncompatibilityDetails_GetReasonsBitmask(details, &reasons));
    EXPECT_EQ(reasons, static_cast<uint32_t>(OrtDeviceEpIncompatibility_DRIVER_INCOMPATIBLE));
    EXPECT_OK(api()->DeviceEpIncompatibilityDetails_GetErrorCode(details, &code));
    EXPECT_EQ(code, 5);
    EXPECT_OK(api()->DeviceEpIncompatibilityDetails_GetNotes(details, &notes));
    EXPECT_STREQ(notes, "envtest wants a newer driver");
    api()->ReleaseDeviceEpIncompatibilityDetails(details);
    // Bad arguments: statuses.
    expect_fails(api()->GetHardwareDeviceEpIncompatibilityDetails(nullptr, "envtest", cpu, &details),
                 ORT_INVALID_ARGUMENT, "env is not an OrtEnv");
    expect_fails(api()->GetHardwareDeviceEpIncompatibilityDetails(env, nullptr, cpu, &details), ORT_INVALID_ARGUMENT,
                 "ep_name");
    expect_fails(api()->GetHardwareDeviceEpIncompatibilityDetails(env, "envtest", nullptr, &details),
                 ORT_INVALID_ARGUMENT, "hw is not an OrtHardwareDevice");
    expect_fails(api()->GetHardwareDeviceEpIncompatibilityDetails(env, "envtest", cpu, nullptr), ORT_INVALID_ARGUMENT,
                 "out pointer");
  }
  // Gone with its library.
  expect_fails(api()->GetHardwareDeviceEpIncompatibilityDetails(env, "envtest", cpu, &details), ORT_INVALID_ARGUMENT,
               "no execution provider named 'envtest'");
  api()->ReleaseEnv(env);
  expect_fails(api()->CreateEnv(static_cast<OrtLoggingLevel>(9), "x", &env), ORT_INVALID_ARGUMENT, "OrtLoggingLevel");
  expect_fails(api()->GetNumHardwareDevices(nullptr, &n), ORT_INVALID_ARGUMENT, "env is not an OrtEnv");
}

}  // namespace
