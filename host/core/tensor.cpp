#include "core/tensor.h"

#include <cstdlib>
#include <cstring>
#include <limits>

#include "core/device.h"
#include "core/error.h"
#include "core/tensor_copy.h"

namespace ephost {

size_t element_size(int32_t t) { return EphostElementSize(t); }

bool element_type_known(int32_t t) { return EphostElementBits(t) != 0; }

size_t data_bytes(int32_t t, int64_t count) { return EphostTensorDataSize(t, static_cast<size_t>(count)); }

const char* element_type_name(int32_t t) { return EphostElementTypeName(t); }

int64_t element_count(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) fail(EPHOST_INVALID_ARGUMENT, "shape {} has a negative dimension", shape_to_string(shape));
    if (d != 0 && n > std::numeric_limits<int64_t>::max() / d)
      fail(EPHOST_INVALID_ARGUMENT, "shape {} has too many elements", shape_to_string(shape));
    n *= d;
  }
  return n;
}

size_t byte_count(int32_t elem_type, const std::vector<int64_t>& shape) {
  const int64_t count = element_count(shape);
  // Room left for rounding up to the 64-byte alignment of allocate_aligned.
  constexpr uint64_t kMaxBytes = static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) - 64;
  const size_t bytes = data_bytes(elem_type, count);
  if (bytes > kMaxBytes)
    fail(EPHOST_INVALID_ARGUMENT, "a tensor of type {} and shape {} would take more bytes than can be counted",
         element_type_name(elem_type), shape_to_string(shape));
  return bytes;
}

std::string shape_to_string(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ",";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

namespace {

// EPHOST_TENSOR_BYTES_LIMIT: the largest buffer the host allocates for one value (0: no limit). Fuzzing
// and tests of hostile models set it, so that a model asking for a terabyte gets a clear error instead
// of an allocator that gives up in its own way. Plugins bound their kernels' working buffers by the
// same variable (the SDK's buffer_bytes_limit and scratch_vector, ephost/sdk/scratch.hpp).
size_t tensor_bytes_limit() {
  static const size_t limit = [] {
    const char* v = std::getenv("EPHOST_TENSOR_BYTES_LIMIT");
    return v ? static_cast<size_t>(std::strtoull(v, nullptr, 10)) : size_t{0};
  }();
  return limit;
}

}  // namespace

std::shared_ptr<void> allocate_aligned(size_t bytes) {
  if (tensor_bytes_limit() && bytes > tensor_bytes_limit())
    fail(EPHOST_FAIL, "out of memory: a buffer of {} bytes exceeds EPHOST_TENSOR_BYTES_LIMIT ({} bytes)", bytes,
         tensor_bytes_limit());
  // A failure names the size, so that "out of memory" from a model asking for 4 TB reads as such.
  if (bytes > std::numeric_limits<size_t>::max() - 63)
    fail(EPHOST_FAIL, "out of memory: a buffer of {} bytes is larger than any memory", bytes);
  size_t rounded = (bytes + 63) / 64 * 64;
  if (rounded == 0) rounded = 64;
  void* p = std::aligned_alloc(64, rounded);
  if (!p) fail(EPHOST_FAIL, "out of memory: could not allocate a buffer of {} bytes", bytes);
  return std::shared_ptr<void>(p, [](void* q) { std::free(q); });
}

Tensor Tensor::allocate(int32_t elem_type, std::vector<int64_t> shape) {
  if (!element_type_known(elem_type))
    fail(EPHOST_INVALID_ARGUMENT, "cannot allocate a tensor of element type {}", elem_type);
  Tensor t;
  t.elem_type_ = elem_type;
  const size_t bytes = byte_count(elem_type, shape);
  t.count_ = ephost::element_count(shape);
  t.shape_ = std::move(shape);
  t.holder_ = allocate_aligned(bytes);
  t.data_ = t.holder_.get();
  if (elem_type == EPHOST_ELEMENT_STRING) {
    t.string_store_ = std::make_shared<std::vector<std::unique_ptr<std::string>>>();
    auto** p = static_cast<const char**>(t.data_);
    for (int64_t i = 0; i < t.count_; ++i) p[i] = "";
  }
  return t;
}

Tensor Tensor::borrow(int32_t elem_type, std::vector<int64_t> shape, void* data, std::shared_ptr<void> keep_alive) {
  Tensor t;
  t.elem_type_ = elem_type;
  t.count_ = ephost::element_count(shape);
  t.shape_ = std::move(shape);
  t.data_ = data;
  t.holder_ = std::move(keep_alive);
  return t;
}

const char* Tensor::intern_string(const char* s, size_t size) {
  if (!string_store_) string_store_ = std::make_shared<std::vector<std::unique_ptr<std::string>>>();
  string_store_->push_back(std::make_unique<std::string>(s, size));
  return string_store_->back()->c_str();
}

void Tensor::set_string(size_t i, const std::string& s) {
  static_cast<const char**>(data_)[i] = intern_string(s.data(), s.size());
}

Tensor Tensor::on_device(const Device& device, int32_t elem_type, std::vector<int64_t> shape,
                         EphostDeviceBuffer buffer, std::shared_ptr<void> keep_alive) {
  if (!element_type_known(elem_type) || elem_type == EPHOST_ELEMENT_STRING)
    fail(EPHOST_INVALID_ARGUMENT, "a {} tensor cannot live in device memory ({})", element_type_name(elem_type),
         device.label());
  Tensor t;
  t.elem_type_ = elem_type;
  t.count_ = ephost::element_count(shape);
  t.shape_ = std::move(shape);
  t.device_ = &device;
  t.buffer_ = buffer;
  t.holder_ = std::move(keep_alive);
  return t;
}

Tensor Tensor::allocate_on_device(const Device& device, int32_t elem_type, std::vector<int64_t> shape,
                                  const std::string& what) {
  if (!element_type_known(elem_type) || elem_type == EPHOST_ELEMENT_STRING)
    fail(EPHOST_INVALID_ARGUMENT, "a {} tensor cannot live in device memory ({})", element_type_name(elem_type),
         device.label());
  const uint64_t bytes = byte_count(elem_type, shape);  // checked: a hostile shape is an error, not a wrap
  auto allocation = std::make_shared<DeviceAllocation>(device, bytes, what);
  const EphostDeviceBuffer buffer = allocation->buffer();
  return on_device(device, elem_type, std::move(shape), buffer, std::move(allocation));
}

Tensor Tensor::clone() const {
  if (empty()) return Tensor();
  if (device_) {
    Tensor t = allocate_on_device(*device_, elem_type_, shape_, "a copy");
    copy_tensor(*this, t, nullptr);
    return t;
  }
  Tensor t = allocate(elem_type_, shape_);
  if (elem_type_ == EPHOST_ELEMENT_STRING) {
    const char* const* src = static_cast<const char* const*>(data_);
    for (int64_t i = 0; i < count_; ++i) t.set_string(static_cast<size_t>(i), src[i]);
  } else if (count_ > 0) {
    std::memcpy(t.data_, data_, byte_size());
  }
  return t;
}

void Tensor::release_data(std::shared_ptr<TensorRestorer> restorer) {
  if (device_ || elem_type_ == EPHOST_ELEMENT_STRING || !restorer || (restorer_ && restorer_ != restorer))
    fail(EPHOST_INVALID_ARGUMENT, "only host tensors of numbers can give their bytes back, to one restorer (internal error)");
  if (!restorer_) restorer_ = std::move(restorer);  // before the flag: a reader that sees it set uses it
  holder_.reset();
  data_ = nullptr;
  released_.set(true);
}

void Tensor::adopt_data(Tensor&& source) {
  if (source.elem_type_ != elem_type_ || source.shape_ != shape_ || source.device_ || device_)
    fail(EPHOST_INVALID_ARGUMENT, "restored bytes are a {} {}, the tensor a {} {}", element_type_name(source.elem_type_),
         shape_to_string(source.shape_), element_type_name(elem_type_), shape_to_string(shape_));
  data_ = source.data_;
  holder_ = std::move(source.holder_);
  string_store_ = std::move(source.string_store_);
  released_.set(false);  // after the bytes: a reader that sees it clear sees them
}

}  // namespace ephost
