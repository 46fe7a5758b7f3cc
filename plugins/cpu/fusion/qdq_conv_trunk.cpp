#include "qdq_conv_trunk.h"

#include <algorithm>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "convex_groups.h"
#include "graph_match.h"
#include "math/transpose_images.h"
#include "qdq_conv_chain.h"

namespace ephost::cpu::fusion {

std::vector<std::vector<size_t>> find_int8_trunks(const sdk::Graph& graph,
                                                  const std::vector<std::vector<sdk::Node>>& chains) {
  const std::vector<sdk::Node> nodes = graph.nodes();
  std::unordered_map<const EphostNode*, int> chain_of;
  for (size_t c = 0; c < chains.size(); ++c)
    for (const sdk::Node& n : chains[c]) chain_of[n.get()] = static_cast<int>(c);
  std::vector<int> group(nodes.size(), -1);
  for (size_t i = 0; i < nodes.size(); ++i)
    if (auto it = chain_of.find(nodes[i].get()); it != chain_of.end()) group[i] = it->second;
  // Every edge between two chains carries a value the trunk keeps inside: a chain's output bytes
  // (read by the DequantizeLinear the next chain holds) or the float output of a DequantizeLinear one
  // chain holds (read by another's Conv or residual Add).
  merge_convex_neighbours(nodes, group);
  std::vector<std::vector<size_t>> members(chains.size());
  std::unordered_set<int> seen;
  for (size_t c = 0; c < chains.size(); ++c) {
    if (chains[c].empty()) continue;
    auto it = std::find_if(nodes.begin(), nodes.end(), [&](const sdk::Node& n) { return n.get() == chains[c][0].get(); });
    if (it == nodes.end()) continue;
    const int g = group[static_cast<size_t>(it - nodes.begin())];
    if (g >= 0) members[static_cast<size_t>(g)].push_back(c);
  }
  std::vector<std::vector<size_t>> trunks;
  for (std::vector<size_t>& m : members)
    if (m.size() >= 2) trunks.push_back(std::move(m));
  return trunks;
}

#if defined(EPHOST_WITH_DNNL)

namespace {

// A value of the trunk that its chains read or make, by name.
struct TrunkValue {
  std::string name;
  int producer = -1;      // the chain (by run position) that makes it; -1: a group input
  int group_input = -1;   // when it comes from outside
  int group_output = -1;  // when it leaves the trunk
  // The float output of a DequantizeLinear a chain holds: DQ(value `of`) with `quant`, never made
  // inside (its readers take the bytes of `of`).
  bool dequantized = false;
  int of = -1;
  ScalarQuant quant;
  int last_reader = -1;  // the last chain (by run position) that reads it, or its bytes for a dequantized one
};

struct TrunkChain {
  std::unique_ptr<QdqConvChainRunner> chain;
  int x = -1, b = -1, y = -1, x_float = -1;  // values
};

// Where a run keeps a value: its bytes (NHWC in the arena for a value made inside and read inside,
// else the group's NCHW tensor), their type and dims.
struct Placed {
  const void* data = nullptr;
  int32_t type = 0;
  bool nhwc = false;
  Shape shape;
  int64_t offset = -1;  // in the arena
};

class Int8TrunkGroup : public sdk::CompiledGroup {
 public:
  Int8TrunkGroup(const sdk::Graph& group, const KernelConfig& config) : name_(group.name()), config_(config) {
    split_into_chains(group);
    define_values(group);
    order_chains();
    plan_at_compile(group);
  }

  void compute(void*, sdk::KernelContext& ctx) override {
    const int threads = group_threads(ctx, config_);
    std::vector<Placed> placed(values_.size());
    for (size_t v = 0; v < values_.size(); ++v) {
      if (values_[v].group_input < 0) continue;
      const sdk::Tensor t = ctx.input(static_cast<size_t>(values_[v].group_input));
      if (!t.present()) chains_.front().chain->fail("the trunk's input " + values_[v].name + " is missing");
      placed[v] = Placed{t.raw(), t.elem_type(), false, t.shape()};
    }
    int64_t arena_bytes = 0;
    if (!place(placed, &arena_bytes)) {
      // An empty tensor: the outputs are empty too.
      for (size_t v = 0; v < values_.size(); ++v)
        if (values_[v].group_output >= 0)
          ctx.output_raw(static_cast<size_t>(values_[v].group_output),
                         values_[v].dequantized
                             ? EPHOST_ELEMENT_FLOAT
                             : chains_[static_cast<size_t>(values_[v].producer)].chain->interface().y_type,
                         placed[v].shape);
      return;
    }
    uint8_t* arena = static_cast<uint8_t*>(math::thread_buffer(kTrunkArenaSlot, static_cast<size_t>(arena_bytes)));
    sdk::SpanTimer spans(ctx);
    for (const TrunkChain& c : chains_) {
      const ChainInterface& f = c.chain->interface();
      if (c.x_float >= 0 && values_[c.x_float].group_output >= 0) hand_out_dequantized(c.x_float, placed, ctx, threads);
      const ChainOperand x = operand(c.x, f.x_quant, placed);
      ChainOperand b;
      if (c.b >= 0) b = operand(c.b, f.b_quant, placed);
      Placed& y = placed[static_cast<size_t>(c.y)];
      const TrunkValue& yv = values_[static_cast<size_t>(c.y)];
      void* out = nullptr;
      if (y.offset >= 0) {
        out = arena + y.offset;
        y.nhwc = true;
      } else {
        out = ctx.output_raw(static_cast<size_t>(yv.group_output), f.y_type, y.shape);
      }
      y.data = out;
      y.type = f.y_type;
      c.chain->run(x, c.b >= 0 ? &b : nullptr, out, y.nhwc, threads, spans);
      if (y.offset >= 0 && yv.group_output >= 0) {
        void* nchw = ctx.output_raw(static_cast<size_t>(yv.group_output), f.y_type, y.shape);
        math::transpose_images(static_cast<const uint8_t*>(out), static_cast<uint8_t*>(nchw), y.shape[0],
                               y.shape[2] * y.shape[3], y.shape[1], threads);
      }
    }
  }

 private:
  // The group's nodes as the chains the qdq_conv pattern claimed, found again in the same order on
  // the same nodes (so the same chains).
  void split_into_chains(const sdk::Graph& group) {
    std::unordered_set<std::string> members, taken;
    for (const sdk::Node& n : group.nodes())
      if (n.num_outputs() > 0 && n.has_output(0)) members.insert(n.output(0).name());
    const Available ok = [&](const sdk::Node& n) {
      if (n.num_outputs() == 0 || !n.has_output(0)) return false;
      const std::string name = n.output(0).name();
      return members.count(name) != 0 && taken.count(name) == 0;
    };
    for (const sdk::Node& n : group.nodes()) {
      if (!ok(n) || n.op_type() != "Conv") continue;
      std::unique_ptr<QdqConvChainRunner> chain = QdqConvChainRunner::match(n, ok);
      if (!chain) continue;
      for (const sdk::Node& m : chain->interface().nodes) taken.insert(m.output(0).name());
      chain->compile(name_, config_);
      chains_.push_back(TrunkChain{std::move(chain)});
    }
    if (taken.size() != members.size() || chains_.empty())
      unsupported("its nodes are not the int8 convolution chains it was claimed as");
  }

  int value(const std::string& name) {
    auto it = index_.find(name);
    if (it != index_.end()) return it->second;
    values_.emplace_back();
    values_.back().name = name;
    index_[name] = static_cast<int>(values_.size() - 1);
    return static_cast<int>(values_.size() - 1);
  }

  // The values the chains make first (so that a chain may read one a later chain defines: the float
  // output of a DequantizeLinear that chain holds), then what each reads.
  void define_values(const sdk::Graph& group) {
    for (size_t i = 0; i < chains_.size(); ++i) {
      TrunkChain& c = chains_[i];
      const ChainInterface& f = c.chain->interface();
      c.y = value(f.y);
      values_[static_cast<size_t>(c.y)].producer = static_cast<int>(i);
    }
    for (TrunkChain& c : chains_) {
      const ChainInterface& f = c.chain->interface();
      if (f.x_float.empty()) continue;
      const int of = value(f.x);
      c.x_float = value(f.x_float);
      TrunkValue& d = values_[static_cast<size_t>(c.x_float)];
      d.dequantized = true;
      d.of = of;
      d.quant = f.x_quant;
    }
    for (TrunkChain& c : chains_) {
      const ChainInterface& f = c.chain->interface();
      c.x = value(f.x);
      if (f.has_residual && !f.b_is_x) c.b = value(f.b);
      if (f.has_residual && f.b_is_x) c.b = c.x;
    }
    for (TrunkValue& v : values_) {
      v.group_output = group_output(group, v.name);
      const bool made = v.producer >= 0 || v.dequantized;
      if (!made) {
        v.group_input = group_input(group, v.name);
        if (v.group_input < 0) unsupported("it reads " + v.name + ", which it neither makes nor takes in");
      }
    }
    for (size_t o = 0; o < group.num_outputs(); ++o) {
      auto it = index_.find(group.output(o).name());
      if (it == index_.end() || values_[static_cast<size_t>(it->second)].group_output < 0)
        unsupported("it hands out " + group.output(o).name() + ", which no chain makes");
    }
  }

  // The chains in an order where each runs after the chains making what it reads (the bytes under a
  // dequantized value included), and the last reader of every value.
  void order_chains() {
    auto source = [&](int v) {
      const TrunkValue& tv = values_[static_cast<size_t>(v)];
      return tv.dequantized ? tv.of : v;
    };
    std::vector<TrunkChain> ordered;
    std::vector<bool> done(chains_.size(), false), ready(values_.size(), false);
    for (size_t v = 0; v < values_.size(); ++v) ready[v] = values_[v].producer < 0;
    while (ordered.size() < chains_.size()) {
      bool progressed = false;
      for (size_t i = 0; i < chains_.size(); ++i) {
        if (done[i]) continue;
        TrunkChain& c = chains_[i];
        if (!ready[static_cast<size_t>(source(c.x))] || (c.b >= 0 && !ready[static_cast<size_t>(source(c.b))])) continue;
        done[i] = true;
        ready[static_cast<size_t>(c.y)] = true;
        progressed = true;
        ordered.push_back(std::move(c));
        break;
      }
      if (!progressed) unsupported("its chains read each other's values in a cycle");
    }
    chains_ = std::move(ordered);
    for (size_t i = 0; i < chains_.size(); ++i) {
      TrunkChain& c = chains_[i];
      values_[static_cast<size_t>(c.y)].producer = static_cast<int>(i);
      for (int v : {c.x, c.b}) {
        if (v < 0) continue;
        values_[static_cast<size_t>(source(v))].last_reader = static_cast<int>(i);
      }
    }
  }

  // Each value's dims for input dims already in `placed`, and where it lives: a value made inside and
  // read inside gets arena bytes, first fit over the values' lifetimes [maker, last reader]. False
  // (no places) when a tensor is empty.
  bool place(std::vector<Placed>& placed, int64_t* arena_bytes) const {
    bool empty = false;
    for (const TrunkChain& c : chains_) {
      const TrunkValue& xv = values_[static_cast<size_t>(c.x)];
      const Shape& x_shape = placed[static_cast<size_t>(xv.dequantized ? xv.of : c.x)].shape;
      Placed& y = placed[static_cast<size_t>(c.y)];
      y.shape = c.chain->output_shape(x_shape);
      empty = empty || math::numel(x_shape) == 0 || math::numel(y.shape) == 0;
    }
    for (size_t v = 0; v < values_.size(); ++v)
      if (values_[v].dequantized) placed[v].shape = placed[static_cast<size_t>(values_[v].of)].shape;
    if (empty) return false;
    struct Block {
      int64_t offset, size;
      int until;
    };
    std::vector<Block> live;
    int64_t arena = 0;
    for (size_t i = 0; i < chains_.size(); ++i) {
      const TrunkChain& c = chains_[i];
      Placed& y = placed[static_cast<size_t>(c.y)];
      y.offset = -1;
      y.nhwc = false;
      const TrunkValue& yv = values_[static_cast<size_t>(c.y)];
      if (yv.last_reader < 0 && yv.group_output >= 0) continue;  // straight into the group's output
      const int from = static_cast<int>(i);
      live.erase(std::remove_if(live.begin(), live.end(), [&](const Block& b) { return b.until < from; }), live.end());
      std::sort(live.begin(), live.end(), [](const Block& a, const Block& b) { return a.offset < b.offset; });
      const int64_t size = (math::numel(y.shape) + 63) / 64 * 64;
      int64_t offset = 0;
      for (const Block& b : live) {
        if (b.offset - offset >= size) break;
        offset = std::max(offset, b.offset + b.size);
      }
      live.push_back({offset, size, std::max(yv.last_reader, from)});
      y.offset = offset;
      arena = std::max(arena, offset + size);
    }
    *arena_bytes = std::max<int64_t>(arena, 1);
    return true;
  }

  // What a chain reads for value v (its bytes in `quant`, or floats): a dequantized value as the bytes
  // under it.
  ChainOperand operand(int v, const ScalarQuant& quant, const std::vector<Placed>& placed) const {
    const TrunkValue& tv = values_[static_cast<size_t>(v)];
    ScalarQuant q = tv.dequantized ? tv.quant : quant;
    const Placed& p = placed[static_cast<size_t>(tv.dequantized ? tv.of : v)];
    if (p.type != EPHOST_ELEMENT_FLOAT) q.type = p.type;
    return ChainOperand{p.data, p.type, q, p.nhwc, p.shape};
  }

  // A dequantized value read outside the trunk: DQ of its bytes, into the group's NCHW output.
  void hand_out_dequantized(int v, const std::vector<Placed>& placed, sdk::KernelContext& ctx, int threads) const {
    const TrunkValue& tv = values_[static_cast<size_t>(v)];
    const Placed& p = placed[static_cast<size_t>(tv.of)];
    if (p.type == EPHOST_ELEMENT_FLOAT) chains_.front().chain->fail(tv.name + " is not dequantized from bytes");
    float* out =
        static_cast<float*>(ctx.output_raw(static_cast<size_t>(tv.group_output), EPHOST_ELEMENT_FLOAT, p.shape));
    const int64_t n = math::numel(p.shape);
    const void* bytes = p.data;
    if (p.nhwc) {
      void* nchw = math::thread_buffer(0, static_cast<size_t>(n));
      math::transpose_images(static_cast<const uint8_t*>(p.data), static_cast<uint8_t*>(nchw), p.shape[0],
                             p.shape[2] * p.shape[3], p.shape[1], threads);
      bytes = nchw;
    }
    ScalarQuant q = tv.quant;
    q.type = p.type;
    dequantize_bytes(bytes, q, out, n, threads);
  }

  // With static input dims: every chain's primitives created and this thread's buffers touched now,
  // not at the first run.
  void plan_at_compile(const sdk::Graph& group) {
    std::vector<Placed> placed(values_.size());
    for (size_t v = 0; v < values_.size(); ++v) {
      if (values_[v].group_input < 0) continue;
      const std::vector<int64_t> dims = group.input(static_cast<size_t>(values_[v].group_input)).dims();
      for (int64_t d : dims)
        if (d <= 0) return;
      placed[v].shape = dims;
    }
    for (TrunkChain& c : chains_) {
      const TrunkValue& xv = values_[static_cast<size_t>(c.x)];
      const Shape& x_shape = placed[static_cast<size_t>(xv.dequantized ? xv.of : c.x)].shape;
      const Shape y = x_shape.size() == 4 ? c.chain->plan_at_compile(x_shape) : Shape{};
      if (y.empty()) return;
      placed[static_cast<size_t>(c.y)].shape = y;
    }
    try {
      int64_t arena_bytes = 0;
      if (place(placed, &arena_bytes)) math::touch_thread_buffer(kTrunkArenaSlot, static_cast<size_t>(arena_bytes));
    } catch (const std::exception& e) {
      sdk::log(EPHOST_LOG_VERBOSE, "int8 trunk " + name_ + ": no plan at compile time: " + e.what());
    }
  }

  [[noreturn]] void unsupported(const std::string& why) const {
    sdk::fail(EPHOST_NOT_IMPLEMENTED, "cpu cannot compile int8 trunk " + name_ + ": " + why);
  }

  std::string name_;
  KernelConfig config_;
  std::vector<TrunkChain> chains_;
  std::vector<TrunkValue> values_;
  std::unordered_map<std::string, int> index_;
};

}  // namespace

std::unique_ptr<sdk::CompiledGroup> compile_int8_trunk(const sdk::Graph& group, const KernelConfig& config) {
  return std::make_unique<Int8TrunkGroup>(group, config);
}

#else

std::unique_ptr<sdk::CompiledGroup> compile_int8_trunk(const sdk::Graph& group, const KernelConfig&) {
  sdk::fail(EPHOST_NOT_IMPLEMENTED, "int8 trunk " + group.name() + " needs oneDNN");
}

#endif  // EPHOST_WITH_DNNL

}  // namespace ephost::cpu::fusion
