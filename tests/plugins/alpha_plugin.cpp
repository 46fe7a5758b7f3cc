// Test plugin "alpha" (priority 100): claims every float32 Add and Mul node as a single node and runs
// it with a broadcasting kernel. Provider option `claim`: "all" (default) or "none". Option `misbehave`
// injects faults so tests can see how the host reports them: "fail_compute" (the kernel returns an
// error), "skip_output" (the kernel returns success without writing its output), "fail_capability"
// (get_capability fails), "fail_create_kernel" (kernel creation fails), "fail_run_start" (on_run_start
// fails); default "none". Option `identity`: "1" claims every Identity node too, whatever the type of its
// value (a sequence, a string tensor), though its kernel copies float tensors only: what a provider host
// process can and cannot take is then up to the host. Option `rendezvous` (rendezvous.hpp) makes concurrent computes observable.
// Option `pack_constants` (plugin ABI 5, value_initializer_done) has a kernel copy a constant
// initializer input at kernel_create and compute from its copy, saying it is done with the host's
// bytes, well or badly, as a vendor might: "done" (once), "done_twice", "done_on_thread" (from a thread
// of its own), "done_misused" (first tries handles the host must refuse: a NULL or made-up provider, a
// NULL or made-up value; kernel creation fails should the host accept one), "done_then_read" (says done
// and reads the host's bytes in compute all the same), "done_unread" (says done with bytes it never
// asked for and reads them in compute), "done_after_release" (says done from its provider's release,
// after its session ended, and writes the status code it got, or "accepted", to the file named by
// option `pack_log`); default "none".
// It records what the host does to it (recording_plugin.hpp). Variants built from this file (ABI 1 only)
// set their own EPHOST_TEST_PLUGIN_NAME (CMakeLists.txt). EPHOST_TEST_ALPHA_WRONG_MUL builds the variant
// that adds where it should multiply: the conformance kit's numerical section must catch it.
#include <algorithm>
#include <cstdint>
#include <fstream>
#include <memory>
#include <thread>

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

// Input B as a kernel packed it (pack_constants): its own copy of a constant initializer.
struct PackedInput {
  std::vector<float> values;
  std::vector<int64_t> shape;
};

class BinaryKernel : public Kernel {
 public:
  BinaryKernel(BinaryOp op, std::string misbehave, std::shared_ptr<Rendezvous> rendezvous,
               std::shared_ptr<const PackedInput> packed_b = nullptr)
      : op_(op), misbehave_(std::move(misbehave)), rendezvous_(std::move(rendezvous)), packed_b_(std::move(packed_b)) {}
  void compute(KernelContext& ctx) override {
    Rendezvous::Visit visit(rendezvous_.get());
    if (misbehave_ == "fail_compute") fail(EPHOST_EP_FAIL, "alpha: injected compute failure");
    if (misbehave_ == "skip_output") return;
    Tensor a = ctx.input(0);
    const float* pa = ephost_test::float_data(a, "input A");
    std::vector<int64_t> b_shape;
    const float* pb = nullptr;
    Tensor b;
    if (packed_b_) {
      b_shape = packed_b_->shape;
      pb = packed_b_->values.data();
    } else {
      b = ctx.input(1);
      b_shape = b.shape();
      pb = ephost_test::float_data(b, "input B");
    }
    std::vector<int64_t> shape = ephost_test::broadcast_shape(a.shape(), b_shape);
    float* out = ctx.output<float>(0, shape);
    ephost_test::broadcast_binary(op_, pa, a.shape(), pb, b_shape, out, shape);
  }

 private:
  BinaryOp op_;
  std::string misbehave_;
  std::shared_ptr<Rendezvous> rendezvous_;  // shared by the provider's kernels
  std::shared_ptr<const PackedInput> packed_b_;  // null: B is read from the host in compute
};

// The status code of a host call as text ("accepted" for none), the status released.
std::string status_text(EphostStatus* status) {
  if (!status) return "accepted";
  const EphostStatusCode code = host().status_code(status);
  host().status_release(status);
  return std::to_string(static_cast<int>(code));
}

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
  AlphaProvider(bool claim, std::string misbehave, std::shared_ptr<Rendezvous> rendezvous, bool identity,
                std::string pack, std::string pack_log)
      : claim_(claim), misbehave_(std::move(misbehave)), rendezvous_(std::move(rendezvous)), identity_(identity),
        pack_(std::move(pack)), pack_log_(std::move(pack_log)) {}
  ~AlphaProvider() override {
    if (pack_ != "done_after_release" || !late_provider_) return;
    // The session that made this provider is gone: the host must refuse without reading the value.
    const std::string result = status_text(host().value_initializer_done(late_provider_, late_value_));
    if (!pack_log_.empty()) std::ofstream(pack_log_, std::ios::app) << result << "\n";
  }
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
    if (op == "Add") return std::make_unique<BinaryKernel>(BinaryOp::kAdd, misbehave_, rendezvous_, pack(node));
#if defined(EPHOST_TEST_ALPHA_WRONG_MUL)
    if (op == "Mul") return std::make_unique<BinaryKernel>(BinaryOp::kAdd, misbehave_, rendezvous_, pack(node));
#else
    if (op == "Mul") return std::make_unique<BinaryKernel>(BinaryOp::kMul, misbehave_, rendezvous_, pack(node));
#endif
    if (op == "Identity" && identity_) return std::make_unique<IdentityKernel>();
    fail(EPHOST_NOT_IMPLEMENTED, "alpha has no kernel for " + op + " node '" + node.name() + "'");
  }
  void on_run_start() override {
    if (misbehave_ == "fail_run_start") fail(EPHOST_EP_FAIL, "alpha: injected on_run_start failure");
  }

 private:
  // pack_constants: input B copied when it is a constant initializer, and the host told (or not) that
  // the kernel is done with its bytes. Null: the kernel reads B in compute.
  std::shared_ptr<const PackedInput> pack(const Node& node) {
    if (pack_ == "none" || node.num_inputs() < 2) return nullptr;
    const Value b = node.input(1);
    if (!b.valid() || !b.is_constant()) return nullptr;
    if (pack_ == "done_unread") {
      b.initializer_done();  // never asked for the bytes: the host must not free them for this
      return nullptr;
    }
    auto packed = std::make_shared<PackedInput>();
    const Tensor t = b.constant();
    const float* p = ephost_test::float_data(t, "constant B");
    packed->values.assign(p, p + t.size());
    packed->shape = t.shape();
    if (!host_has_initializer_release()) return packed;  // an older host: nothing to say
    EphostProvider* provider = current_provider_slot();
    if (pack_ == "done_misused") misuse(provider, b);
    if (pack_ == "done_on_thread") {
      std::string result;
      std::thread([&] { result = status_text(host().value_initializer_done(provider, b.get())); }).join();
      if (result != "accepted") fail(EPHOST_EP_FAIL, "alpha: value_initializer_done from a thread answered " + result);
    } else if (pack_ == "done_after_release") {
      late_provider_ = provider;
      late_value_ = b.get();
    } else {
      b.initializer_done();
      if (pack_ == "done_twice") b.initializer_done();
    }
    if (pack_ == "done_then_read") return nullptr;  // reads the host's bytes all the same
    return packed;
  }
  // Handles the host must refuse (INVALID_ARGUMENT), never read through.
  static void misuse(EphostProvider* provider, const Value& b) {
    alignas(16) static const uint64_t junk[64] = {};
    static int not_a_provider = 0;
    auto* made_up_provider = reinterpret_cast<EphostProvider*>(&not_a_provider);
    auto* made_up_value = reinterpret_cast<const EphostValueInfo*>(junk);
    const std::pair<const char*, EphostStatus*> tries[] = {
        {"a NULL provider", host().value_initializer_done(nullptr, b.get())},
        {"a made-up provider", host().value_initializer_done(made_up_provider, b.get())},
        {"a NULL value", host().value_initializer_done(provider, nullptr)},
        {"a made-up value", host().value_initializer_done(provider, made_up_value)},
    };
    std::string accepted;
    for (const auto& [what, status] : tries) {
      const std::string result = status_text(status);
      if (result != std::to_string(static_cast<int>(EPHOST_INVALID_ARGUMENT)))
        accepted += std::string(accepted.empty() ? "" : ", ") + what + " (" + result + ")";
    }
    if (!accepted.empty()) fail(EPHOST_EP_FAIL, "alpha: value_initializer_done took " + accepted);
  }

  bool claim_;
  std::string misbehave_;
  std::shared_ptr<Rendezvous> rendezvous_;
  bool identity_;
  std::string pack_, pack_log_;
  EphostProvider* late_provider_ = nullptr;  // done_after_release: said done from the destructor
  const EphostValueInfo* late_value_ = nullptr;
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
    const std::string pack = option(options, "pack_constants", "none");
    const std::vector<std::string> packs = {"none", "done", "done_twice", "done_on_thread", "done_misused",
                                            "done_then_read", "done_unread", "done_after_release"};
    if (std::find(packs.begin(), packs.end(), pack) == packs.end())
      fail(EPHOST_INVALID_ARGUMENT, "alpha: unknown pack_constants value '" + pack + "'");
    return std::make_unique<AlphaProvider>(ephost_test::claims_anything(options), misbehave,
                                           ephost_test::rendezvous_option(options), option(options, "identity", "0") == "1",
                                           pack, option(options, "pack_log", ""));
  }
};

}  // namespace

EPHOST_TEST_RECORDING_PLUGIN(EPHOST_TEST_PLUGIN_NAME, AlphaDescribe, AlphaCreate)
