#include "ops.h"

#include <cstring>

#include "conv.h"
#include "dense.h"
#include "elementwise.h"
#include "pooling.h"

namespace example_ep {

Shape output_shape(const Op& op, const std::vector<ConstTensor>& in) {
  switch (op.kind) {
    case OpKind::kConv: return conv_output_shape(op, in[0].shape, in[1].shape);
    case OpKind::kAdd:
    case OpKind::kSub:
    case OpKind::kMul:
    case OpKind::kDiv: return broadcast_output_shape(op, in[0].shape, in[1].shape);
    case OpKind::kRelu:
    case OpKind::kSigmoid:
    case OpKind::kClip:
    case OpKind::kHardSigmoid:
    case OpKind::kChannelAffine: return in[0].shape;
    case OpKind::kGlobalAveragePool: return global_average_pool_output_shape(op, in[0].shape);
    case OpKind::kMaxPool: return max_pool_output_shape(op, in[0].shape);
    case OpKind::kMatMul: return matmul_output_shape(op, in[0].shape, in[1].shape);
    case OpKind::kSoftmax: return softmax_output_shape(op, in[0].shape);
    case OpKind::kReshape: return reshape_output_shape(op, in[0].shape);
    case OpKind::kFlatten: return flatten_output_shape(op, in[0].shape);
  }
  bad_input(op, "unknown op kind");
}

void execute(const Op& op, const std::vector<ConstTensor>& in, float* y, const Shape& y_shape) {
  switch (op.kind) {
    case OpKind::kConv: return conv(op, in[0], in[1], in.size() > 2 ? in[2].data : nullptr, y, y_shape);
    case OpKind::kAdd:
    case OpKind::kSub:
    case OpKind::kMul:
    case OpKind::kDiv: return binary(op, in[0], in[1], y, y_shape);
    case OpKind::kRelu:
    case OpKind::kSigmoid:
    case OpKind::kClip:
    case OpKind::kHardSigmoid: return unary(op, in[0], y);
    case OpKind::kChannelAffine: return channel_affine(op, in[0], in[1], in[2], y);
    case OpKind::kGlobalAveragePool: return global_average_pool(in[0], y);
    case OpKind::kMaxPool: return max_pool(op, in[0], y, y_shape);
    case OpKind::kMatMul: return matmul(in[0], in[1], y);
    case OpKind::kSoftmax: return softmax(op, in[0], y);
    case OpKind::kReshape:
    case OpKind::kFlatten: {
      // Only the shape changes; the values are copied as they lie.
      const size_t n = static_cast<size_t>(numel(y_shape));
      if (n) std::memcpy(y, in[0].data, n * sizeof(float));
      return;
    }
  }
  bad_input(op, "unknown op kind");
}

}  // namespace example_ep
