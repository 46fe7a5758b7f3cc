// Test plugin "beta" (priority 50): claims each maximal connected chain of float32 Mul, Relu and Add
// nodes as one fused group and compiles it into a small interpreter over the group's nodes, with
// broadcasting. Provider option `claim`: "all" (default) or "none". Option `check_cycles`: "1" (default)
// cuts a chain whose fusion would form a cycle into parts that form none (sdk::acyclic_groups); "0"
// claims it whole anyway, so tests can see the host refuse it. Option `rendezvous` (rendezvous.hpp)
// makes concurrent computes observable. Each compiled group keeps a state per session and fails a
// compute handed a state it did not make or has released. It records what the host does to it
// (recording_plugin.hpp).
//
// Variants for the conformance kit (CMakeLists.txt): EPHOST_TEST_BETA_CHECK_CYCLES_DEFAULT="0" claims
// cyclic groups unless told otherwise; EPHOST_TEST_BETA_CONTEXTS caches contexts carelessly: 1 judges
// every blob that starts with its magic OPTIMAL without checking the rest, 2 reads a length field its
// judge never checks is there (and crashes on a short blob). Neither can load a context back.
// EPHOST_TEST_BETA_FAULTS builds "faulty", which crashes, aborts or hangs on demand in one call
// (injected_fault.hpp: options `fault` and `fault_while`), for the provider isolation tests.
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <unordered_map>

#include "elementwise.hpp"
#include "ephost/sdk/plugin.hpp"
#include "injected_fault.hpp"
#include "recording_plugin.hpp"
#include "rendezvous.hpp"

#ifndef EPHOST_TEST_PLUGIN_NAME
#define EPHOST_TEST_PLUGIN_NAME "beta"
#endif

namespace {

using namespace ephost::sdk;

// ---- claiming ---------------------------------------------------------------------------------------

bool is_chain_node(const Node& node) {
  std::string op = node.op_type();
  if (op == "Add" || op == "Mul") return ephost_test::is_float_node(node, 2);
  if (op == "Relu") return ephost_test::is_float_node(node, 1);
  return false;
}

// Connected groups of chain nodes, each in topological order. With `check_cycles`, a group whose fusion
// would form a cycle (a path through another node leaves and re-enters it) is cut into parts that form
// none; without, it is claimed whole.
std::vector<std::vector<Node>> find_chains(const Graph& graph, bool check_cycles) {
  const NodeDependencies dependencies(graph);
  std::vector<bool> chain_nodes(dependencies.size());
  for (size_t i = 0; i < chain_nodes.size(); ++i) chain_nodes[i] = is_chain_node(dependencies.nodes()[i]);
  std::vector<std::vector<Node>> chains;
  for (const auto& group : check_cycles ? acyclic_groups(dependencies, chain_nodes)
                                        : connected_groups(dependencies, chain_nodes))
    chains.push_back(dependencies.nodes_at(group));
  return chains;
}

// ---- the compiled interpreter -----------------------------------------------------------------------

struct FloatTensor {
  std::vector<int64_t> shape;
  std::vector<float> data;
};

// A borrowed float tensor: an input, a constant, or a local buffer.
struct View {
  const float* data = nullptr;
  std::vector<int64_t> shape;
};

struct Step {
  std::string op;
  std::vector<std::string> inputs;
  std::string output;
};

// The states create_state made and release_state has not released yet.
class LiveStates {
 public:
  void* make() {
    char* state = new char(0);  // the interpreter needs no per-session data: a state is its identity
    std::lock_guard<std::mutex> lock(mutex_);
    live_.insert(state);
    return state;
  }
  void check(void* state, const std::string& group) const {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!live_.count(static_cast<char*>(state)))
      fail(EPHOST_EP_FAIL, "beta group " + group + ": compute got a state that create_state did not make or that "
                                                   "release_state released");
  }
  void release(void* state) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (live_.erase(static_cast<char*>(state))) delete static_cast<char*>(state);
  }

 private:
  mutable std::mutex mutex_;
  std::set<char*> live_;
};

class ChainGroup : public CompiledGroup {
 public:
  ChainGroup(const Graph& group, const std::string& fused_name, std::shared_ptr<ephost_test::Rendezvous> rendezvous,
             ephost_test::InjectedFault fault = {})
      : name_(fused_name), rendezvous_(std::move(rendezvous)), fault_(std::move(fault)) {
    for (size_t i = 0; i < group.num_inputs(); ++i) inputs_.push_back(group.input(i).name());
    for (size_t i = 0; i < group.num_outputs(); ++i) outputs_.push_back(group.output(i).name());
    for (const Node& node : group.nodes()) {
      Step step{node.op_type(), {}, node.output(0).name()};
      for (size_t i = 0; i < node.num_inputs(); ++i) {
        Value v = node.input(i);
        step.inputs.push_back(v.name());
        keep_constant(v);
      }
      steps_.push_back(std::move(step));
    }
  }

  void* create_state() override { return states_.make(); }
  void release_state(void* state) override { states_.release(state); }

  void compute(void* state, KernelContext& ctx) override {
    ephost_test::Rendezvous::Visit visit(rendezvous_.get());
    fault_.at("compute");
    states_.check(state, name_);
    std::unordered_map<std::string, View> values;
    std::deque<FloatTensor> locals;  // deque: views into it stay valid as it grows
    for (const auto& [name, tensor] : constants_) values[name] = View{tensor.data.data(), tensor.shape};
    for (size_t i = 0; i < inputs_.size(); ++i) {
      Tensor t = ctx.input(i);
      values[inputs_[i]] = View{ephost_test::float_data(t, "input '" + inputs_[i] + "'"), t.shape()};
    }
    for (const Step& step : steps_) {
      FloatTensor& out = locals.emplace_back();
      run_step(step, values, out);
      values[step.output] = View{out.data.data(), out.shape};
    }
    for (size_t i = 0; i < outputs_.size(); ++i) {
      const View& v = lookup(values, outputs_[i]);
      float* dst = ctx.output<float>(i, v.shape);
      size_t count = static_cast<size_t>(element_count(v.shape));
      if (count) std::memcpy(dst, v.data, count * sizeof(float));
    }
  }

 private:
  // A node input that is a constant initializer outside the group's inputs is copied now.
  void keep_constant(const Value& v) {
    std::string name = v.name();
    if (!v.is_constant() || constants_.count(name)) return;
    for (const auto& in : inputs_)
      if (in == name) return;
    Tensor t = v.constant();
    const float* p = ephost_test::float_data(t, "initializer '" + name + "'");
    constants_[name] = FloatTensor{t.shape(), std::vector<float>(p, p + t.size())};
  }

  const View& lookup(const std::unordered_map<std::string, View>& values, const std::string& name) const {
    auto it = values.find(name);
    if (it == values.end()) fail(EPHOST_EP_FAIL, "beta group " + name_ + ": no value '" + name + "'");
    return it->second;
  }

  void run_step(const Step& step, const std::unordered_map<std::string, View>& values, FloatTensor& out) const {
    if (step.op == "Relu") {
      const View& x = lookup(values, step.inputs[0]);
      out.shape = x.shape;
      out.data.resize(static_cast<size_t>(element_count(x.shape)));
      ephost_test::unary(ephost_test::UnaryOp::kRelu, x.data, static_cast<int64_t>(out.data.size()), out.data.data());
      return;
    }
    const View& a = lookup(values, step.inputs[0]);
    const View& b = lookup(values, step.inputs[1]);
    out.shape = ephost_test::broadcast_shape(a.shape, b.shape);
    out.data.resize(static_cast<size_t>(element_count(out.shape)));
    auto op = step.op == "Add" ? ephost_test::BinaryOp::kAdd : ephost_test::BinaryOp::kMul;
    ephost_test::broadcast_binary(op, a.data, a.shape, b.data, b.shape, out.data.data(), out.shape);
  }

  std::string name_;
  std::shared_ptr<ephost_test::Rendezvous> rendezvous_;
  ephost_test::InjectedFault fault_;
  LiveStates states_;
  std::vector<std::string> inputs_, outputs_;
  std::map<std::string, FloatTensor> constants_;
  std::vector<Step> steps_;
};

#if defined(EPHOST_TEST_BETA_CONTEXTS)
using BetaBase = ContextProvider;
#else
using BetaBase = Provider;
#endif

class BetaProvider : public BetaBase {
 public:
  BetaProvider(bool claim, bool check_cycles, std::shared_ptr<ephost_test::Rendezvous> rendezvous,
               ephost_test::InjectedFault fault)
      : claim_(claim), check_cycles_(check_cycles), rendezvous_(std::move(rendezvous)), fault_(std::move(fault)) {}
  void get_capability(const Graph& graph, Capability& capability) override {
    fault_.at("get_capability");
    if (!claim_) return;
    for (const auto& chain : find_chains(graph, check_cycles_)) capability.add_fused_group(chain);
  }
  std::unique_ptr<CompiledGroup> compile(const Graph& group, const std::string& fused_name) override {
    fault_.at("compile");
    // Element types are checked at run time; here only that every node is one the interpreter knows.
    for (const Node& node : group.nodes()) {
      std::string op = node.op_type();
      size_t arity = op == "Relu" ? 1 : 2;
      if ((op != "Add" && op != "Mul" && op != "Relu") || node.num_inputs() != arity || !node.has_output(0))
        fail(EPHOST_NOT_IMPLEMENTED, "beta cannot compile " + node.op_type() + " node '" + node.name() + "'");
    }
    return std::make_unique<ChainGroup>(group, fused_name, rendezvous_, fault_);
  }
#if defined(EPHOST_TEST_BETA_CONTEXTS)
  void emit_context(const std::string& fused_name, ContextSink& sink) override {
    const std::string blob = "BETA" + fused_name;
    sink.append(blob.data(), blob.size());
  }
  ContextJudgement judge_context(const Node&, const uint8_t* blob, size_t size) override {
#if EPHOST_TEST_BETA_CONTEXTS == 2
    if (size < 8) {
      const volatile uint32_t* length_field = nullptr;  // "where the header would be"
      if (*length_field == 0) return ContextJudgement::unsupported("empty");
    }
#endif
    if (size >= 4 && std::memcmp(blob, "BETA", 4) == 0) return ContextJudgement::optimal();
    return ContextJudgement::not_mine("no BETA magic");
  }
  std::unique_ptr<CompiledGroup> load_context(const Node& node, const uint8_t*, size_t) override {
    fail(EPHOST_NOT_IMPLEMENTED, "beta cannot load context '" + node.name() + "'");
  }
#endif

 private:
  bool claim_;
  bool check_cycles_;
  std::shared_ptr<ephost_test::Rendezvous> rendezvous_;  // shared by the provider's groups
  ephost_test::InjectedFault fault_;
};

struct BetaDescribe {
  Description operator()() const {
    Description d;
    d.name = EPHOST_TEST_PLUGIN_NAME;
    d.vendor = "ephost tests";
    d.version = "1.0.0";
    d.device_type = EPHOST_DEVICE_CPU;
    d.context_source_keys = {"BETA", "BetaExecutionProvider"};
    d.sdk_version = "1.0.0";
    d.hardware_architecture = "test-arch";
    d.default_priority = 50;
    return d;
  }
};

#ifndef EPHOST_TEST_BETA_CHECK_CYCLES_DEFAULT
#define EPHOST_TEST_BETA_CHECK_CYCLES_DEFAULT "1"
#endif

#if defined(EPHOST_TEST_BETA_FAULTS)
__attribute__((constructor)) void crash_at_load() { ephost_test::crash_at_load_in_named_process(); }
#endif

struct BetaCreate {
  std::unique_ptr<BetaProvider> operator()(const Options& options) const {
    std::string check = option(options, "check_cycles", EPHOST_TEST_BETA_CHECK_CYCLES_DEFAULT);
    if (check != "0" && check != "1") fail(EPHOST_INVALID_ARGUMENT, "option check_cycles must be 0 or 1, got '" + check + "'");
#if defined(EPHOST_TEST_BETA_FAULTS)
    ephost_test::InjectedFault fault(options);
    fault.at("provider_create");
#else
    ephost_test::InjectedFault fault;
#endif
    return std::make_unique<BetaProvider>(ephost_test::claims_anything(options), check == "1",
                                          ephost_test::rendezvous_option(options), std::move(fault));
  }
};

}  // namespace

EPHOST_TEST_RECORDING_PLUGIN(EPHOST_TEST_PLUGIN_NAME, BetaDescribe, BetaCreate)
