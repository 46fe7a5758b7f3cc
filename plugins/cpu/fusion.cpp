#include "fusion.h"

#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <unordered_map>

#include "math/broadcast.h"
#include "math/parallel.h"
#include "math/vec.h"

namespace ephost::cpu {

namespace {

enum class StepKind { kRelu, kSigmoid, kHardSwish, kHardSigmoid, kClip, kAdd, kSub, kMul, kDiv };

bool is_float(const sdk::Value& v) { return v.valid() && v.elem_type() == EPHOST_ELEMENT_FLOAT; }

// A scalar float constant (one element, any rank).
bool is_scalar_constant(const sdk::Value& v) {
  return is_float(v) && v.is_constant() && v.constant().size() == 1;
}

// The node's kind when it is a fusable pointwise float node; `binary_dynamic` is set for binary ops
// whose two inputs are both computed (the fused group must produce both).
bool fusable(const sdk::Node& node, StepKind* kind, bool* binary_dynamic) {
  *binary_dynamic = false;
  if (!node.domain().empty() && node.domain() != "ai.onnx") return false;
  if (node.num_outputs() != 1 || !node.has_output(0) || !is_float(node.output(0))) return false;
  if (!node.has_input(0) || !is_float(node.input(0))) return false;
  const std::string op = node.op_type();
  const int64_t opset = node.opset();
  static const std::map<std::string, StepKind> unary = {{"Relu", StepKind::kRelu},
                                                        {"Sigmoid", StepKind::kSigmoid},
                                                        {"HardSwish", StepKind::kHardSwish},
                                                        {"HardSigmoid", StepKind::kHardSigmoid}};
  static const std::map<std::string, StepKind> binary = {
      {"Add", StepKind::kAdd}, {"Sub", StepKind::kSub}, {"Mul", StepKind::kMul}, {"Div", StepKind::kDiv}};
  if (auto it = unary.find(op); it != unary.end()) {
    if (node.num_inputs() != 1 || node.input(0).is_constant()) return false;
    *kind = it->second;
    return true;
  }
  if (op == "Clip") {
    if (node.input(0).is_constant() || node.num_inputs() > 3) return false;
    if (opset >= 11)
      for (size_t i = 1; i < node.num_inputs(); ++i)
        if (node.has_input(i) && !is_scalar_constant(node.input(i))) return false;
    *kind = StepKind::kClip;
    return true;
  }
  if (auto it = binary.find(op); it != binary.end()) {
    if (opset < 7 || node.num_inputs() != 2 || !node.has_input(1) || !is_float(node.input(1))) return false;
    const sdk::Value a = node.input(0), b = node.input(1);
    const bool ca = a.is_constant(), cb = b.is_constant();
    if (ca && cb) return false;
    if ((ca && !is_scalar_constant(a)) || (cb && !is_scalar_constant(b))) return false;
    *kind = it->second;
    *binary_dynamic = !ca && !cb;
    return true;
  }
  return false;
}

// ---- the compiled chain -----------------------------------------------------------------------------

struct Operand {
  int value = -1;  // chain value index, or -1 for a scalar
  float scalar = 0.f;
  Shape shape;     // the scalar constant's shape (it may raise the rank)
};

struct Step {
  StepKind kind;
  Operand a, b;
  float p0 = 0.f, p1 = 0.f;
  int out = 0;
};

class ChainGroup : public sdk::CompiledGroup {
 public:
  ChainGroup(const sdk::Graph& group, const std::string& name, const KernelConfig& config)
      : name_(name), default_threads_(config.default_threads), adaptive_(config.adaptive_threads) {
    std::unordered_map<std::string, int> index;  // value name -> chain value
    for (size_t i = 0; i < group.num_inputs(); ++i) {
      const sdk::Value v = group.input(i);
      if (v.is_constant()) continue;
      if (input_ >= 0) unsupported("more than one computed input");
      input_ = static_cast<int>(i);
      index[v.name()] = 0;
    }
    if (input_ < 0) unsupported("no computed input");
    int values = 1;
    for (const sdk::Node& node : group.nodes()) {
      StepKind kind;
      bool dynamic = false;
      if (!fusable(node, &kind, &dynamic)) unsupported(node.op_type() + " node '" + node.name() + "'");
      Step step;
      step.kind = kind;
      auto operand = [&](const sdk::Value& v) {
        Operand o;
        if (v.is_constant()) {
          const sdk::Tensor t = v.constant();
          o.scalar = t.data<float>()[0];
          o.shape = t.shape();
          return o;
        }
        auto it = index.find(v.name());
        if (it == index.end()) unsupported("value '" + v.name() + "' computed outside the chain");
        o.value = it->second;
        return o;
      };
      step.a = operand(node.input(0));
      if (kind >= StepKind::kAdd) step.b = operand(node.input(1));
      if (kind == StepKind::kHardSigmoid) {
        step.p0 = node.attr_float("alpha", 0.2f);
        step.p1 = node.attr_float("beta", 0.5f);
      } else if (kind == StepKind::kClip) {
        step.p0 = std::numeric_limits<float>::lowest();
        step.p1 = std::numeric_limits<float>::max();
        if (node.opset() < 11) {
          step.p0 = node.attr_float("min", -std::numeric_limits<float>::max());
          step.p1 = node.attr_float("max", std::numeric_limits<float>::max());
        } else {
          if (node.has_input(1)) step.p0 = node.input(1).constant().data<float>()[0];
          if (node.has_input(2)) step.p1 = node.input(2).constant().data<float>()[0];
        }
      }
      step.out = values++;
      index[node.output(0).name()] = step.out;
      steps_.push_back(std::move(step));
    }
    values_ = values;
    for (size_t i = 0; i < group.num_outputs(); ++i) {
      auto it = index.find(group.output(i).name());
      if (it == index.end() || it->second == 0) unsupported("output '" + group.output(i).name() + "'");
      outputs_.push_back(it->second);
    }
  }

  void compute(void*, sdk::KernelContext& ctx) override {
    const sdk::Tensor x = ctx.input(static_cast<size_t>(input_));
    if (!x.present() || x.elem_type() != EPHOST_ELEMENT_FLOAT)
      sdk::fail(EPHOST_INVALID_ARGUMENT, "fused chain " + name_ + ": input must be float");
    std::vector<Shape> shapes(values_);
    shapes[0] = x.shape();
    const int64_t n = math::numel(shapes[0]);
    try {
      for (const Step& s : steps_) {
        const Shape& sa = s.a.value >= 0 ? shapes[s.a.value] : s.a.shape;
        if (s.kind < StepKind::kAdd) {
          shapes[s.out] = sa;
        } else {
          const Shape& sb = s.b.value >= 0 ? shapes[s.b.value] : s.b.shape;
          shapes[s.out] = math::broadcast_shapes(sa, sb);
        }
        if (math::numel(shapes[s.out]) != n) math::invalid("shapes change the element count");
      }
    } catch (const std::invalid_argument& e) {
      sdk::fail(EPHOST_INVALID_ARGUMENT, "fused chain " + name_ + ": " + e.what());
    }
    std::vector<float*> out(values_, nullptr);
    for (size_t i = 0; i < outputs_.size(); ++i) out[outputs_[i]] = ctx.output<float>(i, shapes[outputs_[i]]);
    if (n == 0) return;
    int threads = ctx.threads();
    if (threads <= 0) threads = default_threads_;
    threads = math::effective_threads(threads, adaptive_);
    const float* px = x.data<float>();
    const int64_t blocks = (n + kBlock - 1) / kBlock;
    // Each block reads the input and writes or reads a float value per step.
    math::parallel_for(blocks, threads, math::pass_grain(kBlock * static_cast<int64_t>(sizeof(float)) * static_cast<int64_t>(1 + steps_.size())),
                       [&](int64_t b0, int64_t b1) { run_blocks(px, out, n, b0, b1); });
    math::note_team_end(threads);
  }

 private:
  static constexpr int64_t kBlock = 1024;  // 4 KiB per value: a chain's working set stays in L1/L2

  [[noreturn]] void unsupported(const std::string& what) const {
    sdk::fail(EPHOST_NOT_IMPLEMENTED, "cpu cannot compile fused chain " + name_ + ": " + what);
  }

  void run_blocks(const float* x, const std::vector<float*>& out, int64_t n, int64_t b0, int64_t b1) const {
    thread_local std::vector<float> scratch;
    if (scratch.size() < static_cast<size_t>(values_ * kBlock)) scratch.resize(static_cast<size_t>(values_ * kBlock));
    std::vector<const float*> in(values_);
    for (int64_t blk = b0; blk < b1; ++blk) {
      const int64_t start = blk * kBlock, len = std::min(kBlock, n - start);
      in[0] = x + start;
      for (const Step& s : steps_) {
        float* o = out[s.out] ? out[s.out] + start : scratch.data() + s.out * kBlock;
        const float* a = s.a.value >= 0 ? in[s.a.value] : &s.a.scalar;
        switch (s.kind) {
          case StepKind::kRelu: math::relu_f32(a, o, len); break;
          case StepKind::kSigmoid: math::sigmoid_f32(a, o, len); break;
          case StepKind::kHardSwish: math::hard_swish_f32(a, o, len); break;
          case StepKind::kHardSigmoid: math::hard_sigmoid_f32(a, s.p0, s.p1, o, len); break;
          case StepKind::kClip: math::clip_f32(a, s.p0, s.p1, o, len); break;
          default: {
            const float* b = s.b.value >= 0 ? in[s.b.value] : &s.b.scalar;
            static constexpr math::BinOp kOps[] = {math::BinOp::kAdd, math::BinOp::kSub, math::BinOp::kMul,
                                                   math::BinOp::kDiv};
            math::binary_f32(kOps[static_cast<int>(s.kind) - static_cast<int>(StepKind::kAdd)], a, s.a.value >= 0,
                             b, s.b.value >= 0, o, len);
          }
        }
        in[s.out] = o;
      }
    }
  }

  std::string name_;
  int default_threads_;
  bool adaptive_ = true;
  int input_ = -1;
  int values_ = 1;
  std::vector<Step> steps_;
  std::vector<int> outputs_;
};

}  // namespace

std::vector<std::vector<sdk::Node>> find_elementwise_chains(const sdk::Graph& graph,
                                                           const std::function<bool(const sdk::Node&)>& skip) {
  const sdk::NodeDependencies dependencies(graph);
  const std::vector<sdk::Node>& nodes = dependencies.nodes();
  const size_t n = nodes.size();
  std::map<size_t, size_t> position;
  for (size_t i = 0; i < n; ++i) position[nodes[i].id()] = i;
  std::vector<bool> eligible(n, false), dynamic(n, false);
  for (size_t i = 0; i < n; ++i) {
    StepKind kind;
    bool d = false;
    try {
      eligible[i] = !(skip && skip(nodes[i])) && fusable(nodes[i], &kind, &d);
    } catch (const std::exception&) {
      eligible[i] = false;
    }
    dynamic[i] = d;
  }
  // Producer position of each node's computed inputs (-1: from outside this graph's nodes).
  std::vector<std::vector<long>> producers(n);
  for (size_t i = 0; i < n; ++i) {
    if (!eligible[i]) continue;
    for (size_t k = 0; k < nodes[i].num_inputs(); ++k) {
      if (!nodes[i].has_input(k)) continue;
      const sdk::Value v = nodes[i].input(k);
      if (v.is_constant()) continue;
      const sdk::Node p = v.producer();
      long pos = -1;
      if (p.valid()) {
        auto it = position.find(p.id());
        if (it != position.end()) pos = static_cast<long>(it->second);
      }
      producers[i].push_back(pos);
    }
  }
  // Group eligible neighbours (groups that form no cycle; root: a group's first node); a binary node over
  // two computed values stays only while both come from its own group (so that every group has exactly
  // one computed input from outside).
  std::vector<size_t> root(n);
  for (bool changed = true; changed;) {
    changed = false;
    for (const auto& group : sdk::acyclic_groups(dependencies, eligible))
      for (size_t m : group) root[m] = group.front();
    for (size_t i = 0; i < n; ++i) {
      if (!eligible[i] || !dynamic[i]) continue;
      for (long p : producers[i])
        if (p < 0 || !eligible[p] || root[p] != root[i]) {
          eligible[i] = false;
          changed = true;
          break;
        }
    }
  }
  std::map<size_t, std::vector<size_t>> groups;  // root -> members in node order
  for (size_t i = 0; i < n; ++i)
    if (eligible[i]) groups[root[i]].push_back(i);
  std::vector<std::pair<size_t, std::vector<sdk::Node>>> chains;
  for (const auto& [r, members] : groups) {
    if (members.size() < 2) continue;
    // Exactly one computed value may enter the group.
    std::set<std::string> entering;
    for (size_t m : members)
      for (size_t k = 0; k < nodes[m].num_inputs(); ++k) {
        if (!nodes[m].has_input(k)) continue;
        const sdk::Value v = nodes[m].input(k);
        if (v.is_constant()) continue;
        const sdk::Node p = v.producer();
        bool inside = false;
        if (p.valid()) {
          auto it = position.find(p.id());
          inside = it != position.end() && eligible[it->second] && root[it->second] == r;
        }
        if (!inside) entering.insert(v.name());
      }
    if (entering.size() != 1) continue;
    std::vector<sdk::Node> chain;
    for (size_t m : members) chain.push_back(nodes[m]);
    chains.emplace_back(members.front(), std::move(chain));
  }
  std::sort(chains.begin(), chains.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::vector<sdk::Node>> out;
  for (auto& c : chains) out.push_back(std::move(c.second));
  return out;
}

std::unique_ptr<sdk::CompiledGroup> compile_elementwise_chain(const sdk::Graph& group, const std::string& name,
                                                              const KernelConfig& config) {
  return std::make_unique<ChainGroup>(group, name, config);
}

}  // namespace ephost::cpu
