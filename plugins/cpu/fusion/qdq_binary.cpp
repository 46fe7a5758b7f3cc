// A QDQ model's quantized Add or Mul in one pass: the pattern ONNX Runtime runs as QLinearAdd and
// QLinearMul.
//
//   DequantizeLinear(A_q, sa, za) ─┐
//                                  Add | Mul ─ QuantizeLinear(., sy, zy) ─ Y_q
//   DequantizeLinear(B_q, sb, zb) ─┘
//
// Op by op, both operands are dequantized into float tensors, the float result is written, and
// QuantizeLinear reads it again: three passes over memory and two tensors the size of the output. Here
// the output is made in blocks of a few thousand elements that stay in L1: each operand's block is
// dequantized (math/quantize.h), combined, and quantized into Y_q. The arithmetic is the op-by-op
// arithmetic, element for element (the same dequantize and quantize loops, one float add or
// multiply), so the result is the unfused graph's bit for bit.
//
// An operand's DequantizeLinear joins the group only when this op is its sole consumer. Quantizers
// often share one between a residual Add and the next Conv, or between Sigmoid and Mul in a SiLU: such
// a DequantizeLinear runs outside the group, and the group reads its float output as it is.
//
// Broadcasting: numpy's rules. The output is walked as outer rows of an inner span in which each
// operand is either contiguous (same trailing dims as the output) or one value repeated (trailing
// dims of 1): same shapes, a per-channel [N, C, 1, 1] against [N, C, H, W], a bias [D] against [B, S, D]
// and a scalar are each one loop.
#include <algorithm>
#include <unordered_set>

#include "constant_lookup.h"
#include "graph_match.h"
#include "math/parallel.h"
#include "math/quantize.h"
#include "qdq_common.h"

namespace ephost::cpu::fusion {

namespace {

// One input of the Add / Mul: its quantized bytes and their DequantizeLinear when that node is in the
// group, else the float value the group reads.
struct BinaryOperand {
  bool quantized = false;
  ScalarQuant quant;          // when quantized
  std::string value;          // the group input: the DequantizeLinear's input, or the op's input
  sdk::Tensor constant;       // the value when it is a constant (read at compile), else absent
};

struct QdqBinaryMatch {
  sdk::Node op, q;
  bool mul = false;
  BinaryOperand in[2];
  ScalarQuant y;
  std::vector<sdk::Node> nodes;
};

bool match_operand(const sdk::Node& op, size_t i, const Available& ok, QdqBinaryMatch* m) {
  BinaryOperand& operand = m->in[i];
  const sdk::Value v = op.input(i);
  const sdk::Node dq = v.producer();
  if (!dq.valid() || !is_quant_op(dq, "DequantizeLinear") || !scalar_quant(dq, &operand.quant)) return false;
  operand.quantized = ok(dq) && sole_consumer(dq.output(0)).get() == op.get() && op.input(1 - i).name() != v.name();
  const sdk::Value read = operand.quantized ? dq.input(0) : v;
  operand.value = read.name();
  operand.constant = constant_of(read);
  if (operand.quantized) m->nodes.push_back(dq);
  return true;
}

bool match_qdq_binary(const sdk::Node& anchor, const Available& ok, QdqBinaryMatch* m) {
  const bool add = is_op(anchor, "Add"), mul = is_op(anchor, "Mul");
  if ((!add && !mul) || !ok(anchor) || anchor.num_inputs() != 2 || !anchor.has_input(0) || !anchor.has_input(1))
    return false;
  if (!is_float(anchor.input(0)) || !is_float(anchor.input(1)) || !is_float(anchor.output(0))) return false;
  m->op = anchor;
  m->mul = mul;
  m->nodes = {anchor};
  if (!match_operand(anchor, 0, ok, m) || !match_operand(anchor, 1, ok, m)) return false;
  // Without a quantized operand nothing is saved but the QuantizeLinear pass: leave it to the kernels.
  if (!m->in[0].quantized && !m->in[1].quantized) return false;
  const sdk::Node q = sole_consumer(anchor.output(0));
  if (!is_quant_op(q, "QuantizeLinear") || !ok(q) || !scalar_quant(q, &m->y)) return false;
  if (q.num_outputs() != 1 || !q.has_output(0)) return false;
  m->q = q;
  m->nodes.push_back(q);
  return true;
}

// How the output is walked: `outer` rows of `inner` elements; in each row an operand advances by one
// element per output element (step 1) or stays on one value (step 0), and its row starts at
// `row_offset(o)`.
struct BroadcastWalk {
  Shape out;
  int64_t inner = 1, outer = 1;
  int64_t step[2] = {1, 1};
  Shape outer_dims;             // the output's leading dims
  Shape outer_strides[2];       // each operand's element stride per leading dim (0: broadcast)

  int64_t row_offset(int k, int64_t o) const {
    int64_t off = 0;
    for (size_t d = outer_dims.size(); d-- > 0;) {
      off += (o % outer_dims[d]) * outer_strides[k][d];
      o /= outer_dims[d];
    }
    return off;
  }
};

// numpy broadcasting of a and b, refused (INVALID_ARGUMENT) where a dim pair is neither equal nor 1.
BroadcastWalk broadcast_walk(const Shape& a, const Shape& b, const std::string& what) {
  const size_t rank = std::max(a.size(), b.size());
  Shape dims[2] = {Shape(rank, 1), Shape(rank, 1)};
  std::copy(a.begin(), a.end(), dims[0].begin() + static_cast<std::ptrdiff_t>(rank - a.size()));
  std::copy(b.begin(), b.end(), dims[1].begin() + static_cast<std::ptrdiff_t>(rank - b.size()));
  BroadcastWalk w;
  w.out.resize(rank);
  for (size_t d = 0; d < rank; ++d) {
    const int64_t x = dims[0][d], y = dims[1][d];
    if (x != y && x != 1 && y != 1)
      sdk::fail(EPHOST_INVALID_ARGUMENT, what + ": shapes " + math::to_string(a) + " and " + math::to_string(b) +
                                             " do not broadcast");
    w.out[d] = x == 1 ? y : x;
  }
  // The inner span: trailing dims where each operand is either the output's dim throughout, or 1
  // throughout (its value repeats along the span).
  size_t split = rank;
  bool full[2] = {true, true}, ones[2] = {true, true};
  while (split > 0) {
    const size_t d = split - 1;
    bool fits = true;
    for (int k = 0; k < 2; ++k) {
      const bool f = full[k] && dims[k][d] == w.out[d], o = ones[k] && dims[k][d] == 1;
      if (!f && !o) fits = false;
    }
    if (!fits) break;
    for (int k = 0; k < 2; ++k) {
      full[k] = full[k] && dims[k][d] == w.out[d];
      ones[k] = ones[k] && dims[k][d] == 1;
    }
    w.inner *= w.out[d];
    --split;
  }
  for (int k = 0; k < 2; ++k) w.step[k] = full[k] ? 1 : 0;
  w.outer_dims.assign(w.out.begin(), w.out.begin() + static_cast<std::ptrdiff_t>(split));
  for (int k = 0; k < 2; ++k) {
    // Element strides of operand k's own (padded) dims, zero where it broadcasts.
    int64_t stride = 1;
    for (size_t d = rank; d-- > split;) stride *= dims[k][d];
    w.outer_strides[k].assign(split, 0);
    for (size_t d = split; d-- > 0;) {
      w.outer_strides[k][d] = dims[k][d] == 1 ? 0 : stride;
      stride *= dims[k][d];
    }
  }
  for (int64_t d : w.outer_dims) w.outer *= d;
  return w;
}

class QdqBinaryGroup : public sdk::CompiledGroup {
 public:
  QdqBinaryGroup(const QdqBinaryMatch& m, const sdk::Graph& group, const KernelConfig& config)
      : name_(group.name()), m_(m), default_threads_(config.default_threads), adaptive_(config.adaptive_threads) {
    for (int k = 0; k < 2; ++k) {
      if (m.in[k].constant.present()) {
        const sdk::Tensor& c = m.in[k].constant;
        constant_bytes_[k].assign(static_cast<const uint8_t*>(c.raw()),
                                  static_cast<const uint8_t*>(c.raw()) + c.size() * (m.in[k].quantized ? 1 : 4));
        constant_shape_[k] = c.shape();
        continue;
      }
      index_[k] = group_input(group, m.in[k].value);
      if (index_[k] < 0)
        sdk::fail(EPHOST_NOT_IMPLEMENTED, "cpu cannot compile fused int8 " + op_name() + " " + name_ +
                                              ": operand " + m.in[k].value + " is not a group input");
    }
    out_index_ = group_output(group, m.q.output(0).name());
    if (out_index_ < 0 || group.num_outputs() != 1)
      sdk::fail(EPHOST_NOT_IMPLEMENTED, "cpu cannot compile fused int8 " + op_name() + " " + name_ +
                                            ": unexpected group interface");
  }

  void compute(void*, sdk::KernelContext& ctx) override {
    const void* data[2];
    Shape shapes[2];
    for (int k = 0; k < 2; ++k) {
      if (index_[k] < 0) {
        data[k] = constant_bytes_[k].data();
        shapes[k] = constant_shape_[k];
        continue;
      }
      const sdk::Tensor t = ctx.input(static_cast<size_t>(index_[k]));
      const int32_t want = m_.in[k].quantized ? m_.in[k].quant.type : EPHOST_ELEMENT_FLOAT;
      if (!t.present() || t.elem_type() != want)
        sdk::fail(EPHOST_INVALID_ARGUMENT, "fused int8 " + op_name() + " " + name_ + ": operand " +
                                               m_.in[k].value + " has an unexpected type");
      data[k] = t.raw();
      shapes[k] = t.shape();
    }
    const BroadcastWalk w = broadcast_walk(shapes[0], shapes[1], "fused int8 " + op_name() + " " + name_);
    uint8_t* y = static_cast<uint8_t*>(ctx.output_raw(static_cast<size_t>(out_index_), m_.y.type, w.out));
    if (w.inner == 0 || w.outer == 0) return;
    int threads = ctx.threads();
    if (threads <= 0) threads = default_threads_;
    threads = math::effective_threads(threads, adaptive_);
    const int64_t blocks_per_row = (w.inner + kBlock - 1) / kBlock;
    // Grain in blocks of the elements they really hold: a broadcast row (a squeeze-excite scale over
    // a 14x14 plane) makes blocks of 196 elements, not kBlock. Each element is worked in float (two
    // operands and the result) between its quantized bytes.
    const int64_t block_elements = std::min(kBlock, w.inner);
    math::parallel_for(w.outer * blocks_per_row, threads, math::pass_grain(block_elements * 3 * static_cast<int64_t>(sizeof(float))),
                       [&](int64_t b0, int64_t b1) {
      float* a = static_cast<float*>(math::thread_buffer(4, 2 * kBlock * sizeof(float)));
      float* b = a + kBlock;
      for (int64_t blk = b0; blk < b1; ++blk) {
        const int64_t row = blk / blocks_per_row, start = (blk % blocks_per_row) * kBlock;
        const int64_t count = std::min(kBlock, w.inner - start);
        const float* pa = operand_block(0, data[0], w, row, start, count, a);
        const float* pb = operand_block(1, data[1], w, row, start, count, b);
        float* v = a;  // overwritten in place: pa is either a itself or not read again
        combine(pa, w.step[0], pb, w.step[1], v, count);
        quantize(v, y + row * w.inner + start, count);
      }
    });
    math::note_team_end(threads);
  }

 private:
  static constexpr int64_t kBlock = 2048;

  std::string op_name() const { return m_.mul ? "Mul" : "Add"; }

  // Operand k's floats for output elements [start, start + count) of `row`: `count` values (step 1) or
  // one (step 0), dequantized into `buffer` when quantized, else read in place.
  const float* operand_block(int k, const void* data, const BroadcastWalk& w, int64_t row, int64_t start,
                             int64_t count, float* buffer) const {
    const int64_t at = w.row_offset(k, row) + (w.step[k] == 1 ? start : 0);
    const int64_t n = w.step[k] == 1 ? count : 1;
    if (!m_.in[k].quantized) return static_cast<const float*>(data) + at;
    const ScalarQuant& q = m_.in[k].quant;
    if (q.type == EPHOST_ELEMENT_UINT8)
      math::dequantize_linear(static_cast<const uint8_t*>(data) + at, q.scale, static_cast<uint8_t>(q.zero_point),
                              buffer, n);
    else
      math::dequantize_linear(static_cast<const int8_t*>(data) + at, q.scale, static_cast<int8_t>(q.zero_point),
                              buffer, n);
    return buffer;
  }

  // v[i] = a[i * sa] op b[i * sb] (a step of 0 repeats the first value). v may be a.
  void combine(const float* a, int64_t sa, const float* b, int64_t sb, float* v, int64_t n) const {
    if (sa == 1 && sb == 1) {
      if (m_.mul)
        for (int64_t i = 0; i < n; ++i) v[i] = a[i] * b[i];
      else
        for (int64_t i = 0; i < n; ++i) v[i] = a[i] + b[i];
    } else if (sa == 1) {
      const float s = b[0];
      if (m_.mul)
        for (int64_t i = 0; i < n; ++i) v[i] = a[i] * s;
      else
        for (int64_t i = 0; i < n; ++i) v[i] = a[i] + s;
    } else if (sb == 1) {
      const float s = a[0];
      if (m_.mul)
        for (int64_t i = 0; i < n; ++i) v[i] = s * b[i];
      else
        for (int64_t i = 0; i < n; ++i) v[i] = s + b[i];
    } else {
      const float s = m_.mul ? a[0] * b[0] : a[0] + b[0];
      std::fill(v, v + n, s);
    }
  }

  void quantize(const float* v, uint8_t* y, int64_t n) const {
    if (m_.y.type == EPHOST_ELEMENT_UINT8)
      math::quantize_linear(v, m_.y.scale, static_cast<uint8_t>(m_.y.zero_point), y, n);
    else
      math::quantize_linear(v, m_.y.scale, static_cast<int8_t>(m_.y.zero_point), reinterpret_cast<int8_t*>(y), n);
  }

  std::string name_;
  QdqBinaryMatch m_;
  int default_threads_;
  bool adaptive_ = true;
  int index_[2] = {-1, -1};
  int out_index_ = -1;
  std::vector<uint8_t> constant_bytes_[2];  // a constant operand's bytes (quantized, or float)
  Shape constant_shape_[2];
};

class QdqBinaryFusion : public Fusion {
 public:
  const char* name() const override { return "qdq_binary"; }
  std::vector<sdk::Node> match(const sdk::Node& anchor, const Available& ok) const override {
    QdqBinaryMatch m;
    return match_qdq_binary(anchor, ok, &m) ? m.nodes : std::vector<sdk::Node>{};
  }
  std::unique_ptr<sdk::CompiledGroup> compile(const sdk::Node& anchor, const sdk::Graph& group,
                                              const KernelConfig& config) const override {
    // Matching again may take only the group's own nodes: which DequantizeLinear joined it decides
    // what the group reads.
    std::unordered_set<const void*> members;
    for (const sdk::Node& n : group.nodes()) members.insert(n.get());
    QdqBinaryMatch m;
    if (!match_qdq_binary(anchor, [&members](const sdk::Node& n) { return members.count(n.get()) > 0; }, &m))
      sdk::fail(EPHOST_NOT_IMPLEMENTED, "cpu cannot compile fused int8 binary op " + group.name() + ": pattern not found");
    return std::make_unique<QdqBinaryGroup>(m, group, config);
  }
};

}  // namespace

const Fusion& qdq_binary_fusion() {
  static const QdqBinaryFusion f;
  return f;
}

}  // namespace ephost::cpu::fusion
