// The example EP's compiled form of a fused group: a straight-line program over numbered tensor slots.
//
// Slots are numbered in one space: first the program inputs (the group's boundary inputs that are not
// constant initializers, in the group's order), then the weights (constant tensors copied into the
// program), then one slot per operation, holding its result. An operation only reads slots numbered
// below its own, so the op list is already a valid execution order.
//
// This is what gets cached in an EPContext node: program_format.h turns it into bytes and back.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace example_ep {

using Shape = std::vector<int64_t>;

// What each operation does. The numbers are part of the serialized format: never renumber, only add.
// Parameters (Op::ints / Op::floats) per kind:
//   kConv              inputs x, w[, b]  ints: group, pad top, left, bottom, right, stride h, w, dilation h, w
//   kAdd .. kDiv       inputs a, b (numpy broadcasting)
//   kRelu, kSigmoid    input x
//   kClip              input x           floats: min, max
//   kHardSigmoid       input x           floats: alpha, beta
//   kGlobalAveragePool input x (rank >= 3)
//   kMaxPool           input x           ints: kernel h, w, pads (4, as Conv), stride h, w, dilation h, w, ceil_mode
//   kMatMul            inputs a, b (b a rank-2 weight)
//   kSoftmax           input x           ints: axis, legacy (1: opset < 13, softmax over dims axis.. flattened)
//   kChannelAffine     inputs x, scale, shift: y = x * scale[c] + shift[c], c = dim 1 (BatchNormalization)
//   kReshape           input x           ints: the target shape (0 copies the input dim, -1 is inferred)
//   kFlatten           input x           ints: axis
enum class OpKind : uint32_t {
  kConv = 1,
  kAdd = 2,
  kSub = 3,
  kMul = 4,
  kDiv = 5,
  kRelu = 6,
  kSigmoid = 7,
  kClip = 8,
  kHardSigmoid = 9,
  kGlobalAveragePool = 10,
  kMaxPool = 11,
  kMatMul = 12,
  kSoftmax = 13,
  kChannelAffine = 14,
  kReshape = 15,
  kFlatten = 16,
};

// The largest kernel size, pad, stride or dilation a program may hold. Real models stay far below; the
// bound keeps the window arithmetic of a corrupt program far from overflow.
inline constexpr int64_t kMaxWindowParameter = 1 << 20;

// A constant tensor owned by the program.
struct Weight {
  Shape shape;
  std::vector<float> data;
};

struct Op {
  OpKind kind = OpKind::kRelu;
  std::string name;              // the ONNX node it came from, for error messages
  std::vector<uint32_t> inputs;  // slots
  std::vector<int64_t> ints;
  std::vector<float> floats;
};

struct Program {
  std::vector<std::string> input_names;   // one per input slot (diagnostics only)
  std::vector<Weight> weights;
  std::vector<Op> ops;
  std::vector<uint32_t> outputs;          // slots, in the group's output order
  std::vector<std::string> output_names;  // diagnostics only

  uint32_t first_weight_slot() const { return static_cast<uint32_t>(input_names.size()); }
  uint32_t first_op_slot() const { return first_weight_slot() + static_cast<uint32_t>(weights.size()); }
  uint32_t num_slots() const { return first_op_slot() + static_cast<uint32_t>(ops.size()); }
};

// The kind's name ("Conv", ...), or nullptr for a number no kind has.
const char* op_kind_name(OpKind kind);

// Checks that the program is well formed: every op a known kind with the right number of inputs and
// parameters, every slot read defined before it is read, outputs distinct op results, weight sizes
// matching their shapes. Throws ephost::sdk::Error (EPHOST_INVALID_ARGUMENT) naming the first problem.
// Whatever passes can be run without out-of-bounds reads (shapes are checked again per run).
void validate(const Program& program);

}  // namespace example_ep
