// Test plugin "alpha" (priority 100): claims every float32 Add and Mul node as a single node and runs
// it with a broadcasting kernel. Provider option `claim`: "all" (default) or "none". Option `misbehave`
// injects faults so tests can see how the host reports them: "fail_compute" (the kernel returns an
// error), "skip_output" (the kernel returns success without writing its output), "fail_capability"
// (get_capability fails), "fail_create_kernel" (kernel creation fails), "fail_run_start" (on_run_start
// fails); default "none". Option `identity`: "1" claims every Identity node too, whatever the type of its
// value (a sequence, a string tensor), though its kernel copies float tensors only: what a provider host
// process can and cannot take is then up to the host. Option `rendezvous` (rendezvous.hpp) makes concurrent computes observable.
// It records what the host does to it (recording_plugin.hpp). Variants built from this file (ABI 1 only)
// set their own EPHOST_TEST_PLUGIN_NAME (CMakeLists.txt). EPHOST_TEST_ALPHA_WRONG_MUL builds the variant
// that adds where it should multiply: the conformance kit's numerical section must catch it.
#include <algorithm>
#include <memory>

#include "elementwise.hpp"
#include "ephost/sdk/plugin.hpp"
#include "recording_plugin.hpp"
#include "rendezvous.hpp"

#ifndef EPHOST_TEST_PLUGIN_NAME
#define EPHOST_TEST_PLUGIN_NAME "alpha"
#endif

namespace {

using namespace ephost::sdk;
using ephost_test::BinaryOp;
using ephost_test::Rendezvous;

class BinaryKernel : public Kernel {
 public:
  BinaryKernel(BinaryOp op, std::string misbehave, std::shared_ptr<Rendezvous> rendezvous)
      : op_(op), misbehave_(std::move(misbehave)), rendezvous_(std::move(rendezvous)) {}
  void compute(KernelContext& ctx) override {
    Rendezvous::Visit visit(rendezvous_.get());
    if (misbehave_ == "fail_compute") fail(EPHOST_EP_FAIL, "alpha: injected compute failure");
    if (misbehave_ == "skip_output") return;
    Tensor a = ctx.input(0), b = ctx.input(1);
    const float* pa = ephost_test::float_data(a, "input A");
    const float* pb = ephost_test::float_data(b, "input B");
    std::vector<int64_t> shape = ephost_test::broadcast_shape(a.shape(), b.shape());
    float* out = ctx.output<float>(0, shape);
    ephost_test::broadcast_binary(op_, pa, a.shape(), pb, b.shape(), out, shape);
  }

 private:
  BinaryOp op_;
  std::string misbehave_;
  std::shared_ptr<Rendezvous> rendezvous_;  // shared by the provider's kernels
};

// Identity of a float tensor (alpha claims Identity of any value with option `identity`).
class IdentityKernel : public Kernel {
 public:
  void compute(KernelContext& ctx) override {
    Tensor a = ctx.input(0);
    const float* in = ephost_test::float_data(a, "input");
    float* out = ctx.output<float>(0, a.shape());
    std::copy(in, in + a.size(), out);
  }
};

class AlphaProvider : public Provider {
 public:
  AlphaProvider(bool claim, std::string misbehave, std::shared_ptr<Rendezvous> rendezvous, bool identity)
      : claim_(claim), misbehave_(std::move(misbehave)), rendezvous_(std::move(rendezvous)), identity_(identity) {}
  void get_capability(const Graph& graph, Capability& capability) override {
    if (misbehave_ == "fail_capability") fail(EPHOST_EP_FAIL, "alpha: injected get_capability failure");
    if (!claim_) return;
    for (const Node& node : graph.nodes()) {
      std::string op = node.op_type();
      if ((op == "Add" || op == "Mul") && ephost_test::is_float_node(node, 2)) capability.add_node(node);
      if (identity_ && op == "Identity" && node.num_inputs() == 1 && node.num_outputs() == 1) capability.add_node(node);
    }
  }
  std::unique_ptr<Kernel> create_kernel(const Node& node) override {
    std::string op = node.op_type();
    if (misbehave_ == "fail_create_kernel") fail(EPHOST_EP_FAIL, "alpha: injected kernel creation failure");
    if (op == "Add") return std::make_unique<BinaryKernel>(BinaryOp::kAdd, misbehave_, rendezvous_);
#if defined(EPHOST_TEST_ALPHA_WRONG_MUL)
    if (op == "Mul") return std::make_unique<BinaryKernel>(BinaryOp::kAdd, misbehave_, rendezvous_);
#else
    if (op == "Mul") return std::make_unique<BinaryKernel>(BinaryOp::kMul, misbehave_, rendezvous_);
#endif
    if (op == "Identity" && identity_) return std::make_unique<IdentityKernel>();
    fail(EPHOST_NOT_IMPLEMENTED, "alpha has no kernel for " + op + " node '" + node.name() + "'");
  }
  void on_run_start() override {
    if (misbehave_ == "fail_run_start") fail(EPHOST_EP_FAIL, "alpha: injected on_run_start failure");
  }

 private:
  bool claim_;
  std::string misbehave_;
  std::shared_ptr<Rendezvous> rendezvous_;
  bool identity_;
};

struct AlphaDescribe {
  Description operator()() const {
    Description d;
    d.name = EPHOST_TEST_PLUGIN_NAME;
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
    std::string misbehave = option(options, "misbehave", "none");
    if (misbehave != "none" && misbehave != "fail_compute" && misbehave != "skip_output" &&
        misbehave != "fail_capability" && misbehave != "fail_create_kernel" && misbehave != "fail_run_start")
      fail(EPHOST_INVALID_ARGUMENT, "alpha: unknown misbehave value '" + misbehave + "'");
    return std::make_unique<AlphaProvider>(ephost_test::claims_anything(options), misbehave,
                                           ephost_test::rendezvous_option(options), option(options, "identity", "0") == "1");
  }
};

}  // namespace

EPHOST_TEST_RECORDING_PLUGIN(EPHOST_TEST_PLUGIN_NAME, AlphaDescribe, AlphaCreate)
