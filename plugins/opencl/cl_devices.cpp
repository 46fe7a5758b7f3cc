#include "cl_devices.h"

#include <string>

#include "cl_runtime.h"

namespace ephost_opencl {
namespace {

using ephost::sdk::DeviceBuffer;
using ephost::sdk::fail;

cl_mem mem_of(const DeviceBuffer& b) { return static_cast<cl_mem>(b.handle); }

// The queue a copy goes on: the stream's (enqueued, done at synchronize), or the device's default queue
// (the copy then blocks until done).
struct CopyQueue {
  cl_command_queue queue;
  cl_bool blocking;
};

CopyQueue copy_queue(uint32_t device, EphostStream* stream) {
  if (stream != nullptr) return {reinterpret_cast<ClStream*>(stream)->queue, CL_FALSE};
  return {ClRuntime::instance().device(device).default_queue(), CL_TRUE};
}

std::string copy_what(const char* direction, uint32_t device, uint64_t bytes) {
  return std::string(direction) + " " + std::to_string(bytes) + " bytes, " + ClRuntime::instance().device(device).label();
}

}  // namespace

std::vector<ephost::sdk::DeviceDescription> OpenclDevices::enumerate() {
  std::vector<ephost::sdk::DeviceDescription> out;
  const auto& devices = ClRuntime::instance().devices();
  if (devices.empty()) ephost::sdk::log(EPHOST_LOG_INFO, "opencl: " + ClRuntime::instance().enumeration_note());
  for (const auto& d : devices) {
    const DeviceIdentity& id = d->identity();
    ephost::sdk::DeviceDescription desc;
    if (id.type & CL_DEVICE_TYPE_GPU)
      desc.type = EPHOST_DEVICE_GPU;
    else if (id.type & CL_DEVICE_TYPE_CPU)
      desc.type = EPHOST_DEVICE_CPU;
    else
      desc.type = EPHOST_DEVICE_ACCELERATOR;
    desc.vendor = id.vendor;
    desc.name = id.name;
    desc.driver_version = id.driver_version;
    desc.hardware_architecture = id.hardware_architecture();
    desc.memory_bytes = d->memory_bytes();
    // Even a CPU device's memory is a cl_mem the host cannot address: values stay in device memory.
    desc.host_memory_usable = false;
    desc.memory_kinds = EPHOST_MEMORY_KIND_BIT(EPHOST_MEMORY_DEVICE);
    out.push_back(desc);
  }
  return out;
}

DeviceBuffer OpenclDevices::allocate(uint32_t device, EphostMemoryKind kind, uint64_t bytes) {
  if (kind != EPHOST_MEMORY_DEVICE) fail(EPHOST_INVALID_ARGUMENT, "opencl: only device memory is offered");
  ClDevice& d = ClRuntime::instance().device(device);
  cl_int err = CL_SUCCESS;
  cl_mem m = clCreateBuffer(d.context(), CL_MEM_READ_WRITE, static_cast<size_t>(bytes), nullptr, &err);
  check_cl_alloc(err, "clCreateBuffer", std::to_string(bytes) + " bytes on " + d.label());
  return DeviceBuffer{m, 0};
}

void OpenclDevices::free(uint32_t, EphostMemoryKind, DeviceBuffer buffer) noexcept {
  if (buffer.handle != nullptr) clReleaseMemObject(mem_of(buffer));
}

void OpenclDevices::copy_to_device(uint32_t device, EphostStream* stream, const void* src, DeviceBuffer dst,
                                   uint64_t bytes) {
  if (bytes == 0) return;
  const CopyQueue q = copy_queue(device, stream);
  check_cl(clEnqueueWriteBuffer(q.queue, mem_of(dst), q.blocking, static_cast<size_t>(dst.offset),
                                static_cast<size_t>(bytes), src, 0, nullptr, nullptr),
           "clEnqueueWriteBuffer", copy_what("copy to device:", device, bytes));
}

void OpenclDevices::copy_to_host(uint32_t device, EphostStream* stream, DeviceBuffer src, void* dst, uint64_t bytes) {
  if (bytes == 0) return;
  const CopyQueue q = copy_queue(device, stream);
  check_cl(clEnqueueReadBuffer(q.queue, mem_of(src), q.blocking, static_cast<size_t>(src.offset),
                               static_cast<size_t>(bytes), dst, 0, nullptr, nullptr),
           "clEnqueueReadBuffer", copy_what("copy to host:", device, bytes));
}

void OpenclDevices::copy_between_devices(EphostStream* stream, uint32_t src_device, DeviceBuffer src,
                                         uint32_t dst_device, DeviceBuffer dst, uint64_t bytes) {
  if (bytes == 0) return;
  const CopyQueue q = copy_queue(src_device, stream);
  if (src_device == dst_device) {
    check_cl(clEnqueueCopyBuffer(q.queue, mem_of(src), mem_of(dst), static_cast<size_t>(src.offset),
                                 static_cast<size_t>(dst.offset), static_cast<size_t>(bytes), 0, nullptr, nullptr),
             "clEnqueueCopyBuffer", copy_what("copy within", src_device, bytes));
    if (q.blocking) check_cl(clFinish(q.queue), "clFinish", copy_what("copy within", src_device, bytes));
    return;
  }
  // Devices of this plugin have a context each, so a copy between two of them goes through host memory
  // (synchronously: the host's staging would do no better).
  std::vector<unsigned char> staging(static_cast<size_t>(bytes));
  check_cl(clEnqueueReadBuffer(q.queue, mem_of(src), CL_TRUE, static_cast<size_t>(src.offset),
                               static_cast<size_t>(bytes), staging.data(), 0, nullptr, nullptr),
           "clEnqueueReadBuffer", copy_what("copy between devices, from", src_device, bytes));
  copy_to_device(dst_device, nullptr, staging.data(), dst, bytes);
}

EphostStream* OpenclDevices::create_stream(uint32_t device) {
  auto s = std::make_unique<ClStream>();
  s->device = device;
  s->queue = ClRuntime::instance().device(device).create_queue();
  return reinterpret_cast<EphostStream*>(s.release());
}

void OpenclDevices::synchronize(EphostStream* stream) {
  auto* s = reinterpret_cast<ClStream*>(stream);
  check_cl(clFinish(s->queue), "clFinish", "stream of " + ClRuntime::instance().device(s->device).label());
}

void OpenclDevices::release_stream(EphostStream* stream) noexcept {
  auto* s = reinterpret_cast<ClStream*>(stream);
  if (s->queue) clReleaseCommandQueue(s->queue);
  delete s;
}

}  // namespace ephost_opencl
