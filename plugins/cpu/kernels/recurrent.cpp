// Recurrent layers RNN, GRU and LSTM (opsets 7 to 21, float): every direction, the activation
// functions with their alpha/beta, clip, sequence_lens, initial states, LSTM peepholes and
// input_forget, GRU linear_before_reset, and opset 14's batch-first layout.
//
// Per direction, the input projection of all time steps is one GEMM (X W^T + biases); each step
// then needs one GEMM of the hidden state with R^T (two for GRU without linear_before_reset, whose
// candidate gate multiplies the reset state first). All GEMMs run on oneDNN through
// math::GemmRunner, with the weights reordered once when they are constant initializers.
#include <algorithm>
#include <memory>

#include "constant_lookup.h"
#include "kernel_registry.h"
#include "math/matmul.h"
#include "math/parallel.h"
#include "math/rnn_activation.h"
#include "math/small_gemm.h"

#include "ephost/sdk/scratch.hpp"

namespace ephost::cpu {

namespace {

enum class Cell { kRnn, kGru, kLstm };

// Gate blocks in W and R: RNN [i], GRU [z, r, h], LSTM [i, o, f, c].
int64_t gates_of(Cell c) { return c == Cell::kRnn ? 1 : c == Cell::kGru ? 3 : 4; }
// Activation functions per direction: RNN f, GRU f and g, LSTM f, g and h.
size_t activations_of(Cell c) { return c == Cell::kRnn ? 1 : c == Cell::kGru ? 2 : 3; }

std::vector<std::string> default_activations(Cell c) {
  if (c == Cell::kRnn) return {"Tanh"};
  if (c == Cell::kGru) return {"Sigmoid", "Tanh"};
  return {"Sigmoid", "Tanh", "Tanh"};
}

// Inputs and outputs by position.
enum Input { kX = 0, kW = 1, kR = 2, kB = 3, kSeqLens = 4, kInitialH = 5, kInitialC = 6, kPeepholes = 7 };
enum Output { kY = 0, kYh = 1, kYc = 2 };

const float* constant_float(const sdk::Node& node, size_t i) {
  if (!node.has_input(i) || !is_constant(node.input(i))) return nullptr;
  const sdk::Tensor t = constant_of(node.input(i));
  return t.elem_type() == EPHOST_ELEMENT_FLOAT ? t.data<float>() : nullptr;
}

class RecurrentKernel : public CpuKernel {
 public:
  RecurrentKernel(const sdk::Node& node, const KernelConfig& c, Cell cell)
      : CpuKernel(node, c),
        cell_(cell),
        hidden_(node.attr_int("hidden_size", 0)),
        clip_(node.attr_float("clip", 0.f)),
        batch_first_(node.attr_int("layout", 0) != 0),
        linear_before_reset_(node.attr_int("linear_before_reset", 0) != 0),
        input_forget_(node.attr_int("input_forget", 0) != 0) {
    if (hidden_ < 1) fail_node(node, "attribute hidden_size must be positive");
    if (node.has_attr("clip") && !(clip_ > 0.f)) fail_node(node, "clip must be positive");
    const std::string direction = node.attr_string("direction", "forward");
    if (direction != "forward" && direction != "reverse" && direction != "bidirectional")
      fail_node(node, "direction must be forward, reverse or bidirectional, found '" + direction + "'");
    dirs_ = direction == "bidirectional" ? 2 : 1;
    reverse_ = direction == "reverse";

    std::vector<std::string> names = node.attr_strings("activations");
    const size_t per = activations_of(cell);
    if (names.empty()) names = default_activations(cell);
    if (names.size() == per && dirs_ == 2) {  // one set given for both directions
      const std::vector<std::string> once = names;
      names.insert(names.end(), once.begin(), once.end());
    }
    if (names.size() != per * static_cast<size_t>(dirs_))
      fail_node(node, "activations must name " + std::to_string(per) + " functions per direction, found " +
                          std::to_string(names.size()));
    try {
      acts_ = math::rnn_activations(names, node.attr_floats("activation_alpha"), node.attr_floats("activation_beta"));
    } catch (const std::invalid_argument& e) {
      fail_node(node, e.what());
    }

    // Per direction: the projection runner (W) and the step runners (R, or GRU's two R blocks).
    const float* w = constant_float(node, kW);
    const float* r = constant_float(node, kR);
    const int64_t gh = gates_of(cell) * hidden_;
    const int64_t in = node.has_input(kW) && node.input(kW).rank() == 3 ? node.input(kW).dims()[2] : -1;
    math::GemmParams p;
    p.trans_b = true;
    for (int d = 0; d < dirs_; ++d) {
      // The input size is needed to slice a constant W per direction; W's shape is then known.
      const float* wd = w && in > 0 ? w + d * gh * in : nullptr;
      const float* rd = r ? r + d * gh * hidden_ : nullptr;
      project_.push_back(std::make_unique<math::GemmRunner>(p, wd));
      step_.push_back(std::make_unique<math::GemmRunner>(p, rd));
      if (cell == Cell::kGru && !linear_before_reset_)
        step_h_.push_back(std::make_unique<math::GemmRunner>(p, rd ? rd + 2 * hidden_ * hidden_ : nullptr));
    }
    constant_w_ = w && in > 0;
    constant_r_ = r != nullptr;
    // R^T for the small-batch step product (math/small_gemm.h), once.
    if (r)
      for (int d = 0; d < dirs_; ++d) rt_.push_back(step_transposes(r + d * gh * hidden_));
    // The input projection's primitive for a static X, now.
    const Shape xs = static_shape(node.input(kX));
    if (xs.size() == 3 && constant_w_) {
      const int64_t rows = xs[0] * xs[1];
      try {
        for (int d = 0; d < dirs_; ++d) {
          project_[d]->prepare({rows, in}, {gh, in}, node.has_input(kB), c.default_threads);
          // Bidirectional at two threads or more runs each direction on one thread.
          if (dirs_ == 2 && c.default_threads > 1) project_[d]->prepare({rows, in}, {gh, in}, node.has_input(kB), 1);
        }
      } catch (const std::exception&) {
      }
    }
  }

 protected:
  void run(sdk::KernelContext& ctx, int threads) override {
    const sdk::Tensor x = required(ctx, kX, "X"), w = required(ctx, kW, "W"), r = required(ctx, kR, "R");
    for (const sdk::Tensor* t : {&x, &w, &r}) expect_type(*t, {EPHOST_ELEMENT_FLOAT}, "X, W and R");
    const Shape xs = x.shape();
    if (xs.size() != 3) fail("X must have rank 3, found shape " + math::to_string(xs));
    const int64_t T = batch_first_ ? xs[1] : xs[0], B = batch_first_ ? xs[0] : xs[1], I = xs[2];
    const int64_t H = hidden_, G = gates_of(cell_), GH = G * H;
    expect_shape(w, {dirs_, GH, I}, "W");
    expect_shape(r, {dirs_, GH, H}, "R");

    const sdk::Tensor bias = ctx.input(kB), lens_t = ctx.input(kSeqLens);
    const sdk::Tensor h0 = ctx.input(kInitialH);
    const sdk::Tensor c0 = cell_ == Cell::kLstm ? ctx.input(kInitialC) : sdk::Tensor();
    const sdk::Tensor peep = cell_ == Cell::kLstm ? ctx.input(kPeepholes) : sdk::Tensor();
    if (bias.present()) expect_shape(bias, {dirs_, 2 * GH}, "B");
    const Shape state_shape = batch_first_ ? Shape{B, dirs_, H} : Shape{dirs_, B, H};
    if (h0.present()) expect_shape(h0, state_shape, "initial_h");
    if (c0.present()) expect_shape(c0, state_shape, "initial_c");
    if (peep.present()) expect_shape(peep, {dirs_, 3 * H}, "P");
    // X may be empty (I = 0) with any T and B, so B and T bound nothing: the buffers sized by them are
    // working buffers under the host's limit (sdk::scratch_vector).
    std::vector<int64_t> lens = sdk::scratch_vector<int64_t>({B}, "the RNN's sequence lengths");
    std::fill(lens.begin(), lens.end(), T);
    if (lens_t.present()) {
      lens = ints_of(lens_t, "sequence_lens");
      if (static_cast<int64_t>(lens.size()) != B)
        fail("sequence_lens has " + std::to_string(lens.size()) + " values for a batch of " + std::to_string(B));
      for (int64_t l : lens)
        if (l < 0 || l > T) fail("sequence length " + std::to_string(l) + " is outside [0, " + std::to_string(T) + "]");
    }

    Run run;
    run.T = T;
    run.B = B;
    run.I = I;
    run.lens = &lens;
    run.threads = threads;
    const Shape y_shape = batch_first_ ? Shape{B, T, dirs_, H} : Shape{T, dirs_, B, H};
    run.y = output_wanted(kY) ? ctx.output<float>(kY, y_shape) : nullptr;
    run.yh = output_wanted(kYh) ? ctx.output<float>(kYh, state_shape) : nullptr;
    run.yc = cell_ == Cell::kLstm && output_wanted(kYc) ? ctx.output<float>(kYc, state_shape) : nullptr;
    // Steps past a sequence's length produce zeros.
    if (run.y) std::fill(run.y, run.y + math::numel(y_shape), 0.f);

    std::vector<Run> runs(static_cast<size_t>(dirs_), run);
    for (int d = 0; d < dirs_; ++d) {
      Run& rd = runs[static_cast<size_t>(d)];
      rd.d = d;
      rd.forward = dirs_ == 2 ? d == 0 : !reverse_;
      rd.w = w.data<float>() + d * GH * I;
      rd.r = r.data<float>() + d * GH * H;
      rd.wb = bias.present() ? bias.data<float>() + d * 2 * GH : nullptr;
      rd.rb = bias.present() ? rd.wb + GH : nullptr;
      rd.p = peep.present() ? peep.data<float>() + d * 3 * H : nullptr;
      rd.h0 = h0.present() ? h0.data<float>() : nullptr;
      rd.c0 = c0.present() ? c0.data<float>() : nullptr;
      rd.x = x.data<float>();
    }
    // A bidirectional layer's two directions are independent: with two threads each runs on its own
    // (the step products of a small batch do not split well across threads, the directions do).
    if (dirs_ == 2 && threads >= 2 && B <= kSmallBatch && T > 1) {
      for (Run& rd : runs) rd.threads = 1;
      math::parallel_for(2, 2, 1, [&](int64_t d0, int64_t d1) {
        for (int64_t d = d0; d < d1; ++d) direction(runs[static_cast<size_t>(d)]);
      });
      return;
    }
    for (Run& rd : runs) direction(rd);
  }

 private:
  // What one direction's pass reads and writes.
  struct Run {
    int64_t T = 0, B = 0, I = 0;
    const std::vector<int64_t>* lens = nullptr;
    int threads = 1;
    int d = 0;
    bool forward = true;
    const float *x = nullptr, *w = nullptr, *r = nullptr, *wb = nullptr, *rb = nullptr, *p = nullptr;
    const float *h0 = nullptr, *c0 = nullptr;
    float *y = nullptr, *yh = nullptr, *yc = nullptr;
  };

  void expect_shape(const sdk::Tensor& t, const Shape& want, const char* what) const {
    if (t.shape() != want)
      fail(std::string(what) + " must have shape " + math::to_string(want) + ", found " + math::to_string(t.shape()));
  }

  // Offsets of (time t, batch b) in X's rows and in Y, and of batch b in the state tensors.
  int64_t x_row(const Run& run, int64_t t, int64_t b) const { return batch_first_ ? b * run.T + t : t * run.B + b; }
  int64_t y_at(const Run& run, int64_t t, int64_t b) const {
    return (batch_first_ ? (b * run.T + t) * dirs_ + run.d : (t * dirs_ + run.d) * run.B + b) * hidden_;
  }
  int64_t state_at(const Run& run, int64_t b) const {
    return (batch_first_ ? b * dirs_ + run.d : run.d * run.B + b) * hidden_;
  }

  const math::RnnActivation& act(const Run& run, size_t k) const { return acts_[run.d * activations_of(cell_) + k]; }

  void clip(float* v, int64_t n) const {
    if (clip_ > 0.f)
      for (int64_t i = 0; i < n; ++i) v[i] = std::clamp(v[i], -clip_, clip_);
  }

  void direction(const Run& run) {
    const int64_t T = run.T, B = run.B, H = hidden_, GH = gates_of(cell_) * H;
    const int threads = run.threads;
    // Biases folded into the projection: W's and R's, except R's candidate bias under GRU's
    // linear_before_reset, which the reset gate multiplies.
    std::vector<float> folded(static_cast<size_t>(GH), 0.f);
    if (run.wb)
      for (int64_t g = 0; g < GH; ++g) {
        const bool keep_rb = !(cell_ == Cell::kGru && linear_before_reset_ && g >= 2 * H);
        folded[g] = run.wb[g] + (keep_rb ? run.rb[g] : 0.f);
      }
    std::vector<float> xw = sdk::scratch_vector<float>({T, B, GH}, "the RNN's input projection");
    if (T * B > 0)
      project_[run.d]->run(run.x, {T * B, run.I}, constant_w_ ? nullptr : run.w, {GH, run.I},
                           run.wb ? folded.data() : nullptr, {GH}, xw.data(), threads);

    std::vector<float> h = sdk::scratch_vector<float>({B, H}, "the RNN's hidden state"), c;
    if (run.h0)
      for (int64_t b = 0; b < B; ++b) std::copy_n(run.h0 + state_at(run, b), H, &h[b * H]);
    if (cell_ == Cell::kLstm) {
      c = sdk::scratch_vector<float>({B, H}, "the LSTM's cell state");
      if (run.c0)
        for (int64_t b = 0; b < B; ++b) std::copy_n(run.c0 + state_at(run, b), H, &c[b * H]);
    }
    const bool gru_two_step = cell_ == Cell::kGru && !linear_before_reset_;
    const int64_t step_cols = gru_two_step ? 2 * H : GH;
    // Step buffers: H R^T; GRU's update/reset gates, reset state (r * H) and its product with Rn^T.
    std::vector<float> hr = sdk::scratch_vector<float>({B, step_cols}, "the RNN's step product"), zr, rh, hh;
    if (cell_ == Cell::kGru) zr.resize(static_cast<size_t>(B * 2 * H));
    if (gru_two_step) {
      rh.resize(static_cast<size_t>(B * H));
      hh.resize(static_cast<size_t>(B * H));
    }
    const std::vector<int64_t>& lens = *run.lens;
    const int64_t grain = std::max<int64_t>(1, 4096 / std::max<int64_t>(GH, 1));
    const bool small = B <= kSmallBatch;
    std::vector<math::SmallGemmWeights> rt_local;
    const std::vector<math::SmallGemmWeights>* rt = nullptr;
    if (small) {
      if (constant_r_) {
        rt = &rt_[run.d];
      } else {
        rt_local = step_transposes(run.r);
        rt = &rt_local;
      }
    }
    const math::SmallGemmWeights* rt_h = small && gru_two_step ? &(*rt)[1] : nullptr;
    std::vector<float> gates = sdk::scratch_vector<float>({B, GH}, "the RNN's gates");

    for (int64_t s = 0; s < T; ++s) {
      if (B > 0 && small)
        math::small_gemm(h.data(), B, (*rt)[0], hr.data());
      else if (B > 0)
        step_[run.d]->run(h.data(), {B, H}, constant_r_ ? nullptr : run.r, {step_cols, H}, nullptr, {}, hr.data(),
                          threads);
      // The time index batch entry b is at, or -1 once its sequence has ended.
      auto time_of = [&](int64_t b) -> int64_t {
        if (s >= lens[b]) return -1;
        return run.forward ? s : lens[b] - 1 - s;
      };
      if (cell_ == Cell::kRnn) {
        math::parallel_for(B, threads, grain, [&](int64_t b0, int64_t b1) {
          for (int64_t b = b0; b < b1; ++b) {
            const int64_t t = time_of(b);
            if (t < 0) continue;
            float* hb = &h[b * H];
            const float* xr = &xw[x_row(run, t, b) * GH];
            for (int64_t j = 0; j < H; ++j) hb[j] = xr[j] + hr[b * H + j];
            clip(hb, H);
            act(run, 0).apply(hb, H);
          }
        });
      } else if (cell_ == Cell::kGru) {
        gru_step(run, xw, h, hr, zr, rh, hh, time_of, grain, gates.data(), rt_h);
      } else {
        lstm_step(run, xw, h, c, hr, time_of, grain, gates.data());
      }
      if (run.y)
        for (int64_t b = 0; b < B; ++b) {
          const int64_t t = time_of(b);
          if (t >= 0) std::copy_n(&h[b * H], H, run.y + y_at(run, t, b));
        }
    }
    for (int64_t b = 0; b < B; ++b) {
      if (run.yh) std::copy_n(&h[b * H], H, run.yh + state_at(run, b));
      if (run.yc) std::copy_n(&c[b * H], H, run.yc + state_at(run, b));
    }
  }

  // z = f(Xz + Hz), r = f(Xr + Hr), candidate n = g(Xn + (r * H) Rn^T) or, with
  // linear_before_reset, g(Xn + r * (H Rn^T + Rbn)); H = (1 - z) * n + z * H.
  template <typename TimeOf>
  void gru_step(const Run& run, const std::vector<float>& xw, std::vector<float>& h, const std::vector<float>& hr,
                std::vector<float>& zr, std::vector<float>& rh, std::vector<float>& hh, TimeOf time_of,
                int64_t grain, float* gates, const math::SmallGemmWeights* rt_h) {
    const int64_t B = run.B, H = hidden_, GH = 3 * H;
    const int64_t hr_cols = linear_before_reset_ ? GH : 2 * H;
    // Update and reset gates for every running entry.
    math::parallel_for(B, run.threads, grain, [&](int64_t b0, int64_t b1) {
      for (int64_t b = b0; b < b1; ++b) {
        const int64_t t = time_of(b);
        float* g = &zr[b * 2 * H];
        if (t < 0) {
          std::fill(g, g + 2 * H, 0.f);
          if (!linear_before_reset_) std::fill(&rh[b * H], &rh[b * H] + H, 0.f);
          continue;
        }
        const float* xr = &xw[x_row(run, t, b) * GH];
        for (int64_t j = 0; j < 2 * H; ++j) g[j] = xr[j] + hr[b * hr_cols + j];
        clip(g, 2 * H);
        act(run, 0).apply(g, 2 * H);
        if (!linear_before_reset_)
          for (int64_t j = 0; j < H; ++j) rh[b * H + j] = g[H + j] * h[b * H + j];
      }
    });
    if (!linear_before_reset_ && B > 0 && rt_h != nullptr)
      math::small_gemm(rh.data(), B, *rt_h, hh.data());
    else if (!linear_before_reset_ && B > 0)
      step_h_[run.d]->run(rh.data(), {B, H}, constant_r_ ? nullptr : run.r + 2 * H * H, {H, H}, nullptr, {},
                          hh.data(), run.threads);
    math::parallel_for(B, run.threads, grain, [&](int64_t b0, int64_t b1) {
      for (int64_t b = b0; b < b1; ++b) {
        float* n = gates + b * GH;
        const int64_t t = time_of(b);
        if (t < 0) continue;
        const float* xr = &xw[x_row(run, t, b) * GH] + 2 * H;
        const float* z = &zr[b * 2 * H];
        const float* r = z + H;
        if (linear_before_reset_) {
          const float* hn = &hr[b * GH] + 2 * H;
          for (int64_t j = 0; j < H; ++j) n[j] = xr[j] + r[j] * (hn[j] + (run.rb ? run.rb[2 * H + j] : 0.f));
        } else {
          for (int64_t j = 0; j < H; ++j) n[j] = xr[j] + hh[b * H + j];
        }
        clip(n, H);
        act(run, 1).apply(n, H);
        float* hb = &h[b * H];
        for (int64_t j = 0; j < H; ++j) hb[j] = (1.f - z[j]) * n[j] + z[j] * hb[j];
      }
    });
  }

  // i = f(Xi + Hi + Pi * C), f = f(Xf + Hf + Pf * C) (or 1 - i with input_forget), c = g(Xc + Hc),
  // C' = f * C + i * c, o = f(Xo + Ho + Po * C'), H = o * h(C').
  template <typename TimeOf>
  void lstm_step(const Run& run, const std::vector<float>& xw, std::vector<float>& h, std::vector<float>& c,
                 const std::vector<float>& hr, TimeOf time_of, int64_t grain, float* gates) {
    const int64_t B = run.B, H = hidden_, GH = 4 * H;
    const float* pi = run.p;
    const float* po = run.p ? run.p + H : nullptr;
    const float* pf = run.p ? run.p + 2 * H : nullptr;
    math::parallel_for(B, run.threads, grain, [&](int64_t b0, int64_t b1) {
      for (int64_t b = b0; b < b1; ++b) {
        const int64_t t = time_of(b);
        if (t < 0) continue;
        const float* xr = &xw[x_row(run, t, b) * GH];
        float* g = gates + b * GH;
        for (int64_t j = 0; j < GH; ++j) g[j] = xr[j] + hr[b * GH + j];
        float* gi = g;
        float* go = gi + H;
        float* gf = gi + 2 * H;
        float* gc = gi + 3 * H;
        float* cb = &c[b * H];
        if (pi)
          for (int64_t j = 0; j < H; ++j) {
            gi[j] += pi[j] * cb[j];
            gf[j] += pf[j] * cb[j];
          }
        clip(gi, H);
        act(run, 0).apply(gi, H);
        if (input_forget_) {
          for (int64_t j = 0; j < H; ++j) gf[j] = 1.f - gi[j];
        } else {
          clip(gf, H);
          act(run, 0).apply(gf, H);
        }
        clip(gc, H);
        act(run, 1).apply(gc, H);
        for (int64_t j = 0; j < H; ++j) cb[j] = gf[j] * cb[j] + gi[j] * gc[j];
        if (po)
          for (int64_t j = 0; j < H; ++j) go[j] += po[j] * cb[j];
        clip(go, H);
        act(run, 0).apply(go, H);
        // h(C') reuses the candidate block, which is no longer needed.
        std::copy_n(cb, H, gc);
        act(run, 2).apply(gc, H);
        float* hb = &h[b * H];
        for (int64_t j = 0; j < H; ++j) hb[j] = go[j] * gc[j];
      }
    });
  }

  // Batches up to this size take the step product from math::small_gemm instead of oneDNN.
  static constexpr int64_t kSmallBatch = 4;

  // The step matrices of one direction transposed: [R (or GRU's z and r blocks)], then GRU's Rn.
  std::vector<math::SmallGemmWeights> step_transposes(const float* r) const {
    const int64_t H = hidden_, GH = gates_of(cell_) * H;
    const bool two = cell_ == Cell::kGru && !linear_before_reset_;
    std::vector<math::SmallGemmWeights> t;
    t.push_back(math::pack_for_small_gemm(r, two ? 2 * H : GH, H));
    if (two) t.push_back(math::pack_for_small_gemm(r + 2 * H * H, H, H));
    return t;
  }

  Cell cell_;
  int64_t hidden_;
  float clip_;
  bool batch_first_, linear_before_reset_, input_forget_;
  int dirs_ = 1;
  bool reverse_ = false;
  std::vector<math::RnnActivation> acts_;
  bool constant_w_ = false, constant_r_ = false;
  std::vector<std::unique_ptr<math::GemmRunner>> project_, step_, step_h_;
  std::vector<std::vector<math::SmallGemmWeights>> rt_;  // per direction: step_transposes of a constant R
};

bool recurrent_supported(const sdk::Node& n) {
  for (size_t i : {size_t{kX}, size_t{kW}, size_t{kR}, size_t{kB}, size_t{kInitialH}, size_t{kInitialC}, size_t{kPeepholes}})
    if (!input_type_in(n, i, {EPHOST_ELEMENT_FLOAT})) return false;
  if (!input_type_in(n, kSeqLens, {EPHOST_ELEMENT_INT32, EPHOST_ELEMENT_INT64})) return false;
  for (const std::string& a : n.attr_strings("activations"))
    if (!math::is_rnn_activation(a)) return false;
  return true;
}

KernelFactory recurrent_factory(Cell cell) {
  return [cell](const sdk::Node& n, const KernelConfig& c) -> std::unique_ptr<sdk::Kernel> {
    return std::make_unique<RecurrentKernel>(n, c, cell);
  };
}

}  // namespace

void register_recurrent_kernels(KernelRegistry& r) {
  // Opset 7 dropped output_sequence (earlier versions differ); 14 added layout, read as 0 before.
  r.add("RNN", 7, 17, recurrent_supported, recurrent_factory(Cell::kRnn));
  r.add("GRU", 7, 17, recurrent_supported, recurrent_factory(Cell::kGru));
  r.add("LSTM", 7, 17, recurrent_supported, recurrent_factory(Cell::kLstm));
}

}  // namespace ephost::cpu
