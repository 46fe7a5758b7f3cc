// LinearAttention-27: the recurrence of linear / gated / delta / gated-delta attention, one token at a
// time, with one float32 state S [d_k, d_v] per (batch, KV head). Per token t:
//   gated rules:  S *= exp(decay_t)             (one factor per head, or one per key dimension row)
//   delta rules:  v_t <- beta_t * (v_t - S^T k_t)
//   every rule:   S += k_t v_t^T;  out_t(h) = scale * q_t(h)^T S   for the query heads h of this KV head
// Query head h reads KV head h / (q_heads / kv_heads). A task is one (batch, KV head): its state stays
// in one buffer for the whole sequence.
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/recurrent_state_kernels.h"
#include "math/parallel.h"

namespace ephost::cpu {

namespace {

struct Dims {
  int64_t batch, seq, q_heads, kv_heads, d_k, d_v;
  int64_t decay_width = 0;  // decay's last dimension per KV head: 1 or d_k (0: no decay)
  int64_t beta_heads = 0;   // beta's last dimension: kv_heads or 1 (0: no beta)
};

class LinearAttentionKernel : public CpuKernel {
 public:
  LinearAttentionKernel(const sdk::Node& node, const KernelConfig& c)
      : CpuKernel(node, c), q_heads_(node.attr_int("q_num_heads", 0)), kv_heads_(node.attr_int("kv_num_heads", 0)),
        scale_(node.attr_float("scale", 0.f)), rule_(node.attr_string("update_rule", "gated_delta")) {}

 protected:
  void run(sdk::KernelContext& ctx, int threads) override {
    const bool gated = rule_ == "gated" || rule_ == "gated_delta", delta = rule_ == "delta" || rule_ == "gated_delta";
    if (!gated && !delta && rule_ != "linear")
      fail("update_rule must be 'linear', 'gated', 'delta' or 'gated_delta', not '" + rule_ + "'");
    if (q_heads_ < 1 || kv_heads_ < 1 || q_heads_ % kv_heads_ != 0)
      fail("q_num_heads (" + std::to_string(q_heads_) + ") must be a positive multiple of kv_num_heads (" +
           std::to_string(kv_heads_) + ")");
    const sdk::Tensor q = required(ctx, 0, "query"), k = required(ctx, 1, "key"), v = required(ctx, 2, "value");
    const sdk::Tensor past = ctx.input(3), decay = ctx.input(4), beta = ctx.input(5);
    if (gated != decay.present()) fail("update_rule '" + rule_ + (gated ? "' needs" : "' takes no") + " decay input");
    if (delta != beta.present()) fail("update_rule '" + rule_ + (delta ? "' needs" : "' takes no") + " beta input");
    expect_type(q, {EPHOST_ELEMENT_FLOAT}, "query");
    expect_same_type(q, "query", k, "key");
    expect_same_type(q, "query", v, "value");
    const Dims d = dims(q, k, v, past, decay, beta);
    const float *pq = q.data<float>(), *pk = k.data<float>(), *pv = v.data<float>();
    const float* pg = decay.present() ? decay.data<float>() : nullptr;
    const float* pbeta = beta.present() ? beta.data<float>() : nullptr;
    const float* ppast = past.present() ? past.data<float>() : nullptr;
    float* out = ctx.output<float>(0, {d.batch, d.seq, d.q_heads * d.d_v});
    float* present = output_wanted(1) ? ctx.output<float>(1, {d.batch, d.kv_heads, d.d_k, d.d_v}) : nullptr;
    const float scale = scale_ == 0.f ? 1.f / std::sqrt(static_cast<float>(d.d_k)) : scale_;
    const int64_t group = d.q_heads / d.kv_heads, state_size = d.d_k * d.d_v;
    math::parallel_for(d.batch * d.kv_heads, threads, 1, [&](int64_t t0, int64_t t1) {
      std::vector<float> s_buf(static_cast<size_t>(state_size)), v_buf(static_cast<size_t>(d.d_v)),
          r_buf(static_cast<size_t>(d.d_v));
      for (int64_t task = t0; task < t1; ++task) {
        const int64_t b = task / d.kv_heads, kh = task % d.kv_heads;
        float* s = present ? present + task * state_size : s_buf.data();
        if (ppast)
          std::memcpy(s, ppast + task * state_size, sizeof(float) * state_size);
        else
          std::memset(s, 0, sizeof(float) * state_size);
        for (int64_t t = 0; t < d.seq; ++t) {
          const int64_t token = b * d.seq + t;
          const float* kt = pk + (token * d.kv_heads + kh) * d.d_k;
          const float* vt = pv + (token * d.kv_heads + kh) * d.d_v;
          if (pg) decay_state(s, pg + (token * d.kv_heads + kh) * d.decay_width, d);
          float* vw = v_buf.data();
          std::memcpy(vw, vt, sizeof(float) * d.d_v);
          if (pbeta) {
            const float bt = pbeta[token * d.beta_heads + (d.beta_heads == 1 ? 0 : kh)];
            // retrieved = S^T k, row by row (S is stored by key dimension).
            float* retrieved = r_buf.data();
            std::memset(retrieved, 0, sizeof(float) * d.d_v);
            for (int64_t i = 0; i < d.d_k; ++i) {
              const float* row = s + i * d.d_v;
              for (int64_t m = 0; m < d.d_v; ++m) retrieved[m] += row[m] * kt[i];
            }
            for (int64_t m = 0; m < d.d_v; ++m) vw[m] = bt * (vw[m] - retrieved[m]);
          }
          for (int64_t i = 0; i < d.d_k; ++i) {
            float* row = s + i * d.d_v;
            const float ki = kt[i];
            for (int64_t m = 0; m < d.d_v; ++m) row[m] += ki * vw[m];
          }
          for (int64_t h = kh * group; h < (kh + 1) * group; ++h) {
            const float* qt = pq + (token * d.q_heads + h) * d.d_k;
            float* o = out + (token * d.q_heads + h) * d.d_v;
            std::memset(o, 0, sizeof(float) * d.d_v);
            for (int64_t i = 0; i < d.d_k; ++i) {
              const float* row = s + i * d.d_v;
              const float qi = qt[i];
              for (int64_t m = 0; m < d.d_v; ++m) o[m] += qi * row[m];
            }
            for (int64_t m = 0; m < d.d_v; ++m) o[m] *= scale;
          }
        }
      }
    });
  }

 private:
  // S *= exp(g): one factor for the whole state, or one per key-dimension row.
  static void decay_state(float* s, const float* g, const Dims& d) {
    for (int64_t i = 0; i < d.d_k; ++i) {
      const float f = std::exp(g[d.decay_width == 1 ? 0 : i]);
      float* row = s + i * d.d_v;
      for (int64_t m = 0; m < d.d_v; ++m) row[m] *= f;
    }
  }

  Dims dims(const sdk::Tensor& q, const sdk::Tensor& k, const sdk::Tensor& v, const sdk::Tensor& past,
            const sdk::Tensor& decay, const sdk::Tensor& beta) const {
    const Shape qs = q.shape(), ks = k.shape(), vs = v.shape();
    if (qs.size() != 3 || ks.size() != 3 || vs.size() != 3)
      fail("query, key and value must be 3-D [batch, seq, heads * head_size], found " + math::to_string(qs) + ", " +
           math::to_string(ks) + ", " + math::to_string(vs));
    Dims d{qs[0], qs[1], q_heads_, kv_heads_, 0, 0};
    if (qs[2] % q_heads_ != 0)
      fail("query's hidden size (" + std::to_string(qs[2]) + ") is not a multiple of q_num_heads (" +
           std::to_string(q_heads_) + ")");
    if (vs[2] % kv_heads_ != 0)
      fail("value's hidden size (" + std::to_string(vs[2]) + ") is not a multiple of kv_num_heads (" +
           std::to_string(kv_heads_) + ")");
    d.d_k = qs[2] / q_heads_;
    d.d_v = vs[2] / kv_heads_;
    if (ks != Shape{d.batch, d.seq, kv_heads_ * d.d_k})
      fail("key must be [batch, seq, kv_num_heads * d_k] = " + math::to_string(Shape{d.batch, d.seq, kv_heads_ * d.d_k}) +
           ", found " + math::to_string(ks));
    if (vs[0] != d.batch || vs[1] != d.seq)
      fail("value must be [batch, seq, ...] like query, found " + math::to_string(vs));
    if (past.present()) {
      expect_type(past, {EPHOST_ELEMENT_FLOAT}, "past_state");
      if (past.shape() != Shape{d.batch, kv_heads_, d.d_k, d.d_v})
        fail("past_state must be [batch, kv_num_heads, d_k, d_v] = " +
             math::to_string(Shape{d.batch, kv_heads_, d.d_k, d.d_v}) + ", found " + math::to_string(past.shape()));
    }
    if (decay.present()) {
      expect_same_type(q, "query", decay, "decay");
      const Shape gs = decay.shape();
      if (gs.size() != 3 || gs[0] != d.batch || gs[1] != d.seq || (gs[2] != kv_heads_ && gs[2] != kv_heads_ * d.d_k))
        fail("decay must be [batch, seq, kv_num_heads] or [batch, seq, kv_num_heads * d_k], found " +
             math::to_string(gs));
      d.decay_width = gs[2] == kv_heads_ ? 1 : d.d_k;
    }
    if (beta.present()) {
      expect_same_type(q, "query", beta, "beta");
      const Shape bs = beta.shape();
      if (bs.size() != 3 || bs[0] != d.batch || bs[1] != d.seq || (bs[2] != kv_heads_ && bs[2] != 1))
        fail("beta must be [batch, seq, kv_num_heads] or [batch, seq, 1], found " + math::to_string(bs));
      d.beta_heads = bs[2];
    }
    return d;
  }

  int64_t q_heads_, kv_heads_;
  float scale_;
  std::string rule_;
};

}  // namespace

void register_linear_attention_kernels(KernelRegistry& r) {
  r.add("LinearAttention", 27, 27, inputs_of({EPHOST_ELEMENT_FLOAT}, {0, 1, 2, 3, 4, 5}),
        make_factory<LinearAttentionKernel>());
}

}  // namespace ephost::cpu
