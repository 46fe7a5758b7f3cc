// ConvRunner on oneDNN (the build's default; conv_ref.cpp stands in without oneDNN).
#if defined(EPHOST_WITH_DNNL)

#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

#include "conv.h"
#include "dnnl_util.h"
#include "parallel.h"

namespace ephost::cpu::math {

namespace {

using dnnl::memory;

struct Plan {
  dnnl::primitive prim;
  memory::desc src_user, src, wei_user, wei, bias, dst_user, dst;
  dnnl::reorder src_reorder, dst_reorder, wei_reorder;
  bool reorder_src = false, reorder_dst = false, reorder_wei = false;
  memory const_wei;  // reordered constant weights (shared between plans asking for the same layout)
  size_t scratch_bytes = 0;
  // Transposed conv whose output reaches past what oneDNN computes (output_padding beyond pad_end,
  // or an output_shape larger than the full result): oneDNN writes a smaller plain tensor and the
  // tail is filled with the bias.
  bool tail = false;
  Shape dnnl_out;  // full NC... shape oneDNN writes when `tail`
  std::string impl;
  // A 2-D transposed convolution whose kernel equals its stride (no padding, dilation or groups),
  // as the DB head's 2x2/stride-2 upsampling: every input pixel owns its own output block, so it is
  // one matmul W^T[M*kh*kw, C] x X[C, H*W] followed by a pixel shuffle: 3.7x faster than oneDNN's
  // deconvolution on 1x24x160x160, 2x2/2 (benchmarks/cpu_kernels_bench.cpp).
  bool as_matmul = false;
  dnnl::matmul mm;
  memory::desc mm_src, mm_wei, mm_dst;
};

bool shuffle_deconvolution(const ConvGeometry& g) {
  if (g.group != 1 || g.in_spatial.size() != 2) return false;
  for (size_t i = 0; i < 2; ++i)
    if (g.kernel[i] != g.strides[i] || g.dilations[i] != 1 || g.pad_begin[i] != 0 || g.pad_end[i] != 0 ||
        g.output_padding[i] != 0 || g.out_spatial[i] != g.in_spatial[i] * g.strides[i])
      return false;
  return true;
}

memory::dims dims_of(const Shape& s) { return memory::dims(s.begin(), s.end()); }

constexpr size_t kMaxPlans = 64;

bool is_slow_impl(const std::string& impl) {
  return impl.find("ref") != std::string::npos || impl.find("gemm") != std::string::npos;
}

}  // namespace

struct ConvRunner::Impl {
  bool transposed;
  ConvLayout layout;
  const float* const_weights;
  std::mutex mu;
  std::map<std::vector<int64_t>, std::shared_ptr<Plan>> plans;
  std::vector<std::pair<memory::desc, memory>> weights;  // constant weights per layout

  std::shared_ptr<Plan> plan_for(const ConvGeometry& g, bool has_bias, int threads);
  std::shared_ptr<Plan> build(const ConvGeometry& g, bool has_bias, int threads);
  memory reordered_weights(const Plan& p);
};

std::shared_ptr<Plan> ConvRunner::Impl::plan_for(const ConvGeometry& g, bool has_bias, int threads) {
  std::vector<int64_t> key{g.batch, g.in_channels, g.out_channels, g.group, has_bias ? 1 : 0, threads};
  for (const Shape* v : {&g.in_spatial, &g.kernel, &g.strides, &g.dilations, &g.pad_begin, &g.pad_end,
                         &g.out_spatial, &g.output_padding}) {
    key.push_back(static_cast<int64_t>(v->size()));
    key.insert(key.end(), v->begin(), v->end());
  }
  std::lock_guard<std::mutex> lock(mu);
  auto it = plans.find(key);
  if (it != plans.end()) return it->second;
  auto plan = build(g, has_bias, threads);
  // Bounded, so a service fed ever-new image sizes does not grow without limit; plans in use stay
  // alive through their shared_ptr, and oneDNN's own primitive cache makes a rebuild cheap.
  if (plans.size() >= kMaxPlans) plans.erase(plans.begin());
  plans.emplace(std::move(key), plan);
  return plan;
}

std::shared_ptr<Plan> ConvRunner::Impl::build(const ConvGeometry& g, bool has_bias, int threads) {
  auto plan = std::make_shared<Plan>();
  if (transposed && shuffle_deconvolution(g)) {
    const int64_t C = g.in_channels, MK = g.out_channels * numel(g.kernel), HW = numel(g.in_spatial);
    // ONNX W [C, M, kh, kw] read as W^T [M*kh*kw, C] through strides; X [N, C, HW] as the batch.
    plan->as_matmul = true;
    plan->mm_src = strided_desc({1, MK, C}, {MK * C, 1, MK});
    plan->mm_wei = plain_desc({g.batch, C, HW});
    plan->mm_dst = plain_desc({g.batch, MK, HW});
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    set_num_threads(threads);
    auto pd = dnnl::matmul::primitive_desc(dnnl::matmul::desc(plan->mm_src, plan->mm_wei, plan->mm_dst), attr,
                                           cpu_engine());
    plan->mm = dnnl::matmul(pd);
    plan->scratch_bytes = pd.scratchpad_desc().get_size();
    plan->impl = std::string("matmul+shuffle ") + pd.impl_info_str();
    return plan;
  }
  const size_t k = g.in_spatial.size();
  const int64_t G = g.group, OCg = g.out_channels / G, ICg = g.in_channels / G;
  const int64_t K = numel(g.kernel);

  Shape src{g.batch, g.in_channels};
  src.insert(src.end(), g.in_spatial.begin(), g.in_spatial.end());
  Shape dst{g.batch, g.out_channels};
  Shape pad_l(g.pad_begin), pad_r(g.pad_end), dil(k);
  for (size_t i = 0; i < k; ++i) dil[i] = g.dilations[i] - 1;  // oneDNN counts the gaps
  if (transposed) {
    // oneDNN's deconvolution has no output_padding: fold it into the end padding and, where that
    // would go negative, let oneDNN compute less and fill the rest with the bias.
    Shape out(k);
    for (size_t i = 0; i < k; ++i) {
      pad_r[i] = std::max<int64_t>(g.pad_end[i] - g.output_padding[i], 0);
      const int64_t full = g.strides[i] * (g.in_spatial[i] - 1) + (g.kernel[i] - 1) * g.dilations[i] + 1;
      out[i] = full - g.pad_begin[i] - pad_r[i];
      if (out[i] <= 0) invalid("padding leaves no output on spatial axis " + std::to_string(i));
      if (out[i] != g.out_spatial[i]) plan->tail = true;
    }
    dst.insert(dst.end(), out.begin(), out.end());
    plan->dnnl_out = dst;
  } else {
    dst.insert(dst.end(), g.out_spatial.begin(), g.out_spatial.end());
  }

  // User weights in ONNX order, described to oneDNN through strides (no copy).
  Shape wdims, wstrides;
  const Shape kstrides = strides_of(g.kernel);
  if (G > 1) wdims = {G, OCg, ICg};
  else wdims = {OCg, ICg};
  if (!transposed) {
    // Conv: [M, C/G, k...] == [G][OCg][ICg][k...] contiguous.
    if (G > 1) wstrides = {OCg * ICg * K, ICg * K, K};
    else wstrides = {ICg * K, K};
  } else {
    // ConvTranspose: [C, M/G, k...] == [G][ICg][OCg][k...]; oneDNN wants (G,) OC, IC.
    if (G > 1) wstrides = {ICg * OCg * K, K, OCg * K};
    else wstrides = {K, OCg * K};
  }
  wdims.insert(wdims.end(), g.kernel.begin(), g.kernel.end());
  wstrides.insert(wstrides.end(), kstrides.begin(), kstrides.end());

  plan->src_user = plain_desc(src);
  plan->dst_user = plain_desc(dst);
  plan->wei_user = strided_desc(wdims, wstrides);
  plan->bias = has_bias ? plain_desc({g.out_channels}) : memory::desc();
  const memory::desc src_any(dims_of(src), memory::data_type::f32, memory::format_tag::any);
  const memory::desc dst_any(dims_of(dst), memory::data_type::f32, memory::format_tag::any);
  const memory::desc wei_any(dims_of(wdims), memory::data_type::f32, memory::format_tag::any);

  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  set_num_threads(threads);
  const memory::dims st = dims_of(g.strides), dl = dims_of(dil), pl = dims_of(pad_l), pr = dims_of(pad_r);

  auto make_pd = [&](bool blocked) {
    const memory::desc& s = blocked ? src_any : plan->src_user;
    const memory::desc& d = blocked ? dst_any : plan->dst_user;
    const auto prop = dnnl::prop_kind::forward_inference;
    if (!transposed) {
      dnnl::convolution_forward::desc desc =
          has_bias ? dnnl::convolution_forward::desc(prop, dnnl::algorithm::convolution_direct, s, wei_any,
                                                     plan->bias, d, st, dl, pl, pr)
                   : dnnl::convolution_forward::desc(prop, dnnl::algorithm::convolution_direct, s, wei_any, d, st,
                                                     dl, pl, pr);
      auto pd = dnnl::convolution_forward::primitive_desc(desc, attr, cpu_engine());
      return std::make_tuple(dnnl::primitive(dnnl::convolution_forward(pd)), pd.src_desc(), pd.weights_desc(),
                             pd.dst_desc(), pd.scratchpad_desc(), std::string(pd.impl_info_str()));
    }
    dnnl::deconvolution_forward::desc desc =
        has_bias ? dnnl::deconvolution_forward::desc(prop, dnnl::algorithm::deconvolution_direct, s, wei_any,
                                                     plan->bias, d, st, dl, pl, pr)
                 : dnnl::deconvolution_forward::desc(prop, dnnl::algorithm::deconvolution_direct, s, wei_any, d, st,
                                                     dl, pl, pr);
    auto pd = dnnl::deconvolution_forward::primitive_desc(desc, attr, cpu_engine());
    return std::make_tuple(dnnl::primitive(dnnl::deconvolution_forward(pd)), pd.src_desc(), pd.weights_desc(),
                           pd.dst_desc(), pd.scratchpad_desc(), std::string(pd.impl_info_str()));
  };

  memory::desc scratch;
  bool blocked = layout == ConvLayout::kBlocked;
  std::tie(plan->prim, plan->src, plan->wei, plan->dst, scratch, plan->impl) = make_pd(blocked);
  // Measured (benchmarks/cpu_kernels_bench.cpp): oneDNN's blocked kernels beat its im2col+GEMM
  // fallback on plain NCHW by 2-4x for 3x3, depthwise and stem convolutions even with the reorders,
  // but a 1x1/stride-1 convolution is a plain GEMM already, and blocked deconvolution is slower.
  bool pointwise = true;
  for (size_t i = 0; i < k; ++i)
    pointwise = pointwise && g.kernel[i] == 1 && g.strides[i] == 1 && g.pad_begin[i] == 0 && g.pad_end[i] == 0;
  if (layout == ConvLayout::kAuto && !transposed && !pointwise && is_slow_impl(plan->impl)) {
    auto alt = make_pd(true);
    if (!is_slow_impl(std::get<5>(alt)))
      std::tie(plan->prim, plan->src, plan->wei, plan->dst, scratch, plan->impl) = alt;
  }
  plan->scratch_bytes = scratch.get_size();
  plan->reorder_src = plan->src != plan->src_user;
  plan->reorder_dst = plan->dst != plan->dst_user;
  plan->reorder_wei = plan->wei != plan->wei_user;
  if (plan->reorder_src) plan->src_reorder = dnnl::reorder(dnnl::reorder::primitive_desc(cpu_engine(), plan->src_user, cpu_engine(), plan->src));
  if (plan->reorder_dst) plan->dst_reorder = dnnl::reorder(dnnl::reorder::primitive_desc(cpu_engine(), plan->dst, cpu_engine(), plan->dst_user));
  if (plan->reorder_wei && const_weights == nullptr)
    plan->wei_reorder = dnnl::reorder(dnnl::reorder::primitive_desc(cpu_engine(), plan->wei_user, cpu_engine(), plan->wei));
  if (const_weights != nullptr) plan->const_wei = reordered_weights(*plan);
  return plan;
}

memory ConvRunner::Impl::reordered_weights(const Plan& p) {
  for (const auto& [desc, mem] : weights)
    if (desc == p.wei) return mem;
  memory user(p.wei_user, cpu_engine(), const_cast<float*>(const_weights));
  memory mem(p.wei, cpu_engine());
  dnnl::stream s(cpu_engine());
  dnnl::reorder(user, mem).execute(s, user, mem);
  s.wait();
  weights.emplace_back(p.wei, mem);
  return mem;
}

ConvRunner::ConvRunner(bool transposed, ConvLayout layout, const float* constant_weights)
    : impl_(std::make_unique<Impl>()) {
  impl_->transposed = transposed;
  impl_->layout = layout;
  impl_->const_weights = constant_weights;
}

ConvRunner::~ConvRunner() = default;

std::string ConvRunner::implementation(const ConvGeometry& g, bool has_bias, int threads) {
  auto p = impl_->plan_for(g, has_bias, std::max(threads, 1));
  std::string s = p->impl;
  if (p->reorder_src || p->reorder_dst) s += " (blocked src/dst)";
  return s;
}

namespace {

void run_shuffle_deconvolution(const Plan& plan, const ConvGeometry& g, const float* w, const float* x,
                               const float* bias, float* y, int threads) {
  dnnl::engine& eng = cpu_engine();
  dnnl::stream s(eng);
  float* tmp = static_cast<float*>(thread_buffer(4, plan.mm_dst.get_size()));
  memory src(plan.mm_src, eng, const_cast<float*>(w)), wei(plan.mm_wei, eng, const_cast<float*>(x)),
      dst(plan.mm_dst, eng, tmp);
  memory scratch(memory::desc({static_cast<memory::dim>(plan.scratch_bytes)}, memory::data_type::u8,
                              memory::format_tag::a),
                 eng, thread_buffer(2, plan.scratch_bytes));
  plan.mm.execute(s, {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, wei}, {DNNL_ARG_DST, dst}, {DNNL_ARG_SCRATCHPAD, scratch}});
  s.wait();
  // tmp[n][(m, kh, kw)][ih, iw] -> y[n][m][ih * sh + kh][iw * sw + kw] + bias[m].
  const int64_t H = g.in_spatial[0], W = g.in_spatial[1], KH = g.kernel[0], KW = g.kernel[1];
  const int64_t OH = H * KH, OW = W * KW, M = g.out_channels;
  parallel_for(g.batch * M * OH, threads, 64, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t oh = r % OH, nm = r / OH, m = nm % M, n = nm / M;
      const int64_t ih = oh / KH, kh = oh % KH;
      const float b = bias ? bias[m] : 0.f;
      float* yr = y + r * OW;
      for (int64_t kw = 0; kw < KW; ++kw) {
        const float* t = tmp + ((n * M + m) * KH * KW + kh * KW + kw) * H * W + ih * W;
        for (int64_t iw = 0; iw < W; ++iw) yr[iw * KW + kw] = t[iw] + b;
      }
    }
  });
}

}  // namespace

void ConvRunner::run(const ConvGeometry& g, const float* x, const float* w, const float* bias, float* y,
                     int threads) {
  threads = std::max(threads, 1);
  const Shape out_shape = g.output_shape();
  const int64_t out_n = numel(out_shape);
  if (out_n == 0) return;
  const int64_t plane = numel(g.out_spatial);
  if (g.in_channels == 0 || numel(g.in_spatial) == 0 || numel(g.kernel) == 0) {
    // Nothing to accumulate: every output is its bias.
    for (int64_t i = 0; i < out_n; ++i) y[i] = bias ? bias[(i / plane) % g.out_channels] : 0.f;
    return;
  }
  auto plan = impl_->plan_for(g, bias != nullptr, threads);
  set_num_threads(threads);
  dnnl::engine& eng = cpu_engine();
  dnnl::stream s(eng);
  if (plan->as_matmul) {
    run_shuffle_deconvolution(*plan, g, impl_->const_weights ? impl_->const_weights : w, x, bias, y, threads);
    return;
  }

  memory src_user(plan->src_user, eng, const_cast<float*>(x));
  memory src = src_user;
  if (plan->reorder_src) {
    src = memory(plan->src, eng, thread_buffer(0, plan->src.get_size()));
    plan->src_reorder.execute(s, src_user, src);
  }
  memory wei;
  if (plan->const_wei) {
    wei = plan->const_wei;
  } else {
    memory wei_user(plan->wei_user, eng, const_cast<float*>(w));
    wei = wei_user;
    if (plan->reorder_wei) {
      wei = memory(plan->wei, eng, thread_buffer(3, plan->wei.get_size()));
      plan->wei_reorder.execute(s, wei_user, wei);
    }
  }
  // Where the primitive's plain output goes: y itself, or a temporary when the tail is filled later.
  float* plain_out = plan->tail ? static_cast<float*>(thread_buffer(4, plan->dst_user.get_size())) : y;
  memory dst_user(plan->dst_user, eng, plain_out);
  memory dst = dst_user;
  if (plan->reorder_dst) dst = memory(plan->dst, eng, thread_buffer(1, plan->dst.get_size()));
  memory scratch(memory::desc({static_cast<memory::dim>(plan->scratch_bytes)}, memory::data_type::u8,
                              memory::format_tag::a),
                 eng, thread_buffer(2, plan->scratch_bytes));

  std::unordered_map<int, memory> args{{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, wei}, {DNNL_ARG_DST, dst},
                                       {DNNL_ARG_SCRATCHPAD, scratch}};
  if (bias) args.emplace(DNNL_ARG_BIAS, memory(plan->bias, eng, const_cast<float*>(bias)));
  plan->prim.execute(s, args);
  if (plan->reorder_dst) plan->dst_reorder.execute(s, dst, dst_user);
  s.wait();

  if (plan->tail) {
    // Copy the computed block into the (larger) output and fill the rest with the bias.
    const Shape& din = plan->dnnl_out;
    const size_t k = g.out_spatial.size();
    Shape osp(3, 1), isp(3, 1);
    for (size_t i = 0; i < k; ++i) {
      osp[3 - k + i] = g.out_spatial[i];
      isp[3 - k + i] = din[2 + i];
    }
    const int64_t planes = g.batch * g.out_channels;
    const int64_t in_plane = isp[0] * isp[1] * isp[2];
    parallel_for(planes, threads, 1, [&](int64_t p0, int64_t p1) {
      for (int64_t p = p0; p < p1; ++p) {
        const float b = bias ? bias[p % g.out_channels] : 0.f;
        const float* src_plane = plain_out + p * in_plane;
        float* o = y + p * plane;
        for (int64_t d = 0; d < osp[0]; ++d)
          for (int64_t h = 0; h < osp[1]; ++h)
            for (int64_t ww = 0; ww < osp[2]; ++ww, ++o)
              *o = (d < isp[0] && h < isp[1] && ww < isp[2]) ? src_plane[(d * isp[1] + h) * isp[2] + ww] : b;
      }
    });
  }
}

}  // namespace ephost::cpu::math

#endif  // EPHOST_WITH_DNNL
