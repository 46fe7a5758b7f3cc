// ephost plugin SDK — writing and reading a provider's own binary formats (compiled programs, EPContext
// blobs): little-endian fields defined byte by byte, never by struct layout, so that what one build of a
// plugin wrote reads the same in another build on any compiler; and a reader that treats every byte as
// hostile (a context blob comes from disk, and disks hold truncated, flipped and foreign files).
// Part of the plugin SDK, included on its own: "ephost/sdk/plugin.hpp" does not bring it, since most
// plugins keep no binary format of their own.
//
// Added in ephost 0.1.0, alongside plugin ABI 3. Header-only; nothing here calls the host, so it works
// under every ABI version.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "ephost/sdk/status.hpp"

namespace ephost::sdk {

// Appends little-endian fields to a growing byte vector.
class ByteWriter {
 public:
  void u32(uint32_t v) { put(v, 4); }
  void i32(int32_t v) { put(static_cast<uint32_t>(v), 4); }
  void u64(uint64_t v) { put(v, 8); }
  void i64(int64_t v) { put(static_cast<uint64_t>(v), 8); }
  void f32(float v) {
    uint32_t bits;
    std::memcpy(&bits, &v, 4);
    put(bits, 4);
  }
  // A u32 length, then the bytes (no terminator). ByteReader::str reads it back.
  void str(const std::string& s) {
    u32(static_cast<uint32_t>(s.size()));
    bytes_.insert(bytes_.end(), s.begin(), s.end());
  }
  void raw(const void* data, size_t size) {
    const auto* p = static_cast<const uint8_t*>(data);
    bytes_.insert(bytes_.end(), p, p + size);
  }
  // Overwrites 8 bytes at `offset`, written earlier: for a field known only at the end (a size, a
  // checksum). `offset + 8` must not exceed size().
  void patch_u64(size_t offset, uint64_t v) {
    for (int i = 0; i < 8; ++i) bytes_[offset + i] = static_cast<uint8_t>(v >> (8 * i));
  }
  size_t size() const { return bytes_.size(); }
  // The bytes written so far; the caller may move them out when done.
  std::vector<uint8_t>& bytes() { return bytes_; }

 private:
  void put(uint64_t v, int n) {
    for (int i = 0; i < n; ++i) bytes_.push_back(static_cast<uint8_t>(v >> (8 * i)));
  }
  std::vector<uint8_t> bytes_;
};

// Reads fields from [data, data + size), which the caller keeps alive while reading. Every read past the
// end, oversized string or impossible count throws ephost::sdk::Error (EPHOST_INVALID_ARGUMENT) whose
// message starts with `what` (say which part of which format: "context header"), so a corrupt blob ends
// in a clear refusal, never in a read out of bounds or a huge allocation.
class ByteReader {
 public:
  ByteReader(const uint8_t* data, size_t size, std::string what) : p_(data), end_(data + size), what_(std::move(what)) {}

  uint32_t u32() { return static_cast<uint32_t>(get(4)); }
  int32_t i32() { return static_cast<int32_t>(static_cast<uint32_t>(get(4))); }
  uint64_t u64() { return get(8); }
  int64_t i64() { return static_cast<int64_t>(get(8)); }
  float f32() {
    const uint32_t bits = static_cast<uint32_t>(get(4));
    float v;
    std::memcpy(&v, &bits, 4);
    return v;
  }
  // A string written by ByteWriter::str, refused when longer than `max_size` bytes.
  std::string str(size_t max_size = size_t{1} << 20) {
    const uint32_t n = u32();
    if (n > max_size) fail("a string of " + std::to_string(n) + " bytes (at most " + std::to_string(max_size) + ")");
    const uint8_t* p = take(n);
    return std::string(reinterpret_cast<const char*>(p), n);
  }
  // A u32 count of items that each take at least `min_item_size` bytes: refused when the rest cannot
  // hold them, so that a corrupt count never makes the caller reserve gigabytes.
  uint32_t count(size_t min_item_size) {
    const uint32_t n = u32();
    if (min_item_size != 0 && n > remaining() / min_item_size) fail("a count of " + std::to_string(n) + " items");
    return n;
  }
  // The next `n` bytes, in place (valid while the caller's buffer is).
  const uint8_t* take(size_t n) {
    if (n > remaining()) fail(std::to_string(n) + " bytes past the end");
    const uint8_t* p = p_;
    p_ += n;
    return p;
  }
  size_t remaining() const { return static_cast<size_t>(end_ - p_); }
  // Throws EPHOST_INVALID_ARGUMENT with "<what>: <detail>": for the caller's own checks of what it read.
  [[noreturn]] void fail(const std::string& detail) const { ephost::sdk::fail(EPHOST_INVALID_ARGUMENT, what_ + ": " + detail); }

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

// FNV-1a, 64 bits, with no dependency: catches truncation, bit flips and stray edits of a cached blob.
// It is no defence against deliberate tampering (that needs a MAC). A plugin that links xxHash may
// prefer XXH64 for speed on large blobs.
inline uint64_t fnv1a64(const uint8_t* data, size_t size) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < size; ++i) {
    h ^= data[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

}  // namespace ephost::sdk
