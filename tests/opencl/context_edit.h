// Editing cached OpenCL contexts the way a changed machine or a damaged disk would: the tests of the
// plugin's judge need contexts that differ from a good one in exactly one field.
//
// - the host's container (<model>_opencl.bin, layout in host/epcontext/context_binary.h) is read back
//   into the plugin's own blob (its pieces concatenated);
// - a field of the plugin's blob (layout in plugins/opencl/context_format.h) is changed and the blob
//   sealed again with a correct checksum, so that only the field itself can make the judge refuse it;
// - a ctx model's EPContext node gets an edited attribute, or the blob embedded raw (embed_mode 1 with a
//   payload that is not a host container goes to the plugin as it is: nothing but the plugin checks it).
#pragma once

#include <onnx/onnx_pb.h>
#include <xxhash.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

namespace opencl_test {

inline std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
  if (!out) throw std::runtime_error("cannot write " + path);
}

template <typename T>
T load(const std::string& s, size_t at) {
  if (at + sizeof(T) > s.size()) throw std::runtime_error("read past the end at " + std::to_string(at));
  T v;
  std::memcpy(&v, s.data() + at, sizeof(T));
  return v;
}

template <typename T>
void store(std::string& s, size_t at, T v) {
  if (at + sizeof(T) > s.size()) throw std::runtime_error("write past the end at " + std::to_string(at));
  std::memcpy(&s[at], &v, sizeof(T));
}

// The first graph of a host container: its pieces, concatenated.
inline std::string first_graph_of_container(const std::string& c) {
  if (c.compare(0, 8, "EPHOSTCB") != 0) throw std::runtime_error("not a host context container");
  const uint64_t pieces = load<uint64_t>(c, 16), data_offset = load<uint64_t>(c, 40);
  size_t at = 64 + pieces * 24;  // the graph table follows the piece table
  const uint32_t name_length = load<uint32_t>(c, at), piece_count = load<uint32_t>(c, at + 4);
  at += 8 + name_length;
  std::string blob;
  for (uint32_t i = 0; i < piece_count; ++i) {
    const uint64_t piece = load<uint64_t>(c, at + 8 * i);
    const uint64_t offset = load<uint64_t>(c, 64 + piece * 24), size = load<uint64_t>(c, 64 + piece * 24 + 8);
    blob += c.substr(data_offset + offset, size);
  }
  return blob;
}

// The plugin's blob: a 32-byte header (magic, u32 format version, u32 reserved, u64 body size, u64 XXH64
// of the body), then the identity strings (u32 length + bytes each) in this order.
enum class Field { kPluginVersion, kPlatform, kDeviceName, kDeviceVersion, kDriverVersion, kOpenclCVersion, kBuildOptions };
constexpr size_t kHeader = 32;

inline void seal(std::string& blob) {
  store<uint64_t>(blob, 24, XXH64(blob.data() + kHeader, blob.size() - kHeader, 0));
}

// The offset of identity string `field` (its length word) in `blob`.
inline size_t field_offset(const std::string& blob, Field field) {
  size_t at = kHeader;
  for (int i = 0; i < static_cast<int>(field); ++i) at += 4 + load<uint32_t>(blob, at);
  return at;
}

inline std::string field_value(const std::string& blob, Field field) {
  const size_t at = field_offset(blob, field);
  return blob.substr(at + 4, load<uint32_t>(blob, at));
}

// `blob` with identity string `field` replaced by `value`, sealed again (size and checksum right).
inline std::string with_field(std::string blob, Field field, const std::string& value) {
  const size_t at = field_offset(blob, field);
  const uint32_t old_length = load<uint32_t>(blob, at);
  blob.replace(at + 4, old_length, value);
  store<uint32_t>(blob, at, static_cast<uint32_t>(value.size()));
  store<uint64_t>(blob, 16, blob.size() - kHeader);
  seal(blob);
  return blob;
}

inline std::string with_format_version(std::string blob, uint32_t version) {
  store<uint32_t>(blob, 8, version);
  return blob;
}

inline onnx::ModelProto read_model(const std::string& path) {
  onnx::ModelProto m;
  if (!m.ParseFromString(read_bytes(path))) throw std::runtime_error("cannot parse " + path);
  return m;
}

inline void write_model(const onnx::ModelProto& m, const std::string& path) { write_bytes(path, m.SerializeAsString()); }

// The model's only EPContext node.
inline onnx::NodeProto& context_node(onnx::ModelProto& m) {
  onnx::NodeProto* found = nullptr;
  for (auto& n : *m.mutable_graph()->mutable_node())
    if (n.op_type() == "EPContext") {
      if (found) throw std::runtime_error("more than one EPContext node");
      found = &n;
    }
  if (!found) throw std::runtime_error("no EPContext node");
  return *found;
}

inline onnx::AttributeProto& attribute(onnx::NodeProto& n, const std::string& name) {
  for (auto& a : *n.mutable_attribute())
    if (a.name() == name) return a;
  throw std::runtime_error("the EPContext node has no attribute " + name);
}

// A copy of ctx model `ctx` whose node embeds `payload` (embed_mode 1), written to `path` (beside the
// source model, so the fallback finds it).
inline void write_embedded(const std::string& ctx, const std::string& payload, const std::string& path) {
  onnx::ModelProto m = read_model(ctx);
  onnx::NodeProto& node = context_node(m);
  attribute(node, "embed_mode").set_i(1);
  attribute(node, "main_context").set_i(1);
  attribute(node, "ep_cache_context").set_s(payload);
  write_model(m, path);
}

}  // namespace opencl_test
