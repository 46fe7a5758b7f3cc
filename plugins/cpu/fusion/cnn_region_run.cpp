#include "cnn_region.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>
#include <unordered_map>

#include "math/broadcast.h"
#include "math/conv.h"
#include "math/parallel.h"
#include "math/pool.h"
#include "math/resize.h"
#include "math/vec.h"

#if defined(EPHOST_WITH_DNNL)
#include "cnn_region_program.h"
#include "dnnl_post_ops.h"
#include "math/dnnl_util.h"
#include "winograd_weights.h"
#endif

namespace ephost::cpu::fusion {

#if defined(EPHOST_WITH_DNNL)

namespace region {
namespace {

// The team for a step of `flops`. A region runs its steps back to back, so the team's threads are
// likely still spinning from the step before (libgomp spins briefly before it sleeps, see
// math::limit_openmp_spinning): a step needs far less work per thread than a lone kernel, which pays a
// wake-up (math::threads_for_work: 2 MFLOP, ~20 us at the FMA peak). With 2 MFLOP, 44 of
// MobileNetV3-small's 52 convolutions (54% of its FLOPs) ran on one thread at any thread count, and the
// idle team could fall asleep between them. 0.5 MFLOP (~5 us per thread) puts 97% of its FLOPs on a
// 2-thread team and 85% on a 4-thread one; a busy machine still gets fewer threads from
// math::effective_threads, and one thread is unchanged.
int step_team(double flops, int threads) {
  constexpr double kFlopsPerThread = 0.5e6;
  const int want = static_cast<int>(flops / kFlopsPerThread);
  return std::max(1, std::min(want, threads));
}

// ---- plans: what one set of input shapes needs -----------------------------------------------------------

struct StepPlan {
  dnnl::primitive prim;
  memory::desc src, dst, bias, r;  // r: the residual's desc when it is a post-op
  memory w;
  size_t scratch = 0;
  bool fused_residual = false;     // false: the residual (and acts2) run after the primitive
  int threads = 1;                 // the primitive's team (small steps run on one thread)
  int residual_arg = 0;
  dnnl::reorder to_nchw;           // outputs handed out
  // A 3x3 stride-1 convolution run as oneDNN's Winograd (2-3x faster than its direct kernels at one
  // thread on AVX-512 for 16+ channels): its source and destination are blocked (nChw16c), so the
  // step reorders the NHWC source into a block of the plan's Winograd area and the result back.
  bool wino = false;
  memory::desc nsrc, ndst;         // the NHWC views of a Winograd step's source and destination
  dnnl::reorder to_blocked, from_blocked;
  int64_t wino_dst_off = 0;        // floats from the start of the Winograd area (the source is at 0)
  // A transposed convolution whose kernel equals its stride (no padding, dilation or groups): every
  // input pixel owns its own kh x kw output block, so it is one GEMM [pixels, C] x [C, kh*kw*M] into
  // a temporary, then a copy of each block into place (the DB head's 2x2/2 upsampling: oneDNN's
  // deconvolution with M = 1 output channel is ~15x slower).
  bool deconv_gemm = false;
  int64_t kh = 0, kw = 0;
  std::vector<float> bias_rep;     // bias per GEMM column
  // Resize tables
  std::vector<int64_t> rows, cols;
};

// The memory objects of one step, made once per plan and pointed at each run's buffers: creating
// them (and the argument map) per step and per run costs more than a small convolution.
struct StepArgs {
  std::unordered_map<int, memory> args;
  memory src, dst, bias, r, scratch;
  memory nsrc, ndst;  // Winograd steps: the NHWC views
  std::unordered_map<int, memory> to_args, from_args;
};
struct Bound {
  std::vector<StepArgs> steps;
};

struct RunPlan {
  int threads = 1;                // the run's threads
  std::vector<Shape> dims;        // NCHW dims of every value
  std::vector<int64_t> offset;    // float offset of every value in the arena (-1: not stored)
  int64_t arena = 0;              // floats
  int64_t scratch_floats = 0;     // a temporary for unfused residuals
  int64_t wino_floats = 0;        // blocked source and destination of Winograd steps (after the scratch)
  std::vector<StepPlan> steps;
  std::vector<dnnl::reorder> in_reorders;  // per value (region inputs)
  std::mutex mu;
  std::vector<std::unique_ptr<Bound>> bound;  // free sets of step arguments (one per concurrent run)
};

memory::dims mdims(const Shape& s) { return memory::dims(s.begin(), s.end()); }

// A convolution worth trying as Winograd: 3x3, stride 1, no dilation, no groups, 16+ channels each
// way (fewer: the blocked layout pads the channels and the transforms outweigh the saving), and no
// residual post-op (an NHWC residual does not fit the blocked destination).
bool wino_candidate(const math::ConvGeometry& g, bool fused_residual) {
  if (fused_residual || g.group != 1 || g.kernel.size() != 2) return false;
  for (size_t k = 0; k < 2; ++k)
    if (g.kernel[k] != 3 || g.strides[k] != 1 || g.dilations[k] != 1) return false;
  return g.in_channels >= 16 && g.out_channels >= 16;
}
memory::desc nhwc_desc(const Shape& d) {
  return memory::desc(mdims(d), memory::data_type::f32, memory::format_tag::nhwc);
}
memory::desc nchw_desc(const Shape& d) {
  return memory::desc(mdims(d), memory::data_type::f32, memory::format_tag::nchw);
}

class RegionGroup : public sdk::CompiledGroup {
 public:
  RegionGroup(const sdk::Graph& group, const KernelConfig& config)
      : default_threads_(config.default_threads), adaptive_(config.adaptive_threads), winograd_(config.winograd) {
    prog_.build(group);
    for (const Value& v : prog_.values)
      if (v.group_input >= 0) inputs_.push_back(static_cast<int>(&v - prog_.values.data()));
    // Static input shapes: build the plan now, so the first run creates no primitives.
    std::vector<Shape> shapes;
    bool known = true;
    for (int id : inputs_) {
      const Shape d = group.input(static_cast<size_t>(prog_.values[id].group_input)).dims();
      for (int64_t x : d) known = known && x > 0;
      shapes.push_back(d);
    }
    if (known && !inputs_.empty()) {
      try {
        std::shared_ptr<RunPlan> plan = plan_for(shapes, std::max(1, config.default_threads));
        // Touch the buffers the first run would fault in (this thread's arena and scratchpad).
        const int64_t total = plan->arena + plan->scratch_floats + plan->wino_floats;
        float* arena = arena_floats(total);
        std::memset(arena, 0, sizeof(float) * static_cast<size_t>(total));
        size_t scratch = 0;
        for (const StepPlan& sp : plan->steps) scratch = std::max(scratch, sp.scratch);
        std::memset(math::thread_buffer(2, scratch), 0, scratch);
        std::unique_ptr<Bound> b = bind(*plan);
        {
          std::lock_guard<std::mutex> lock(plan->mu);
          plan->bound.push_back(std::move(b));
        }
        // Every conv's weights are packed for the shapes the region runs with: the host's copies can go.
        for (auto& step : prog_.steps) {
          std::lock_guard<std::mutex> lock(step->mu);
          give_weights_back(*step);
        }
      } catch (const std::exception& e) {
        sdk::log(EPHOST_LOG_VERBOSE, "cpu region " + prog_.name + ": no plan at compile time: " + e.what());
      }
    }
  }

  void compute(void*, sdk::KernelContext& ctx) override {
    // With profiling on: one span per step (a primitive or fused chain) and per layout change at the
    // region's edges, tiling the compute.
    sdk::SpanTimer spans(ctx);
    std::vector<sdk::Tensor> in;
    std::vector<Shape> shapes;
    for (int id : inputs_) {
      const sdk::Tensor t = ctx.input(static_cast<size_t>(prog_.values[id].group_input));
      if (!t.present() || t.elem_type() != EPHOST_ELEMENT_FLOAT || t.rank() != 4)
        fail("input '" + prog_.values[id].name + "' must be a 4-D float tensor");
      shapes.push_back(t.shape());
      in.push_back(t);
    }
    int threads = ctx.threads();
    if (threads <= 0) threads = default_threads_;
    threads = math::effective_threads(threads, adaptive_);
    std::shared_ptr<RunPlan> plan;
    bool planned_now = false;
    try {
      plan = plan_for(shapes, threads, &planned_now);
    } catch (const sdk::Error&) {
      throw;
    } catch (const std::exception& e) {
      fail(e.what());
    }
    // Its own span, only when this run built the plan (the first run of new input shapes creates
    // the primitives here; with static shapes, compile time did): the tests count these spans.
    if (spans.on() && planned_now) spans.close("plan for these input shapes", "Plan", {});
    math::set_num_threads(threads);
    float* arena = arena_floats(plan->arena + plan->scratch_floats + plan->wino_floats);
    float* scratch = arena + plan->arena;
    dnnl::engine& eng = math::cpu_engine();
    dnnl::stream& s = math::thread_stream();
    auto buf = [&](int v) { return arena + plan->offset[static_cast<size_t>(v)]; };
    // Region inputs into NHWC.
    for (size_t i = 0; i < inputs_.size(); ++i) {
      const int v = inputs_[i];
      const Shape& d = plan->dims[v];
      if (plan->offset[v] < 0) continue;
      if (d[1] == 1 || d[2] * d[3] == 1) {
        std::memcpy(buf(v), in[i].data<float>(), sizeof(float) * static_cast<size_t>(math::numel(d)));
      } else {
        memory src(nchw_desc(d), eng, const_cast<float*>(in[i].data<float>()));
        memory dst(nhwc_desc(d), eng, buf(v));
        plan->in_reorders[i].execute(s, src, dst);
      }
    }
    s.wait();
    if (spans.on()) spans.close("region inputs to NHWC", "Reorder", {});
    std::unique_ptr<Bound> bound;
    {
      std::lock_guard<std::mutex> lock(plan->mu);
      if (!plan->bound.empty()) {
        bound = std::move(plan->bound.back());
        plan->bound.pop_back();
      }
    }
    if (!bound) bound = bind(*plan);
    struct GiveBack {
      RunPlan& plan;
      std::unique_ptr<Bound>& bound;
      ~GiveBack() {
        std::lock_guard<std::mutex> lock(plan.mu);
        plan.bound.push_back(std::move(bound));
      }
    } give_back{*plan, bound};
    for (size_t i = 0; i < prog_.steps.size(); ++i) {
      ctx.check_run();  // a stopped run ends between the region's steps (each is one oneDNN primitive)
      const Step& st = *prog_.steps[i];
      const StepPlan& sp = plan->steps[i];
      run_step(st, sp, *plan, bound->steps[i], arena, scratch, threads);
      if (spans.on()) st.label.report(spans);
      const Value& ov = prog_.values[st.out];
      if (ov.group_output >= 0) {
        const Shape& d = plan->dims[st.out];
        float* y = ctx.output<float>(static_cast<size_t>(ov.group_output), d);
        if (math::numel(d) == 0) continue;
        if (d[1] == 1 || d[2] * d[3] == 1) {
          std::memcpy(y, buf(st.out), sizeof(float) * static_cast<size_t>(math::numel(d)));
        } else {
          memory src(nhwc_desc(d), eng, buf(st.out));
          memory dst(nchw_desc(d), eng, y);
          sp.to_nchw.execute(s, src, dst);
          s.wait();
        }
        if (spans.on()) spans.close("output " + ov.name + " to NCHW", "Reorder", {});
      }
    }
    math::note_team_end(threads);
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    sdk::fail(EPHOST_INVALID_ARGUMENT, "cpu region " + prog_.name + ": " + what);
  }

  static float* arena_floats(int64_t n) {
    struct Arena {
      float* p = nullptr;
      int64_t size = 0;
      ~Arena() { std::free(p); }
    };
    thread_local Arena a;
    if (a.size < n) {
      std::free(a.p);
      a.p = nullptr;
      a.size = 0;
      const size_t bytes = (static_cast<size_t>(n) * sizeof(float) + 4095) / 4096 * 4096;
      a.p = static_cast<float*>(std::aligned_alloc(4096, bytes));
      if (a.p == nullptr) throw std::bad_alloc();
      a.size = n;
    }
    return a.p;
  }

  // The plan for these shapes and threads, built (and *built set) when there is none yet.
  std::shared_ptr<RunPlan> plan_for(const std::vector<Shape>& shapes, int threads, bool* built = nullptr) {
    std::vector<int64_t> key{threads};
    for (const Shape& s : shapes) key.insert(key.end(), s.begin(), s.end());
    std::lock_guard<std::mutex> lock(mu_);
    auto it = plans_.find(key);
    if (it != plans_.end()) return it->second;
    if (built != nullptr) *built = true;
    auto plan = build_plan(shapes, threads);
    if (plans_.size() >= 16) plans_.erase(plans_.begin());
    plans_.emplace(key, plan);
    return plan;
  }

  std::shared_ptr<RunPlan> build_plan(const std::vector<Shape>& shapes, int threads);
  void plan_step(const Step& st, size_t index, RunPlan& plan, int threads);
  void plan_deconv_gemm(const Step& st, StepPlan& sp, const math::ConvGeometry& g, RunPlan& plan);
  void run_step(const Step& st, const StepPlan& sp, const RunPlan& plan, StepArgs& a, float* arena, float* scratch,
                int threads) const;
  std::unique_ptr<Bound> bind(const RunPlan& plan) const;

  Program prog_;
  std::vector<int> inputs_;  // region input values, in group input order of discovery
  int default_threads_;
  bool adaptive_ = true;
  bool winograd_ = true;
  std::mutex mu_;            // held while a plan is built (and so while pack_buffers_ is in use)
  PackBuffers pack_buffers_;  // temporaries of weight packing, reused by every step of a plan
  std::map<std::vector<int64_t>, std::shared_ptr<RunPlan>> plans_;
};

// NCHW dims of a broadcast of two rank-4 dims (numpy rules).
Shape broadcast4(const Shape& a, const Shape& b) { return math::broadcast_shapes(a, b); }

std::shared_ptr<RunPlan> RegionGroup::build_plan(const std::vector<Shape>& shapes, int threads) {
  auto plan = std::make_shared<RunPlan>();
  plan->threads = threads;
  const size_t nv = prog_.values.size();
  plan->dims.assign(nv, Shape());
  plan->offset.assign(nv, -1);
  plan->steps.resize(prog_.steps.size());
  plan->in_reorders.resize(inputs_.size());
  for (size_t i = 0; i < inputs_.size(); ++i) plan->dims[inputs_[i]] = shapes[i];
  math::set_num_threads(threads);
  for (size_t i = 0; i < prog_.steps.size(); ++i) plan_step(*prog_.steps[i], i, *plan, threads);
  for (size_t i = 0; i < inputs_.size(); ++i) {
    const Shape& d = plan->dims[inputs_[i]];
    if (math::numel(d) > 0 && !(d[1] == 1 || d[2] * d[3] == 1))
      plan->in_reorders[i] = dnnl::reorder(dnnl::reorder::primitive_desc(math::cpu_engine(), nchw_desc(d),
                                                                        math::cpu_engine(), nhwc_desc(d)));
  }
  // Buffers: first fit over the values' lifetimes [defined, last read]. An elementwise step whose
  // same-shaped input dies at that step writes over it (in place).
  struct Block {
    int64_t off, size;
    int until;
    int value;
  };
  std::vector<Block> live;
  auto place = [&](int v, int from) {
    const int64_t size = (math::numel(plan->dims[v]) + 15) / 16 * 16;
    const Value& val = prog_.values[v];
    const int until = std::max(val.last_use, from);
    if (from >= 0) {
      const Step& st = *prog_.steps[static_cast<size_t>(from)];
      const bool elementwise = st.op == Op::kUnary || st.op == Op::kAffine || st.op == Op::kBinary;
      for (int x : elementwise ? st.in : std::vector<int>{}) {
        if (prog_.values[x].last_use != from || plan->dims[x] != plan->dims[v]) continue;
        bool once = true;  // the step reads x through one operand only
        int seen = 0;
        for (int y : st.in) seen += y == x;
        once = seen == 1;
        auto it = std::find_if(live.begin(), live.end(), [&](const Block& b) { return b.value == x; });
        if (!once || it == live.end()) continue;
        it->until = until;
        it->value = v;
        plan->offset[v] = it->off;
        return;
      }
    }
    // Free blocks whose values died before `from`.
    live.erase(std::remove_if(live.begin(), live.end(), [&](const Block& b) { return b.until < from; }), live.end());
    std::sort(live.begin(), live.end(), [](const Block& a, const Block& b) { return a.off < b.off; });
    int64_t off = 0;
    for (const Block& b : live) {
      if (b.off - off >= size) break;
      off = std::max(off, b.off + b.size);
    }
    live.push_back({off, size, until, v});
    plan->offset[v] = off;
    plan->arena = std::max(plan->arena, off + size);
  };
  for (int v : inputs_) place(v, -1);
  for (size_t i = 0; i < prog_.steps.size(); ++i) place(prog_.steps[i]->out, static_cast<int>(i));
  return plan;
}

void RegionGroup::plan_step(const Step& st, size_t index, RunPlan& plan, int threads) {
  StepPlan& sp = plan.steps[index];
  std::vector<Shape>& dims = plan.dims;
  dnnl::engine& eng = math::cpu_engine();
  Shape out;
  switch (st.op) {
    case Op::kConv:
    case Op::kDeconv: {
      const Shape& x = dims[st.in[0]];
      const bool t = st.op == Op::kDeconv;
      const math::ConvGeometry g =
          t ? math::conv_transpose_geometry(st.conv, x, st.w_shape) : math::conv_geometry(st.conv, x, st.w_shape);
      out = g.output_shape();
      if (t && g.group == 1) {
        bool shuffle = true;
        for (size_t k = 0; k < 2; ++k)
          shuffle = shuffle && g.kernel[k] == g.strides[k] && g.dilations[k] == 1 && g.pad_begin[k] == 0 &&
                    g.pad_end[k] == 0 && g.out_spatial[k] == g.in_spatial[k] * g.strides[k];
        if (shuffle) {
          plan_deconv_gemm(st, sp, g, plan);
          break;
        }
      }
      const int64_t G = g.group, OCg = g.out_channels / G, ICg = g.in_channels / G;
      const int64_t K = math::numel(g.kernel);
      Shape wdims = G > 1 ? Shape{G, OCg, ICg} : Shape{OCg, ICg}, wstrides;
      if (!t) wstrides = G > 1 ? Shape{OCg * ICg * K, ICg * K, K} : Shape{ICg * K, K};
      else wstrides = G > 1 ? Shape{ICg * OCg * K, K, OCg * K} : Shape{K, OCg * K};
      const Shape ks = math::strides_of(g.kernel);
      wdims.insert(wdims.end(), g.kernel.begin(), g.kernel.end());
      wstrides.insert(wstrides.end(), ks.begin(), ks.end());
      Shape dil(2), pr = g.pad_end;
      for (size_t k = 0; k < 2; ++k) dil[k] = g.dilations[k] - 1;
      if (t)
        for (size_t k = 0; k < 2; ++k) {
          const int64_t full = g.strides[k] * (g.in_spatial[k] - 1) + (g.kernel[k] - 1) * g.dilations[k] + 1;
          if (full - g.pad_begin[k] - pr[k] != g.out_spatial[k]) math::invalid("unsupported ConvTranspose padding");
        }
      sp.src = nhwc_desc(x);
      sp.dst = nhwc_desc(out);
      sp.threads = step_team(2.0 * static_cast<double>(math::numel(out)) * static_cast<double>(ICg * K), threads);
      math::set_num_threads(sp.threads);
      const memory::desc w_any(mdims(wdims), memory::data_type::f32, memory::format_tag::any);
      sp.bias = st.bias.empty() ? memory::desc() : memory::desc({g.out_channels}, memory::data_type::f32,
                                                                 memory::format_tag::a);
      const Shape& rd = st.residual >= 0 ? dims[st.residual] : Shape();
      sp.fused_residual = st.residual >= 0 && rd == out;
      dnnl::primitive_attr attr;
      attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
      dnnl::post_ops ops;
      for (const Activation& a : st.acts) append_activation(ops, a);
      if (sp.fused_residual) {
        sp.residual_arg = ops.len();
        sp.r = nhwc_desc(out);
        ops.append_binary(dnnl::algorithm::binary_add, sp.r);
        for (const Activation& a : st.acts2) append_activation(ops, a);
      } else if (st.residual >= 0) {
        plan.scratch_floats = std::max(plan.scratch_floats, math::numel(out));
      }
      attr.set_post_ops(ops);
      const auto prop = dnnl::prop_kind::forward_inference;
      const memory::dims sd = mdims(g.strides), dd = mdims(dil), pl = mdims(g.pad_begin), pe = mdims(pr);
      memory::desc want;
      if (!t && winograd_ && wino_candidate(g, sp.fused_residual)) {
        // oneDNN refuses what its Winograd kernels do not cover (post-ops other than ReLU and sum,
        // padding, ISA): those stay direct.
        try {
          const memory::desc bs(mdims(x), memory::data_type::f32, memory::format_tag::any);
          const memory::desc bd(mdims(out), memory::data_type::f32, memory::format_tag::any);
          auto desc = st.bias.empty()
                          ? dnnl::convolution_forward::desc(prop, dnnl::algorithm::convolution_winograd, bs, w_any, bd,
                                                            sd, dd, pl, pe)
                          : dnnl::convolution_forward::desc(prop, dnnl::algorithm::convolution_winograd, bs, w_any,
                                                            sp.bias, bd, sd, dd, pl, pe);
          auto pd = dnnl::convolution_forward::primitive_desc(desc, attr, eng);
          sp.prim = dnnl::convolution_forward(pd);
          sp.scratch = pd.scratchpad_desc().get_size();
          want = pd.weights_desc();
          sp.nsrc = sp.src;
          sp.ndst = sp.dst;
          sp.src = pd.src_desc();
          sp.dst = pd.dst_desc();
          sp.to_blocked = dnnl::reorder(dnnl::reorder::primitive_desc(eng, sp.nsrc, eng, sp.src));
          sp.from_blocked = dnnl::reorder(dnnl::reorder::primitive_desc(eng, sp.dst, eng, sp.ndst));
          const int64_t sf = static_cast<int64_t>((sp.src.get_size() + 63) / 64 * 16);
          const int64_t df = static_cast<int64_t>((sp.dst.get_size() + 63) / 64 * 16);
          sp.wino_dst_off = sf;
          plan.wino_floats = std::max(plan.wino_floats, sf + df);
          sp.wino = true;
        } catch (const dnnl::error&) {
          sp.wino = false;
        }
      }
      if (sp.wino) {
        // made above
      } else if (!t) {
        auto desc = st.bias.empty()
                        ? dnnl::convolution_forward::desc(prop, dnnl::algorithm::convolution_direct, sp.src, w_any,
                                                          sp.dst, sd, dd, pl, pe)
                        : dnnl::convolution_forward::desc(prop, dnnl::algorithm::convolution_direct, sp.src, w_any,
                                                          sp.bias, sp.dst, sd, dd, pl, pe);
        auto pd = dnnl::convolution_forward::primitive_desc(desc, attr, eng);
        sp.prim = dnnl::convolution_forward(pd);
        sp.scratch = pd.scratchpad_desc().get_size();
        want = pd.weights_desc();
      } else {
        auto desc = st.bias.empty()
                        ? dnnl::deconvolution_forward::desc(prop, dnnl::algorithm::deconvolution_direct, sp.src, w_any,
                                                            sp.dst, sd, dd, pl, pe)
                        : dnnl::deconvolution_forward::desc(prop, dnnl::algorithm::deconvolution_direct, sp.src, w_any,
                                                            sp.bias, sp.dst, sd, dd, pl, pe);
        auto pd = dnnl::deconvolution_forward::primitive_desc(desc, attr, eng);
        sp.prim = dnnl::deconvolution_forward(pd);
        sp.scratch = pd.scratchpad_desc().get_size();
        want = pd.weights_desc();
      }
      // Weights in that layout, once per layout.
      Step& ms = const_cast<Step&>(st);
      std::lock_guard<std::mutex> lock(ms.mu);
      for (const auto& [d, m] : ms.packed)
        if (d == want) sp.w = m.memory;
      if (!sp.w) {
        // The ONNX weights are read in place unless factors are folded into them (a copy of a
        // large model's weights costs about as much as the packing, in page faults).
        weights_of(ms);
        math::WeightsMemory packed;
        if (!t && G == 1 && is_winograd_layout(want)) {
          packed = pack_winograd_weights(st.w, st.w_mul.empty() ? nullptr : st.w_mul.data(), OCg, ICg, want,
                                         pack_buffers_);
        } else {
          std::vector<float> folded;
          if (!st.w_mul.empty()) folded = folded_weights(st);
          float* w = folded.empty() ? const_cast<float*>(st.w) : folded.data();
          memory user(math::strided_desc(wdims, wstrides), eng, w);
          packed = math::weights_memory(want);
          dnnl::stream& s = math::thread_stream();
          dnnl::reorder(user, packed.memory).execute(s, user, packed.memory);
          s.wait();
        }
        sp.w = packed.memory;
        ms.packed.emplace_back(want, std::move(packed));
      }
      break;
    }
    case Op::kMaxPool:
    case Op::kAvgPool: {
      const Shape& x = dims[st.in[0]];
      const math::PoolGeometry g = math::pool_geometry(st.pool, x);
      out = g.output_shape();
      Shape pe(2);
      for (size_t k = 0; k < 2; ++k)
        pe[k] = std::max<int64_t>(g.pad_end[k], (g.out_spatial[k] - 1) * g.strides[k] + g.kernel[k] -
                                                    g.in_spatial[k] - g.pad_begin[k]);
      sp.src = nhwc_desc(x);
      sp.dst = nhwc_desc(out);
      sp.threads = step_team(static_cast<double>(math::numel(out)) * static_cast<double>(math::numel(g.kernel)), threads);
      math::set_num_threads(sp.threads);
      const dnnl::algorithm alg = st.op == Op::kMaxPool ? dnnl::algorithm::pooling_max
                                  : st.count_include_pad ? dnnl::algorithm::pooling_avg_include_padding
                                                         : dnnl::algorithm::pooling_avg_exclude_padding;
      dnnl::primitive_attr attr;
      attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
      auto desc = dnnl::pooling_forward::desc(dnnl::prop_kind::forward_inference, alg, sp.src, sp.dst,
                                              mdims(g.strides), mdims(g.kernel), mdims(g.pad_begin), mdims(pe));
      auto pd = dnnl::pooling_forward::primitive_desc(desc, attr, eng);
      sp.prim = dnnl::pooling_forward(pd);
      sp.scratch = pd.scratchpad_desc().get_size();
      break;
    }
    case Op::kGlobalAvg:
    case Op::kGlobalMax: {
      const Shape& x = dims[st.in[0]];
      out = {x[0], x[1], 1, 1};
      break;
    }
    case Op::kUnary: out = dims[st.in[0]]; break;
    case Op::kAffine: {
      out = dims[st.in[0]];
      if (!(st.scale.size() == 1 || static_cast<int64_t>(st.scale.size()) == out[1]))
        math::invalid(std::string(op_name(st.op)) + " '" + st.node + "' has " + std::to_string(st.scale.size()) +
                      " channel values for " + std::to_string(out[1]) + " channels");
      break;
    }
    case Op::kBinary: {
      const Shape& a = dims[st.in[0]];
      const Shape b = st.constant ? st.constant->dims : dims[st.in[1]];
      out = broadcast4(a, b);
      break;
    }
    case Op::kConcat: {
      out = dims[st.in[0]];
      out[1] = 0;
      for (int v : st.in) {
        const Shape& d = dims[v];
        if (d[0] != out[0] || d[2] != out[2] || d[3] != out[3])
          math::invalid("Concat '" + st.node + "' inputs differ outside the channel axis");
        out[1] += d[1];
      }
      break;
    }
    case Op::kResize: {
      const Shape& x = dims[st.in[0]];
      std::vector<float> scales = st.scales;
      if (scales.empty()) {
        out = st.sizes;
        if (out[0] != x[0] || out[1] != x[1]) math::invalid("Resize '" + st.node + "' resizes N or C");
        scales.resize(4);
        for (size_t k = 0; k < 4; ++k)
          scales[k] = x[k] > 0 ? static_cast<float>(out[k]) / static_cast<float>(x[k]) : 1.f;
      } else {
        out = x;
        for (size_t k = 2; k < 4; ++k) out[k] = math::resize_output_size(x[k], scales[k]);
      }
      const math::AxisTaps rows = math::resize_axis_taps(st.resize, x[2], out[2], scales[2]);
      const math::AxisTaps cols = math::resize_axis_taps(st.resize, x[3], out[3], scales[3]);
      sp.rows = rows.index;
      sp.cols = cols.index;
      break;
    }
  }
  dims[st.out] = out;
  if (prog_.values[st.out].group_output >= 0 && math::numel(out) > 0 && !(out[1] == 1 || out[2] * out[3] == 1))
    sp.to_nchw = dnnl::reorder(dnnl::reorder::primitive_desc(eng, nhwc_desc(out), eng, nchw_desc(out)));
  (void)threads;
}

void RegionGroup::plan_deconv_gemm(const Step& st, StepPlan& sp, const math::ConvGeometry& g, RunPlan& plan) {
  dnnl::engine& eng = math::cpu_engine();
  const int64_t C = g.in_channels, M = g.out_channels, KH = g.kernel[0], KW = g.kernel[1];
  const int64_t P = g.batch * g.in_spatial[0] * g.in_spatial[1], cols = KH * KW * M;
  sp.deconv_gemm = true;
  sp.threads = step_team(2.0 * static_cast<double>(P * cols * C), plan.threads);
  math::set_num_threads(sp.threads);
  sp.kh = KH;
  sp.kw = KW;
  sp.src = math::plain_desc({P, C});
  sp.dst = math::plain_desc({P, cols});
  const memory::desc w_any({C, cols}, memory::data_type::f32, memory::format_tag::any);
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  dnnl::post_ops ops;
  for (const Activation& a : st.acts) append_activation(ops, a);
  attr.set_post_ops(ops);
  if (!st.bias.empty()) {
    sp.bias = math::plain_desc({1, cols});
    sp.bias_rep.resize(static_cast<size_t>(cols));
    for (int64_t c = 0; c < cols; ++c) sp.bias_rep[c] = st.bias[c % M];
  }
  auto desc = st.bias.empty() ? dnnl::matmul::desc(sp.src, w_any, sp.dst)
                              : dnnl::matmul::desc(sp.src, w_any, sp.bias, sp.dst);
  auto pd = dnnl::matmul::primitive_desc(desc, attr, eng);
  sp.prim = dnnl::matmul(pd);
  sp.scratch = pd.scratchpad_desc().get_size();
  plan.scratch_floats = std::max(plan.scratch_floats, P * cols);
  const memory::desc want = pd.weights_desc();
  Step& ms = const_cast<Step&>(st);
  std::lock_guard<std::mutex> lock(ms.mu);
  for (const auto& [d, m] : ms.packed)
    if (d == want) sp.w = m.memory;
  if (!sp.w) {
    // ONNX W [C, M, kh, kw] as [C, (i, j, m)].
    weights_of(ms);
    const std::vector<float> folded = folded_weights(st);
    std::vector<float> wt(static_cast<size_t>(C * cols));
    for (int64_t c = 0; c < C; ++c)
      for (int64_t m = 0; m < M; ++m)
        for (int64_t i = 0; i < KH; ++i)
          for (int64_t j = 0; j < KW; ++j) wt[c * cols + (i * KW + j) * M + m] = folded[((c * M + m) * KH + i) * KW + j];
    memory user(math::plain_desc({C, cols}), eng, wt.data());
    math::WeightsMemory packed = math::weights_memory(want);
    dnnl::stream& s = math::thread_stream();
    dnnl::reorder(user, packed.memory).execute(s, user, packed.memory);
    s.wait();
    sp.w = packed.memory;
    ms.packed.emplace_back(want, std::move(packed));
  }
}

// Generic NHWC broadcasting for a binary step: out[n,h,w,c] = a[...] op b[...].
void broadcast_nhwc(math::BinOp op, const float* a, const Shape& ad, const float* b, const Shape& bd, float* y,
                    const Shape& od, int threads) {
  auto nhwc_strides = [](const Shape& d, const Shape& o) {
    // strides of (n, h, w, c) in an NHWC buffer of dims d, 0 where d broadcasts.
    const int64_t sc = 1, sw = d[1], sh = d[1] * d[3], sn = d[1] * d[3] * d[2];
    return std::vector<int64_t>{d[0] == 1 && o[0] != 1 ? 0 : sn, d[2] == 1 && o[2] != 1 ? 0 : sh,
                                d[3] == 1 && o[3] != 1 ? 0 : sw, d[1] == 1 && o[1] != 1 ? 0 : sc};
  };
  const std::vector<int64_t> as = nhwc_strides(ad, od), bs = nhwc_strides(bd, od);
  const int64_t N = od[0], C = od[1], H = od[2], W = od[3];
  const bool a_vec = as[3] != 0, b_vec = bs[3] != 0;
  math::parallel_for(N * H * W, threads, std::max<int64_t>(1, math::kElementwiseGrain / std::max<int64_t>(C, 1)),
                     [&](int64_t p0, int64_t p1) {
                       for (int64_t p = p0; p < p1; ++p) {
                         const int64_t w = p % W, h = (p / W) % H, n = p / (W * H);
                         const float* ar = a + n * as[0] + h * as[1] + w * as[2];
                         const float* br = b + n * bs[0] + h * bs[1] + w * bs[2];
                         float* yr = y + p * C;
                         if (a_vec || b_vec) {
                           math::binary_f32(op, ar, a_vec, br, b_vec, yr, C);
                         } else {
                           math::binary_f32(op, ar, false, br, true, yr, 1);
                           for (int64_t c = 1; c < C; ++c) yr[c] = yr[0];
                         }
                       }
                     });
}

void apply_all(const std::vector<Activation>& acts, float* x, int64_t n, int threads) {
  if (acts.empty() || n == 0) return;
  math::parallel_for(n, threads, math::kElementwiseGrain, [&](int64_t i0, int64_t i1) {
    for (const Activation& a : acts) apply_activation(a, x + i0, i1 - i0);
  });
}

std::unique_ptr<Bound> RegionGroup::bind(const RunPlan& plan) const {
  dnnl::engine& eng = math::cpu_engine();
  auto b = std::make_unique<Bound>();
  b->steps.resize(prog_.steps.size());
  for (size_t i = 0; i < prog_.steps.size(); ++i) {
    const Step& st = *prog_.steps[i];
    const StepPlan& sp = plan.steps[i];
    StepArgs& a = b->steps[i];
    const bool conv = st.op == Op::kConv || st.op == Op::kDeconv;
    const bool pool = st.op == Op::kMaxPool || st.op == Op::kAvgPool;
    if (!conv && !pool) continue;
    if (math::numel(plan.dims[st.out]) == 0) continue;
    a.src = memory(sp.src, eng, nullptr);
    a.dst = memory(sp.dst, eng, nullptr);
    a.scratch = memory(memory::desc({static_cast<memory::dim>(sp.scratch)}, memory::data_type::u8, memory::format_tag::a),
                       eng, nullptr);
    a.args = {{DNNL_ARG_SRC, a.src}, {DNNL_ARG_DST, a.dst}, {DNNL_ARG_SCRATCHPAD, a.scratch}};
    if (!conv) continue;
    a.args.emplace(DNNL_ARG_WEIGHTS, sp.w);
    if (!st.bias.empty()) {
      a.bias = memory(sp.bias, eng, nullptr);
      a.args.emplace(DNNL_ARG_BIAS, a.bias);
    }
    if (sp.fused_residual) {
      a.r = memory(sp.r, eng, nullptr);
      a.args.emplace(DNNL_ARG_ATTR_MULTIPLE_POST_OP(sp.residual_arg) | DNNL_ARG_SRC_1, a.r);
    }
    if (sp.wino) {
      a.nsrc = memory(sp.nsrc, eng, nullptr);
      a.ndst = memory(sp.ndst, eng, nullptr);
      a.to_args = {{DNNL_ARG_FROM, a.nsrc}, {DNNL_ARG_TO, a.src}};
      a.from_args = {{DNNL_ARG_FROM, a.dst}, {DNNL_ARG_TO, a.ndst}};
    }
  }
  return b;
}

void RegionGroup::run_step(const Step& st, const StepPlan& sp, const RunPlan& plan, StepArgs& a, float* arena,
                           float* scratch, int threads) const {
  dnnl::stream& s = math::thread_stream();
  auto buf = [&](int v) { return arena + plan.offset[static_cast<size_t>(v)]; };
  const Shape& od = plan.dims[st.out];
  const int64_t on = math::numel(od);
  if (on == 0) return;
  float* y = buf(st.out);
  switch (st.op) {
    case Op::kConv:
    case Op::kDeconv: {
      if (sp.deconv_gemm) {
        math::set_num_threads(sp.threads);
        a.src.set_data_handle(buf(st.in[0]));
        a.dst.set_data_handle(scratch);
        a.scratch.set_data_handle(math::thread_buffer(2, sp.scratch));
        if (!sp.bias_rep.empty()) a.bias.set_data_handle(const_cast<float*>(sp.bias_rep.data()));
        sp.prim.execute(s, a.args);
        s.wait();
        // scratch[(n, h, w), (i, j, m)] -> y[n, h * kh + i, w * kw + j, m]
        const Shape& xd = plan.dims[st.in[0]];
        const int64_t H = xd[2], W = xd[3], M = od[1], KH = sp.kh, KW = sp.kw, OW = od[3];
        const int64_t run = KW * M, cols = KH * KW * M;
        math::parallel_for(od[0] * H * KH, threads, std::max<int64_t>(1, 4096 / std::max<int64_t>(W * run, 1)),
                           [&](int64_t r0, int64_t r1) {
                             for (int64_t r = r0; r < r1; ++r) {
                               const int64_t i = r % KH, nh = r / KH;  // nh = n * H + h
                               const float* src = scratch + nh * W * cols + i * run;
                               float* dst = y + (nh * KH + i) * OW * M;
                               for (int64_t w = 0; w < W; ++w)
                                 for (int64_t k = 0; k < run; ++k) dst[w * run + k] = src[w * cols + k];
                             }
                           });
        return;
      }
      const bool late_residual = st.residual >= 0 && !sp.fused_residual;
      float* dst = late_residual ? scratch : y;
      math::set_num_threads(sp.threads);
      a.scratch.set_data_handle(math::thread_buffer(2, sp.scratch));
      if (!st.bias.empty()) a.bias.set_data_handle(const_cast<float*>(st.bias.data()));
      if (sp.fused_residual) a.r.set_data_handle(buf(st.residual));
      if (sp.wino) {
        float* area = scratch + plan.scratch_floats;
        a.nsrc.set_data_handle(buf(st.in[0]));
        a.src.set_data_handle(area);
        a.dst.set_data_handle(area + sp.wino_dst_off);
        a.ndst.set_data_handle(dst);
        sp.to_blocked.execute(s, a.to_args);
        sp.prim.execute(s, a.args);
        sp.from_blocked.execute(s, a.from_args);
      } else {
        a.src.set_data_handle(buf(st.in[0]));
        a.dst.set_data_handle(dst);
        sp.prim.execute(s, a.args);
      }
      s.wait();
      if (late_residual) {
        broadcast_nhwc(math::BinOp::kAdd, dst, od, buf(st.residual), plan.dims[st.residual], y, od, threads);
        apply_all(st.acts2, y, on, threads);
      }
      return;
    }
    case Op::kMaxPool:
    case Op::kAvgPool: {
      math::set_num_threads(sp.threads);
      a.src.set_data_handle(buf(st.in[0]));
      a.dst.set_data_handle(y);
      a.scratch.set_data_handle(math::thread_buffer(2, sp.scratch));
      sp.prim.execute(s, a.args);
      s.wait();
      return;
    }
    case Op::kGlobalAvg:
    case Op::kGlobalMax: {
      const Shape& xd = plan.dims[st.in[0]];
      const int64_t N = xd[0], C = xd[1], P = xd[2] * xd[3];
      const float* x = buf(st.in[0]);
      const bool avg = st.op == Op::kGlobalAvg;
      if (avg && P > 0) {
        // Row after row into y (vectorised adds; the sums in the same order as a loop per channel).
        constexpr int64_t kChunk = 256;
        const int64_t chunks = (C + kChunk - 1) / kChunk;
        math::parallel_for(N * chunks, threads, std::max<int64_t>(1, math::kElementwiseGrain / std::max<int64_t>(P * kChunk, 1)),
                           [&](int64_t t0, int64_t t1) {
                             for (int64_t t = t0; t < t1; ++t) {
                               const int64_t n = t / chunks, c0 = (t % chunks) * kChunk, c1 = std::min(C, c0 + kChunk);
                               float* acc = y + n * C + c0;
                               const float* xn = x + n * P * C + c0;
                               std::memcpy(acc, xn, sizeof(float) * static_cast<size_t>(c1 - c0));
                               for (int64_t q = 1; q < P; ++q)
                                 math::binary_f32(math::BinOp::kAdd, acc, true, xn + q * C, true, acc, c1 - c0);
                               const float inv = static_cast<float>(P);
                               for (int64_t c = 0; c < c1 - c0; ++c) acc[c] /= inv;
                             }
                           });
        return;
      }
      constexpr int64_t kChunk = 64;
      const int64_t chunks = (C + kChunk - 1) / kChunk;
      math::parallel_for(N * chunks, threads, std::max<int64_t>(1, math::kElementwiseGrain / std::max<int64_t>(P * kChunk, 1)),
                         [&](int64_t t0, int64_t t1) {
                           for (int64_t t = t0; t < t1; ++t) {
                             const int64_t n = t / chunks, c0 = (t % chunks) * kChunk, c1 = std::min(C, c0 + kChunk);
                             float acc[kChunk];
                             for (int64_t c = c0; c < c1; ++c) acc[c - c0] = avg ? 0.f : -std::numeric_limits<float>::infinity();
                             const float* xn = x + n * P * C;
                             for (int64_t p = 0; p < P; ++p) {
                               const float* row = xn + p * C;
                               if (avg)
                                 for (int64_t c = c0; c < c1; ++c) acc[c - c0] += row[c];
                               else
                                 for (int64_t c = c0; c < c1; ++c) acc[c - c0] = std::max(acc[c - c0], row[c]);
                             }
                             for (int64_t c = c0; c < c1; ++c)
                               y[n * C + c] = avg ? acc[c - c0] / static_cast<float>(P) : acc[c - c0];
                           }
                         });
      return;
    }
    case Op::kUnary: {
      const float* x = buf(st.in[0]);
      math::parallel_for(on, threads, math::kElementwiseGrain, [&](int64_t i0, int64_t i1) {
        const float* from = x + i0;
        for (const Activation& act : st.acts) {
          apply_activation(act, from, y + i0, i1 - i0);
          from = y + i0;
        }
        if (st.acts.empty() && x != y) std::memcpy(y + i0, x + i0, sizeof(float) * static_cast<size_t>(i1 - i0));
      });
      return;
    }
    case Op::kAffine: {
      const float* x = buf(st.in[0]);
      const int64_t C = od[1], P = on / C;
      const bool one = st.scale.size() == 1;
      math::parallel_for(P, threads, std::max<int64_t>(1, math::kElementwiseGrain / C), [&](int64_t p0, int64_t p1) {
        for (int64_t p = p0; p < p1; ++p) {
          const float* xr = x + p * C;
          float* yr = y + p * C;
          if (one)
            for (int64_t c = 0; c < C; ++c) yr[c] = xr[c] * st.scale[0] + st.shift[0];
          else
            for (int64_t c = 0; c < C; ++c) yr[c] = xr[c] * st.scale[c] + st.shift[c];
        }
      });
      return;
    }
    case Op::kBinary: {
      const Shape& ad = plan.dims[st.in[0]];
      const float* a = buf(st.in[0]);
      const float* b = st.constant ? st.constant->nhwc.data() : buf(st.in[1]);
      const Shape& bd = st.constant ? st.constant->dims : plan.dims[st.in[1]];
      if (st.constant && st.constant_first) {
        broadcast_nhwc(st.bin, b, bd, a, ad, y, od, threads);
      } else if (ad == od && bd == od) {
        math::parallel_for(on, threads, math::kElementwiseGrain, [&](int64_t i0, int64_t i1) {
          math::binary_f32(st.bin, a + i0, true, b + i0, true, y + i0, i1 - i0);
        });
      } else {
        broadcast_nhwc(st.bin, a, ad, b, bd, y, od, threads);
      }
      return;
    }
    case Op::kConcat: {
      const int64_t C = od[1], P = on / C;
      std::vector<std::pair<const float*, int64_t>> parts;
      for (int v : st.in) parts.emplace_back(buf(v), plan.dims[v][1]);
      math::parallel_for(P, threads, std::max<int64_t>(1, math::kElementwiseGrain / C), [&](int64_t p0, int64_t p1) {
        for (int64_t p = p0; p < p1; ++p) {
          float* yr = y + p * C;
          for (const auto& [x, c] : parts) {
            std::memcpy(yr, x + p * c, sizeof(float) * static_cast<size_t>(c));
            yr += c;
          }
        }
      });
      return;
    }
    case Op::kResize: {
      const Shape& xd = plan.dims[st.in[0]];
      const float* x = buf(st.in[0]);
      const int64_t C = od[1], OH = od[2], OW = od[3], H = xd[2], W = xd[3];
      math::parallel_for(od[0] * OH, threads, 1, [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r) {
          const int64_t n = r / OH, oh = r % OH;
          const float* xr = x + (n * H + sp.rows[static_cast<size_t>(oh)]) * W * C;
          float* yr = y + r * OW * C;
          for (int64_t ow = 0; ow < OW; ++ow)
            std::memcpy(yr + ow * C, xr + sp.cols[static_cast<size_t>(ow)] * C, sizeof(float) * static_cast<size_t>(C));
        }
      });
      return;
    }
  }
}

}  // namespace
}  // namespace region

std::unique_ptr<sdk::CompiledGroup> compile_cnn_region(const sdk::Graph& group, const KernelConfig& config) {
  return std::make_unique<region::RegionGroup>(group, config);
}

#else

std::unique_ptr<sdk::CompiledGroup> compile_cnn_region(const sdk::Graph& group, const KernelConfig&) {
  sdk::fail(EPHOST_NOT_IMPLEMENTED, "cpu cannot compile region " + group.name() + ": built without oneDNN");
}

#endif  // EPHOST_WITH_DNNL

}  // namespace ephost::cpu::fusion
