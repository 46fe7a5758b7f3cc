// The serialized program: what compile produces, what an EPContext node caches, what load reads.
//
// Layout (all integers little-endian; str = u32 byte count + bytes):
//   header  magic "EXEPPROG" (8 bytes), u32 format_version, str sdk_version, str hardware_architecture,
//           u64 body_size (bytes after the header), u64 checksum (FNV-1a 64 of the body)
//   body    u32 #inputs, per input: str name
//           u32 #outputs, per output: u32 slot, str name
//           u32 #weights, per weight: u32 rank, i64 dims[rank]
//           u32 #ops, per op: u32 kind, str name, u32 #inputs, u32 slots[], u32 #ints, i64 ints[],
//                             u32 #floats, f32 floats[]
//           the weights' values (f32), weight after weight
// The magic and the format version never move, so any later format can still be recognised and refused
// by name. Everything before the weight values is one piece of the EPContext blob, and each weight's
// values are a piece of their own, so the host can store identical weights once.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "program.h"

namespace example_ep {

inline constexpr char kMagic[8] = {'E', 'X', 'E', 'P', 'P', 'R', 'O', 'G'};
// Bumped whenever the layout above changes; a program of another version is refused.
inline constexpr uint32_t kFormatVersion = 1;

// Who produced a program: written into every header, and what a program is judged against.
struct BuildIdentity {
  std::string sdk_version;            // "MAJOR.MINOR.PATCH"
  std::string hardware_architecture;  // e.g. "x86_64"
};

struct Header {
  uint32_t format_version = 0;
  BuildIdentity built_by;
  uint64_t body_size = 0;
  uint64_t checksum = 0;
  size_t size = 0;  // bytes the header takes
};

struct EncodedProgram {
  std::vector<uint8_t> bytes;
  size_t weights_offset = 0;          // where the weights' values start: [0, weights_offset) is one piece
  std::vector<size_t> weight_sizes;   // bytes of each weight's values, back to back from weights_offset
};

EncodedProgram encode(const Program& program, const BuildIdentity& built_by);

// What an integrity check of a blob found. The reason names the field that decided.
struct Inspection {
  enum class Result { kIntact, kNotOurs, kDamaged };
  Result result = Result::kDamaged;
  std::string reason;  // empty when intact
  Header header;       // valid when intact
};

// Checks magic, format version, sizes and checksum; never reads outside [blob, blob + size).
Inspection inspect(const uint8_t* blob, size_t size);

// Decodes the body of a blob that inspect() found intact, and validates the program. Throws
// ephost::sdk::Error (EPHOST_INVALID_ARGUMENT) on anything malformed.
Program decode(const uint8_t* blob, size_t size, const Header& header);

}  // namespace example_ep
