// Little-endian writing and bounds-checked reading of the context format, defined byte by byte (never by
// struct layout), so that a context reads the same whatever compiled the plugin.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "ephost/sdk/plugin.hpp"

namespace ephost_opencl {

class ByteWriter {
 public:
  void u32(uint32_t v) { put(v, 4); }
  void u64(uint64_t v) { put(v, 8); }
  void i64(int64_t v) { put(static_cast<uint64_t>(v), 8); }
  void i32(int32_t v) { put(static_cast<uint32_t>(v), 4); }
  void f32(float v) {
    uint32_t bits;
    std::memcpy(&bits, &v, 4);
    put(bits, 4);
  }
  void str(const std::string& s) {
    u32(static_cast<uint32_t>(s.size()));
    bytes_.insert(bytes_.end(), s.begin(), s.end());
  }
  void raw(const void* data, size_t size) {
    const auto* p = static_cast<const uint8_t*>(data);
    bytes_.insert(bytes_.end(), p, p + size);
  }
  void patch_u64(size_t offset, uint64_t v) {
    for (int i = 0; i < 8; ++i) bytes_[offset + i] = static_cast<uint8_t>(v >> (8 * i));
  }
  size_t size() const { return bytes_.size(); }
  std::vector<uint8_t>& bytes() { return bytes_; }

 private:
  void put(uint64_t v, int n) {
    for (int i = 0; i < n; ++i) bytes_.push_back(static_cast<uint8_t>(v >> (8 * i)));
  }
  std::vector<uint8_t> bytes_;
};

// Reads [data, data + size); a read past the end, an oversized string or an impossible count throws
// ephost::sdk::Error (EPHOST_INVALID_ARGUMENT) naming `what` instead.
class ByteReader {
 public:
  ByteReader(const uint8_t* data, size_t size, std::string what) : p_(data), end_(data + size), what_(std::move(what)) {}
  uint32_t u32() { return static_cast<uint32_t>(get(4)); }
  uint64_t u64() { return get(8); }
  int64_t i64() { return static_cast<int64_t>(get(8)); }
  int32_t i32() { return static_cast<int32_t>(static_cast<uint32_t>(get(4))); }
  float f32() {
    const uint32_t bits = static_cast<uint32_t>(get(4));
    float v;
    std::memcpy(&v, &bits, 4);
    return v;
  }
  std::string str(size_t max_size = 1u << 20) {
    const uint32_t n = u32();
    if (n > max_size) fail("a string of " + std::to_string(n) + " bytes");
    const uint8_t* p = take(n);
    return std::string(reinterpret_cast<const char*>(p), n);
  }
  // A count of items that take at least `min_item_size` bytes each: refused when the rest cannot hold
  // them, so a corrupt count never makes the reader allocate much.
  uint32_t count(size_t min_item_size) {
    const uint32_t n = u32();
    if (min_item_size != 0 && n > remaining() / min_item_size) fail("a count of " + std::to_string(n) + " items");
    return n;
  }
  const uint8_t* take(size_t n) {
    if (n > remaining()) fail(std::to_string(n) + " bytes past the end");
    const uint8_t* p = p_;
    p_ += n;
    return p;
  }
  size_t remaining() const { return static_cast<size_t>(end_ - p_); }
  [[noreturn]] void fail(const std::string& what) const { ephost::sdk::fail(EPHOST_INVALID_ARGUMENT, what_ + ": " + what); }

 private:
  uint64_t get(int n) {
    const uint8_t* p = take(static_cast<size_t>(n));
    uint64_t v = 0;
    for (int i = 0; i < n; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
    return v;
  }
  const uint8_t* p_;
  const uint8_t* end_;
  std::string what_;
};

}  // namespace ephost_opencl
