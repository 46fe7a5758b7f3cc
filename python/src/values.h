// The values behind ephost.OrtValue and ephost.IOBinding: C API tensors in host or device memory
// (API 3's device tensors), made from numpy arrays or allocated, read back as numpy arrays; and bound
// runs (API 3's IoBinding) with run options (API 4).
#pragma once

#include <pybind11/pybind11.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ephost/ephost_cxx_api.h"
#include "numpy_values.h"

namespace ephost_python {

// A device: the plugin (provider) name and its device index; no name: host memory.
struct DeviceName {
  std::string provider;  // "" for the host
  uint32_t index = 0;
};

class PyValue {
 public:
  PyValue() = default;
  explicit PyValue(Ephost::Tensor tensor, std::shared_ptr<InputBuffers> buffers = nullptr)
      : tensor_(std::move(tensor)), buffers_(std::move(buffers)) {}

  // Over the array's buffer (no copy when it is C-contiguous) on the host; copied to the device
  // otherwise. `shared`: copied into a new shared tensor (host memory only).
  static PyValue from_numpy(const Ephost::Env& env, pybind11::handle array, const DeviceName& device,
                            bool shared = false);
  // Allocated: zero-filled on the host, uninitialized on a device. `shared`: a shared tensor (API 6,
  // CreateSharedTensor: host memory that a provider in a provider host process reads and writes in
  // place); InvalidArgument on a device or for strings.
  static PyValue allocate(const Ephost::Env& env, const std::vector<int64_t>& shape, pybind11::handle dtype,
                          const DeviceName& device, bool shared = false);

  const Ephost::Tensor& tensor() const { return tensor_; }
  EphostValueKind kind() const { return tensor_ ? tensor_.kind() : EPHOST_VALUE_UNDEFINED; }
  std::vector<int64_t> shape() const;
  int32_t elem_type() const;
  // Where it lives: "" (host) or the plugin's name, and the device index.
  DeviceName location() const;
  // A numpy array: a view of a host tensor's buffer (kept alive by the array), a host copy of a device
  // tensor; a list for a sequence, None for an empty optional.
  pybind11::object numpy() const;
  // Copies the array's elements into the value (same element type and element count).
  void update_inplace(pybind11::handle array);
  uintptr_t data_ptr() const;
  // Whether a tensor's elements lie in shared memory (TensorIsShared); false for other kinds.
  bool is_shared() const;
  const std::shared_ptr<InputBuffers>& buffers() const { return buffers_; }

 private:
  Ephost::Tensor tensor_;
  std::shared_ptr<InputBuffers> buffers_;  // what the tensor's buffer belongs to, if Python's
};

// ONNX Runtime's IoBinding over the C API's: inputs and outputs bound by name to values or devices.
class PyIoBinding {
 public:
  explicit PyIoBinding(const Ephost::Session& session) : binding_(session) {}
  void bind_input(const std::string& name, const PyValue& value);
  void bind_output(const std::string& name, const PyValue& value);
  void bind_output_to_device(const std::string& name, const DeviceName& device);
  void run(const Ephost::RunOptions* options);
  PyValue output(const std::string& name) const;
  void clear() {
    binding_.clear();
    inputs_keep_.clear();
    outputs_keep_.clear();
  }

 private:
  Ephost::Session::IoBinding binding_;
  // Buffers of bound values that belong to numpy arrays, by name: kept while bound.
  std::map<std::string, std::shared_ptr<InputBuffers>> inputs_keep_, outputs_keep_;
};

}  // namespace ephost_python
