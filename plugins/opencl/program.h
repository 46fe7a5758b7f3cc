// The compiled form of one fused group, as compile makes it and an EPContext carries it: the values and
// operations of the group (lowered from ONNX, constants resolved, BatchNormalization folded into
// convolutions), the kernels that run them (each an anchor operation with the elementwise operations
// fused into its stores), and the packed weights the kernels read. The OpenCL C source is generated from
// this alone (codegen.h), so a program and a device decide the source byte for byte.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ephost/ephost_plugin.h"

namespace ephost_opencl {

// Where a value lives while a group runs.
enum class Placement : uint32_t {
  kDevice = 0,    // a float tensor in device memory (rank <= 4)
  kHost = 1,      // a small integer tensor the host computes from shapes (Shape, Slice, Concat, ...)
  kConstant = 2,  // known when compiling: a weight (float) or a host constant (integer)
};

struct ValueDesc {
  std::string name;
  int32_t elem_type = EPHOST_ELEMENT_FLOAT;
  Placement placement = Placement::kDevice;
  // Static dimensions (-1 unknown), one per axis: the rank is always known. Exact for constants.
  std::vector<int64_t> dims;
  // kConstant: the weight (float) or the host constant (integer) holding the value.
  int32_t constant = -1;
};

// A host tensor of integers (shape arithmetic).
struct HostTensor {
  std::vector<int64_t> shape;
  std::vector<int64_t> data;
};

enum class OpKind : uint32_t {
  // Device operations that anchor a kernel.
  kConv = 1,               // in {x}; ints kConvInts
  kConvTranspose = 2,      // in {x}; ints kConvInts
  kMaxPool = 3,            // in {x}; ints kPoolInts
  kAveragePool = 4,        // in {x}; ints kPoolInts
  kGlobalAveragePool = 5,  // in {x}
  kGlobalMaxPool = 6,      // in {x}
  kResize = 7,             // in {x, sizes (host) or -1}; ints {mode, coordinate mode, nearest mode}; floats {scale h, scale w}
  kConcat = 8,             // in {x0..x7}; ints {axis (non-negative)}
  kMatMul = 9,             // in {a, b (device, or a float constant)}; ints {trans a, trans b}; floats {alpha}
  kSoftmax = 10,           // in {x}; ints {axis (non-negative), coerce to 2-D (opset < 13)}
  kTranspose = 11,         // in {x}; ints perm
  // Device elementwise operations: fused into the kernel that makes their input, or a kernel of their own.
  kUnary = 20,             // in {x}; ints {UnaryOp}; floats: its parameters
  kBinary = 21,            // in {a, b}: device values or float constants, numpy broadcasting; ints {BinaryOp}
  kChannelAffine = 22,     // in {x, scale, shift} (constants of C values): x * scale[c] + shift[c] (BatchNormalization)
  // A device value seen with another shape, no kernel (Reshape, Flatten, Squeeze, Unsqueeze, Identity).
  kView = 30,              // in {x, shape (host) or -1}; ints {ViewKind, allowzero or axis, axes...}
  // Host operations on integer tensors of rank <= 1 (shape arithmetic), run before the kernels.
  kShape = 40,             // in {x (any)}; ints {start, end}
  kHostCast = 41,          // in {x}
  kHostSlice = 42,         // in {data, starts, ends, axes or -1, steps or -1}
  kHostConcat = 43,        // in {x0..}; ints {axis}
  kHostGather = 44,        // in {data, indices}
  kHostUnsqueeze = 45,     // in {x}; ints axes
  kHostSqueeze = 46,       // in {x}; ints axes
  kHostBinary = 47,        // in {a, b}; ints {BinaryOp}
};

// ints of kConv and kConvTranspose, in this order.
enum ConvInt {
  kConvGroup, kConvKh, kConvKw, kConvSh, kConvSw, kConvDh, kConvDw, kConvPadTop, kConvPadLeft, kConvPadBottom,
  kConvPadRight, kConvCin, kConvCout, kConvBlock /* output channels per work item */, kConvWeight, kConvBias /* -1 */,
  kConvOutPadH, kConvOutPadW, kConvIntCount
};
// ints of kMaxPool and kAveragePool, in this order.
enum PoolInt {
  kPoolKh, kPoolKw, kPoolSh, kPoolSw, kPoolDh, kPoolDw, kPoolPadTop, kPoolPadLeft, kPoolPadBottom, kPoolPadRight,
  kPoolCeil, kPoolCountIncludePad, kPoolIntCount
};

enum class UnaryOp : int64_t {
  kRelu = 0, kSigmoid, kHardSigmoid /* alpha, beta */, kHardSwish, kClip /* min, max */, kLeakyRelu /* alpha */,
  kTanh, kNeg, kAbs, kExp, kSqrt, kIdentity
};
enum class BinaryOp : int64_t { kAdd = 0, kSub, kMul, kDiv };

enum class ResizeMode : int64_t { kNearest = 0, kLinear = 1 };
enum class CoordinateMode : int64_t { kHalfPixel = 0, kAsymmetric, kAlignCorners, kPytorchHalfPixel, kTfHalfPixelForNn };
enum class NearestMode : int64_t { kRoundPreferFloor = 0, kRoundPreferCeil, kFloor, kCeil };
enum class ViewKind : int64_t { kReshape = 0 /* allowzero */, kFlatten /* axis */, kSqueeze /* axes */, kUnsqueeze /* axes */, kIdentity };

struct Op {
  OpKind kind = OpKind::kUnary;
  std::string name;              // the ONNX node's name, for errors
  std::vector<int32_t> inputs;   // value indices; -1 for an absent optional input
  std::vector<int32_t> outputs;  // value indices
  std::vector<int64_t> ints;
  std::vector<float> floats;
};

// One kernel: an anchor operation (or none: elementwise only), the elementwise operations computed on its
// results in registers, and the values it writes. Every value a kernel computes has the shape of
// `grid_value`, and the kernel reads and writes them at one index.
struct KernelPlan {
  int32_t anchor = -1;             // op index; -1 for a kernel of elementwise operations only
  std::vector<int32_t> epilogue;   // op indices of kUnary / kBinary / kChannelAffine, in order
  int32_t grid_value = -1;         // the value whose shape is the kernel's output grid
  std::vector<int32_t> stores;     // values written to memory
};

struct Program {
  std::vector<ValueDesc> values;
  std::vector<Op> ops;             // in a topological order
  std::vector<KernelPlan> kernels; // in launch order
  std::vector<int32_t> inputs;     // the value of each EPContext input (the group's non-constant inputs)
  std::vector<int32_t> outputs;    // the value of each output
  std::vector<HostTensor> host_constants;
  std::vector<std::vector<float>> weights;  // packed, as kernels read them
  uint32_t work_group_size = 32;   // the first dimension of every kernel's work group
};

// Where weight `index` starts in the weights buffer, in floats (weights are laid back to back, each
// 16-float aligned), and the buffer's total size.
std::vector<uint64_t> weight_offsets(const Program& program, uint64_t* total_floats);

// Checks that every index in `program` is in range and every op has the operands its kind needs, so that
// codegen and the runtime can index without checking. Throws ephost::sdk::Error naming what is wrong.
void validate(const Program& program);

}  // namespace ephost_opencl
