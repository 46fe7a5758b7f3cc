#include "ort_ep/ort_objects.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <unordered_set>

namespace ephost::ort_ep {
namespace {

// Statuses the host made and the plugin has not released: a status is only read when it is one of
// these, so that a plugin returning garbage is told so instead of crashing the host.
std::mutex& live_status_mutex() {
  static std::mutex m;
  return m;
}
std::unordered_set<const OrtStatus*>& live_statuses() {
  static auto* set = new std::unordered_set<const OrtStatus*>();  // outlives every plugin
  return *set;
}

void* cpu_alloc(OrtAllocator*, size_t size) {
  // 64-byte aligned, as ONNX Runtime's CPU allocator is; aligned_alloc needs a multiple of the alignment.
  const size_t rounded = (std::max<size_t>(size, 1) + 63) / 64 * 64;
  return std::aligned_alloc(64, rounded);
}
void cpu_free(OrtAllocator*, void* p) { std::free(p); }
const OrtMemoryInfo* cpu_info(const OrtAllocator*) { return &cpu_memory_info(); }

}  // namespace

OrtStatus* make_status(OrtErrorCode code, std::string message) {
  auto* status = new OrtStatus{Magic::kStatus, code, std::move(message)};
  std::lock_guard<std::mutex> lock(live_status_mutex());
  live_statuses().insert(status);
  return status;
}

bool is_live_status(const OrtStatus* status) {
  std::lock_guard<std::mutex> lock(live_status_mutex());
  return live_statuses().count(status) != 0;
}

StatusReading take_status(OrtStatus* status) {
  {
    std::lock_guard<std::mutex> lock(live_status_mutex());
    if (!live_statuses().erase(status))
      return {ORT_EP_FAIL, fmt::format("returned {}, which is not a status made by OrtApi::CreateStatus (or was "
                                       "released already)",
                                       static_cast<const void*>(status))};
  }
  StatusReading reading{status->code, std::move(status->message)};
  delete status;
  return reading;
}

const OrtMemoryInfo& cpu_memory_info() {
  static const OrtMemoryInfo info;
  return info;
}

OrtAllocator* cpu_allocator() {
  // Version 1: Alloc, Free and Info only (the later members stay null, which the version says).
  static OrtAllocator allocator{1, cpu_alloc, cpu_free, cpu_info, nullptr, nullptr, nullptr, nullptr};
  return &allocator;
}

const OrtLogger* default_logger() {
  static const OrtLogger logger{Magic::kLogger, "ort-ep"};
  return &logger;
}

OrtTypeInfo type_info_of(const TypeInfo& type) {
  OrtTypeInfo info;
  if (type.kind == EPHOST_VALUE_SEQUENCE) info.onnx_type = ONNX_TYPE_SEQUENCE;
  else if (type.kind == EPHOST_VALUE_OPTIONAL) info.onnx_type = ONNX_TYPE_OPTIONAL;
  else if (type.kind == EPHOST_VALUE_TENSOR || type.elem_type != 0) info.onnx_type = ONNX_TYPE_TENSOR;
  else info.onnx_type = ONNX_TYPE_UNKNOWN;
  // ephost's element types are ONNX's TensorProto.DataType values, as ONNXTensorElementDataType's are.
  info.elem_type = static_cast<ONNXTensorElementDataType>(type.elem_type);
  info.has_shape = type.has_shape;
  info.dims = type.dims;
  return info;
}

}  // namespace ephost::ort_ep

void OrtKeyValuePairs::set(const std::string& key, const std::string& value) {
  for (size_t i = 0; i < keys.size(); ++i)
    if (keys[i] == key) {
      values[i] = value;
      refresh_views();
      return;
    }
  keys.push_back(key);
  values.push_back(value);
  refresh_views();
}

void OrtKeyValuePairs::remove(const std::string& key) {
  for (size_t i = 0; i < keys.size(); ++i)
    if (keys[i] == key) {
      keys.erase(keys.begin() + static_cast<ptrdiff_t>(i));
      values.erase(values.begin() + static_cast<ptrdiff_t>(i));
      break;
    }
  refresh_views();
}

const std::string* OrtKeyValuePairs::find(const std::string& key) const {
  for (size_t i = 0; i < keys.size(); ++i)
    if (keys[i] == key) return &values[i];
  return nullptr;
}

void OrtKeyValuePairs::refresh_views() {
  key_ptrs.clear();
  value_ptrs.clear();
  for (size_t i = 0; i < keys.size(); ++i) {
    key_ptrs.push_back(keys[i].c_str());
    value_ptrs.push_back(values[i].c_str());
  }
}
