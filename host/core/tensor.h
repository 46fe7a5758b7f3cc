// Tensor: the host's value type. Owns its buffer (or borrows the caller's), knows its element type
// and shape, and hands plugins an EphostTensorView of itself. A tensor lives in host memory, or (plugin
// ABI 3) in a device's memory: then data() is null and only the device's plugin reaches the elements.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ephost/ephost_plugin.h"

namespace ephost {

class Device;

// Bytes per element; sizeof(const char*) for strings; 0 for unknown types and for the packed sub-byte
// types (int4, uint4, float4e2m1, int2, uint2), which byte_count and Tensor::byte_size size instead.
size_t element_size(int32_t elem_type);
// True for every element type the host can hold (EphostElementBits is not 0), packed ones included.
bool element_type_known(int32_t elem_type);
// Bytes that `count` elements take, packed as ONNX packs sub-byte types (EphostTensorDataSize).
size_t data_bytes(int32_t elem_type, int64_t count);
// "float", "int64", ... for messages (EphostElementTypeName).
const char* element_type_name(int32_t elem_type);
// Product of dims; 1 for a scalar. Throws INVALID_ARGUMENT on a negative dim or overflow.
int64_t element_count(const std::vector<int64_t>& shape);
// Bytes of a tensor of `elem_type` and `shape`: data_bytes of its element count. Throws
// INVALID_ARGUMENT on a negative dim, or when the product overflows (a hostile shape such as
// [9223372036854775807] must never wrap into a small buffer). Every shape that becomes a byte count
// goes through here.
size_t byte_count(int32_t elem_type, const std::vector<int64_t>& shape);
// "[1,3,640,640]"
std::string shape_to_string(const std::vector<int64_t>& shape);

// 64-byte aligned buffer that frees itself. Throws FAIL ("out of memory: ...", naming the size) when
// the allocation fails or `bytes` exceeds EPHOST_TENSOR_BYTES_LIMIT (an environment variable, 0 or
// unset: no limit).
std::shared_ptr<void> allocate_aligned(size_t bytes);

// Gives the bytes of released tensors back (model/initializer_release.h does it for a session's
// initializers read from a model file).
class TensorRestorer {
 public:
  virtual ~TensorRestorer() = default;
  // Puts the bytes back into every tensor it released (Tensor::adopt_data), or throws saying why it
  // cannot (never leaves other bytes in one).
  virtual void restore_all() = 0;
};

class Tensor {
 public:
  Tensor() = default;

  // New tensor with an uninitialized (numeric) or empty-string-filled (string) buffer.
  static Tensor allocate(int32_t elem_type, std::vector<int64_t> shape);
  // A tensor over someone else's memory; `keep_alive` (may be null) is held as long as the tensor.
  static Tensor borrow(int32_t elem_type, std::vector<int64_t> shape, void* data,
                       std::shared_ptr<void> keep_alive = nullptr);
  // A tensor in `device`'s memory at `buffer`; `keep_alive` (the DeviceAllocation behind it, or a
  // block holding it) is held as long as the tensor.
  static Tensor on_device(const Device& device, int32_t elem_type, std::vector<int64_t> shape,
                          EphostDeviceBuffer buffer, std::shared_ptr<void> keep_alive);
  // A new device tensor with memory of its own (contents undefined). `what` names it in errors.
  static Tensor allocate_on_device(const Device& device, int32_t elem_type, std::vector<int64_t> shape,
                                   const std::string& what);

  // The device whose memory holds the elements, or null for host memory.
  const Device* device() const { return device_; }
  bool on_device() const { return device_ != nullptr; }
  // Device tensors: where the elements are.
  EphostDeviceBuffer device_buffer() const { return buffer_; }

  int32_t elem_type() const { return elem_type_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  int64_t element_count() const { return count_; }
  size_t byte_size() const { return data_bytes(elem_type_, count_); }
  void* data() { return data_; }
  const void* data() const { return data_; }
  template <typename T>
  T* data_as() { return static_cast<T*>(data_); }
  template <typename T>
  const T* data_as() const { return static_cast<const T*>(data_); }
  bool empty() const { return elem_type_ == EPHOST_ELEMENT_UNDEFINED; }

  // For string tensors: store a copy of `s` and return a pointer that lives as long as the tensor.
  const char* intern_string(const char* s, size_t size);
  // For string tensors: set element i (copies).
  void set_string(size_t i, const std::string& s);

  // The buffer's owner (null for borrowed memory without a keep-alive): lets the executor hand a
  // dead value's buffer to the next value that reuses it.
  const std::shared_ptr<void>& holder() const { return holder_; }

  EphostTensorView view() const { return EphostTensorView{elem_type_, shape_.size(), shape_.data(), data_}; }

  // Released bytes (initializers every reader is done with): a host tensor gives its buffer back and
  // keeps its type and shape; data() is null until `restorer` puts the bytes back (adopt_data). Copies
  // made before keep their own reference to the buffer. Called by the restorer, under its lock; the
  // first call keeps `restorer` for the tensor's life (later ones must pass the same).
  void release_data(std::shared_ptr<TensorRestorer> restorer);
  // Takes `source`'s buffer (the same type and shape, checked: INVALID_ARGUMENT) and ends the release.
  void adopt_data(Tensor&& source);
  // Whether the bytes are released now. Safe while another thread releases or restores them: the
  // bytes a restore put back are visible to a thread that reads false here.
  bool data_released() const { return released_.get(); }
  // A released tensor gets its bytes back (its restorer's restore_all, which throws when it cannot);
  // nothing happens to any other. Every reader that may meet a released initializer calls it first.
  void ensure_data() {
    if (released_.get()) restorer_->restore_all();
  }
  // A deep copy with its own buffer, in the same place (host, or the same device: a synchronous copy).
  Tensor clone() const;

 private:
  int32_t elem_type_ = EPHOST_ELEMENT_UNDEFINED;
  std::vector<int64_t> shape_;
  int64_t count_ = 0;
  void* data_ = nullptr;
  std::shared_ptr<void> holder_;
  const Device* device_ = nullptr;
  EphostDeviceBuffer buffer_{};
  // String tensors keep their characters here; data_ is an array of pointers into it.
  std::shared_ptr<std::vector<std::unique_ptr<std::string>>> string_store_;
  // Whether the bytes are released (release_data), readable from any thread; copyable, so that a
  // Tensor stays a value type (a copy takes the flag as it is then).
  class ReleasedFlag {
   public:
    ReleasedFlag() = default;
    ReleasedFlag(const ReleasedFlag& o) : v_(o.get()) {}
    ReleasedFlag& operator=(const ReleasedFlag& o) {
      v_.store(o.get(), std::memory_order_relaxed);
      return *this;
    }
    bool get() const { return v_.load(std::memory_order_acquire); }
    void set(bool v) { v_.store(v, std::memory_order_release); }

   private:
    std::atomic<bool> v_{false};
  };
  // Who puts released bytes back: set by the first release_data, never changed after (so that a
  // thread that saw released_ set reads it without a lock).
  std::shared_ptr<TensorRestorer> restorer_;
  ReleasedFlag released_;
};

}  // namespace ephost
