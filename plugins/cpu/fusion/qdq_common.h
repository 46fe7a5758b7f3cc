// What the int8 QDQ fusions (qdq_matmul.cpp, qdq_conv.cpp, the per-row and per-byte ones) share: reading
// the constant scale and zero point of a QuantizeLinear / DequantizeLinear node, finding the
// DequantizeLinear a pattern starts at and the QuantizeLinear it ends at, converting rows between
// bytes and floats as those nodes do, and deciding where oneDNN's int8 product is exact.
//
// Without VNNI, oneDNN multiplies u8 by s8 with vpmaddubsw, which adds pairs of products in saturating
// int16: exact only while 255 * (|w1| + |w2|) fits, that is for weights within [-64, 64] (the 7-bit
// range ONNX Runtime advises for this reason). So an int8 pattern is taken where oneDNN may use
// AVX-512 VNNI (vpdpbusd accumulates in int32) or where every weight is in that range; elsewhere the
// graph runs op by op, exactly.
#pragma once

#include <cstdint>
#include <vector>

#include "graph_match.h"

#if defined(EPHOST_WITH_DNNL)
#include <utility>

#include "math/dnnl_util.h"
#endif

namespace ephost::cpu::fusion {

// One scale and zero point, from constants.
struct ScalarQuant {
  float scale = 1.f;
  int32_t zero_point = 0;
  int32_t type = EPHOST_ELEMENT_UINT8;  // the quantized element type (u8 or s8)
};

// A QuantizeLinear / DequantizeLinear (per-tensor or per-axis, not blocked).
bool is_quant_op(const sdk::Node& n, const char* op);
// n's scale (a positive finite float constant of one element) and zero point (u8 / s8, or absent).
bool scalar_quant(const sdk::Node& n, ScalarQuant* q);
// The DequantizeLinear of a constant s8 weight of `rank` dims quantized along `channel_axis` (or per
// tensor), every zero point 0: its per-channel scales (`channels` of them, positive and finite).
bool channel_weight_quant(const sdk::Node& dq, int64_t rank, int64_t channel_axis, int64_t channels,
                          std::vector<float>* scales);
// A DequantizeLinear of a non-constant u8/s8 activation with one scale and zero point (read into *x)
// and a float output: where a per-row or per-byte int8 pattern starts.
bool is_activation_dequantize(const sdk::Node& dq, ScalarQuant* x);
// The QuantizeLinear that `v` alone feeds, with one scale and zero point (read into *y) and one output,
// taken by `ok`: where such a pattern ends. An invalid node otherwise.
sdk::Node output_quantize(const sdk::Value& v, const Available& ok, ScalarQuant* y);
// The QuantizeLinear -> DequantizeLinear pair that `v` alone feeds, both taken by `ok`: each with one
// scale and zero point (read into *q_quant and *dq_quant) of one element type, a float output. The
// caller decides whether the two scales must agree.
bool match_requantize(const sdk::Value& v, const Available& ok, sdk::Node* q, sdk::Node* dq, ScalarQuant* q_quant,
                      ScalarQuant* dq_quant);

// n floats to bytes of q's type, and back: math/quantize.h's loops, as QuantizeLinear and
// DequantizeLinear run them.
void quantize_row(const float* x, const ScalarQuant& q, void* y, int64_t n);
void dequantize_row(const void* x, const ScalarQuant& q, float* y, int64_t n);

// The two DequantizeLinear nodes an int8 product reads: `act` of a non-constant activation with one
// scale and zero point (read into *act_quant), and `weight` of the second input. False when either is
// not a DequantizeLinear of that kind.
bool match_dequantized_operands(const sdk::Node& anchor, sdk::Node* act, sdk::Node* weight, ScalarQuant* act_quant);

// The end of an int8 pattern from `v`: an optional Relu, then the QuantizeLinear (one scale and zero
// point, read into *y_quant) that brings the result back to int8. Appends them to *nodes.
bool match_relu_then_quantize(sdk::Value v, const Available& ok, sdk::Node* relu, sdk::Node* q, ScalarQuant* y_quant,
                              std::vector<sdk::Node>* nodes);

// At compile, what matching again may take: every node, except the activation's DequantizeLinear
// (anchor's input 0) when the partitioner left it out of `group` (it also feeds other nodes).
Available group_members(const sdk::Node& anchor, const sdk::Graph& group);
// The weights' DequantizeLinear `dq_w` joins an int8 pattern's `nodes` when the product alone reads
// it: the group packs the int8 weights itself, so their float copy is never made (a folded float copy
// cost int8 ResNet-50 two of its weights in float at session creation; the host computes it only when
// asked, graph/precomputed_value.h).
void take_weight_dequantize(const sdk::Node& dq_w, const Available& ok, std::vector<sdk::Node>* nodes);

// Whether oneDNN's u8/s8 x s8 product is exact for these weights in this process.
bool int8_product_exact(const sdk::Tensor& weights);
// Whether it is exact for any s8 weights (int32 accumulation: VNNI) in this process.
bool int8_full_range_product_exact();

// A fused group's int8 weights as the host holds them (a constant initializer): read while the group
// is made and where it packs a layout, and given back to the host once the group has packed what it
// runs with (plugin ABI 5, value_initializer_done), as ONNX Runtime frees a weight its kernels
// pre-packed. Not synchronized: the group calls it under the lock that guards its plans.
class HostWeights {
 public:
  explicit HostWeights(const sdk::Value& value);
  // The bytes, while the group holds the host's view; null once it gave them back.
  const int8_t* data() const { return data_; }
  // The bytes for packing a layout not packed yet. After done() they are asked for again: the host
  // reads them back, and the group keeps that view (it does not give them back a second time).
  const void* for_packing();
  // Says the group will not read them again (every shape it runs with is planned and packed); against
  // a host older than ABI 5 nothing happens.
  void done();

 private:
  sdk::Value value_;
  const int8_t* data_ = nullptr;
  bool given_back_ = false;
};

#if defined(EPHOST_WITH_DNNL)
// A fused group's int8 weights, reordered once per layout a primitive asks for (oneDNN picks the
// layout per shape and ISA, so a group planned for several input shapes may need several). Not
// synchronized: the group calls it under the lock that guards its plans.
class PackedWeights {
 public:
  // The weights in layout `want`, reordering `source` (described by `user`) the first time that
  // layout is asked for.
  dnnl::memory in_layout(const dnnl::memory::desc& want, const dnnl::memory::desc& user, HostWeights& source);

 private:
  std::vector<std::pair<dnnl::memory::desc, math::WeightsMemory>> packed_;  // huge pages for large weights
};
#endif

}  // namespace ephost::cpu::fusion
