#include "cl_runtime.h"

#include "ephost/sdk/plugin.hpp"

namespace ephost_opencl {
namespace {

std::string platform_string(cl_platform_id p, cl_platform_info what) {
  size_t n = 0;
  if (clGetPlatformInfo(p, what, 0, nullptr, &n) != CL_SUCCESS || n == 0) return "";
  std::string s(n, '\0');
  if (clGetPlatformInfo(p, what, n, &s[0], nullptr) != CL_SUCCESS) return "";
  while (!s.empty() && s.back() == '\0') s.pop_back();
  return s;
}

std::string device_string(cl_device_id d, cl_device_info what) {
  size_t n = 0;
  if (clGetDeviceInfo(d, what, 0, nullptr, &n) != CL_SUCCESS || n == 0) return "";
  std::string s(n, '\0');
  if (clGetDeviceInfo(d, what, n, &s[0], nullptr) != CL_SUCCESS) return "";
  while (!s.empty() && (s.back() == '\0' || s.back() == ' ')) s.pop_back();
  return s;
}

}  // namespace

std::string DeviceIdentity::hardware_architecture() const {
  const std::string marker = "HSTR: ";
  const size_t at = device_version.find(marker);
  if (at == std::string::npos) return name;
  std::string hstr = device_version.substr(at + marker.size());
  const size_t end = hstr.find(' ');
  return end == std::string::npos ? hstr : hstr.substr(0, end);
}

std::string DeviceIdentity::opencl_version() const {
  // "OpenCL <major>.<minor> <vendor-specific>"
  const size_t space = device_version.find(' ', 7);
  return device_version.substr(0, space);
}

std::string DeviceIdentity::type_word() const {
  if (type & CL_DEVICE_TYPE_GPU) return "gpu";
  if (type & CL_DEVICE_TYPE_CPU) return "cpu";
  return "accelerator";
}

ClDevice::ClDevice(cl_platform_id platform, cl_device_id device, DeviceIdentity identity, uint64_t memory_bytes)
    : platform_(platform), device_(device), identity_(std::move(identity)), memory_bytes_(memory_bytes) {}

cl_context ClDevice::context() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (context_ == nullptr) {
    cl_context_properties props[] = {CL_CONTEXT_PLATFORM, reinterpret_cast<cl_context_properties>(platform_), 0};
    cl_int err = CL_SUCCESS;
    cl_context c = clCreateContext(props, 1, &device_, nullptr, nullptr, &err);
    check_cl(err, "clCreateContext", label_);
    context_ = c;
  }
  return context_;
}

cl_command_queue ClDevice::create_queue() {
  cl_context c = context();
  cl_int err = CL_SUCCESS;
  cl_command_queue q = clCreateCommandQueue(c, device_, 0, &err);
  check_cl(err, "clCreateCommandQueue", label_);
  return q;
}

cl_command_queue ClDevice::default_queue() {
  cl_context c = context();
  std::lock_guard<std::mutex> lock(mutex_);
  if (default_queue_ == nullptr) {
    cl_int err = CL_SUCCESS;
    cl_command_queue q = clCreateCommandQueue(c, device_, 0, &err);
    check_cl(err, "clCreateCommandQueue", label_);
    default_queue_ = q;
  }
  return default_queue_;
}

ClRuntime& ClRuntime::instance() {
  // Never destroyed: OpenCL objects must not be released from static destructors, when the driver may
  // already be shutting down. The process's exit reclaims them.
  static ClRuntime* runtime = new ClRuntime();
  return *runtime;
}

ClRuntime::ClRuntime() {
  cl_uint platform_count = 0;
  cl_int err = clGetPlatformIDs(0, nullptr, &platform_count);
  if (err != CL_SUCCESS || platform_count == 0) {
    note_ = "no OpenCL platform (clGetPlatformIDs: " + cl_error_name(err == CL_SUCCESS ? -1001 : err) +
            "): install an OpenCL driver (ICD), e.g. Debian's pocl-opencl-icd";
    return;
  }
  std::vector<cl_platform_id> platforms(platform_count);
  if (clGetPlatformIDs(platform_count, platforms.data(), nullptr) != CL_SUCCESS) return;
  for (cl_platform_id p : platforms) {
    cl_uint count = 0;
    if (clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, nullptr, &count) != CL_SUCCESS || count == 0) continue;
    std::vector<cl_device_id> ids(count);
    if (clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, count, ids.data(), nullptr) != CL_SUCCESS) continue;
    for (cl_device_id d : ids) {
      DeviceIdentity id;
      id.platform = platform_string(p, CL_PLATFORM_NAME);
      id.vendor = device_string(d, CL_DEVICE_VENDOR);
      id.name = device_string(d, CL_DEVICE_NAME);
      id.device_version = device_string(d, CL_DEVICE_VERSION);
      id.driver_version = device_string(d, CL_DRIVER_VERSION);
      id.opencl_c_version = device_string(d, CL_DEVICE_OPENCL_C_VERSION);
      clGetDeviceInfo(d, CL_DEVICE_TYPE, sizeof(id.type), &id.type, nullptr);
      cl_device_fp_config fp = 0;
      if (clGetDeviceInfo(d, CL_DEVICE_SINGLE_FP_CONFIG, sizeof(fp), &fp, nullptr) == CL_SUCCESS)
        id.correctly_rounded_divide = (fp & CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT) != 0;
      cl_ulong memory = 0;
      clGetDeviceInfo(d, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof(memory), &memory, nullptr);
      auto device = std::make_unique<ClDevice>(p, d, id, memory);
      device->set_label("device " + std::to_string(devices_.size()) + " '" + id.name + "' (" + id.platform + ")");
      devices_.push_back(std::move(device));
    }
  }
  if (devices_.empty()) note_ = "the OpenCL platforms list no device";
}

ClDevice& ClRuntime::device(uint32_t index) const {
  if (index >= devices_.size())
    ephost::sdk::fail(EPHOST_INVALID_ARGUMENT, "opencl: no device " + std::to_string(index) + " (the plugin has " +
                                                   std::to_string(devices_.size()) + ")");
  return *devices_[index];
}

}  // namespace ephost_opencl
