// The OpenCL platforms and devices this process sees, found once per library: each device's identity
// (what EPContext binaries are bound to), and its context and default queue, created when first used.
// Thread-safe; lives until the process ends (the library is linked with -z nodelete, so that neither it
// nor the OpenCL driver is unloaded while driver threads may still run).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "cl_error.h"

namespace ephost_opencl {

// What a device and its driver say about themselves: the facts a compiled program binary depends on.
struct DeviceIdentity {
  std::string platform;          // CL_PLATFORM_NAME, e.g. "Portable Computing Language"
  std::string vendor;            // CL_DEVICE_VENDOR
  std::string name;              // CL_DEVICE_NAME, e.g. "pthread-skylake-avx512-AMD EPYC"
  std::string device_version;    // CL_DEVICE_VERSION, e.g. "OpenCL 3.0 PoCL HSTR: pthread-x86_64-..."
  std::string driver_version;    // CL_DRIVER_VERSION, e.g. "3.1+debian"
  std::string opencl_c_version;  // CL_DEVICE_OPENCL_C_VERSION, e.g. "OpenCL C 1.2 PoCL"
  cl_device_type type = 0;
  // CL_DEVICE_SINGLE_FP_CONFIG has CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT: programs are then built with
  // -cl-fp32-correctly-rounded-divide-sqrt (codegen.h, build_options).
  bool correctly_rounded_divide = false;

  // The hardware string after "HSTR: " in the device version (PoCL, some vendor drivers), else the
  // device name: what EPContext nodes record as hardware_architecture.
  std::string hardware_architecture() const;
  // "OpenCL 3.0": the version token of the device version, recorded as ep_sdk_version.
  std::string opencl_version() const;
  // "cpu", "gpu", "accelerator" (the words of ep.opencl.device_types).
  std::string type_word() const;
};

class ClDevice {
 public:
  ClDevice(cl_platform_id platform, cl_device_id device, DeviceIdentity identity, uint64_t memory_bytes);
  ClDevice(const ClDevice&) = delete;
  ClDevice& operator=(const ClDevice&) = delete;

  const DeviceIdentity& identity() const { return identity_; }
  cl_device_id id() const { return device_; }
  uint64_t memory_bytes() const { return memory_bytes_; }
  // The device's context (one per device, shared by every provider, buffer and queue of it).
  cl_context context();
  // A queue for synchronous work (copies without a stream, uploads of weights).
  cl_command_queue default_queue();
  // A new in-order queue of this device's context (a stream); the caller releases it.
  cl_command_queue create_queue();
  // "device 0 'pthread-...' (Portable Computing Language)", for messages.
  std::string label() const { return label_; }
  void set_label(std::string label) { label_ = std::move(label); }

 private:
  cl_platform_id platform_;
  cl_device_id device_;
  DeviceIdentity identity_;
  uint64_t memory_bytes_;
  std::string label_;
  std::mutex mutex_;
  cl_context context_ = nullptr;
  cl_command_queue default_queue_ = nullptr;
};

class ClRuntime {
 public:
  static ClRuntime& instance();
  // Every device of every platform, in platform order then device order. Empty when there is no
  // OpenCL platform (why: enumeration_note()).
  const std::vector<std::unique_ptr<ClDevice>>& devices() const { return devices_; }
  ClDevice& device(uint32_t index) const;
  const std::string& enumeration_note() const { return note_; }

 private:
  ClRuntime();
  std::vector<std::unique_ptr<ClDevice>> devices_;
  std::string note_;
};

// One stream of the ABI: an in-order command queue of a device.
struct ClStream {
  uint32_t device = 0;
  cl_command_queue queue = nullptr;
};

}  // namespace ephost_opencl
