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
#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <unordered_map>

#include "constant_lookup.h"
#include "ephost/sdk/profile_spans.hpp"
#include "graph_match.h"
#include "kernels/conv_attributes.h"
#include "math/parallel.h"
#include "math/quantize.h"
#include "math/transpose.h"
#include "qdq_common.h"

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

class QdqConvGroup : public sdk::CompiledGroup {
 public:
  QdqConvGroup(const QdqConvMatch& m, const sdk::Graph& group, const KernelConfig& config)
      : name_(group.name()), m_(m), params_(conv_attributes(m.conv)), default_threads_(config.default_threads),
        adaptive_(config.adaptive_threads), exact_requantize_(config.int8_exact_requantize) {
    in_index_ = group_input(group, m.x_quantized_input ? m.dq_x.input(0).name() : m.dq_x.output(0).name());
    out_index_ = group_output(group, m.q.output(0).name());
    if (m.x_handed_out) x_out_index_ = group_output(group, m.dq_x.output(0).name());
    if (in_index_ < 0 || out_index_ < 0 || (m.x_handed_out && x_out_index_ < 0) ||
        group.num_outputs() != (m.x_handed_out ? 2 : 1))
      sdk::fail(EPHOST_NOT_IMPLEMENTED, "cpu cannot compile fused int8 conv " + name_ + ": unexpected group interface");
    const sdk::Tensor w = constant_of(m.dq_w.input(0));
    w_shape_ = w.shape();
    w_ = w.data<int8_t>();
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
    plan_at_compile(group.input(static_cast<size_t>(in_index_)).dims());
  }

  void compute(void*, sdk::KernelContext& ctx) override {
    const sdk::Tensor x = ctx.input(static_cast<size_t>(in_index_));
    if (!x.present() || x.elem_type() != (m_.x_quantized_input ? m_.x.type : EPHOST_ELEMENT_FLOAT))
      fail("X has an unexpected type");
    math::ConvGeometry g;
    try {
      g = math::conv_geometry(params_, x.shape(), w_shape_);
    } catch (const std::invalid_argument& e) {
      fail(e.what());
    }
    if (g.in_spatial.size() != 2) fail("only 2-D convolutions are fused");
    if (m_.x_handed_out) dequantize_input(x, ctx, threads_of(ctx));
    const Shape ys = g.output_shape();
    void* y = ctx.output_raw(static_cast<size_t>(out_index_), m_.y.type, ys);
    if (math::numel(ys) == 0) return;
    const int threads = threads_of(ctx);
    const int64_t N = g.batch, C = g.in_channels, H = g.in_spatial[0], W = g.in_spatial[1];
    const int64_t Hp = H + g.pad_begin[0] + g.pad_end[0], Wp = W + g.pad_begin[1] + g.pad_end[1];
    uint8_t* src = static_cast<uint8_t*>(math::thread_buffer(0, static_cast<size_t>(std::max<int64_t>(N * Hp * Wp * C, 1))));
    to_padded_nhwc(quantized_input(x, threads), g, Hp, Wp, src, threads);
    const int64_t OH = g.out_spatial[0], OW = g.out_spatial[1], M = m_.M;
    int32_t* acc = static_cast<int32_t*>(math::thread_buffer(1, static_cast<size_t>(N * OH * OW * M) * sizeof(int32_t)));
    const int team = team_for(g, threads);
    math::set_num_threads(team);
    // With profiling on, a run that creates the primitive (the first of a new input shape; with a
    // static shape compile did) reports it as its own span: the tests count these spans.
    sdk::SpanTimer spans(ctx);
    bool planned_now = false;
    std::shared_ptr<Plan> plan = plan_for(g, Hp, Wp, team, &planned_now);
    if (planned_now) spans.close("plan for these input shapes", "Plan", {});
    dnnl::engine& eng = math::cpu_engine();
    memory srcm(plan->src, eng, src);
    memory accm(plan->acc, eng, acc);
    dnnl::stream& s = math::thread_stream();
    std::unordered_map<int, memory> args{{DNNL_ARG_SRC, srcm}, {DNNL_ARG_WEIGHTS, plan->w}, {DNNL_ARG_DST, accm},
                                         {DNNL_ARG_SCRATCHPAD, math::scratchpad(plan->scratch)}};
    if (plan->requantizes) args.emplace(DNNL_ARG_BIAS, plan->bias);
    plan->prim.execute(s, args);
    s.wait();
    const int64_t pixels = OH * OW;
    if (plan->requantizes) {
      // acc holds Y_q as NHWC bytes: only the layout is left.
      const uint8_t* yq = reinterpret_cast<const uint8_t*>(acc);
      math::parallel_for(N * pixels, threads, std::max<int64_t>(1, math::kElementwiseGrain / std::max<int64_t>(M, 1)),
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
                       [&](int64_t r0, int64_t r1) { epilogue(acc, pixels, y, r0, r1); });
    math::note_team_end(threads);
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    sdk::fail(EPHOST_INVALID_ARGUMENT, "fused int8 conv " + name_ + " (" + m_.conv.name() + "): " + what);
  }

  // The team of a convolution of geometry g: small ones run on fewer threads than the run has.
  int team_for(const math::ConvGeometry& g, int threads) const {
    const double pixels = static_cast<double>(g.batch * g.out_spatial[0] * g.out_spatial[1]);
    const double macs_per_pixel = static_cast<double>(m_.M * (g.in_channels / g.group) * g.kernel[0] * g.kernel[1]);
    return math::threads_for_work(2.0 * pixels * macs_per_pixel, threads);
  }

  // With a static input shape, the primitive is created and the weights packed at session creation,
  // and this thread's buffers of a run are touched (their page faults), so that the first run does no
  // more than any other (int8 ResNet-50's first run took 2.9 times its steady run). Planned for the
  // session's thread count; a run the machine's load gives fewer threads creates its primitive then
  // (the packed weights are shared). A shape this cannot plan is left to the first run, which reports
  // what is wrong.
  void plan_at_compile(const Shape& x_shape) {
    if (x_shape.size() != 4) return;
    for (int64_t d : x_shape)
      if (d <= 0) return;
    try {
      const math::ConvGeometry g = math::conv_geometry(params_, x_shape, w_shape_);
      if (g.in_spatial.size() != 2 || math::numel(g.output_shape()) == 0) return;
      const int64_t N = g.batch, C = g.in_channels, H = g.in_spatial[0], W = g.in_spatial[1];
      const int64_t Hp = H + g.pad_begin[0] + g.pad_end[0], Wp = W + g.pad_begin[1] + g.pad_end[1];
      const int team = team_for(g, std::max(1, default_threads_));
      std::shared_ptr<Plan> plan = plan_for(g, Hp, Wp, team);
      const int64_t pixels = N * g.out_spatial[0] * g.out_spatial[1];
      math::touch_thread_buffer(0, static_cast<size_t>(N * Hp * Wp * C));
      math::touch_thread_buffer(1, static_cast<size_t>(pixels * m_.M) * sizeof(int32_t));
      math::touch_thread_buffer(2, plan->scratch);
      if (Hp != H || Wp != W) math::touch_thread_buffer(3, static_cast<size_t>(N * H * W * C));
    } catch (const std::exception& e) {
      sdk::log(EPHOST_LOG_VERBOSE, "fused int8 conv " + name_ + ": no plan at compile time: " + e.what());
    }
  }

  int threads_of(const sdk::KernelContext& ctx) const {
    int threads = ctx.threads();
    if (threads <= 0) threads = default_threads_;
    return math::effective_threads(threads, adaptive_);
  }

  // X's DequantizeLinear output, for the nodes outside the group that read it: the op's own function
  // (math/quantize.h), so bit for bit what the op would hand them.
  void dequantize_input(const sdk::Tensor& x, sdk::KernelContext& ctx, int threads) const {
    float* out = static_cast<float*>(ctx.output_raw(static_cast<size_t>(x_out_index_), EPHOST_ELEMENT_FLOAT, x.shape()));
    const int64_t n = x.size();
    math::parallel_for(n, threads, math::kElementwiseGrain, [&](int64_t i0, int64_t i1) {
      if (m_.x.type == EPHOST_ELEMENT_UINT8)
        math::dequantize_linear(x.data<uint8_t>() + i0, m_.x.scale, static_cast<uint8_t>(m_.x.zero_point), out + i0,
                                i1 - i0);
      else
        math::dequantize_linear(x.data<int8_t>() + i0, m_.x.scale, static_cast<int8_t>(m_.x.zero_point), out + i0,
                                i1 - i0);
    });
  }

  // X_q: the group's input, or (when X's DequantizeLinear stays outside the group) its float output
  // quantized back with (sx, zx), exactly, in one pass over the whole tensor (per-row calls on a deep
  // layer's 7-pixel rows cost more than the quantization). Thread buffer 4 holds it until
  // to_padded_nhwc has copied it.
  const uint8_t* quantized_input(const sdk::Tensor& x, int threads) const {
    if (m_.x_quantized_input) return static_cast<const uint8_t*>(x.raw());
    const int64_t n = x.size();
    uint8_t* q = static_cast<uint8_t*>(math::thread_buffer(4, static_cast<size_t>(std::max<int64_t>(n, 1))));
    const float* px = x.data<float>();
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
    const int64_t top = g.pad_begin[0], left = g.pad_begin[1];
    const uint8_t zero = static_cast<uint8_t>(m_.x.zero_point);  // the byte of u8 or s8 zx
    const bool padded = Hp != H || Wp != W;
    uint8_t* pixels =
        padded ? static_cast<uint8_t*>(math::thread_buffer(3, static_cast<size_t>(std::max<int64_t>(N * HW * C, 1))))
               : dst;
    // Blocks of whole 16-pixel tiles, about kElementwiseGrain bytes each.
    const int64_t block = std::max<int64_t>(16, math::kElementwiseGrain / std::max<int64_t>(C, 1) / 16 * 16);
    const int64_t blocks = (HW + block - 1) / block;
    math::parallel_for(N * blocks, threads, 1, [&](int64_t b0, int64_t b1) {
      for (int64_t b = b0; b < b1; ++b) {
        const int64_t n = b / blocks, p0 = b % blocks * block, count = std::min(block, HW - p0);
        math::transpose_2d(xq + n * C * HW + p0, HW, pixels + (n * HW + p0) * C, C, C, count);
      }
    });
    if (!padded) return;
    math::parallel_for(N * Hp, threads, std::max<int64_t>(1, math::kElementwiseGrain / std::max<int64_t>(Wp * C, 1)),
                       [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        const int64_t n = r / Hp, hp = r % Hp, h = hp - top;
        uint8_t* out = dst + r * Wp * C;
        if (h < 0 || h >= H) {
          std::memset(out, zero, static_cast<size_t>(Wp * C));
          continue;
        }
        std::memset(out, zero, static_cast<size_t>(left * C));
        std::memcpy(out + left * C, pixels + (n * H + h) * W * C, static_cast<size_t>(W * C));
        std::memset(out + (left + W) * C, zero, static_cast<size_t>((Wp - left - W) * C));
      }
    });
  }

  // Output pixels [r0, r1) of the NHWC int32 product: the graph's float value, then QuantizeLinear, then
  // into NCHW a block of pixels at a time (a [pixels][M] block transposed into M rows).
  void epilogue(const int32_t* acc, int64_t pixels, void* y, int64_t r0, int64_t r1) const {
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
        uint8_t* q = block + i * M;
        if (m_.y.type == EPHOST_ELEMENT_UINT8)
          quantize_row(row, m_.y, q, M);
        else
          quantize_row(row, m_.y, reinterpret_cast<int8_t*>(q), M);
      }
      math::transpose_2d(block, M, static_cast<uint8_t*>(y) + n * M * pixels + p0, pixels, count, M);
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
      plan->w = weights_.in_layout(pd.weights_desc(), w_user, w_);
      if (plans_.size() >= 64) plans_.erase(plans_.begin());
      plans_.emplace(key, plan);
      return plan;
    }
    auto desc = dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                                                plan->src, w_any, plan->acc, strides, dilates, no_pad, no_pad);
    auto pd = dnnl::convolution_forward::primitive_desc(desc, attr, math::cpu_engine());
    plan->prim = dnnl::convolution_forward(pd);
    plan->scratch = pd.scratchpad_desc().get_size();
    plan->w = weights_.in_layout(pd.weights_desc(), w_user, w_);
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
  bool adaptive_ = true;
  bool exact_requantize_ = false;
  int in_index_ = -1, out_index_ = -1, x_out_index_ = -1;
  Shape w_shape_;
  const int8_t* w_ = nullptr;  // the constant W_q (valid for the session, as every initializer), packed per layout
  std::vector<float> scale_, bias_;
  std::vector<int32_t> offset_;
  std::mutex mu_;
  std::map<std::vector<int64_t>, std::shared_ptr<Plan>> plans_;
  PackedWeights weights_;
};

#endif  // EPHOST_WITH_DNNL

class QdqConvFusion : public Fusion {
 public:
  const char* name() const override { return "qdq_conv"; }
  std::vector<sdk::Node> match(const sdk::Node& anchor, const Available& ok) const override {
    QdqConvMatch m;
    return match_qdq_conv(anchor, ok, &m) ? m.nodes : std::vector<sdk::Node>{};
  }
  std::unique_ptr<sdk::CompiledGroup> compile(const sdk::Node& anchor, const sdk::Graph& group,
                                              const KernelConfig& config) const override {
    QdqConvMatch m;
    if (!match_qdq_conv(anchor, group_members(anchor, group), &m))
      sdk::fail(EPHOST_NOT_IMPLEMENTED, "cpu cannot compile fused int8 conv " + group.name() + ": pattern not found");
#if defined(EPHOST_WITH_DNNL)
    return std::make_unique<QdqConvGroup>(m, group, config);
#else
    (void)config;
    sdk::fail(EPHOST_NOT_IMPLEMENTED, "fused int8 conv needs oneDNN");
#endif
  }
};

}  // namespace

const Fusion& qdq_conv_fusion() {
  static const QdqConvFusion f;
  return f;
}

}  // namespace ephost::cpu::fusion
