// A compiled group as an EPContext blob: what emit_context hands the host and judge_context / load_context
// get back.
//
// Layout (integers little-endian; str = u32 byte count + bytes):
//   header  magic "EPOCLCTX" (8 bytes), u32 format_version, u32 reserved (0), u64 body_size (bytes after the
//           header), u64 checksum (XXH64 of the body)
//   body    identity: str plugin_version, platform, device_name, device_version, driver_version,
//                     opencl_c_version, build_options; u64 source_hash (XXH64 of the generated source)
//           program:  u32 work_group_size; values; ops; kernels; inputs; outputs; host constants; the
//                     float count of each weight (see encode_program)
//           u64 binary size, the program binary (CL_PROGRAM_BINARIES of the device)
//           the weights' values (f32), weight after weight
// Everything up to the binary is one piece of the blob and each weight a piece of its own, so that the host
// stores identical weights once. The magic and the format version never move: any later format is still
// recognised and refused by name.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "program.h"

namespace ephost_opencl {

inline constexpr char kContextMagic[8] = {'E', 'P', 'O', 'C', 'L', 'C', 'T', 'X'};
// Bumped whenever the layout changes; a context of another format is refused.
inline constexpr uint32_t kContextFormatVersion = 1;
inline constexpr size_t kContextHeaderSize = 32;

// Who built a context's binary, and from what: a binary runs only where all of it still holds.
struct BuildIdentity {
  std::string plugin_version;
  std::string platform;
  std::string device_name;
  std::string device_version;
  std::string driver_version;
  std::string opencl_c_version;
  std::string build_options;
  uint64_t source_hash = 0;
};

struct EncodedContext {
  std::vector<uint8_t> bytes;
  size_t head_size = 0;               // [0, head_size): header, identity, program, binary: one piece
  std::vector<size_t> weight_sizes;   // bytes of each weight, back to back from head_size
};

EncodedContext encode_context(const Program& program, const BuildIdentity& identity, const std::vector<uint8_t>& binary);

// What the integrity check of a blob found; the reason names the field that decided.
struct Inspection {
  enum class Result { kIntact, kNotOurs, kDamaged };
  Result result = Result::kDamaged;
  std::string reason;
  uint32_t format_version = 0;
};
// Magic, format version, the reserved word (0), size and checksum; never reads outside [blob, blob + size).
Inspection inspect_context(const uint8_t* blob, size_t size);

struct DecodedContext {
  BuildIdentity identity;
  Program program;  // validated
  std::vector<uint8_t> binary;
};
// The identity alone (cheap), and everything, of a blob inspect_context found intact. Throw
// ephost::sdk::Error (EPHOST_INVALID_ARGUMENT) on anything malformed.
BuildIdentity decode_identity(const uint8_t* blob, size_t size);
DecodedContext decode_context(const uint8_t* blob, size_t size);

}  // namespace ephost_opencl
