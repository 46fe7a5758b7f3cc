#include "values.h"

#include <pybind11/numpy.h>

#include <cstring>

namespace py = pybind11;

namespace ephost_python {
namespace {

[[noreturn]] void invalid_argument(const std::string& message) {
  throw Ephost::Exception(EPHOST_INVALID_ARGUMENT, message);
}

int32_t elem_type_of_object(py::handle dtype) {
  py::dtype d = py::dtype::from_args(py::reinterpret_borrow<py::object>(dtype));
  const int32_t type = elem_type_of(d);
  if (type == EPHOST_ELEMENT_UNDEFINED)
    invalid_argument("element_type " + py::str(d).cast<std::string>() +
                     " has no ONNX element type: give a numpy type such as numpy.float32");
  return type;
}

// Shared tensors are host memory (a provider host maps it); a device's memory never is.
void check_shared_location(const DeviceName& device) {
  if (!device.provider.empty())
    invalid_argument("shared=True makes a tensor in shared host memory, not on device '" + device.provider +
                     "': use device_type='cpu' (a provider host process copies it to its device straight from there)");
}

}  // namespace

PyValue PyValue::from_numpy(const Ephost::Env& env, py::handle array, const DeviceName& device, bool shared) {
  auto buffers = std::make_shared<InputBuffers>();
  Ephost::Tensor host = buffers->any_tensor(array);
  if (shared) {
    check_shared_location(device);
    if (host.type() == EPHOST_ELEMENT_STRING)
      invalid_argument("a string tensor cannot be shared (shared memory holds numbers only): leave shared=False");
    Ephost::Tensor placed = Ephost::Tensor::shared(host.type(), host.shape());
    py::gil_scoped_release unlocked;
    placed.copy_from(host);
    return PyValue(std::move(placed));
  }
  if (device.provider.empty()) return PyValue(std::move(host), std::move(buffers));
  if (host.type() == EPHOST_ELEMENT_STRING)
    invalid_argument("a string tensor cannot live on device '" + device.provider + "': use device_type='cpu'");
  Ephost::Tensor placed = env.device_tensor(device.provider, device.index, host.type(), host.shape());
  {
    py::gil_scoped_release unlocked;
    placed.copy_from(host);
  }
  return PyValue(std::move(placed));
}

PyValue PyValue::allocate(const Ephost::Env& env, const std::vector<int64_t>& shape, py::handle dtype,
                          const DeviceName& device, bool shared) {
  const auto type = static_cast<EphostElementType>(elem_type_of_object(dtype));
  if (shared) {
    check_shared_location(device);
    return PyValue(Ephost::Tensor::shared(type, shape));
  }
  if (device.provider.empty()) return PyValue(Ephost::Tensor::allocate(type, shape));
  return PyValue(env.device_tensor(device.provider, device.index, type, shape));
}

std::vector<int64_t> PyValue::shape() const {
  if (kind() != EPHOST_VALUE_TENSOR) invalid_argument("the value is no tensor: it has no shape");
  return tensor_.shape();
}

int32_t PyValue::elem_type() const {
  if (kind() == EPHOST_VALUE_SEQUENCE) return tensor_.sequence_type();
  return tensor_ ? tensor_.type() : EPHOST_ELEMENT_UNDEFINED;
}

DeviceName PyValue::location() const {
  if (kind() != EPHOST_VALUE_TENSOR) return {};
  EphostMemoryLocation where = EPHOST_LOCATION_HOST;
  const char* provider = nullptr;
  uint32_t index = 0;
  Ephost::check(Ephost::api().TensorGetLocation(tensor_.get(), &where, &provider, &index));
  if (where != EPHOST_LOCATION_DEVICE || !provider) return {};
  return {provider, index};
}

py::object PyValue::numpy() const {
  if (kind() != EPHOST_VALUE_TENSOR) return to_python(tensor_);
  if (!location().provider.empty()) {
    Ephost::Tensor host = Ephost::Tensor::allocate(tensor_.type(), tensor_.shape());
    {
      py::gil_scoped_release unlocked;
      host.copy_from(tensor_);
    }
    return to_python(host);
  }
  const int32_t type = tensor_.type();
  // Strings and the packed types (unpacked into a new array) are copies, not views.
  if (type == EPHOST_ELEMENT_STRING || !buffers_ || tensor_.size() == 0 || EphostElementSize(type) == 0)
    return to_python(tensor_);
  // A view of a buffer that belongs to a numpy array: the array keeps this value (and so that buffer)
  // alive.
  const std::vector<int64_t> shape = tensor_.shape();
  std::vector<py::ssize_t> dims(shape.begin(), shape.end());
  auto* owner = new PyValue(*this);
  py::capsule keep(owner, [](void* p) { delete static_cast<PyValue*>(p); });
  return py::array(dtype_of(type, "value"), dims, tensor_.data<void>(), keep);
}

void PyValue::update_inplace(py::handle object) {
  InputBuffers buffers;
  Ephost::Tensor source = buffers.any_tensor(object);
  if (kind() != EPHOST_VALUE_TENSOR) invalid_argument("update_inplace needs a tensor value");
  if (source.type() != tensor_.type() || source.size() != tensor_.size())
    invalid_argument("update_inplace: the array holds " + std::to_string(source.size()) + " elements of type " +
                     EphostElementTypeName(source.type()) + ", the value " + std::to_string(tensor_.size()) + " of " +
                     EphostElementTypeName(tensor_.type()) + ": give an array of the value's type and size");
  if (source.type() == EPHOST_ELEMENT_STRING) invalid_argument("update_inplace does not take string tensors");
  // Same element count: copied through a tensor of the value's shape over the array's buffer.
  EphostTensor* reshaped = nullptr;
  const std::vector<int64_t> shape = tensor_.shape();
  Ephost::check(Ephost::api().CreateTensorWithData(source.type(), shape.data(), shape.size(), source.data<void>(),
                                                   EphostTensorDataSize(source.type(), source.size()),
                                                   &reshaped));
  Ephost::Tensor view(reshaped);
  py::gil_scoped_release unlocked;
  tensor_.copy_from(view);
}

uintptr_t PyValue::data_ptr() const {
  if (kind() != EPHOST_VALUE_TENSOR) invalid_argument("the value is no tensor: it has no data pointer");
  return reinterpret_cast<uintptr_t>(tensor_.data<void>());
}

bool PyValue::is_shared() const {
  return kind() == EPHOST_VALUE_TENSOR && tensor_.is_shared();
}

void PyIoBinding::bind_input(const std::string& name, const PyValue& value) {
  binding_.bind_input(name, value.tensor());
  inputs_keep_[name] = value.buffers();
}

void PyIoBinding::bind_output(const std::string& name, const PyValue& value) {
  binding_.bind_output(name, value.tensor());
  outputs_keep_[name] = value.buffers();
}

void PyIoBinding::bind_output_to_device(const std::string& name, const DeviceName& device) {
  binding_.bind_output_to_device(name, device.provider, device.index);
  outputs_keep_.erase(name);
}

void PyIoBinding::run(const Ephost::RunOptions* options) {
  py::gil_scoped_release unlocked;
  binding_.run(options);
}

PyValue PyIoBinding::output(const std::string& name) const {
  auto kept = outputs_keep_.find(name);
  return PyValue(binding_.output(name), kept != outputs_keep_.end() ? kept->second : nullptr);
}

}  // namespace ephost_python
