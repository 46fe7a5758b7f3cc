// Attention (opsets 23 and 24) as one fused kernel: Q K^T and P V are oneDNN matrix products
// (math::MatMulRunner) over all heads at once, with scale, softcap, the masks and the softmax applied
// row by row in between. Grouped-query attention needs no copies of K and V: the query heads that
// share key/value head g are heads g * G .. g * G + G - 1 (G = q_heads / kv_heads), whose rows are
// contiguous in [batch, q_heads, q_seq, head], so they multiply K and V as one [G * q_seq, head] block.
//
// Order of operations, as onnx's reference implementation (onnx/reference/ops/op_attention.py):
// scores = scale * Q K^T; softcap; + the mask (attn_mask, causal, nonpad_kv_seqlen); softmax; times V.
// qk_matmul_output holds the scaled Q K^T (mode 0), that plus the mask (1), softcap of it plus the mask
// (2: the softmax's input), or the softmax (3). A query whose keys are all masked gets zeros.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <vector>

#include "kernel_registry.h"
#include "math/matmul.h"
#include "math/parallel.h"
#include "math/vec.h"

namespace ephost::cpu {

namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();
// Query rows per key/value head up to which the products are direct dot products (decoding steps).
constexpr int64_t kDirectRows = 8;

// The dimensions of one call.
struct AttentionDims {
  int64_t batch = 0, q_heads = 0, kv_heads = 0, q_seq = 0, kv_seq = 0, past = 0, total = 0, head = 0, v_head = 0;
  bool three_d = false;
};

// attn_mask, right-aligned against [batch, q_heads, q_seq, total] (its last axis may be shorter: the
// keys past it are masked).
struct MaskView {
  const float* values = nullptr;
  const bool* flags = nullptr;
  int64_t strides[4] = {0, 0, 0, 0};
  int64_t last = 0;  // the mask's length along the key axis
  bool present() const { return values || flags; }
};

class AttentionKernel : public CpuKernel {
 public:
  AttentionKernel(const sdk::Node& node, const KernelConfig& c)
      : CpuKernel(node, c), causal_(node.attr_int("is_causal", 0) != 0),
        q_heads_attr_(node.attr_int("q_num_heads", 0)), kv_heads_attr_(node.attr_int("kv_num_heads", 0)),
        mode_(node.attr_int("qk_matmul_output_mode", 0)), has_scale_(node.has_attr("scale")),
        scale_(node.attr_float("scale", 1.f)), softcap_(node.attr_float("softcap", 0.f)) {
    if (mode_ < 0 || mode_ > 3) fail_node(node, "qk_matmul_output_mode must be 0, 1, 2 or 3");
  }

 protected:
  void run(sdk::KernelContext& ctx, int threads) override {
    const sdk::Tensor q = required(ctx, 0, "Q"), k = required(ctx, 1, "K"), v = required(ctx, 2, "V");
    const sdk::Tensor mask = ctx.input(3), past_k = ctx.input(4), past_v = ctx.input(5), nonpad = ctx.input(6);
    expect_type(q, {EPHOST_ELEMENT_FLOAT}, "Q");
    expect_type(k, {EPHOST_ELEMENT_FLOAT}, "K");
    expect_type(v, {EPHOST_ELEMENT_FLOAT}, "V");
    if (past_k.present() != past_v.present()) fail("past_key and past_value must be given together");
    const AttentionDims d = dims_of(q, k, v, past_k, past_v);
    std::vector<int64_t> nonpad_len;
    if (nonpad.present()) {
      nonpad_len = ints_of(nonpad, "nonpad_kv_seqlen");
      if (static_cast<int64_t>(nonpad_len.size()) != d.batch)
        fail("nonpad_kv_seqlen must hold one length per batch (" + std::to_string(d.batch) + ")");
      for (int64_t n : nonpad_len)
        if (n < 0 || n > d.total) fail("nonpad_kv_seqlen values must lie in [0, " + std::to_string(d.total) + "]");
    }
    const MaskView mv = mask_view(mask, d);

    // Q, K and V as [batch, heads, seq, size] (3-D inputs are copied so); present_key and present_value
    // [batch, kv_heads, total, size] are the past followed by K and V, materialised only when asked for or
    // when the products below need them contiguous.
    std::vector<float> q_buf, k_buf, v_buf, pk_buf, pv_buf;
    const float* qh = heads_first(q, d.q_heads, d.q_seq, d.head, d, q_buf);
    const float* kh = heads_first(k, d.kv_heads, d.kv_seq, d.head, d, k_buf);
    const float* vh = heads_first(v, d.kv_heads, d.kv_seq, d.v_head, d, v_buf);
    const float* past_keys = past_k.present() ? past_k.data<float>() : nullptr;
    const float* past_values = past_v.present() ? past_v.data<float>() : nullptr;
    const int64_t group = d.q_heads / d.kv_heads, rows = group * d.q_seq;
    // A few query rows per key/value head (decoding): dot products over the keys where they lie, no
    // transposed copy and no matrix-product call. Otherwise oneDNN's products over all heads.
    const bool direct = rows <= kDirectRows;
    const Shape present_k_shape = {d.batch, d.kv_heads, d.total, d.head};
    const Shape present_v_shape = {d.batch, d.kv_heads, d.total, d.v_head};
    const float *keys = kh, *values = vh;
    if (output_wanted(1) || (!direct && d.past > 0)) {
      float* pk = output_wanted(1) ? ctx.output<float>(1, present_k_shape) : sized(pk_buf, present_k_shape, "present_key");
      concat_past(past_keys, kh, pk, d, d.head);
      keys = pk;
    }
    if (output_wanted(2) || (!direct && d.past > 0)) {
      float* pv = output_wanted(2) ? ctx.output<float>(2, present_v_shape) : sized(pv_buf, present_v_shape, "present_value");
      concat_past(past_values, vh, pv, d, d.v_head);
      values = pv;
    }
    // Where key/value t of head bh lies: in the concatenation when made, else in the past or in K/V.
    const bool concatenated_k = keys != kh || d.past == 0, concatenated_v = values != vh || d.past == 0;
    auto key_row = [&](int64_t bh, int64_t t) {
      if (concatenated_k) return keys + (bh * d.total + t) * d.head;
      return t < d.past ? past_keys + (bh * d.past + t) * d.head : kh + (bh * d.kv_seq + t - d.past) * d.head;
    };
    auto value_row = [&](int64_t bh, int64_t t) {
      if (concatenated_v) return values + (bh * d.total + t) * d.v_head;
      return t < d.past ? past_values + (bh * d.past + t) * d.v_head : vh + (bh * d.kv_seq + t - d.past) * d.v_head;
    };

    // scores [batch, kv_heads, G * q_seq, total] = Q K^T, which is [batch, q_heads, q_seq, total].
    float* scores = reusable(0, {d.batch, d.q_heads, d.q_seq, d.total}, "Attention's scores");
    if (direct) {
      math::parallel_for(d.batch * d.kv_heads, threads, 1, [&](int64_t h0, int64_t h1) {
        for (int64_t bh = h0; bh < h1; ++bh)
          for (int64_t t = 0; t < d.total; ++t) {
            const float* kr = key_row(bh, t);
            for (int64_t r = 0; r < rows; ++r)
              scores[(bh * rows + r) * d.total + t] = dot(qh + (bh * rows + r) * d.head, kr, d.head);
          }
      });
    } else {
      float* kt = reusable(1, {d.batch, d.kv_heads, d.head, d.total}, "Attention's K^T");
      transpose_keys(keys, kt, d, threads);
      qk_.run(qh, {d.batch, d.kv_heads, rows, d.head}, kt, {d.batch, d.kv_heads, d.head, d.total}, scores, threads);
    }
    float* qk_out = output_wanted(3) ? ctx.output<float>(3, {d.batch, d.q_heads, d.q_seq, d.total}) : nullptr;
    const float scale = has_scale_ ? scale_ : 1.f / std::sqrt(static_cast<float>(d.head));
    math::parallel_for(d.batch * d.q_heads * d.q_seq, threads, std::max<int64_t>(1, 4096 / std::max<int64_t>(d.total, 1)),
                       [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) score_row(scores + r * d.total, r, d, mv, nonpad_len, scale, qk_out);
    });

    // Y [batch, kv_heads, G * q_seq, v_head] = P V, which is [batch, q_heads, q_seq, v_head].
    const Shape y4 = {d.batch, d.q_heads, d.q_seq, d.v_head};
    std::vector<float> y_buf;
    float* y = d.three_d ? sized(y_buf, y4, "Attention's output") : ctx.output<float>(0, y4);
    if (direct) {
      math::parallel_for(d.batch * d.kv_heads, threads, 1, [&](int64_t h0, int64_t h1) {
        for (int64_t bh = h0; bh < h1; ++bh) {
          float* out = y + bh * rows * d.v_head;
          std::fill(out, out + rows * d.v_head, 0.f);
          for (int64_t t = 0; t < d.total; ++t) {
            const float* vr = value_row(bh, t);
            for (int64_t r = 0; r < rows; ++r) {
              const float p = scores[(bh * rows + r) * d.total + t];
              float* o = out + r * d.v_head;
              for (int64_t e = 0; e < d.v_head; ++e) o[e] += p * vr[e];
            }
          }
        }
      });
    } else {
      pv_.run(scores, {d.batch, d.kv_heads, rows, d.total}, values, present_v_shape, y, threads);
    }
    if (!d.three_d) return;
    float* out = ctx.output<float>(0, {d.batch, d.q_seq, d.q_heads * d.v_head});
    for (int64_t b = 0; b < d.batch; ++b)
      for (int64_t h = 0; h < d.q_heads; ++h)
        for (int64_t s = 0; s < d.q_seq; ++s)
          std::memcpy(out + ((b * d.q_seq + s) * d.q_heads + h) * d.v_head,
                      y + ((b * d.q_heads + h) * d.q_seq + s) * d.v_head, sizeof(float) * d.v_head);
  }

 private:
  AttentionDims dims_of(const sdk::Tensor& q, const sdk::Tensor& k, const sdk::Tensor& v, const sdk::Tensor& pk,
                        const sdk::Tensor& pv) const {
    const Shape qs = q.shape(), ks = k.shape(), vs = v.shape();
    AttentionDims d;
    if (qs.size() != ks.size() || qs.size() != vs.size() || (qs.size() != 3 && qs.size() != 4))
      fail("Q, K and V must all be 3-D [batch, seq, hidden] or all 4-D [batch, heads, seq, head_size], found " +
           math::to_string(qs) + ", " + math::to_string(ks) + " and " + math::to_string(vs));
    d.three_d = qs.size() == 3;
    d.batch = qs[0];
    if (ks[0] != d.batch || vs[0] != d.batch) fail("Q, K and V must have one batch size");
    if (d.three_d) {
      if (q_heads_attr_ < 1 || kv_heads_attr_ < 1) fail("3-D inputs need the q_num_heads and kv_num_heads attributes");
      d.q_heads = q_heads_attr_;
      d.kv_heads = kv_heads_attr_;
      if (qs[2] % d.q_heads || ks[2] % d.kv_heads || vs[2] % d.kv_heads)
        fail("the hidden sizes of Q (" + std::to_string(qs[2]) + "), K and V must be multiples of their head counts");
      d.q_seq = qs[1];
      d.kv_seq = ks[1];
      d.head = qs[2] / d.q_heads;
      d.v_head = vs[2] / d.kv_heads;
      if (ks[2] / d.kv_heads != d.head) fail("Q and K must have one head size");
      if (vs[1] != d.kv_seq) fail("K and V must have one sequence length");
    } else {
      d.q_heads = qs[1];
      d.kv_heads = ks[1];
      d.q_seq = qs[2];
      d.kv_seq = ks[2];
      d.head = qs[3];
      d.v_head = vs[3];
      if (ks[3] != d.head) fail("Q and K must have one head size, found " + math::to_string(qs) + " and " + math::to_string(ks));
      if (vs[1] != d.kv_heads || vs[2] != d.kv_seq) fail("K and V must have one head count and sequence length");
    }
    if (d.kv_heads < 1 || d.q_heads % d.kv_heads != 0)
      fail("q_num_heads (" + std::to_string(d.q_heads) + ") must be a multiple of kv_num_heads (" +
           std::to_string(d.kv_heads) + ")");
    if (pk.present()) {
      expect_type(pk, {EPHOST_ELEMENT_FLOAT}, "past_key");
      expect_type(pv, {EPHOST_ELEMENT_FLOAT}, "past_value");
      const Shape pks = pk.shape(), pvs = pv.shape();
      if (pks.size() != 4 || pks[0] != d.batch || pks[1] != d.kv_heads || pks[3] != d.head)
        fail("past_key must be [batch, kv_heads, past_seq, head] = [" + std::to_string(d.batch) + ", " +
             std::to_string(d.kv_heads) + ", past_seq, " + std::to_string(d.head) + "], found " + math::to_string(pks));
      if (pvs.size() != 4 || pvs[0] != d.batch || pvs[1] != d.kv_heads || pvs[2] != pks[2] || pvs[3] != d.v_head)
        fail("past_value must be [batch, kv_heads, past_seq, v_head] like past_key, found " + math::to_string(pvs));
      d.past = pks[2];
    }
    d.total = d.past + d.kv_seq;
    return d;
  }

  MaskView mask_view(const sdk::Tensor& mask, const AttentionDims& d) const {
    MaskView mv;
    if (!mask.present()) return mv;
    const Shape ms = mask.shape();
    if (ms.empty() || ms.size() > 4) fail("attn_mask must have rank 1 to 4, found " + math::to_string(ms));
    const int64_t full[4] = {d.batch, d.q_heads, d.q_seq, d.total};
    mv.last = ms.back();
    if (mv.last > d.total)
      fail("attn_mask's last axis (" + std::to_string(mv.last) + ") is longer than the keys (" + std::to_string(d.total) + ")");
    int64_t stride = 1;
    for (size_t i = 0; i < ms.size(); ++i) {
      const size_t src = ms.size() - 1 - i, dst = 3 - i;
      if (dst != 3 && ms[src] != 1 && ms[src] != full[dst])
        fail("attn_mask " + math::to_string(ms) + " does not broadcast to [batch, q_heads, q_seq, total_seq] = [" +
             std::to_string(d.batch) + ", " + std::to_string(d.q_heads) + ", " + std::to_string(d.q_seq) + ", " +
             std::to_string(d.total) + "]");
      mv.strides[dst] = ms[src] == 1 && dst != 3 ? 0 : stride;
      stride *= ms[src];
    }
    if (mask.elem_type() == EPHOST_ELEMENT_BOOL)
      mv.flags = mask.data<bool>();
    else if (mask.elem_type() == EPHOST_ELEMENT_FLOAT)
      mv.values = mask.data<float>();
    else
      fail(std::string("attn_mask must be bool or Q's type (float), found ") + type_name(mask.elem_type()));
    return mv;
  }

  // One query's scores (row r of [batch, q_heads, q_seq]): scale, softcap, mask, softmax in place.
  void score_row(float* row, int64_t r, const AttentionDims& d, const MaskView& mv,
                 const std::vector<int64_t>& nonpad, float scale, float* qk_out) const {
    const int64_t i = r % d.q_seq, h = (r / d.q_seq) % d.q_heads, b = r / (d.q_seq * d.q_heads);
    float* qk_row = qk_out ? qk_out + r * d.total : nullptr;
    // Keys this query may see: [0, limit), before the explicit mask.
    int64_t limit = d.total;
    if (!nonpad.empty()) limit = std::min(limit, nonpad[b]);
    if (causal_) {
      const int64_t offset = d.past > 0 || nonpad.empty() ? d.past : nonpad[b] - d.q_seq;
      limit = std::min(limit, std::max<int64_t>(0, i + offset + 1));
    }
    const int64_t mask_base = b * mv.strides[0] + h * mv.strides[1] + i * mv.strides[2];
    auto apply_mask = [&](float* scores) {
      for (int64_t j = limit; j < d.total; ++j) scores[j] = kNegInf;
      if (!mv.present()) return;
      const int64_t seen = std::min(limit, mv.last);
      if (mv.flags) {
        for (int64_t j = 0; j < seen; ++j)
          if (!mv.flags[mask_base + j]) scores[j] = kNegInf;
      } else {
        for (int64_t j = 0; j < seen; ++j) scores[j] += mv.values[mask_base + j];
      }
      for (int64_t j = mv.last; j < limit; ++j) scores[j] = kNegInf;
    };
    for (int64_t j = 0; j < d.total; ++j) row[j] *= scale;
    if (qk_row && (mode_ == 0 || mode_ == 1)) {
      std::memcpy(qk_row, row, sizeof(float) * d.total);
      if (mode_ == 1) apply_mask(qk_row);
    }
    if (softcap_ > 0)
      for (int64_t j = 0; j < d.total; ++j) row[j] = softcap_ * std::tanh(row[j] / softcap_);
    apply_mask(row);
    if (qk_row && mode_ == 2) std::memcpy(qk_row, row, sizeof(float) * d.total);
    float max = kNegInf;
    for (int64_t j = 0; j < d.total; ++j) max = std::max(max, row[j]);
    if (max == kNegInf)
      std::fill(row, row + d.total, 0.f);
    else
      math::softmax_row_f32(row, 1.f, nullptr, row, d.total);
    if (qk_row && mode_ == 3) std::memcpy(qk_row, row, sizeof(float) * d.total);
  }

  // t as [batch, heads, seq, size]: itself when 4-D, else a copy of [batch, seq, heads * size] in buf.
  static const float* heads_first(const sdk::Tensor& t, int64_t heads, int64_t seq, int64_t size,
                                  const AttentionDims& d, std::vector<float>& buf) {
    if (!d.three_d) return t.data<float>();
    const float* src = t.data<float>();
    buf = sdk::scratch_vector<float>({d.batch, heads, seq, size}, "Attention's heads-first copy");
    for (int64_t b = 0; b < d.batch; ++b)
      for (int64_t s = 0; s < seq; ++s)
        for (int64_t h = 0; h < heads; ++h)
          std::memcpy(buf.data() + ((b * heads + h) * seq + s) * size, src + ((b * seq + s) * heads + h) * size,
                      sizeof(float) * size);
    return buf.data();
  }

  static float* sized(std::vector<float>& buf, const Shape& s, const char* what) {
    buf = sdk::scratch_vector<float>(s, what);
    return buf.data();
  }

  // A working buffer of the calling thread (slot 0: scores, 1: K^T), kept between runs so that steady
  // runs allocate nothing; one run uses it at a time on its thread.
  static float* reusable(int slot, std::initializer_list<int64_t> dims, const char* what) {
    thread_local std::vector<float> buffers[2];
    const size_t n = sdk::scratch_bytes(dims, sizeof(float), what) / sizeof(float);
    std::vector<float>& b = buffers[slot];
    if (b.size() < n) b = sdk::scratch_vector<float>(dims, what);
    return b.data();
  }

  // Eight partial sums, so the loop vectorises without reassociating one running sum.
  static float dot(const float* a, const float* b, int64_t n) {
    float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
      for (int j = 0; j < 8; ++j) acc[j] += a[i + j] * b[i + j];
    float sum = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
    for (; i < n; ++i) sum += a[i] * b[i];
    return sum;
  }

  // present [batch, kv_heads, past + kv_seq, size] = past then the new entries, per head.
  static void concat_past(const float* past, const float* now, float* present, const AttentionDims& d, int64_t size) {
    for (int64_t bh = 0; bh < d.batch * d.kv_heads; ++bh) {
      float* dst = present + bh * d.total * size;
      if (past) std::memcpy(dst, past + bh * d.past * size, sizeof(float) * d.past * size);
      std::memcpy(dst + d.past * size, now + bh * d.kv_seq * size, sizeof(float) * d.kv_seq * size);
    }
  }

  static void transpose_keys(const float* keys, float* kt, const AttentionDims& d, int threads) {
    math::parallel_for(d.batch * d.kv_heads, threads, 1, [&](int64_t h0, int64_t h1) {
      for (int64_t bh = h0; bh < h1; ++bh) {
        const float* src = keys + bh * d.total * d.head;
        float* dst = kt + bh * d.total * d.head;
        for (int64_t t = 0; t < d.total; ++t)
          for (int64_t e = 0; e < d.head; ++e) dst[e * d.total + t] = src[t * d.head + e];
      }
    });
  }

  bool causal_;
  int64_t q_heads_attr_, kv_heads_attr_, mode_;
  bool has_scale_;
  float scale_, softcap_;
  math::MatMulRunner qk_, pv_;
};

bool attention_supported(const sdk::Node& n) {
  if (!input_type_in(n, 0, {EPHOST_ELEMENT_FLOAT}) || !input_type_in(n, 1, {EPHOST_ELEMENT_FLOAT}) ||
      !input_type_in(n, 2, {EPHOST_ELEMENT_FLOAT}) || !input_type_in(n, 3, {EPHOST_ELEMENT_FLOAT, EPHOST_ELEMENT_BOOL}))
    return false;
  // The softmax runs in float: other softmax_precision values are refused.
  return n.attr_int("softmax_precision", EPHOST_ELEMENT_FLOAT) == EPHOST_ELEMENT_FLOAT;
}

}  // namespace

void register_attention_kernels(KernelRegistry& r) {
  r.add("Attention", 23, 24, attention_supported, make_factory<AttentionKernel>());
}

}  // namespace ephost::cpu
