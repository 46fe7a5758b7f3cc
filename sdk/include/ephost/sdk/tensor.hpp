// ephost plugin SDK — element types and sizes, and Tensor, a borrowed view of a tensor.
// Part of the plugin SDK; include "ephost/sdk/plugin.hpp", which brings every part.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "ephost/ephost_plugin.h"

namespace ephost::sdk {

inline size_t element_size(int32_t elem_type) { return EphostElementSize(elem_type); }

// The element type a C++ type stands for (uint16_t means UINT16: pass FLOAT16/BFLOAT16 explicitly).
template <typename T>
constexpr int32_t element_type_of() {
  if constexpr (std::is_same_v<T, float>) return EPHOST_ELEMENT_FLOAT;
  else if constexpr (std::is_same_v<T, double>) return EPHOST_ELEMENT_DOUBLE;
  else if constexpr (std::is_same_v<T, int64_t>) return EPHOST_ELEMENT_INT64;
  else if constexpr (std::is_same_v<T, int32_t>) return EPHOST_ELEMENT_INT32;
  else if constexpr (std::is_same_v<T, int16_t>) return EPHOST_ELEMENT_INT16;
  else if constexpr (std::is_same_v<T, int8_t>) return EPHOST_ELEMENT_INT8;
  else if constexpr (std::is_same_v<T, uint64_t>) return EPHOST_ELEMENT_UINT64;
  else if constexpr (std::is_same_v<T, uint32_t>) return EPHOST_ELEMENT_UINT32;
  else if constexpr (std::is_same_v<T, uint16_t>) return EPHOST_ELEMENT_UINT16;
  else if constexpr (std::is_same_v<T, uint8_t>) return EPHOST_ELEMENT_UINT8;
  else if constexpr (std::is_same_v<T, bool>) return EPHOST_ELEMENT_BOOL;
  else if constexpr (std::is_same_v<T, const char*>) return EPHOST_ELEMENT_STRING;
  else return EPHOST_ELEMENT_UNDEFINED;
}

inline int64_t element_count(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

// A borrowed tensor (an input, a constant initializer or an attribute tensor).
class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(const EphostTensorView& view) : view_(view) {}
  bool present() const { return view_.data != nullptr; }
  int32_t elem_type() const { return view_.elem_type; }
  size_t rank() const { return view_.rank; }
  std::vector<int64_t> shape() const { return std::vector<int64_t>(view_.shape, view_.shape + view_.rank); }
  int64_t dim(size_t i) const { return view_.shape[i]; }
  int64_t size() const {
    int64_t n = 1;
    for (size_t i = 0; i < view_.rank; ++i) n *= view_.shape[i];
    return n;
  }
  template <typename T>
  const T* data() const { return static_cast<const T*>(view_.data); }
  const void* raw() const { return view_.data; }
  const EphostTensorView& view() const { return view_; }

 private:
  EphostTensorView view_{EPHOST_ELEMENT_UNDEFINED, 0, nullptr, nullptr};
};

}  // namespace ephost::sdk
