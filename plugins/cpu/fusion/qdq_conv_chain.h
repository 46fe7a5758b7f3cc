// An int8 convolution chain (qdq_conv.cpp) as a unit that other groups can run: its interface by value
// names, and a runner that reads its operands and writes its output in NCHW (the graph's layout) or in
// NHWC (the layout its primitives use). The chain's own group runs one in NCHW at both ends; an int8
// trunk (qdq_conv_trunk.cpp) runs several and keeps the bytes between them NHWC.
#pragma once

#if defined(EPHOST_WITH_DNNL)

#include <memory>
#include <string>
#include <vector>

#include "ephost/sdk/profile_spans.hpp"
#include "kernel_base.h"
#include "math/shape.h"
#include "qdq_common.h"

namespace ephost::cpu::fusion {

// A tensor a chain reads: int8 bytes (u8 or s8, with the DequantizeLinear parameters that give their
// float value) or floats, in NCHW or NHWC order over NCHW dims `shape`.
struct ChainOperand {
  const void* data = nullptr;
  int32_t type = EPHOST_ELEMENT_UINT8;  // EPHOST_ELEMENT_UINT8, _INT8 or _FLOAT
  ScalarQuant quant;                    // bytes: their scale and zero point (quant.type == type)
  bool nhwc = false;
  math::Shape shape;
};

// What a matched chain reads and writes, by value name.
struct ChainInterface {
  std::vector<sdk::Node> nodes;
  // The value the first link reads: X_q (x_bytes) or the float output of X's DequantizeLinear, held by
  // another group; either way dequantized or quantized with x_quant.
  std::string x;
  bool x_bytes = false;
  ScalarQuant x_quant;
  // When the chain holds X's DequantizeLinear: its float output (DQ(X_q) with x_quant), which others
  // may read. Empty otherwise.
  std::string x_float;
  // The residual Add's other operand, when the chain ends with one: the chain's own input X
  // (b_is_x), bytes (b_bytes, dequantized with b_quant) or a float value.
  bool has_residual = false;
  bool b_is_x = false;
  bool b_bytes = false;
  std::string b;
  ScalarQuant b_quant;
  // The output Y_q.
  std::string y;
  int32_t y_type = EPHOST_ELEMENT_UINT8;
};

class QdqConvChainRunner {
 public:
  // The chain anchored at the Conv `anchor` over nodes `ok` takes; null when none matches.
  static std::unique_ptr<QdqConvChainRunner> match(const sdk::Node& anchor, const Available& ok);
  ~QdqConvChainRunner();

  const ChainInterface& interface() const;

  // Creates the links (weights, scales); `name` names the group in errors. Before any other call below.
  void compile(const std::string& name, const KernelConfig& config);

  // Y's NCHW dims for X's (fails with EPHOST_INVALID_ARGUMENT when they do not fit the convolutions).
  math::Shape output_shape(const math::Shape& x_shape) const;

  // Creates the primitives for a static X shape at session creation and touches this thread's buffers
  // (qdq_conv.cpp: ConvLink::plan_at_compile). Returns Y's dims, or empty when X's are not static.
  math::Shape plan_at_compile(const math::Shape& x_shape);

  // Runs the chain: x (bytes in x_quant, or floats quantized with it), b (the residual operand; null
  // when the chain has none or b_is_x), into y (Y_q bytes of y_type, NHWC when y_nhwc). Y's dims are
  // output_shape(x.shape); b's must be the same and y must not overlap x or b. Thread buffers 0-7
  // serve as scratch: x, b and y must not live in them.
  void run(const ChainOperand& x, const ChainOperand* b, void* y, bool y_nhwc, int threads,
           sdk::SpanTimer& spans);

  [[noreturn]] void fail(const std::string& what) const;

 private:
  struct Impl;
  explicit QdqConvChainRunner(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// DequantizeLinear of n bytes x with q (u8 or s8) into floats y, as the op computes it.
void dequantize_bytes(const void* x, const ScalarQuant& q, float* y, int64_t n, int threads);

// The threads a fused group's run uses (the run's, else the session's, fewer under load when adaptive).
int group_threads(const sdk::KernelContext& ctx, const KernelConfig& config);

// The thread buffer an int8 trunk keeps its NHWC values in (math/dnnl_util.h; 0-7 are the chains').
constexpr int kTrunkArenaSlot = 8;

}  // namespace ephost::cpu::fusion

#endif  // EPHOST_WITH_DNNL
