// Plugin ABI 4's host functions called directly, as a plugin would, on a kernel context of the test's
// own: kernel_profile_span refuses malformed spans with INVALID_ARGUMENT and hands good ones to the
// step's context, and kernel_run_check answers NULL until the run's limits say stop, then the stop's status.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "plugin_abi/handles.h"
#include "plugin_abi/host_api.h"
#include "core/run_control.h"

namespace ephost {
namespace {

// A kernel context with no inputs or outputs: only the ABI 4 members matter here.
class SpanRecordingContext : public EphostKernelContext {
 public:
  bool profiling_on = false;
  const RunLimits* limits = nullptr;
  std::vector<std::string> recorded;

  size_t num_inputs() const override { return 0; }
  const RuntimeValue* input(size_t) const override { return nullptr; }
  size_t num_outputs() const override { return 0; }
  Tensor& allocate_output(size_t, int32_t, std::vector<int64_t>) override { throw std::logic_error("no outputs"); }
  Tensor* allocated_output(size_t) override { return nullptr; }
  void set_output(size_t, RuntimeValue) override {}
  void begin_sequence_output(size_t, int32_t, size_t) override {}
  TensorSequence& sequence_output(size_t) override { throw std::logic_error("no outputs"); }
  int32_t num_threads() const override { return 1; }
  std::vector<RuntimeValue> run_subgraph(const std::string&, std::vector<RuntimeValue>) override { return {}; }
  const Device* memory_device() const override { return nullptr; }
  EphostStream* stream() override { return nullptr; }
  bool profiling() const override { return profiling_on; }
  int64_t profile_clock_ns() const override { return profiling_on ? 42 : 0; }
  void record_span(const EphostProfileSpan& span) override { recorded.emplace_back(span.name); }
  const RunLimits* run_limits() const override { return limits; }
};

EphostProfileSpan good_span(const char* const* nodes, size_t num_nodes) {
  EphostProfileSpan span{};
  span.struct_size = sizeof(span);
  span.start_ns = 1;
  span.duration_ns = 2;
  span.name = "conv1";
  span.op_type = "Conv";
  span.nodes = nodes;
  span.num_nodes = num_nodes;
  return span;
}

// The status's code and message, releasing it; code EPHOST_OK for success (NULL).
std::pair<EphostStatusCode, std::string> take(const EphostHostApi& api, EphostStatus* status) {
  if (!status) return {EPHOST_OK, ""};
  std::pair<EphostStatusCode, std::string> out{api.status_code(status), api.status_message(status)};
  api.status_release(status);
  return out;
}

TEST(HostApiAbi4, ProfileSpansReachTheStepsContext) {
  const EphostHostApi api = make_host_api(4);
  SpanRecordingContext ctx;
  const char* nodes[] = {"conv1"};
  const EphostProfileSpan span = good_span(nodes, 1);

  EXPECT_EQ(api.kernel_profiling(&ctx), 0);
  EXPECT_EQ(api.kernel_profile_clock_ns(&ctx), 0);
  EXPECT_EQ(take(api, api.kernel_profile_span(&ctx, &span)).first, EPHOST_OK) << "succeeds when off";
  ctx.recorded.clear();  // the step's context, not the table, drops spans while off (StepContext::record_span)

  ctx.profiling_on = true;
  EXPECT_EQ(api.kernel_profiling(&ctx), 1);
  EXPECT_EQ(api.kernel_profile_clock_ns(&ctx), 42);
  EXPECT_EQ(take(api, api.kernel_profile_span(&ctx, &span)).first, EPHOST_OK);
  EXPECT_EQ(ctx.recorded, std::vector<std::string>{"conv1"});
}

TEST(HostApiAbi4, MalformedProfileSpansAreRefusedWithInvalidArgument) {
  const EphostHostApi api = make_host_api(4);
  SpanRecordingContext ctx;
  ctx.profiling_on = true;
  const char* nodes[] = {"conv1"};

  auto expect_refused = [&](const EphostProfileSpan* span, const char* words) {
    const auto [code, message] = take(api, api.kernel_profile_span(&ctx, span));
    EXPECT_EQ(code, EPHOST_INVALID_ARGUMENT) << message;
    EXPECT_NE(message.find(words), std::string::npos) << message;
  };
  expect_refused(nullptr, "NULL span");
  EphostProfileSpan small = good_span(nodes, 1);
  small.struct_size = 4;
  expect_refused(&small, "struct_size 4");
  EphostProfileSpan unnamed = good_span(nodes, 1);
  unnamed.name = nullptr;
  expect_refused(&unnamed, "no name");
  EphostProfileSpan no_nodes = good_span(nullptr, 3);
  expect_refused(&no_nodes, "num_nodes is 3");
  EXPECT_TRUE(ctx.recorded.empty());

  // Not a kernel context at all: refused, never dereferenced as one.
  EphostKernelContext* stranger = reinterpret_cast<EphostKernelContext*>(&small);
  const EphostProfileSpan span = good_span(nodes, 1);
  EXPECT_NE(take(api, api.kernel_profile_span(stranger, &span)).first, EPHOST_OK);
  EXPECT_EQ(api.kernel_profiling(stranger), 0);
}

TEST(HostApiAbi4, RunCheckAnswersNullUntilTheRunShouldStop) {
  const EphostHostApi api = make_host_api(4);
  SpanRecordingContext ctx;
  EXPECT_EQ(api.kernel_run_check(&ctx), nullptr) << "no limits: never stops";

  RunControl control;
  control.tag = "tagged";
  const RunLimits limits(&control);
  ctx.limits = &limits;
  EXPECT_EQ(api.kernel_run_check(&ctx), nullptr);
  control.terminate = true;
  const auto [code, message] = take(api, api.kernel_run_check(&ctx));
  EXPECT_EQ(code, EPHOST_CANCELLED);
  EXPECT_NE(message.find("tagged"), std::string::npos) << message;
}

TEST(HostApiAbi4, OlderTablesEndBeforeTheAbi4Members) {
  const EphostHostApi v3 = make_host_api(3);
  EXPECT_EQ(v3.struct_size, EphostHostApiSize(3));
  EXPECT_LT(v3.struct_size, offsetof(EphostHostApi, kernel_profiling) + sizeof(void*));
  EXPECT_EQ(make_host_api(4).struct_size, EphostHostApiSize(4));
}

}  // namespace
}  // namespace ephost
