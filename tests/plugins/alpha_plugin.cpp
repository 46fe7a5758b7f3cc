// Test plugin "alpha" (priority 100): claims every float32 Add and Mul node as a single node and runs
// it with a broadcasting kernel. Provider option `claim`: "all" (default) or "none".
#include <memory>

#include "elementwise.hpp"
#include "ephost/sdk/plugin.hpp"

namespace {

using namespace ephost::sdk;
using ephost_test::BinaryOp;

class BinaryKernel : public Kernel {
 public:
  explicit BinaryKernel(BinaryOp op) : op_(op) {}
  void compute(KernelContext& ctx) override {
    Tensor a = ctx.input(0), b = ctx.input(1);
    const float* pa = ephost_test::float_data(a, "input A");
    const float* pb = ephost_test::float_data(b, "input B");
    std::vector<int64_t> shape = ephost_test::broadcast_shape(a.shape(), b.shape());
    float* out = ctx.output<float>(0, shape);
    ephost_test::broadcast_binary(op_, pa, a.shape(), pb, b.shape(), out, shape);
  }

 private:
  BinaryOp op_;
};

class AlphaProvider : public Provider {
 public:
  explicit AlphaProvider(bool claim) : claim_(claim) {}
  void get_capability(const Graph& graph, Capability& capability) override {
    if (!claim_) return;
    for (const Node& node : graph.nodes()) {
      std::string op = node.op_type();
      if ((op == "Add" || op == "Mul") && ephost_test::is_float_node(node, 2)) capability.add_node(node);
    }
  }
  std::unique_ptr<Kernel> create_kernel(const Node& node) override {
    std::string op = node.op_type();
    if (op == "Add") return std::make_unique<BinaryKernel>(BinaryOp::kAdd);
    if (op == "Mul") return std::make_unique<BinaryKernel>(BinaryOp::kMul);
    fail(EPHOST_NOT_IMPLEMENTED, "alpha has no kernel for " + op + " node '" + node.name() + "'");
  }

 private:
  bool claim_;
};

struct AlphaDescribe {
  Description operator()() const {
    Description d;
    d.name = "alpha";
    d.vendor = "ephost tests";
    d.version = "1.0.0";
    d.device_type = EPHOST_DEVICE_CPU;
    d.context_source_keys = {"ALPHA", "AlphaExecutionProvider"};
    d.sdk_version = "1.0.0";
    d.hardware_architecture = "test-arch";
    d.default_priority = 100;
    return d;
  }
};

struct AlphaCreate {
  std::unique_ptr<Provider> operator()(const Options& options) const {
    return std::make_unique<AlphaProvider>(ephost_test::claims_anything(options));
  }
};

}  // namespace

EPHOST_DEFINE_PLUGIN(AlphaDescribe, AlphaCreate)
