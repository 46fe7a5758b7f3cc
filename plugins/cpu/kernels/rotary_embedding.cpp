// RotaryEmbedding-23 as one pass over the input: each head's first rotary_dim values rotate pairwise
// by the token's angle (cos and sin read from the caches, by position_ids or directly), the rest are
// copied. Pairs are the two halves of the rotated part, or neighbours when interleaved.
#include <cstring>

#include "kernel_registry.h"
#include "math/parallel.h"

namespace ephost::cpu {

namespace {

class RotaryEmbeddingKernel : public CpuKernel {
 public:
  RotaryEmbeddingKernel(const sdk::Node& node, const KernelConfig& c)
      : CpuKernel(node, c), interleaved_(node.attr_int("interleaved", 0) != 0), heads_attr_(node.attr_int("num_heads", 0)),
        rotary_attr_(node.attr_int("rotary_embedding_dim", 0)) {}

 protected:
  void run(sdk::KernelContext& ctx, int threads) override {
    const sdk::Tensor x = required(ctx, 0, "X"), cos = required(ctx, 1, "cos_cache"), sin = required(ctx, 2, "sin_cache");
    const sdk::Tensor pos = ctx.input(3);
    expect_type(x, {EPHOST_ELEMENT_FLOAT}, "X");
    expect_same_type(x, "X", cos, "cos_cache");
    expect_same_type(x, "X", sin, "sin_cache");
    const Shape xs = x.shape();
    // Layout: [batch, seq, heads, head] (3-D X) or [batch, heads, seq, head] (4-D X).
    int64_t batch, seq, heads, head;
    const bool four_d = xs.size() == 4;
    if (four_d) {
      batch = xs[0], heads = xs[1], seq = xs[2], head = xs[3];
    } else if (xs.size() == 3) {
      if (heads_attr_ < 1) fail("a 3-D X [batch, seq, hidden] needs the num_heads attribute");
      if (xs[2] % heads_attr_ != 0)
        fail("X's hidden size (" + std::to_string(xs[2]) + ") is not a multiple of num_heads (" +
             std::to_string(heads_attr_) + ")");
      batch = xs[0], seq = xs[1], heads = heads_attr_, head = xs[2] / heads_attr_;
    } else {
      fail("X must be [batch, seq, hidden] or [batch, heads, seq, head_size], found " + math::to_string(xs));
    }
    const int64_t rotary = rotary_attr_ == 0 ? head : rotary_attr_;
    if (rotary % 2 != 0 || rotary > head || rotary < 0)
      fail("rotary_embedding_dim (" + std::to_string(rotary) + ") must be even and at most the head size (" +
           std::to_string(head) + ")");
    const int64_t half = rotary / 2;
    const Shape cs = cos.shape();
    if (cos.shape() != sin.shape()) fail("cos_cache and sin_cache must have one shape");
    std::vector<int64_t> positions;
    if (pos.present()) {
      positions = ints_of(pos, "position_ids");
      if (pos.shape() != Shape{batch, seq})
        fail("position_ids must be [batch, seq] = [" + std::to_string(batch) + ", " + std::to_string(seq) + "]");
      if (cs.size() != 2 || cs[1] != half)
        fail("with position_ids the caches must be [max_position, rotary_dim / 2 = " + std::to_string(half) +
             "], found " + math::to_string(cs));
      for (int64_t p : positions)
        if (p < 0 || p >= cs[0]) fail("position id " + std::to_string(p) + " is outside the caches' " + std::to_string(cs[0]) + " rows");
    } else if (cs != Shape{batch, seq, half}) {
      fail("without position_ids the caches must be [batch, seq, rotary_dim / 2] = " +
           math::to_string(Shape{batch, seq, half}) + ", found " + math::to_string(cs));
    }
    const float *px = x.data<float>(), *pc = cos.data<float>(), *ps = sin.data<float>();
    float* y = ctx.output<float>(0, xs);
    // One (batch, seq, head) vector per task.
    math::parallel_for(batch * seq * heads, threads, 64, [&](int64_t t0, int64_t t1) {
      for (int64_t t = t0; t < t1; ++t) {
        const int64_t h = t % heads, s = (t / heads) % seq, b = t / (heads * seq);
        const int64_t offset = four_d ? ((b * heads + h) * seq + s) * head : ((b * seq + s) * heads + h) * head;
        const int64_t row = positions.empty() ? b * seq + s : positions[static_cast<size_t>(b * seq + s)];
        const float *c = pc + row * half, *sn = ps + row * half, *in = px + offset;
        float* out = y + offset;
        for (int64_t i = 0; i < half; ++i) {
          const int64_t i1 = interleaved_ ? 2 * i : i, i2 = interleaved_ ? 2 * i + 1 : i + half;
          const float x1 = in[i1], x2 = in[i2];
          out[i1] = c[i] * x1 - sn[i] * x2;
          out[i2] = sn[i] * x1 + c[i] * x2;
        }
        std::memcpy(out + rotary, in + rotary, sizeof(float) * (head - rotary));
      }
    });
  }

 private:
  bool interleaved_;
  int64_t heads_attr_, rotary_attr_;
};

}  // namespace

void register_rotary_embedding_kernels(KernelRegistry& r) {
  r.add("RotaryEmbedding", 23, 23, inputs_of({EPHOST_ELEMENT_FLOAT}, {0, 1, 2}), make_factory<RotaryEmbeddingKernel>());
}

}  // namespace ephost::cpu
