// A QDQ model's quantized 2-D Conv run in int8: the pattern ONNX Runtime runs as QLinearConv.
//
//   DequantizeLinear(X_q, sx, zx) ─┐
//   DequantizeLinear(W_q, sw, 0) ──┴─ Conv(., ., [bias]) ─ [Relu] ─ QuantizeLinear(., sy, zy) ─ Y_q
//
// X_q is u8 or s8 [N, C, H, W] with one scale and zero point; W_q a constant s8 [M, C/group, kh, kw]
// quantized per tensor or per output channel, zero point 0; the bias a float constant (the host precomputes a
// DequantizeLinear of int32); Y_q u8 or s8 with one scale and zero point.
//
// X_q is copied into NHWC with its padding filled with zx (the quantized zero: padding is 0 in float)
// and oneDNN computes the product exactly in int32 without padding (weights packed once). By default
// the primitive also requantizes, as ONNX Runtime's QLinearConv does: it multiplies by
// sx * sw[m] / sy, adds the bias, Relu and zy, and writes Y_q as NHWC bytes, which are transposed into
// NCHW. With the provider option int8_exact_requantize=1 (or where oneDNN has no JIT kernel for those
// attributes) it writes acc = X_q * W_q and the epilogue evaluates
// y = (acc - zx * sum(W_q[m])) * sx * sw[m] + bias[m], Relu and QuantizeLinear (math/quantize.h, a true
// division by sy). Either way each output is within a quantization step of the op-by-op evaluation;
// over a deep model the multiplication's different ties add up (MobileNetV3's logits: 6 steps from the
// op-by-op graph with the primitive, 0 with the division), at about 15% of EfficientNet-B0's time.
// Where oneDNN's product would not be exact (qdq_common.h), the pattern is not taken.
//
// When X's DequantizeLinear feeds other nodes too (a residual Add, a second convolution), the first
// conv to match takes it all the same: the group reads X_q and hands the DequantizeLinear's float
// output out as its second output, computed as the op computes it, for the others (one pass instead of
// the op's and a re-quantization's: ~4% of ResNet-50). Where another group took it, the group reads
// its float output and re-quantizes it with (sx, zx): x = (q - zx) * sx recovers q exactly.
//
// Convolutions that read each other's bytes alone form one group, a chain (QdqConvChain below), whose
// bytes stay NHWC between its links; a chain may end with the residual Add of a ResNet block or with
// a MaxPool, also run on the NHWC bytes. A chain runs through QdqConvChainRunner (qdq_conv_chain.h),
// which reads and writes NCHW or NHWC: its own group uses NCHW at both ends, and chains that read
// each other's values are claimed together as an int8 trunk (qdq_conv_trunk.h) that keeps them NHWC.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>

#include "constant_lookup.h"
#include "ephost/sdk/profile_spans.hpp"
#include "graph_match.h"
#include "kernels/conv_attributes.h"
#include "math/byte_table.h"
#include "math/parallel.h"
#include "math/pool.h"
#include "math/quantize.h"
#include "math/transpose.h"
#include "math/transpose_images.h"
#include "qdq_common.h"
#include "qdq_conv_chain.h"
#include "qdq_pool.h"

#if defined(EPHOST_WITH_DNNL)
#include "math/dnnl_util.h"
#endif

namespace ephost::cpu::fusion {

namespace {

struct QdqConvMatch {
  sdk::Node dq_x, dq_w, conv, relu, q;
  bool x_quantized_input = false;  // the group reads X_q (dq_x is in the group)
  bool x_handed_out = false;       // dq_x is in the group and its float output also feeds others
  ScalarQuant x, y;
  std::vector<sdk::Node> nodes;
  int64_t M = 0;
};

bool match_qdq_conv(const sdk::Node& anchor, const Available& ok, QdqConvMatch* m) {
#if !defined(EPHOST_WITH_DNNL)
  return false;
#endif
  if (!is_op(anchor, "Conv") || !ok(anchor) || !anchor.has_input(0) || !anchor.has_input(1)) return false;
  if (!is_float(anchor.output(0)) || anchor.input(0).rank() != 4) return false;
  m->conv = anchor;
  if (!match_dequantized_operands(anchor, &m->dq_x, &m->dq_w, &m->x)) return false;
  const sdk::Tensor w = constant_of(m->dq_w.input(0));
  if (!w.present() || w.rank() != 4) return false;
  m->M = w.dim(0);
  std::vector<float> scales;
  if (!channel_weight_quant(m->dq_w, 4, 0, m->M, &scales) || !int8_product_exact(w)) return false;
  const std::string auto_pad = anchor.attr_string("auto_pad", "NOTSET");
  if (auto_pad != "NOTSET" && auto_pad != "VALID" && auto_pad != "SAME_UPPER" && auto_pad != "SAME_LOWER") return false;
  if (anchor.has_input(2)) {
    const sdk::Tensor b = constant_of(anchor.input(2));
    if (!b.present() || b.elem_type() != EPHOST_ELEMENT_FLOAT || b.size() != m->M) return false;
  }
  m->x_quantized_input = ok(m->dq_x);
  m->x_handed_out = m->x_quantized_input && !sole_consumer(m->dq_x.output(0)).valid();  // graph outputs too
  m->nodes.clear();
  if (m->x_quantized_input) m->nodes.push_back(m->dq_x);
  m->nodes.push_back(anchor);
  take_weight_dequantize(m->dq_w, ok, &m->nodes);
  sdk::Value cur = anchor.output(0);
  return match_relu_then_quantize(cur, ok, &m->relu, &m->q, &m->y, &m->nodes);
}

// The residual Add a chain may end with (a ResNet block's end):
//
//   last link's Q ─ DequantizeLinear(., sa, za) ─┐
//                                               Add ─ [Relu] ─ QuantizeLinear(., sy, zy) ─ Y_q
//   B ─────────────────────────────────────────┘
//
// B is the chain's own input X_q through the DequantizeLinear the first link took (an identity block),
// the bytes of a DequantizeLinear only this Add reads (a projection's output), or any float value. The
// group reads the last link's NHWC bytes and B's NCHW elements and evaluates the ops' own arithmetic
// (math/quantize.h, one float add, Relu), so Y_q is the op-by-op graph's bit for bit; the last link's
// output is never written in NCHW and X's float tensor is not handed out for the Add.
struct ResidualAdd {
  enum class Operand { kChainInput, kBytes, kFloat };
  sdk::Node dq_a, add, dq_b, relu, q;
  ScalarQuant a, b, y;
  Operand b_from = Operand::kFloat;
  std::string b_value;  // the group input B is read from (kBytes, kFloat)
  std::vector<sdk::Node> nodes;
};

// A run of fused int8 convolutions, each reading the one before it alone: conv → Q → DQ → conv → ...
// (a ResNet bottleneck's 1x1 → 3x3 → 1x1). One group runs them in turn and keeps the bytes between
// them in NHWC, the layout the primitives read and write: the two transposes per link (NHWC into
// NCHW for the graph's value, and back) are left out. Only the last link's output leaves the group,
// in NCHW; a link's output that anything else reads (a second consumer, a float op, a graph output)
// ends the chain, so that value is produced in the graph's layout as before.
struct QdqConvChain {
  std::vector<QdqConvMatch> links;
  std::vector<sdk::Node> nodes;
  bool has_residual = false;
  ResidualAdd residual;  // when has_residual
  // Or a MaxPool between quantize pairs (a stem's), pooled in NHWC on the bytes.
  bool has_pool = false;
  QdqMaxPoolMatch pool;  // when has_pool
};

// The link reading `prev`'s output, when it is the only reader of it: `prev`'s QuantizeLinear output
// goes to one DequantizeLinear alone, and that to one Conv alone, which matches as a link that reads
// the bytes and hands nothing out.
bool match_next_link(const QdqConvMatch& prev, const Available& ok, QdqConvMatch* next) {
  const sdk::Node dq = sole_consumer(prev.q.output(0));
  if (!is_quant_op(dq, "DequantizeLinear") || !ok(dq) || !dq.has_output(0)) return false;
  const sdk::Node conv = sole_consumer(dq.output(0));
  if (!is_op(conv, "Conv") || !ok(conv) || !conv.has_input(0) || conv.input(0).name() != dq.output(0).name())
    return false;
  if (!match_qdq_conv(conv, ok, next)) return false;
  // u8 links only: a chain of s8 activations gave 5 steps under EPHOST_CPU_ISA=avx2 and scalar (oneDNN
  // without VNNI) in ConvChainKeepsTheBytesNhwcBetweenConvs; not yet understood, so s8 convolutions
  // stay one group each, as before.
  return next->x_quantized_input && !next->x_handed_out && next->dq_x.get() == dq.get() &&
         next->x.type == prev.y.type && next->x.type == EPHOST_ELEMENT_UINT8;
}

// Whether the first link's float X would still leave the group with `add` in it: X's DequantizeLinear
// has a reader outside the group (or is a graph output).
bool x_still_handed_out(const QdqConvMatch& first, const sdk::Node& add, bool add_reads_x) {
  if (!first.x_handed_out) return false;
  const std::vector<sdk::Node> readers = inner_consumers(first.dq_x.output(0));
  if (readers.empty()) return true;
  for (const sdk::Node& r : readers)
    if (r.get() != first.conv.get() && !(add_reads_x && r.get() == add.get())) return true;
  return false;
}

// Taken only when the group then hands nothing out but Y_q: every other node of the group precedes
// Y_q's QuantizeLinear, so no path leaves the group and comes back (the host accepts it as one group).
bool match_residual_add(const QdqConvChain& chain, const Available& ok, ResidualAdd* r) {
  const QdqConvMatch& first = chain.links.front();
  const QdqConvMatch& last = chain.links.back();
  r->dq_a = sole_consumer(last.q.output(0));
  if (!is_quant_op(r->dq_a, "DequantizeLinear") || !ok(r->dq_a) || !scalar_quant(r->dq_a, &r->a) ||
      r->a.type != last.y.type)
    return false;
  r->add = sole_consumer(r->dq_a.output(0));
  if (!is_op(r->add, "Add") || !ok(r->add)) return false;
  const int other = other_input(r->add, r->dq_a.output(0).name());
  if (other < 0) return false;
  const sdk::Value b = r->add.input(static_cast<size_t>(other));
  // Equal shapes only: no broadcasting (checked again on the run's shapes).
  const std::vector<int64_t> dims = r->add.output(0).dims();
  if (!is_float(b) || dims.size() != 4 || b.dims() != dims || r->dq_a.output(0).dims() != dims) return false;
  r->dq_b = b.producer();
  const bool dq_b = r->dq_b.valid() && is_quant_op(r->dq_b, "DequantizeLinear") && scalar_quant(r->dq_b, &r->b) &&
                    !is_constant(r->dq_b.input(0));
  if (dq_b && first.x_quantized_input && r->dq_b.get() == first.dq_x.get()) {
    r->b_from = ResidualAdd::Operand::kChainInput;
  } else if (dq_b && ok(r->dq_b) && sole_consumer(b).get() == r->add.get()) {
    r->b_from = ResidualAdd::Operand::kBytes;
    r->b_value = r->dq_b.input(0).name();
  } else {
    r->b_from = ResidualAdd::Operand::kFloat;
    r->b_value = b.name();
  }
  if (x_still_handed_out(first, r->add, r->b_from == ResidualAdd::Operand::kChainInput)) return false;
  r->nodes = {r->dq_a, r->add};
  if (r->b_from == ResidualAdd::Operand::kBytes) r->nodes.push_back(r->dq_b);
  return match_relu_then_quantize(r->add.output(0), ok, &r->relu, &r->q, &r->y, &r->nodes);
}

bool match_qdq_conv_chain(const sdk::Node& anchor, const Available& ok, QdqConvChain* chain) {
  chain->links.clear();
  chain->nodes.clear();
  QdqConvMatch first;
  if (!match_qdq_conv(anchor, ok, &first)) return false;
  chain->links.push_back(first);
  for (;;) {
    QdqConvMatch next;
    if (!match_next_link(chain->links.back(), ok, &next)) break;
    chain->links.push_back(next);
  }
  chain->has_residual = match_residual_add(*chain, ok, &chain->residual);
  if (chain->has_residual) chain->links.front().x_handed_out = false;
  const sdk::Node dq = sole_consumer(chain->links.back().q.output(0));
  chain->has_pool = !chain->has_residual && dq.valid() && match_qdq_max_pool(dq, ok, &chain->pool) &&
                    chain->pool.x.type == chain->links.back().y.type && chain->pool.params.kernel_shape.size() == 2;
  for (const QdqConvMatch& link : chain->links) chain->nodes.insert(chain->nodes.end(), link.nodes.begin(), link.nodes.end());
  if (chain->has_residual)
    chain->nodes.insert(chain->nodes.end(), chain->residual.nodes.begin(), chain->residual.nodes.end());
  if (chain->has_pool) chain->nodes.insert(chain->nodes.end(), {chain->pool.dq, chain->pool.pool, chain->pool.q});
  return true;
}

// At compile, what matching again may take: the group's nodes (by the value each makes first), so
// that the chain found again ends where the claimed group ends.
Available chain_members(const sdk::Graph& group) {
  auto made = std::make_shared<std::unordered_set<std::string>>();
  for (const sdk::Node& n : group.nodes())
    if (n.num_outputs() > 0 && n.has_output(0)) made->insert(n.output(0).name());
  return [made](const sdk::Node& n) { return n.num_outputs() > 0 && n.has_output(0) && made->count(n.output(0).name()) != 0; };
}

#if defined(EPHOST_WITH_DNNL)

using dnnl::memory;

struct Plan {
  dnnl::convolution_forward prim;
  memory::desc src, acc;
  memory w;
  size_t scratch = 0;
  // The primitive writes Y_q itself (NHWC u8/s8): output scales, bias, Relu and the zero point as its
  // attributes. Else it writes the int32 product and the epilogue requantizes.
  bool requantizes = false;
  memory bias;
};

template <typename Q>
void quantize_row(const float* x, const ScalarQuant& q, Q* y, int64_t n) {
  math::quantize_linear(x, q.scale, static_cast<Q>(q.zero_point), y, n);
}

// Where a link's input comes from and where its output goes: the group's NCHW tensors at the chain's
// ends, NHWC thread buffers between links.
struct LinkInput {
  const uint8_t* bytes = nullptr;  // X_q; null for a float X (the first link's, re-quantized)
  const float* floats = nullptr;   // the float X (NCHW) when bytes is null
  bool nhwc = false;
  Shape shape;  // NCHW dims
};

// One convolution of a chain: its weights, scales and plans, run on bytes.
class ConvLink {
 public:
  ConvLink(const QdqConvMatch& m, std::string group_name, const KernelConfig& config)
      : name_(std::move(group_name)), m_(m), params_(conv_attributes(m.conv)), default_threads_(config.default_threads),
        exact_requantize_(config.int8_exact_requantize), host_w_(m.dq_w.input(0)) {
    const sdk::Tensor w = constant_of(m.dq_w.input(0));
    w_shape_ = w.shape();
    const int8_t* w_ = host_w_.data();
    std::vector<float> w_scales;
    channel_weight_quant(m.dq_w, 4, 0, m.M, &w_scales);
    const int64_t per_channel = m.M == 0 ? 0 : w.size() / m.M;
    scale_.resize(static_cast<size_t>(m.M));
    offset_.resize(static_cast<size_t>(m.M));
    bias_.assign(static_cast<size_t>(m.M), 0.f);
    for (int64_t o = 0; o < m.M; ++o) {
      scale_[o] = m.x.scale * w_scales[o];
      int64_t sum = 0;
      for (int64_t i = 0; i < per_channel; ++i) sum += w_[o * per_channel + i];
      offset_[o] = static_cast<int32_t>(m.x.zero_point * sum);
    }
    if (m.conv.has_input(2)) {
      const sdk::Tensor b = constant_of(m.conv.input(2));
      std::copy(b.data<float>(), b.data<float>() + m.M, bias_.begin());
    }
  }

  const QdqConvMatch& match() const { return m_; }

  // The geometry of this link on input dims `x_shape` (NCHW).
  math::ConvGeometry geometry(const Shape& x_shape) const {
    math::ConvGeometry g;
    try {
      g = math::conv_geometry(params_, x_shape, w_shape_);
    } catch (const std::invalid_argument& e) {
      fail(e.what());
    }
    if (g.in_spatial.size() != 2) fail("only 2-D convolutions are fused");
    return g;
  }

  // Runs the link on `in` into `y`: NCHW (the group's output) or, with y_nhwc, NHWC bytes.
  void run(const LinkInput& in, void* y, bool y_nhwc, int threads, sdk::SpanTimer& spans) {
    const math::ConvGeometry g = geometry(in.shape);
    const int64_t N = g.batch, C = g.in_channels, H = g.in_spatial[0], W = g.in_spatial[1];
    const int64_t Hp = H + g.pad_begin[0] + g.pad_end[0], Wp = W + g.pad_begin[1] + g.pad_end[1];
    const bool padded = Hp != H || Wp != W;
    uint8_t* src = nullptr;
    if (in.nhwc && !padded) {
      src = const_cast<uint8_t*>(in.bytes);  // oneDNN only reads its source
    } else {
      src = static_cast<uint8_t*>(math::thread_buffer(0, static_cast<size_t>(std::max<int64_t>(N * Hp * Wp * C, 1))));
      if (in.nhwc)
        pad_nhwc(in.bytes, g, Hp, Wp, src, threads);
      else
        to_padded_nhwc(in.bytes != nullptr ? in.bytes : quantized_input(in.floats, math::numel(in.shape), threads), g,
                       Hp, Wp, src, threads);
    }
    const int64_t OH = g.out_spatial[0], OW = g.out_spatial[1], M = m_.M;
    const int team = team_for(g, threads);
    math::set_num_threads(team);
    // With profiling on, a run that creates the primitive (the first of a new input shape; with a
    // static shape compile did) reports it as its own span: the tests count these spans.
    bool planned_now = false;
    std::shared_ptr<Plan> plan = plan_for(g, Hp, Wp, team, &planned_now);
    if (planned_now) spans.close("plan for these input shapes", "Plan", {});
    // A requantizing primitive writes an NHWC link output itself.
    void* acc = plan->requantizes && y_nhwc
                    ? y
                    : math::thread_buffer(1, static_cast<size_t>(N * OH * OW * M) * sizeof(int32_t));
    dnnl::engine& eng = math::cpu_engine();
    memory srcm(plan->src, eng, src);
    memory accm(plan->acc, eng, acc);
    dnnl::stream& s = math::thread_stream();
    std::unordered_map<int, memory> args{{DNNL_ARG_SRC, srcm}, {DNNL_ARG_WEIGHTS, plan->w}, {DNNL_ARG_DST, accm},
                                         {DNNL_ARG_SCRATCHPAD, math::scratchpad(plan->scratch)}};
    if (plan->requantizes) args.emplace(DNNL_ARG_BIAS, plan->bias);
    plan->prim.execute(s, args);
    s.wait();
    if (plan->requantizes && y_nhwc) return;
    const int64_t pixels = OH * OW;
    const int32_t* acc32 = static_cast<const int32_t*>(acc);
    if (plan->requantizes) {
      // acc holds Y_q as NHWC bytes: only the layout is left.
      const uint8_t* yq = static_cast<const uint8_t*>(acc);
      math::parallel_for(N * pixels, threads, std::max<int64_t>(1, math::byte_grain() / std::max<int64_t>(M, 1)),
                         [&](int64_t r0, int64_t r1) {
        for (int64_t b0 = r0; b0 < r1;) {
          const int64_t n = b0 / pixels, p0 = b0 % pixels, count = std::min(r1 - b0, pixels - p0);
          math::transpose_2d(yq + b0 * M, M, static_cast<uint8_t*>(y) + n * M * pixels + p0, pixels, count, M);
          b0 += count;
        }
      });
      math::note_team_end(threads);
      return;
    }
    math::parallel_for(N * pixels, threads, std::max<int64_t>(1, math::kElementwiseGrain / std::max<int64_t>(M, 1)),
                       [&](int64_t r0, int64_t r1) { epilogue(acc32, pixels, y, y_nhwc, r0, r1); });
    math::note_team_end(threads);
  }

  // With a static input shape, the primitive is created and the weights packed at session creation,
  // and this thread's buffers of a run are touched (their page faults), so that the first run does no
  // more than any other (int8 ResNet-50's first run took 2.9 times its steady run). Planned for the
  // session's thread count; a run the machine's load gives fewer threads creates its primitive then
  // (the packed weights are shared). A shape this cannot plan is left to the first run, which reports
  // what is wrong. Returns the output dims (empty when unplanned).
  Shape plan_at_compile(const Shape& x_shape) {
    if (x_shape.size() != 4) return {};
    for (int64_t d : x_shape)
      if (d <= 0) return {};
    try {
      const math::ConvGeometry g = math::conv_geometry(params_, x_shape, w_shape_);
      if (g.in_spatial.size() != 2 || math::numel(g.output_shape()) == 0) return {};
      const int64_t N = g.batch, C = g.in_channels, H = g.in_spatial[0], W = g.in_spatial[1];
      const int64_t Hp = H + g.pad_begin[0] + g.pad_end[0], Wp = W + g.pad_begin[1] + g.pad_end[1];
      const int team = team_for(g, std::max(1, default_threads_));
      std::shared_ptr<Plan> plan = plan_for(g, Hp, Wp, team);
      {
        // Packed for the shape it runs with: the host's copy can go (plugin ABI 5).
        std::lock_guard<std::mutex> lock(mu_);
        host_w_.done();
      }
      const int64_t pixels = N * g.out_spatial[0] * g.out_spatial[1];
      math::touch_thread_buffer(0, static_cast<size_t>(N * Hp * Wp * C));
      math::touch_thread_buffer(1, static_cast<size_t>(pixels * m_.M) * sizeof(int32_t));
      math::touch_thread_buffer(2, plan->scratch);
      if (Hp != H || Wp != W) math::touch_thread_buffer(3, static_cast<size_t>(N * H * W * C));
      return g.output_shape();
    } catch (const std::exception& e) {
      sdk::log(EPHOST_LOG_VERBOSE, "fused int8 conv " + name_ + ": no plan at compile time: " + e.what());
      return {};
    }
  }

  [[noreturn]] void fail(const std::string& what) const {
    sdk::fail(EPHOST_INVALID_ARGUMENT, "fused int8 conv " + name_ + " (" + m_.conv.name() + "): " + what);
  }

 private:
  // The team of a convolution of geometry g: small ones run on fewer threads than the run has.
  int team_for(const math::ConvGeometry& g, int threads) const {
    const double pixels = static_cast<double>(g.batch * g.out_spatial[0] * g.out_spatial[1]);
    const double macs_per_pixel = static_cast<double>(m_.M * (g.in_channels / g.group) * g.kernel[0] * g.kernel[1]);
    return math::threads_for_int8_work(2.0 * pixels * macs_per_pixel, threads);
  }

  // X_q from X's DequantizeLinear's float output (when that node stays outside the group) quantized
  // back with (sx, zx), exactly, in one pass over the whole tensor (per-row calls on a deep
  // layer's 7-pixel rows cost more than the quantization). Thread buffer 4 holds it until
  // to_padded_nhwc has copied it.
  const uint8_t* quantized_input(const float* px, int64_t n, int threads) const {
    uint8_t* q = static_cast<uint8_t*>(math::thread_buffer(4, static_cast<size_t>(std::max<int64_t>(n, 1))));
    math::parallel_for(n, threads, math::kElementwiseGrain, [&](int64_t i0, int64_t i1) {
      if (m_.x.type == EPHOST_ELEMENT_UINT8)
        quantize_row(px + i0, m_.x, q + i0, i1 - i0);
      else
        quantize_row(px + i0, m_.x, reinterpret_cast<int8_t*>(q + i0), i1 - i0);
    });
    return q;
  }

  // X_q (NCHW) into NHWC with the padding around it holding the zero point. Each image's [C][H*W]
  // plane is transposed whole into [H*W][C] pixels: with the pixel count as the transpose's column
  // count its 16x16 tiles stay whole, where per-row transposes of a deep layer's 7- or 14-pixel rows
  // made every tile a partial one, copied through a staging block (a fifth of EfficientNet-B0's time).
  // With padding the pixels go to thread buffer 3 first, then row by row between the padding.
  void to_padded_nhwc(const uint8_t* xq, const math::ConvGeometry& g, int64_t Hp, int64_t Wp, uint8_t* dst,
                      int threads) const {
    const int64_t N = g.batch, C = g.in_channels, H = g.in_spatial[0], W = g.in_spatial[1], HW = H * W;
    const bool padded = Hp != H || Wp != W;
    uint8_t* pixels =
        padded ? static_cast<uint8_t*>(math::thread_buffer(3, static_cast<size_t>(std::max<int64_t>(N * HW * C, 1))))
               : dst;
    // Blocks of whole 16-pixel tiles, about kElementwiseGrain bytes each; a thread takes at least
    // byte_grain() bytes of them.
    const int64_t block = std::max<int64_t>(16, math::kElementwiseGrain / std::max<int64_t>(C, 1) / 16 * 16);
    const int64_t blocks = (HW + block - 1) / block;
    const int64_t block_grain = std::max<int64_t>(1, math::byte_grain() / std::max<int64_t>(block * C, 1));
    math::parallel_for(N * blocks, threads, block_grain, [&](int64_t b0, int64_t b1) {
      for (int64_t b = b0; b < b1; ++b) {
        const int64_t n = b / blocks, p0 = b % blocks * block, count = std::min(block, HW - p0);
        math::transpose_2d(xq + n * C * HW + p0, HW, pixels + (n * HW + p0) * C, C, C, count);
      }
    });
    if (padded) pad_nhwc(pixels, g, Hp, Wp, dst, threads);
  }

  // X_q already in NHWC (the previous link's output, or to_padded_nhwc's transposed pixels) between the
  // padding holding the zero point.
  void pad_nhwc(const uint8_t* xq, const math::ConvGeometry& g, int64_t Hp, int64_t Wp, uint8_t* dst,
                int threads) const {
    const int64_t C = g.in_channels, H = g.in_spatial[0], W = g.in_spatial[1];
    const int64_t top = g.pad_begin[0], left = g.pad_begin[1];
    const uint8_t zero = static_cast<uint8_t>(m_.x.zero_point);  // the byte of u8 or s8 zx
    math::parallel_for(g.batch * Hp, threads,
                       std::max<int64_t>(1, math::byte_grain() / std::max<int64_t>(Wp * C, 1)),
                       [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        const int64_t n = r / Hp, h = r % Hp - top;
        uint8_t* out = dst + r * Wp * C;
        if (h < 0 || h >= H) {
          std::memset(out, zero, static_cast<size_t>(Wp * C));
          continue;
        }
        std::memset(out, zero, static_cast<size_t>(left * C));
        std::memcpy(out + left * C, xq + (n * H + h) * W * C, static_cast<size_t>(W * C));
        std::memset(out + (left + W) * C, zero, static_cast<size_t>((Wp - left - W) * C));
      }
    });
    math::note_team_end(threads);
  }

  // Output pixels [r0, r1) of the NHWC int32 product: the graph's float value, then QuantizeLinear, then
  // into NCHW a block of pixels at a time (a [pixels][M] block transposed into M rows), or with y_nhwc
  // straight into Y's NHWC rows.
  void epilogue(const int32_t* acc, int64_t pixels, void* y, bool y_nhwc, int64_t r0, int64_t r1) const {
    constexpr int64_t kBlock = 64;
    const int64_t M = m_.M;
    float* row = static_cast<float*>(math::thread_buffer(4, static_cast<size_t>(M) * sizeof(float)));
    uint8_t* block = static_cast<uint8_t*>(math::thread_buffer(5, static_cast<size_t>(kBlock * M)));
    const bool relu = m_.relu.valid();
    const int32_t* offset = offset_.data();
    const float* scale = scale_.data();
    const float* bias = bias_.data();
    for (int64_t b0 = r0; b0 < r1;) {
      // A block stays inside one image: its pixels are contiguous in each output channel's plane.
      const int64_t n = b0 / pixels, p0 = b0 % pixels;
      const int64_t count = std::min({kBlock, r1 - b0, pixels - p0});
      for (int64_t i = 0; i < count; ++i) {
        const int32_t* ar = acc + (b0 + i) * M;
        for (int64_t o = 0; o < M; ++o) {
          const float v = static_cast<float>(ar[o] - offset[o]) * scale[o] + bias[o];
          row[o] = relu ? (v > 0.f ? v : 0.f) : v;
        }
        uint8_t* q = y_nhwc ? static_cast<uint8_t*>(y) + (b0 + i) * M : block + i * M;
        if (m_.y.type == EPHOST_ELEMENT_UINT8)
          quantize_row(row, m_.y, q, M);
        else
          quantize_row(row, m_.y, reinterpret_cast<int8_t*>(q), M);
      }
      if (!y_nhwc) math::transpose_2d(block, M, static_cast<uint8_t*>(y) + n * M * pixels + p0, pixels, count, M);
      b0 += count;
    }
  }

  // The plan for this geometry and team, built (and *built set) when there is none yet.
  std::shared_ptr<Plan> plan_for(const math::ConvGeometry& g, int64_t Hp, int64_t Wp, int threads,
                                 bool* built = nullptr) {
    const std::vector<int64_t> key{g.batch, Hp, Wp, g.out_spatial[0], g.out_spatial[1], threads};
    std::lock_guard<std::mutex> lock(mu_);
    auto it = plans_.find(key);
    if (it != plans_.end()) return it->second;
    if (built != nullptr) *built = true;
    auto plan = std::make_shared<Plan>();
    const int64_t N = g.batch, C = g.in_channels, M = m_.M, G = g.group;
    const int64_t KH = g.kernel[0], KW = g.kernel[1];
    const auto src_dt = m_.x.type == EPHOST_ELEMENT_UINT8 ? memory::data_type::u8 : memory::data_type::s8;
    plan->src = memory::desc({N, C, Hp, Wp}, src_dt, memory::format_tag::nhwc);
    plan->acc = memory::desc({N, M, g.out_spatial[0], g.out_spatial[1]}, memory::data_type::s32, memory::format_tag::nhwc);
    const memory::dims wdims = G == 1 ? memory::dims{M, C, KH, KW} : memory::dims{G, M / G, C / G, KH, KW};
    const memory::desc w_user(wdims, memory::data_type::s8, G == 1 ? memory::format_tag::oihw : memory::format_tag::goihw);
    const memory::desc w_any(wdims, memory::data_type::s8, memory::format_tag::any);
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    math::set_num_threads(threads);
    const memory::dims strides{g.strides[0], g.strides[1]};
    const memory::dims dilates{g.dilations[0] - 1, g.dilations[1] - 1};
    const memory::dims no_pad{0, 0};
    std::optional<dnnl::convolution_forward::primitive_desc> requantizing =
        requantizing_primitive(plan.get(), w_any, strides, dilates, threads);
    if (requantizing) {
      const auto& pd = *requantizing;
      plan->prim = dnnl::convolution_forward(pd);
      plan->scratch = pd.scratchpad_desc().get_size();
      plan->w = weights_.in_layout(pd.weights_desc(), w_user, host_w_);
      if (plans_.size() >= 64) plans_.erase(plans_.begin());
      plans_.emplace(key, plan);
      return plan;
    }
    auto desc = dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                                                plan->src, w_any, plan->acc, strides, dilates, no_pad, no_pad);
    auto pd = dnnl::convolution_forward::primitive_desc(desc, attr, math::cpu_engine());
    plan->prim = dnnl::convolution_forward(pd);
    plan->scratch = pd.scratchpad_desc().get_size();
    plan->w = weights_.in_layout(pd.weights_desc(), w_user, host_w_);
    if (plans_.size() >= 64) plans_.erase(plans_.begin());
    plans_.emplace(key, plan);
    return plan;
  }

  // The primitive that writes Y_q: oneDNN (2.x) computes round((acc' + b) * oscale[m]), then the
  // post-ops (Relu; + zy), and saturates, where acc' is the product of X_q - zx (its zero-point
  // compensation, in int32). With oscale[m] = sx * sw[m] / sy and b[m] = bias[m] / (sx * sw[m]) that is
  // the epilogue's expression (multiplied by 1 / sy where QuantizeLinear divides by sy: within a step
  // of it). None when oneDNN has no JIT implementation of it here, or the scales would overflow; then
  // the epilogue requantizes.
  std::optional<dnnl::convolution_forward::primitive_desc> requantizing_primitive(
      Plan* plan, const memory::desc& w_any, const memory::dims& strides, const memory::dims& dilates,
      int threads) const {
    if (exact_requantize_) return std::nullopt;
    const int64_t M = m_.M;
    std::vector<float> oscale(static_cast<size_t>(M)), b(static_cast<size_t>(M));
    for (int64_t o = 0; o < M; ++o) {
      oscale[o] = scale_[o] / m_.y.scale;
      b[o] = bias_[o] / scale_[o];
      if (!std::isfinite(oscale[o]) || !std::isfinite(b[o])) return std::nullopt;
    }
    const auto dst_dt = m_.y.type == EPHOST_ELEMENT_UINT8 ? memory::data_type::u8 : memory::data_type::s8;
    const memory::desc dst(plan->acc.dims(), dst_dt, memory::format_tag::nhwc);
    const memory::desc bias_desc({M}, memory::data_type::f32, memory::format_tag::x);
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    attr.set_output_scales(1 << 1, oscale);
    // zx subtracted in int32 by oneDNN's compensation, exactly as the epilogue's offset: folded into
    // the float bias it would be rounded at the magnitude of zx * sum(W_q[m]).
    if (m_.x.zero_point != 0) attr.set_zero_points(DNNL_ARG_SRC, 0, {m_.x.zero_point});
    dnnl::post_ops ops;
    if (m_.relu.valid()) ops.append_eltwise(1.f, dnnl::algorithm::eltwise_relu, 0.f, 0.f);
    if (m_.y.zero_point != 0)
      ops.append_eltwise(1.f, dnnl::algorithm::eltwise_linear, 1.f, static_cast<float>(m_.y.zero_point));
    attr.set_post_ops(ops);
    math::set_num_threads(threads);
    const memory::dims no_pad{0, 0};
    try {
      auto desc = dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference,
                                                  dnnl::algorithm::convolution_direct, plan->src, w_any, bias_desc,
                                                  dst, strides, dilates, no_pad, no_pad);
      dnnl::convolution_forward::primitive_desc pd(desc, attr, math::cpu_engine());
      // Only the JIT kernels: a reference or gemm-based implementation of these attributes would be
      // slower than the epilogue.
      const std::string impl = pd.impl_info_str();
      if (impl.find("ref") != std::string::npos || impl.find("gemm") != std::string::npos) return std::nullopt;
      plan->acc = dst;
      plan->requantizes = true;
      plan->bias = memory(bias_desc, math::cpu_engine());
      std::copy(b.begin(), b.end(), static_cast<float*>(plan->bias.get_data_handle()));
      return pd;
    } catch (const dnnl::error&) {
      return std::nullopt;
    }
  }

  std::string name_;
  QdqConvMatch m_;
  math::ConvParams params_;
  int default_threads_;
  bool exact_requantize_ = false;
  Shape w_shape_;
  HostWeights host_w_;  // the constant W_q, packed per layout, given back once the compile packed it
  std::vector<float> scale_, bias_;
  std::vector<int32_t> offset_;
  std::mutex mu_;
  std::map<std::vector<int64_t>, std::shared_ptr<Plan>> plans_;
  PackedWeights weights_;
};

// f(p) with the bytes p as uint8_t or int8_t, by ONNX element type (constness kept).
template <typename Byte, typename F>
void with_byte_type(int32_t type, Byte* p, F&& f) {
  using S = std::conditional_t<std::is_const_v<Byte>, const int8_t, int8_t>;
  if (type == EPHOST_ELEMENT_UINT8)
    f(p);
  else
    f(reinterpret_cast<S*>(p));
}

#endif  // EPHOST_WITH_DNNL

}  // namespace

#if defined(EPHOST_WITH_DNNL)

// A chain's links in turn, the bytes between them NHWC in two thread buffers used in alternation (a
// link's input and output are never the same buffer).
struct QdqConvChainRunner::Impl {
  QdqConvChain chain;
  ChainInterface interface;
  std::string name;
  std::vector<std::unique_ptr<ConvLink>> links;
  std::array<uint8_t, 256> pool_table{};  // the pool's Y byte by X byte
  bool pool_identity = false;
  // Per quantization of the residual Add's byte operand B: whether its pass may divide by sy as a
  // corrected product with 1 / sy (math/quantize.h), checked on every pair of bytes once.
  mutable std::mutex reciprocal_mu;
  mutable std::vector<std::pair<ScalarQuant, bool>> reciprocal_checked;

  // The thread buffers that hold the NHWC bytes between links (math/dnnl_util.h; a link uses the others).
  static constexpr int kChainSlot0 = 6;

  explicit Impl(const QdqConvChain& c) : chain(c) {
    const QdqConvMatch& first = chain.links.front();
    ChainInterface& f = interface;
    f.nodes = chain.nodes;
    f.x_bytes = first.x_quantized_input;
    f.x = f.x_bytes ? first.dq_x.input(0).name() : first.dq_x.output(0).name();
    f.x_quant = first.x;
    if (f.x_bytes) f.x_float = first.dq_x.output(0).name();
    f.has_residual = chain.has_residual;
    if (f.has_residual) {
      const ResidualAdd& r = chain.residual;
      f.b_is_x = r.b_from == ResidualAdd::Operand::kChainInput;
      f.b_bytes = r.b_from == ResidualAdd::Operand::kBytes;
      f.b = f.b_is_x ? f.x : r.b_value;
      f.b_quant = r.b;
    }
    const sdk::Node& q = chain.has_residual ? chain.residual.q : chain.has_pool ? chain.pool.q : chain.links.back().q;
    f.y = q.output(0).name();
    f.y_type = chain.has_residual ? chain.residual.y.type
               : chain.has_pool   ? chain.pool.y.type
                                  : chain.links.back().y.type;
  }

  // The dims of every link's input and of the last link's output, checked.
  std::vector<Shape> link_shapes(const Shape& x_shape) const {
    std::vector<Shape> shapes{x_shape};
    for (const auto& link : links) shapes.push_back(link->geometry(shapes.back()).output_shape());
    return shapes;
  }

  math::PoolGeometry pool_geometry(const Shape& in) const {
    try {
      return math::pool_geometry(chain.pool.params, in);
    } catch (const std::invalid_argument& e) {
      links.back()->fail(std::string("MaxPool ") + chain.pool.pool.name() + ": " + e.what());
    }
  }

  void run(const ChainOperand& x, const ChainOperand* b, void* y, bool y_nhwc, int threads, sdk::SpanTimer& spans) {
    const int32_t want = interface.x_bytes ? interface.x_quant.type : EPHOST_ELEMENT_FLOAT;
    if (x.type != want && x.type != interface.x_quant.type) links.front()->fail("X has an unexpected type");
    const std::vector<Shape> shapes = link_shapes(x.shape);
    for (const Shape& s : shapes)
      if (math::numel(s) == 0) return;
    math::PoolGeometry pool;
    if (chain.has_pool) {
      pool = pool_geometry(shapes.back());
      if (math::numel(pool.output_shape()) == 0) return;
    }
    LinkInput in;
    if (x.type == EPHOST_ELEMENT_FLOAT)
      in.floats = static_cast<const float*>(x.data);
    else
      in.bytes = static_cast<const uint8_t*>(x.data);
    in.nhwc = x.nhwc && in.bytes != nullptr;
    in.shape = shapes[0];
    for (size_t i = 0; i < links.size(); ++i) {
      // The last link writes Y, or the NHWC bytes the residual Add or the MaxPool reads.
      const bool to_y = i + 1 == links.size() && !chain.has_residual && !chain.has_pool;
      void* out = to_y ? y
                       : math::thread_buffer(kChainSlot0 + static_cast<int>(i % 2),
                                             static_cast<size_t>(math::numel(shapes[i + 1])));
      links[i]->run(in, out, !to_y || y_nhwc, threads, spans);
      in = LinkInput{static_cast<const uint8_t*>(out), nullptr, true, shapes[i + 1]};
    }
    if (chain.has_pool) {
      pool_nhwc(in.bytes, pool, static_cast<int>(links.size()), static_cast<uint8_t*>(y), y_nhwc, threads);
      return;
    }
    if (!chain.has_residual) return;
    const ChainOperand* bo = interface.b_is_x ? &x : b;
    const int32_t b_type = interface.b_is_x || interface.b_bytes ? interface.b_quant.type : EPHOST_ELEMENT_FLOAT;
    // A trunk hands bytes where the graph has their DequantizeLinear's float (the same values).
    if (bo == nullptr || bo->data == nullptr || (bo->type != b_type && bo->type == EPHOST_ELEMENT_FLOAT) ||
        bo->shape != shapes.back())
      links.back()->fail("the residual Add's other operand " + chain.residual.add.input(0).name() + " / " +
                         chain.residual.add.input(1).name() + " does not have the convolution's shape and type");
    add_residual(in.bytes, shapes.back(), *bo, static_cast<uint8_t*>(y), y_nhwc, threads);
  }

  // Y = Q([Relu](DQ(A) + B)) for the last link's NHWC bytes A and B (bytes, dequantized, or floats).
  // With B and Y in NCHW, in one pass: a tile of kTileChannels channels of one image's pixels is
  // transposed from A into a thread's tile (in NCHW order: the elements of a contiguous range of Y
  // and B), and math::add_dequantized_then_quantize evaluates the ops' own arithmetic on it in
  // registers, bit for bit the op-by-op graph's, writing Y once. (Before, A was transposed into all of
  // Y, which was then dequantized, added and quantized through float buffers: Y went through memory
  // three times.) With B or Y in NHWC (inside a trunk) the same arithmetic runs on NHWC order: B
  // transposed into it first where it is NCHW, Y transposed out of it where it is NCHW. With B in
  // bytes the division by sy is a corrected product with 1 / sy where the compile-time check of all
  // byte pairs found it gives the same bytes (residual_by_reciprocal): ~25% of the pass on AVX-512.
  void add_residual(const uint8_t* a, const Shape& shape, const ChainOperand& b, uint8_t* y, bool y_nhwc,
                    int threads) const {
    const int64_t N = shape[0], M = shape[1], P = shape[2] * shape[3];
    if (!b.nhwc && !y_nhwc) {
      add_residual_nchw(a, shape, b, y, threads);
      return;
    }
    const int64_t n = N * M * P;
    const void* bn = b.data;
    if (!b.nhwc) {
      const size_t elem = b.type == EPHOST_ELEMENT_FLOAT ? sizeof(float) : 1;
      void* t = math::thread_buffer(0, static_cast<size_t>(n) * elem);
      if (elem == 1)
        math::transpose_images(static_cast<const uint8_t*>(b.data), static_cast<uint8_t*>(t), N, M, P, threads);
      else
        math::transpose_images(static_cast<const float*>(b.data), static_cast<float*>(t), N, M, P, threads);
      bn = t;
    }
    uint8_t* yn = y_nhwc ? y : static_cast<uint8_t*>(math::thread_buffer(1, static_cast<size_t>(n)));
    const bool by_reciprocal = residual_by_reciprocal(b);
    math::parallel_for(n, threads, math::kElementwiseGrain, [&](int64_t i0, int64_t i1) {
      add_residual_span(a + i0, b, bn, i0, yn + i0, i1 - i0, by_reciprocal);
    });
    math::note_team_end(threads);
    if (!y_nhwc) math::transpose_images(yn, y, N, P, M, threads);
  }

  void add_residual_nchw(const uint8_t* a, const Shape& shape, const ChainOperand& b, uint8_t* y, int threads) const {
    constexpr int64_t kTileChannels = 16;  // the byte transpose's tile width
    const int64_t N = shape[0], M = shape[1], P = shape[2] * shape[3];
    const int64_t tiles_per_image = (M + kTileChannels - 1) / kTileChannels;
    const int64_t tile_elems = std::min(kTileChannels, M) * P;
    const bool by_reciprocal = residual_by_reciprocal(b);
    math::parallel_for(N * tiles_per_image, threads,
                       std::max<int64_t>(1, math::kElementwiseGrain / std::max<int64_t>(tile_elems, 1)),
                       [&](int64_t t0, int64_t t1) {
      uint8_t* tile = static_cast<uint8_t*>(math::thread_buffer(4, static_cast<size_t>(tile_elems)));
      for (int64_t t = t0; t < t1; ++t) {
        const int64_t n = t / tiles_per_image, c0 = (t % tiles_per_image) * kTileChannels;
        const int64_t channels = std::min(kTileChannels, M - c0);
        math::transpose_2d(a + n * P * M + c0, M, tile, P, P, channels);
        const int64_t at = (n * M + c0) * P;
        add_residual_span(tile, b, b.data, at, y + at, channels * P, by_reciprocal);
      }
    });
    math::note_team_end(threads);
  }

  // Whether add_residual may take the reciprocal form for operand b (bytes whose parameters passed
  // math::add_quantize_by_reciprocal_exact with the Add's own).
  bool residual_by_reciprocal(const ChainOperand& b) const {
    if (b.type == EPHOST_ELEMENT_FLOAT) return false;
    const ScalarQuant& q = b.quant;
    std::lock_guard<std::mutex> lock(reciprocal_mu);
    for (const auto& [k, exact] : reciprocal_checked)
      if (k.scale == q.scale && k.zero_point == q.zero_point && k.type == q.type) return exact;
    const ResidualAdd& r = chain.residual;
    bool exact = false;
    const uint8_t* none = nullptr;
    with_byte_type(r.a.type, none, [&](const auto* pa) {
      using A = std::remove_cv_t<std::remove_pointer_t<decltype(pa)>>;
      with_byte_type(q.type, none, [&](const auto* pb) {
        using B = std::remove_cv_t<std::remove_pointer_t<decltype(pb)>>;
        with_byte_type(r.y.type, none, [&](const auto* py) {
          using Y = std::remove_cv_t<std::remove_pointer_t<decltype(py)>>;
          exact = math::add_quantize_by_reciprocal_exact<A, B, Y>(r.a.scale, static_cast<A>(r.a.zero_point), q.scale,
                                                                  static_cast<B>(q.zero_point), r.relu.valid(),
                                                                  r.y.scale, static_cast<Y>(r.y.zero_point));
        });
      });
    });
    reciprocal_checked.emplace_back(q, exact);
    return exact;
  }

  // add_residual's arithmetic on n elements: A's `a`, B's (of operand b, at bp) from element `at` on,
  // into `y`; by_reciprocal as residual_by_reciprocal(b) said.
  void add_residual_span(const uint8_t* a, const ChainOperand& b, const void* bp, int64_t at, uint8_t* y,
                         int64_t n, bool by_reciprocal) const {
    const ResidualAdd& r = chain.residual;
    with_byte_type(r.a.type, a, [&](const auto* qa) {
      using A = std::remove_cv_t<std::remove_pointer_t<decltype(qa)>>;
      with_byte_type(r.y.type, y, [&](auto* qy) {
        using Y = std::remove_pointer_t<decltype(qy)>;
        const auto za = static_cast<A>(r.a.zero_point);
        const auto zy = static_cast<Y>(r.y.zero_point);
        const bool relu = r.relu.valid();
        if (b.type == EPHOST_ELEMENT_FLOAT) {
          math::add_dequantized_then_quantize(qa, r.a.scale, za, static_cast<const float*>(bp) + at, 1.f, 0.f, relu,
                                              r.y.scale, zy, qy, n);
          return;
        }
        with_byte_type(b.quant.type, static_cast<const uint8_t*>(bp) + at, [&](const auto* qb) {
          using B = std::remove_cv_t<std::remove_pointer_t<decltype(qb)>>;
          if (by_reciprocal)
            math::add_dequantized_then_quantize_by_reciprocal(qa, r.a.scale, za, qb, b.quant.scale,
                                                              static_cast<B>(b.quant.zero_point), relu, r.y.scale, zy,
                                                              qy, n);
          else
            math::add_dequantized_then_quantize(qa, r.a.scale, za, qb, b.quant.scale,
                                                static_cast<B>(b.quant.zero_point), relu, r.y.scale, zy, qy, n);
        });
      });
    });
  }

  // The MaxPool on the last link's NHWC bytes x: the maximum in X's type, the byte table, then (unless
  // y_nhwc) into NCHW Y (thread buffer chain slot `slot` holds the pooled NHWC bytes between).
  void pool_nhwc(const uint8_t* x, const math::PoolGeometry& g, int slot, uint8_t* y, bool y_nhwc,
                 int threads) const {
    const int64_t N = g.batch, C = g.channels, P = g.out_spatial[0] * g.out_spatial[1];
    uint8_t* pooled = y_nhwc ? y
                             : static_cast<uint8_t*>(math::thread_buffer(
                                   kChainSlot0 + slot % 2, static_cast<size_t>(std::max<int64_t>(N * P * C, 1))));
    if (chain.pool.x.type == EPHOST_ELEMENT_UINT8)
      math::max_pool_nhwc(x, g, pooled, threads);
    else
      math::max_pool_nhwc(reinterpret_cast<const int8_t*>(x), g, reinterpret_cast<int8_t*>(pooled), threads);
    if (!pool_identity) math::lookup_bytes(pool_table.data(), pooled, pooled, N * P * C);
    if (!y_nhwc) math::transpose_images(pooled, y, N, P, C, threads);
  }

  Shape plan_at_compile(const Shape& x_shape) {
    Shape shape = x_shape;
    for (size_t i = 0; i < links.size() && !shape.empty(); ++i) {
      shape = links[i]->plan_at_compile(shape);
      if (!shape.empty() && (i + 1 < links.size() || chain.has_residual || chain.has_pool))
        math::touch_thread_buffer(kChainSlot0 + static_cast<int>(i % 2), static_cast<size_t>(math::numel(shape)));
    }
    if (!chain.has_pool || shape.empty()) return shape;
    try {
      const Shape pooled = math::pool_geometry(chain.pool.params, shape).output_shape();
      math::touch_thread_buffer(kChainSlot0 + static_cast<int>(links.size() % 2),
                                static_cast<size_t>(math::numel(pooled)));
      return pooled;
    } catch (const std::invalid_argument&) {
      return {};  // The first run reports it.
    }
  }
};

std::unique_ptr<QdqConvChainRunner> QdqConvChainRunner::match(const sdk::Node& anchor, const Available& ok) {
  QdqConvChain chain;
  if (!match_qdq_conv_chain(anchor, ok, &chain)) return nullptr;
  return std::unique_ptr<QdqConvChainRunner>(new QdqConvChainRunner(std::make_unique<Impl>(chain)));
}

QdqConvChainRunner::QdqConvChainRunner(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
QdqConvChainRunner::~QdqConvChainRunner() = default;

const ChainInterface& QdqConvChainRunner::interface() const { return impl_->interface; }

void QdqConvChainRunner::compile(const std::string& name, const KernelConfig& config) {
  impl_->name = name;
  impl_->links.clear();
  for (const QdqConvMatch& m : impl_->chain.links) impl_->links.push_back(std::make_unique<ConvLink>(m, name, config));
  if (impl_->chain.has_pool)
    impl_->pool_identity = max_pool_byte_table(impl_->chain.pool.x, impl_->chain.pool.y, &impl_->pool_table);
  const ChainInterface& f = impl_->interface;
  if (f.has_residual && (f.b_is_x || f.b_bytes))  // checked now, not at the first run
    impl_->residual_by_reciprocal(ChainOperand{nullptr, f.b_quant.type, f.b_quant, false, {}});
}

Shape QdqConvChainRunner::output_shape(const Shape& x_shape) const {
  const Shape y = impl_->link_shapes(x_shape).back();
  return impl_->chain.has_pool ? impl_->pool_geometry(y).output_shape() : y;
}

Shape QdqConvChainRunner::plan_at_compile(const Shape& x_shape) { return impl_->plan_at_compile(x_shape); }

void QdqConvChainRunner::run(const ChainOperand& x, const ChainOperand* b, void* y, bool y_nhwc, int threads,
                             sdk::SpanTimer& spans) {
  impl_->run(x, b, y, y_nhwc, threads, spans);
}

void QdqConvChainRunner::fail(const std::string& what) const { impl_->links.front()->fail(what); }

void dequantize_bytes(const void* x, const ScalarQuant& q, float* y, int64_t n, int threads) {
  const uint8_t* bytes = static_cast<const uint8_t*>(x);
  math::parallel_for(n, threads, math::kElementwiseGrain,
                     [&](int64_t i0, int64_t i1) { dequantize_row(bytes + i0, q, y + i0, i1 - i0); });
  math::note_team_end(threads);
}

int group_threads(const sdk::KernelContext& ctx, const KernelConfig& config) {
  int threads = ctx.threads();
  if (threads <= 0) threads = config.default_threads;
  return math::effective_threads(threads, config.adaptive_threads);
}

#endif  // EPHOST_WITH_DNNL

namespace {

#if defined(EPHOST_WITH_DNNL)

// The group of one chain: X (and B) read in NCHW from the group's inputs, Y written in NCHW; when the
// chain holds X's DequantizeLinear and others read its float output, that output too.
class QdqConvChainGroup : public sdk::CompiledGroup {
 public:
  QdqConvChainGroup(std::unique_ptr<QdqConvChainRunner> chain, const sdk::Graph& group, const KernelConfig& config)
      : chain_(std::move(chain)), config_(config) {
    const ChainInterface& f = chain_->interface();
    chain_->compile(group.name(), config);
    in_index_ = group_input(group, f.x);
    out_index_ = group_output(group, f.y);
    if (!f.x_float.empty()) x_out_index_ = group_output(group, f.x_float);
    if (f.has_residual && !f.b_is_x) b_index_ = group_input(group, f.b);
    if (in_index_ < 0 || out_index_ < 0 || (f.has_residual && !f.b_is_x && b_index_ < 0) ||
        group.num_outputs() != (x_out_index_ >= 0 ? 2u : 1u))
      sdk::fail(EPHOST_NOT_IMPLEMENTED,
                "cpu cannot compile fused int8 conv " + group.name() + ": unexpected group interface");
    chain_->plan_at_compile(group.input(static_cast<size_t>(in_index_)).dims());
  }

  void compute(void*, sdk::KernelContext& ctx) override {
    const ChainInterface& f = chain_->interface();
    const sdk::Tensor x = ctx.input(static_cast<size_t>(in_index_));
    if (!x.present() || x.elem_type() != (f.x_bytes ? f.x_quant.type : EPHOST_ELEMENT_FLOAT))
      chain_->fail("X has an unexpected type");
    const int threads = group_threads(ctx, config_);
    if (x_out_index_ >= 0)
      dequantize_bytes(x.raw(), f.x_quant,
                       static_cast<float*>(ctx.output_raw(static_cast<size_t>(x_out_index_), EPHOST_ELEMENT_FLOAT,
                                                          x.shape())),
                       x.size(), threads);
    const Shape y_shape = chain_->output_shape(x.shape());
    void* y = ctx.output_raw(static_cast<size_t>(out_index_), f.y_type, y_shape);
    const ChainOperand xo{x.raw(), x.elem_type(), f.x_quant, false, x.shape()};
    ChainOperand bo;
    if (b_index_ >= 0) {
      const sdk::Tensor b = ctx.input(static_cast<size_t>(b_index_));
      if (!b.present()) chain_->fail("the residual Add's other operand " + f.b + " is missing");
      bo = ChainOperand{b.raw(), b.elem_type(), f.b_quant, false, b.shape()};
      if (b.elem_type() != (f.b_bytes ? f.b_quant.type : EPHOST_ELEMENT_FLOAT))
        chain_->fail("the residual Add's other operand " + f.b + " has an unexpected type");
    }
    sdk::SpanTimer spans(ctx);
    chain_->run(xo, b_index_ >= 0 ? &bo : nullptr, y, false, threads, spans);
  }

 private:
  std::unique_ptr<QdqConvChainRunner> chain_;
  KernelConfig config_;
  int in_index_ = -1, out_index_ = -1, x_out_index_ = -1, b_index_ = -1;
};

#endif  // EPHOST_WITH_DNNL

class QdqConvFusion : public Fusion {
 public:
  const char* name() const override { return "qdq_conv"; }
  std::vector<sdk::Node> match(const sdk::Node& anchor, const Available& ok) const override {
    QdqConvChain chain;
    return match_qdq_conv_chain(anchor, ok, &chain) ? chain.nodes : std::vector<sdk::Node>{};
  }
  std::unique_ptr<sdk::CompiledGroup> compile(const sdk::Node& anchor, const sdk::Graph& group,
                                              const KernelConfig& config) const override {
#if defined(EPHOST_WITH_DNNL)
    std::unique_ptr<QdqConvChainRunner> chain = QdqConvChainRunner::match(anchor, chain_members(group));
    if (!chain)
      sdk::fail(EPHOST_NOT_IMPLEMENTED, "cpu cannot compile fused int8 conv " + group.name() + ": pattern not found");
    return std::make_unique<QdqConvChainGroup>(std::move(chain), group, config);
#else
    (void)anchor;
    (void)config;
    sdk::fail(EPHOST_NOT_IMPLEMENTED, "fused int8 conv " + group.name() + " needs oneDNN");
#endif
  }
};

}  // namespace

const Fusion& qdq_conv_fusion() {
  static const QdqConvFusion f;
  return f;
}

}  // namespace ephost::cpu::fusion
