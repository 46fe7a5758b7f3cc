#include "program_format.h"

#include <cstring>

#include "ephost/sdk/byte_io.hpp"

namespace example_ep {

using ephost::sdk::ByteReader;
using ephost::sdk::ByteWriter;
using ephost::sdk::fnv1a64;

namespace {

// Limits that keep a corrupt length from turning into a huge allocation (the checksum catches
// corruption first; these guard programs written by a buggy or hostile producer).
constexpr size_t kMaxIdentitySize = 256;
constexpr size_t kMaxNameSize = 1 << 16;
constexpr uint32_t kMaxRank = 8;

void check_name(const std::string& name) {
  if (name.size() > kMaxNameSize)
    ephost::sdk::fail(EPHOST_INVALID_ARGUMENT, "name longer than " + std::to_string(kMaxNameSize) + " bytes: " + name.substr(0, 64) + "...");
}

void write_body(ByteWriter& w, const Program& p, EncodedProgram& out) {
  w.u32(static_cast<uint32_t>(p.input_names.size()));
  for (const std::string& name : p.input_names) {
    check_name(name);
    w.str(name);
  }
  w.u32(static_cast<uint32_t>(p.outputs.size()));
  for (size_t i = 0; i < p.outputs.size(); ++i) {
    check_name(p.output_names[i]);
    w.u32(p.outputs[i]);
    w.str(p.output_names[i]);
  }
  w.u32(static_cast<uint32_t>(p.weights.size()));
  for (const Weight& weight : p.weights) {
    w.u32(static_cast<uint32_t>(weight.shape.size()));
    for (int64_t d : weight.shape) w.i64(d);
  }
  w.u32(static_cast<uint32_t>(p.ops.size()));
  for (const Op& op : p.ops) {
    check_name(op.name);
    w.u32(static_cast<uint32_t>(op.kind));
    w.str(op.name);
    w.u32(static_cast<uint32_t>(op.inputs.size()));
    for (uint32_t slot : op.inputs) w.u32(slot);
    w.u32(static_cast<uint32_t>(op.ints.size()));
    for (int64_t v : op.ints) w.i64(v);
    w.u32(static_cast<uint32_t>(op.floats.size()));
    for (float v : op.floats) w.f32(v);
  }
  out.weights_offset = w.size();
  for (const Weight& weight : p.weights) {
    for (float v : weight.data) w.f32(v);
    out.weight_sizes.push_back(weight.data.size() * 4);
  }
}

}  // namespace

EncodedProgram encode(const Program& program, const BuildIdentity& built_by) {
  validate(program);
  EncodedProgram out;
  ByteWriter w;
  w.raw(kMagic, sizeof(kMagic));
  w.u32(kFormatVersion);
  w.str(built_by.sdk_version);
  w.str(built_by.hardware_architecture);
  const size_t body_size_at = w.size();
  w.u64(0);  // body_size, patched below
  w.u64(0);  // checksum, patched below
  const size_t header_size = w.size();
  write_body(w, program, out);
  w.patch_u64(body_size_at, w.size() - header_size);
  w.patch_u64(body_size_at + 8, fnv1a64(w.bytes().data() + header_size, w.size() - header_size));
  out.bytes = std::move(w.bytes());
  return out;
}

Inspection inspect(const uint8_t* blob, size_t size) {
  Inspection r;
  if (size < sizeof(kMagic) || std::memcmp(blob, kMagic, sizeof(kMagic)) != 0) {
    r.result = Inspection::Result::kNotOurs;
    r.reason = "magic: not an example EP program";
    return r;
  }
  r.result = Inspection::Result::kDamaged;
  ByteReader in(blob + sizeof(kMagic), size - sizeof(kMagic), "header");
  if (in.remaining() < 4) {
    r.reason = "truncated blob: " + std::to_string(size) + " bytes end inside the header";
    return r;
  }
  Header& h = r.header;
  h.format_version = in.u32();
  if (h.format_version != kFormatVersion) {
    r.reason = "format_version " + std::to_string(h.format_version) + " != " + std::to_string(kFormatVersion);
    return r;
  }
  try {
    h.built_by.sdk_version = in.str(kMaxIdentitySize);
    h.built_by.hardware_architecture = in.str(kMaxIdentitySize);
    h.body_size = in.u64();
    h.checksum = in.u64();
  } catch (const ephost::sdk::Error&) {
    r.reason = "truncated blob: " + std::to_string(size) + " bytes end inside the header";
    return r;
  }
  h.size = size - in.remaining();
  if (in.remaining() < h.body_size) {
    r.reason = "truncated blob: the body has " + std::to_string(in.remaining()) + " of " + std::to_string(h.body_size) + " bytes";
    return r;
  }
  if (in.remaining() > h.body_size) {
    r.reason = "blob size: " + std::to_string(in.remaining() - h.body_size) + " bytes follow the program";
    return r;
  }
  uint64_t actual = fnv1a64(blob + h.size, static_cast<size_t>(h.body_size));
  if (actual != h.checksum) {
    r.reason = "checksum: the program's bytes changed since it was written (corrupt blob)";
    return r;
  }
  r.result = Inspection::Result::kIntact;
  return r;
}

Program decode(const uint8_t* blob, size_t size, const Header& header) {
  if (header.size > size || size - header.size != header.body_size)
    ephost::sdk::fail(EPHOST_INVALID_ARGUMENT, "program: the header does not describe this blob");
  ByteReader in(blob + header.size, static_cast<size_t>(header.body_size), "invalid program");
  Program p;
  p.input_names.resize(in.count(4));
  for (std::string& name : p.input_names) name = in.str(kMaxNameSize);
  uint32_t num_outputs = in.count(8);
  for (uint32_t i = 0; i < num_outputs; ++i) {
    p.outputs.push_back(in.u32());
    p.output_names.push_back(in.str(kMaxNameSize));
  }
  p.weights.resize(in.count(4));
  for (Weight& weight : p.weights) {
    uint32_t rank = in.u32();
    if (rank > kMaxRank) in.fail("a weight of rank " + std::to_string(rank));
    for (uint32_t d = 0; d < rank; ++d) weight.shape.push_back(in.i64());
  }
  p.ops.resize(in.count(16));
  for (Op& op : p.ops) {
    op.kind = static_cast<OpKind>(in.u32());
    op.name = in.str(kMaxNameSize);
    op.inputs.resize(in.count(4));
    for (uint32_t& slot : op.inputs) slot = in.u32();
    op.ints.resize(in.count(8));
    for (int64_t& v : op.ints) v = in.i64();
    op.floats.resize(in.count(4));
    for (float& v : op.floats) v = in.f32();
  }
  for (Weight& weight : p.weights) {
    // Count the values the shape asks for, refusing any that the remaining bytes cannot hold.
    size_t count = 1;
    for (int64_t d : weight.shape) {
      if (d < 0) in.fail("a weight with a negative dimension");
      if (d != 0 && count > in.remaining() / 4 / static_cast<size_t>(d)) in.fail("a weight larger than the blob");
      count *= static_cast<size_t>(d);
    }
    const uint8_t* values = in.take(count * 4);
    weight.data.resize(count);
    for (size_t i = 0; i < count; ++i) {
      uint32_t bits = static_cast<uint32_t>(values[4 * i]) | static_cast<uint32_t>(values[4 * i + 1]) << 8 |
                      static_cast<uint32_t>(values[4 * i + 2]) << 16 | static_cast<uint32_t>(values[4 * i + 3]) << 24;
      std::memcpy(&weight.data[i], &bits, 4);
    }
  }
  if (in.remaining() != 0) in.fail(std::to_string(in.remaining()) + " bytes after the last weight");
  validate(p);
  return p;
}

}  // namespace example_ep
