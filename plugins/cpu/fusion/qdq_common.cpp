#include "qdq_common.h"

#include <cmath>

#include "constant_lookup.h"
#include "math/quantize.h"

namespace ephost::cpu::fusion {

namespace {

// Whether oneDNN's int8 kernels accumulate u8 x s8 products in int32 (VNNI's vpdpbusd, AVX-512 or
// AVX2 VNNI) in this process. oneDNN is asked which ISA it actually uses, after the engine (which
// passes EPHOST_CPU_ISA's cap on, math/dnnl_util.cpp) exists: that also covers a cap oneDNN took from
// its own ONEDNN_MAX_CPU_ISA, or a cap that came too late, where reading EPHOST_CPU_ISA alone would
// take weights oneDNN then multiplies with saturation.
bool dnnl_has_vnni() {
#if defined(EPHOST_WITH_DNNL)
  static const bool vnni = [] {
    try {
      (void)math::cpu_engine();
      switch (dnnl::get_effective_cpu_isa()) {
        case dnnl::cpu_isa::avx2_vnni:
        case dnnl::cpu_isa::avx512_core_vnni:
        case dnnl::cpu_isa::avx512_core_bf16:
        case dnnl::cpu_isa::avx512_core_amx:
          return true;
        default:
          return false;
      }
    } catch (const dnnl::error&) {
      return false;
    }
  }();
  return vnni;
#else
  return false;
#endif
}

}  // namespace

bool is_quant_op(const sdk::Node& n, const char* op) { return is_op(n, op) && n.attr_int("block_size", 0) == 0; }

bool match_dequantized_operands(const sdk::Node& anchor, sdk::Node* act, sdk::Node* weight, ScalarQuant* act_quant) {
  *act = anchor.input(0).producer();
  *weight = anchor.input(1).producer();
  if (!act->valid() || !weight->valid() || !is_quant_op(*act, "DequantizeLinear") ||
      !is_quant_op(*weight, "DequantizeLinear"))
    return false;
  return scalar_quant(*act, act_quant) && !is_constant(act->input(0));
}

Available group_members(const sdk::Node& anchor, const sdk::Graph& group) {
  // The activation's DequantizeLinear, by the value it makes (the weights' may be in the group too).
  const std::string x = anchor.input(0).name();
  bool dq_in_group = false;
  for (const sdk::Node& n : group.nodes())
    dq_in_group = dq_in_group || (is_quant_op(n, "DequantizeLinear") && n.has_output(0) && n.output(0).name() == x);
  const sdk::Node dq = anchor.input(0).producer();
  return [dq_in_group, dq](const sdk::Node& n) { return dq_in_group || n.get() != dq.get(); };
}

void take_weight_dequantize(const sdk::Node& dq_w, const Available& ok, std::vector<sdk::Node>* nodes) {
  if (ok(dq_w) && sole_consumer(dq_w.output(0)).valid()) nodes->push_back(dq_w);
}

bool match_relu_then_quantize(sdk::Value v, const Available& ok, sdk::Node* relu, sdk::Node* q, ScalarQuant* y_quant,
                              std::vector<sdk::Node>* nodes) {
  const sdk::Node r = sole_consumer(v);
  if (is_op(r, "Relu") && ok(r)) {
    *relu = r;
    nodes->push_back(r);
    v = r.output(0);
  }
  const sdk::Node quantize = output_quantize(v, ok, y_quant);
  if (!quantize.valid()) return false;
  *q = quantize;
  nodes->push_back(quantize);
  return true;
}

bool scalar_quant(const sdk::Node& n, ScalarQuant* q) {
  if (!n.has_input(1)) return false;
  const sdk::Tensor s = constant_of(n.input(1));
  if (!s.present() || s.elem_type() != EPHOST_ELEMENT_FLOAT || s.size() != 1) return false;
  q->scale = s.data<float>()[0];
  if (!(q->scale > 0.f) || !std::isfinite(q->scale)) return false;
  q->zero_point = 0;
  q->type = EPHOST_ELEMENT_UINT8;
  if (n.has_input(2)) {
    const sdk::Tensor z = constant_of(n.input(2));
    if (!z.present() || z.size() != 1) return false;
    q->type = z.elem_type();
    if (q->type == EPHOST_ELEMENT_UINT8)
      q->zero_point = z.data<uint8_t>()[0];
    else if (q->type == EPHOST_ELEMENT_INT8)
      q->zero_point = z.data<int8_t>()[0];
    else
      return false;
  }
  return true;
}

bool is_activation_dequantize(const sdk::Node& dq, ScalarQuant* x) {
  return is_quant_op(dq, "DequantizeLinear") && scalar_quant(dq, x) && !is_constant(dq.input(0)) &&
         is_float(dq.output(0));
}

sdk::Node output_quantize(const sdk::Value& v, const Available& ok, ScalarQuant* y) {
  const sdk::Node q = sole_consumer(v);
  if (!is_quant_op(q, "QuantizeLinear") || !ok(q) || !scalar_quant(q, y) || q.num_outputs() != 1 || !q.has_output(0))
    return sdk::Node();
  return q;
}

bool match_requantize(const sdk::Value& v, const Available& ok, sdk::Node* q, sdk::Node* dq, ScalarQuant* q_quant,
                      ScalarQuant* dq_quant) {
  const sdk::Node qn = output_quantize(v, ok, q_quant);
  if (!qn.valid()) return false;
  const sdk::Node dqn = sole_consumer(qn.output(0));
  if (!is_quant_op(dqn, "DequantizeLinear") || !ok(dqn) || !scalar_quant(dqn, dq_quant) ||
      dq_quant->type != q_quant->type || !is_float(dqn.output(0)))
    return false;
  *q = qn;
  *dq = dqn;
  return true;
}

void quantize_row(const float* x, const ScalarQuant& q, void* y, int64_t n) {
  if (q.type == EPHOST_ELEMENT_UINT8)
    math::quantize_linear(x, q.scale, static_cast<uint8_t>(q.zero_point), static_cast<uint8_t*>(y), n);
  else
    math::quantize_linear(x, q.scale, static_cast<int8_t>(q.zero_point), static_cast<int8_t*>(y), n);
}

void dequantize_row(const void* x, const ScalarQuant& q, float* y, int64_t n) {
  if (q.type == EPHOST_ELEMENT_UINT8)
    math::dequantize_linear(static_cast<const uint8_t*>(x), q.scale, static_cast<uint8_t>(q.zero_point), y, n);
  else
    math::dequantize_linear(static_cast<const int8_t*>(x), q.scale, static_cast<int8_t>(q.zero_point), y, n);
}

bool channel_weight_quant(const sdk::Node& dq, int64_t rank, int64_t channel_axis, int64_t channels,
                          std::vector<float>* scales) {
  const sdk::Tensor w = constant_of(dq.input(0));
  if (!w.present() || w.elem_type() != EPHOST_ELEMENT_INT8 || static_cast<int64_t>(w.rank()) != rank) return false;
  const sdk::Tensor s = constant_of(dq.input(1));
  if (!s.present() || s.elem_type() != EPHOST_ELEMENT_FLOAT) return false;
  if (s.size() == 1) {
    scales->assign(static_cast<size_t>(channels), s.data<float>()[0]);
  } else {
    if (s.rank() != 1 || s.size() != channels) return false;
    int64_t axis = dq.attr_int("axis", 1);
    if (axis < 0) axis += rank;
    if (axis != channel_axis) return false;
    scales->assign(s.data<float>(), s.data<float>() + channels);
  }
  for (float v : *scales)
    if (!(v > 0.f) || !std::isfinite(v)) return false;
  if (dq.has_input(2)) {
    const sdk::Tensor z = constant_of(dq.input(2));
    if (!z.present() || z.elem_type() != EPHOST_ELEMENT_INT8) return false;
    const int8_t* pz = z.data<int8_t>();
    for (int64_t i = 0; i < z.size(); ++i)
      if (pz[i] != 0) return false;
  }
  return true;
}

bool int8_full_range_product_exact() { return dnnl_has_vnni(); }

bool int8_product_exact(const sdk::Tensor& w) {
  if (dnnl_has_vnni()) return true;
  const int8_t* p = w.data<int8_t>();
  for (int64_t i = 0; i < w.size(); ++i)
    if (p[i] < -64 || p[i] > 64) return false;
  return true;
}

HostWeights::HostWeights(const sdk::Value& value) : value_(value) {
  const sdk::Tensor w = constant_of(value);
  data_ = w.data<int8_t>();
}

const void* HostWeights::for_packing() {
  if (data_ != nullptr) return data_;
  // A layout the compile did not plan (a run on another thread count): the host reads them back.
  sdk::log(EPHOST_LOG_VERBOSE, "int8 weights '" + value_.name() + "': packing another layout after they were given "
                               "back; the host reads them back and the group keeps them");
  data_ = constant_of(value_).data<int8_t>();
  return data_;
}

void HostWeights::done() {
  if (given_back_ || data_ == nullptr) return;
  if (!value_.initializer_done()) return;  // an older host: keep the view
  given_back_ = true;
  data_ = nullptr;
}

#if defined(EPHOST_WITH_DNNL)
dnnl::memory PackedWeights::in_layout(const dnnl::memory::desc& want, const dnnl::memory::desc& user,
                                      HostWeights& weights) {
  for (const auto& [layout, packed] : packed_)
    if (layout == want) return packed.memory;
  dnnl::memory source(user, math::cpu_engine(), const_cast<void*>(weights.for_packing()));
  math::WeightsMemory packed = math::weights_memory(want);
  dnnl::stream& s = math::thread_stream();
  dnnl::reorder(source, packed.memory).execute(s, source, packed.memory);
  s.wait();
  packed_.emplace_back(want, packed);
  return packed.memory;
}
#endif

}  // namespace ephost::cpu::fusion
