// Deadlines and cancellation (issue 26, part 2), through real model runs on the built-in CPU plugin:
// RunOptions' terminate, set from another thread, stops a Loop whose trip count is a huge constant
// (checked between its iterations) and a long CPU kernel (checked between pieces of its parallel
// work, plugin ABI 4's kernel_run_check); a run's timeout is honoured; a stopped run fails with its
// own code (CANCELLED, DEADLINE_EXCEEDED) and the session's next run is correct; session creation
// has a deadline (session.compile_timeout_ms) that stops constant folding's kernels; a MaxPool over a
// dimension of 10^12 is refused at creation at once.
//
// The Loop's bounds are the (stop within 100 ms of terminate; a deadline within 10% or 50 ms);
// a kernel stops within a piece of its work (1/64 of it: tens of milliseconds here, bounded more
// loosely for a loaded machine). Measured from the moment terminate is set or the run started; each
// test prints what it measured.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>

#include "ephost/ephost_cxx_api.h"
#include "ephost/ephost_session_options_keys.h"
#include "test_support.h"

namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

Ephost::Env& cpu_env() {
  static Ephost::Env env(EPHOST_LOG_ERROR, std::vector<std::string>{});
  return env;
}

double ms_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

void add_int64_initializer(onnx::GraphProto& g, const std::string& name, const std::vector<int64_t>& dims,
                           const std::vector<int64_t>& values) {
  auto* t = g.add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::INT64);
  for (int64_t d : dims) t->add_dims(d);
  for (int64_t v : values) t->add_int64_data(v);
}

// y = x counted up by one while y < limit, by a Loop whose trip count is the constant 10^9: with a
// limit it never reaches, only terminate or a deadline ends the run (hours of iterations); with a
// small limit it ends at once with y = limit (x = 0), which shows the session still computes.
std::string billion_iteration_loop_model() {
  ephost_test::ModelBuilder m;
  m.input("x", onnx::TensorProto::FLOAT, {1}).input("limit", onnx::TensorProto::FLOAT, {1});
  m.output("y", onnx::TensorProto::FLOAT, {1});
  m.initializer("one", {1}, {1.0f});
  m.initializer("keep_going", {}, {1.0f});
  add_int64_initializer(*m.proto().mutable_graph(), "trips", {}, {1'000'000'000});
  ephost_test::attr_int(m.node("Cast", {"keep_going"}, {"cond"}, "to_bool"), "to", onnx::TensorProto::BOOL);
  onnx::GraphProto body;
  body.set_name("body");
  ephost_test::ModelBuilder::set_type(body.add_input(), "i", onnx::TensorProto::INT64, {});
  ephost_test::ModelBuilder::set_type(body.add_input(), "cond_in", onnx::TensorProto::BOOL, {});
  ephost_test::ModelBuilder::set_type(body.add_input(), "x_in", onnx::TensorProto::FLOAT, {1});
  ephost_test::ModelBuilder::set_type(body.add_output(), "cond_out", onnx::TensorProto::BOOL, {1});
  ephost_test::ModelBuilder::set_type(body.add_output(), "x_out", onnx::TensorProto::FLOAT, {1});
  auto* add = body.add_node();
  add->set_op_type("Add");
  add->set_name("count");
  add->add_input("x_in");
  add->add_input("one");  // outer scope
  add->add_output("x_out");
  auto* less = body.add_node();
  less->set_op_type("Less");
  less->set_name("below_limit");
  less->add_input("x_out");
  less->add_input("limit");  // outer scope
  less->add_output("cond_out");
  auto& loop = m.node("Loop", {"trips", "cond", "x"}, {"y"}, "loop");
  ephost_test::set_graph_attribute(loop, "body", body);
  return m.bytes();
}

struct LoopSession {
  std::string bytes = billion_iteration_loop_model();
  Ephost::Session session{cpu_env(), bytes.data(), bytes.size()};
  float x = 0.0f;
  float limit = 0.0f;
  // y for a limit; the run uses `options` (may be null).
  float run(float run_limit, const Ephost::RunOptions* options) {
    limit = run_limit;
    auto xs = Ephost::Tensor::wrap(EPHOST_ELEMENT_FLOAT, {1}, &x, 1);
    auto ls = Ephost::Tensor::wrap(EPHOST_ELEMENT_FLOAT, {1}, &limit, 1);
    return session.run({"x", "limit"}, {xs, ls}, {"y"}, options)[0].to_vector<float>()[0];
  }
};

constexpr float kNeverReached = 1e30f;

TEST(RunDeadlines, TerminateFromAnotherThreadStopsABillionIterationLoopWithin100Ms) {
  LoopSession s;
  ASSERT_EQ(s.run(5.0f, nullptr), 5.0f);
  Ephost::RunOptions options;
  options.set_tag("loop-1");
  std::atomic<int64_t> set_at{0};
  std::thread stopper([&] {
    std::this_thread::sleep_for(milliseconds(150));
    set_at = Clock::now().time_since_epoch().count();
    options.set_terminate(true);
  });
  EphostStatusCode code = EPHOST_OK;
  std::string message;
  try {
    s.run(kNeverReached, &options);
  } catch (const Ephost::Exception& e) {
    code = e.code();
    message = e.message();
  }
  const Clock::time_point stopped = Clock::now();
  stopper.join();
  ASSERT_EQ(code, EPHOST_CANCELLED) << "the run was not cancelled: " << message;
  EXPECT_NE(message.find("run 'loop-1' terminated by RunOptions.terminate"), std::string::npos) << message;
  const double latency = ms_between(Clock::time_point(Clock::duration(set_at.load())), stopped);
  std::printf("[ measured ] terminate -> the 10^9-iteration Loop's run returned: %.2f ms\n", latency);
  EXPECT_LT(latency, 100.0);

  // The session stays usable: clear terminate and the same options run correctly.
  options.set_terminate(false);
  EXPECT_EQ(s.run(7.0f, &options), 7.0f);
  EXPECT_EQ(s.run(3.0f, nullptr), 3.0f);
}

TEST(RunDeadlines, RunDeadlineIsHonouredWithinTenPercentOr50Ms) {
  LoopSession s;
  Ephost::RunOptions options;
  options.set_timeout(milliseconds(300));
  const Clock::time_point start = Clock::now();
  EphostStatusCode code = EPHOST_OK;
  std::string message;
  try {
    s.run(kNeverReached, &options);
  } catch (const Ephost::Exception& e) {
    code = e.code();
    message = e.message();
  }
  const double elapsed = ms_between(start, Clock::now());
  ASSERT_EQ(code, EPHOST_DEADLINE_EXCEEDED) << message;
  EXPECT_NE(message.find("run exceeded its deadline"), std::string::npos) << message;
  EXPECT_NE(message.find("300 ms timeout"), std::string::npos) << message;
  std::printf("[ measured ] a run with a 300 ms timeout returned after %.2f ms\n", elapsed);
  EXPECT_GE(elapsed, 300.0);
  EXPECT_LE(elapsed, 350.0) << "300 ms + max(10%, 50 ms)";

  // Each run gets its own deadline from its start: a short run with the same options succeeds.
  EXPECT_EQ(s.run(4.0f, &options), 4.0f);
  options.set_timeout(milliseconds(0));
  EXPECT_EQ(s.run(2.0f, &options), 2.0f);
}

TEST(RunDeadlines, NegativeTimeoutIsRefused) {
  Ephost::RunOptions options;
  try {
    options.set_timeout(milliseconds(-1));
    FAIL() << "a negative timeout was accepted";
  } catch (const Ephost::Exception& e) {
    EXPECT_EQ(e.code(), EPHOST_INVALID_ARGUMENT);
    EXPECT_NE(e.message().find("-1 ms"), std::string::npos) << e.message();
  }
}

// y = MaxPool(x) over x = [1, 1, 1, H, W] with a window of 1 x 1 x k (stride 1): k comparisons per
// output, so a modest input makes seconds of work in one kernel, the CPU plugin's own 3-D pooling,
// which splits the H rows over its parallel_for. (A 2-D pool is taken into a fused region, where it
// runs as one oneDNN primitive: a region is checked between its steps only.)
std::string wide_maxpool_model(int64_t k) {
  ephost_test::ModelBuilder m;
  m.input("x", onnx::TensorProto::FLOAT, {1, 1, 1, -1, -1});
  m.output("y", onnx::TensorProto::FLOAT, {1, 1, 1, -1, -1});
  ephost_test::attr_ints(m.node("MaxPool", {"x"}, {"y"}, "pool"), "kernel_shape", {1, 1, k});
  return m.bytes();
}

Ephost::SessionOptions one_thread() {
  Ephost::SessionOptions o;
  o.set_threads(1);
  return o;
}

// 128 rows of 4096, windows of 1024: 128 x 3073 x 1024 comparisons (about 4 * 10^8). The plugin's
// 1-D pooling does about 1.5 * 10^8 of them a second on one thread, so the kernel runs about 2.7 s,
// polled before each of 64 pieces (2 rows, about 40 ms each). The kernel must take well over the
// 150-200 ms the tests wait, and a piece well under it: if the kernel gets much faster, raise kLength
// and kWindow together (a piece is always 1/64 of the work).
constexpr int64_t kPlanes = 128, kLength = 4096, kWindow = 1024;

std::vector<float> wide_input() {
  std::vector<float> x(static_cast<size_t>(kPlanes * kLength));
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 7919) % 1000);
  return x;
}

TEST(RunDeadlines, TerminateStopsALongCpuKernelBetweenPiecesOfItsWork) {
  const std::string bytes = wide_maxpool_model(kWindow);
  Ephost::Session session(cpu_env(), bytes.data(), bytes.size(), one_thread());
  std::vector<float> big = wide_input();
  auto x = Ephost::Tensor::wrap(EPHOST_ELEMENT_FLOAT, {1, 1, 1, kPlanes, kLength}, big.data(), big.size());

  Ephost::RunOptions options;
  std::atomic<int64_t> set_at{0};
  std::thread stopper([&] {
    std::this_thread::sleep_for(milliseconds(150));
    set_at = Clock::now().time_since_epoch().count();
    options.set_terminate(true);
  });
  const Clock::time_point start = Clock::now();
  EphostStatusCode code = EPHOST_OK;
  std::string message;
  try {
    session.run({"x"}, {x}, {"y"}, &options);
  } catch (const Ephost::Exception& e) {
    code = e.code();
    message = e.message();
  }
  const Clock::time_point stopped = Clock::now();
  stopper.join();
  ASSERT_EQ(code, EPHOST_CANCELLED) << "the kernel was not stopped (" << ms_between(start, stopped) << " ms): "
                                    << message;
  const double latency = ms_between(Clock::time_point(Clock::duration(set_at.load())), stopped);
  std::printf("[ measured ] terminate -> a MaxPool kernel's run returned: %.2f ms (run: %.2f ms)\n", latency,
              ms_between(start, stopped));
  EXPECT_LT(latency, 200.0) << "a piece of the kernel's work (1/64 of it) and the unwinding";

  // The same session pools a small input correctly afterwards.
  options.set_terminate(false);
  std::vector<float> small(static_cast<size_t>(kWindow + 1), 0.0f);
  small[0] = 3.0f;                 // only in the first window
  small[small.size() - 1] = 9.0f;  // only in the last
  auto xs = Ephost::Tensor::wrap(EPHOST_ELEMENT_FLOAT, {1, 1, 1, 1, kWindow + 1}, small.data(), small.size());
  const std::vector<float> y = session.run({"x"}, {xs}, {"y"}, &options)[0].to_vector<float>();
  EXPECT_EQ(y, (std::vector<float>{3.0f, 9.0f}));
}

TEST(RunDeadlines, RunDeadlineStopsALongCpuKernel) {
  const std::string bytes = wide_maxpool_model(kWindow);
  Ephost::Session session(cpu_env(), bytes.data(), bytes.size(), one_thread());
  std::vector<float> big = wide_input();
  auto x = Ephost::Tensor::wrap(EPHOST_ELEMENT_FLOAT, {1, 1, 1, kPlanes, kLength}, big.data(), big.size());
  Ephost::RunOptions options;
  options.set_timeout(milliseconds(200));
  const Clock::time_point start = Clock::now();
  EphostStatusCode code = EPHOST_OK;
  try {
    session.run({"x"}, {x}, {"y"}, &options);
  } catch (const Ephost::Exception& e) {
    code = e.code();
  }
  const double elapsed = ms_between(start, Clock::now());
  ASSERT_EQ(code, EPHOST_DEADLINE_EXCEEDED) << elapsed << " ms";
  std::printf("[ measured ] a MaxPool run with a 200 ms timeout returned after %.2f ms\n", elapsed);
  EXPECT_GE(elapsed, 200.0);
  EXPECT_LE(elapsed, 400.0) << "200 ms + a piece of the kernel's work (1/64 of it) and the unwinding";
}

// A constant MaxPool that constant folding evaluates at session creation: 321 x 321 x 4096 comparisons
// (about 4 * 10^8, seconds of work in 64 pieces of about 40 ms), from a 384 x 384 ConstantOfShape
// (folded first), unless the creation's deadline stops it.
std::string slow_constant_folding_model() {
  ephost_test::ModelBuilder m;
  m.input("x", onnx::TensorProto::FLOAT, {1, 1, 1, 321, 321});
  m.output("y", onnx::TensorProto::FLOAT, {1, 1, 1, 321, 321});
  add_int64_initializer(*m.proto().mutable_graph(), "shape", {5}, {1, 1, 1, 384, 384});
  auto& fill = m.node("ConstantOfShape", {"shape"}, {"plane"}, "fill");
  auto* value = fill.add_attribute();
  value->set_name("value");
  value->set_type(onnx::AttributeProto::TENSOR);
  value->mutable_t()->set_data_type(onnx::TensorProto::FLOAT);
  value->mutable_t()->add_dims(1);
  value->mutable_t()->add_float_data(1.0f);
  ephost_test::attr_ints(m.node("MaxPool", {"plane"}, {"pooled"}, "pool"), "kernel_shape", {1, 64, 64});
  m.node("Add", {"x", "pooled"}, {"y"}, "add");
  return m.bytes();
}

TEST(CompileDeadline, StopsConstantFoldingsKernelAndFailsTheCreation) {
  const std::string bytes = slow_constant_folding_model();
  Ephost::SessionOptions options = one_thread();
  options.add_config(kEphostSessionOptionsCompileTimeoutMs, "100");
  const Clock::time_point start = Clock::now();
  EphostStatusCode code = EPHOST_OK;
  std::string message;
  try {
    Ephost::Session session(cpu_env(), bytes.data(), bytes.size(), options);
  } catch (const Ephost::Exception& e) {
    code = e.code();
    message = e.message();
  }
  const double elapsed = ms_between(start, Clock::now());
  ASSERT_EQ(code, EPHOST_DEADLINE_EXCEEDED) << message;
  EXPECT_NE(message.find("session creation exceeded its deadline of 100 ms (session.compile_timeout_ms)"),
            std::string::npos) << message;
  EXPECT_NE(message.find("constant folding of node 'pool' (MaxPool)"), std::string::npos) << message;
  std::printf("[ measured ] a creation with a 100 ms compile timeout failed after %.2f ms\n", elapsed);
  // 100 ms + a piece of the folded kernel's work (1/64 of it, ~40 ms quiet). The bound leaves room for a
  // loaded 2-core CI machine (409 ms was seen against an earlier 400 ms bound under load 12) and still
  // fails when the deadline does not stop the fold: the whole fold takes seconds.
  EXPECT_LE(elapsed, 1000.0) << "100 ms + a piece of the folded kernel's work (1/64 of it)";
}

TEST(CompileDeadline, AGenerousDeadlineLetsTheSessionBeCreatedAndItsValueIsChecked) {
  const std::string bytes = ephost_test::chain_model(2, 3).bytes();
  Ephost::SessionOptions options;
  options.add_config(kEphostSessionOptionsCompileTimeoutMs, "60000");
  Ephost::Session session(cpu_env(), bytes.data(), bytes.size(), options);
  std::vector<float> x(6, 0.5f);
  auto in = Ephost::Tensor::wrap(EPHOST_ELEMENT_FLOAT, {2, 3}, x.data(), x.size());
  const std::vector<float> y = session.run({"x"}, {in}, {"y"})[0].to_vector<float>(), expected =
      ephost_test::chain_expected(x, 3);
  ASSERT_EQ(y.size(), expected.size());
  for (size_t i = 0; i < y.size(); ++i) EXPECT_NEAR(y[i], expected[i], 1e-5f) << "element " << i;

  Ephost::SessionOptions bad;
  bad.add_config(kEphostSessionOptionsCompileTimeoutMs, "soon");
  try {
    Ephost::Session refused(cpu_env(), bytes.data(), bytes.size(), bad);
    FAIL() << "compile_timeout_ms \"soon\" was accepted";
  } catch (const Ephost::Exception& e) {
    EXPECT_EQ(e.code(), EPHOST_INVALID_ARGUMENT);
    EXPECT_NE(e.message().find("session.compile_timeout_ms must be a number of milliseconds"), std::string::npos)
        << e.message();
  }
}

// MaxPool(x) with auto_pad SAME_UPPER, kernel 2 and stride 2 over x = [1, 1, length].
std::string same_upper_maxpool_model(int64_t length) {
  ephost_test::ModelBuilder m;
  m.input("x", onnx::TensorProto::FLOAT, {1, 1, length});
  m.output("y", onnx::TensorProto::FLOAT, {});
  m.proto().mutable_graph()->mutable_output(0)->mutable_type()->mutable_tensor_type()->clear_shape();
  auto& pool = m.node("MaxPool", {"x"}, {"y"}, "pool");
  ephost_test::attr_ints(pool, "kernel_shape", {2});
  ephost_test::attr_ints(pool, "strides", {2});
  ephost_test::attr_string(pool, "auto_pad", "SAME_UPPER");
  return m.bytes();
}

TEST(HostileModels, MaxPoolWithSameUpperOverADimensionOf10To12IsRefusedAtOnce) {
  // onnx's shape inference steps through the padded axis one stride at a time: 5 * 10^11 steps (the
  // hostile model of issue 26 kept its creation busy for minutes).
  const std::string bytes = same_upper_maxpool_model(1'000'000'000'000);
  const Clock::time_point start = Clock::now();
  std::string message;
  try {
    Ephost::Session session(cpu_env(), bytes.data(), bytes.size());
    FAIL() << "a MaxPool over 10^12 positions was accepted";
  } catch (const Ephost::Exception& e) {
    message = e.message();
  }
  const double elapsed = ms_between(start, Clock::now());
  EXPECT_NE(message.find("MaxPool"), std::string::npos) << message;
  EXPECT_NE(message.find("[1,1,1000000000000] with auto_pad SAME_UPPER spans 500000000000 strides"),
            std::string::npos) << message;
  std::printf("[ measured ] the MaxPool over 10^12 positions was refused after %.2f ms\n", elapsed);
  EXPECT_LT(elapsed, 2000.0);
}

TEST(HostileModels, SamePaddingOverALongAxisIsLeftToTheKernel) {
  // 2^21 + 3 positions, stride 2: more steps than the host lets onnx's inference take (2^20), fewer
  // than it refuses. The output's shape is then found by the kernel at run time.
  const int64_t length = (int64_t{1} << 21) + 3;
  const std::string bytes = same_upper_maxpool_model(length);
  const Clock::time_point start = Clock::now();
  Ephost::Session session(cpu_env(), bytes.data(), bytes.size());
  std::printf("[ measured ] a SAME_UPPER MaxPool over 2^21 positions: session created in %.2f ms\n",
              ms_between(start, Clock::now()));
  std::vector<float> x(static_cast<size_t>(length));
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 1000);
  auto in = Ephost::Tensor::wrap(EPHOST_ELEMENT_FLOAT, {1, 1, length}, x.data(), x.size());
  const Ephost::Tensor y = std::move(session.run({"x"}, {in}, {"y"})[0]);
  ASSERT_EQ(y.shape(), (std::vector<int64_t>{1, 1, (length + 1) / 2}));
  const std::vector<float> v = y.to_vector<float>();
  EXPECT_EQ(v[0], 1.0f);                       // max(0, 1)
  EXPECT_EQ(v[500], 1.0f);                     // max(1000 % 1000, 1001 % 1000)
  EXPECT_EQ(v.back(), x.back());               // the last window holds one element and padding
}

TEST(ApiVersion, Version4EndsWithRunOptionsSetTimeout) {
  const EphostApi* v4 = EphostGetApi(4);
  ASSERT_NE(v4, nullptr);
  EXPECT_EQ(v4->struct_size, EphostApiSize(4));
  EXPECT_TRUE(EPHOST_STRUCT_HAS(v4, EphostApi, RunOptionsSetTimeout));
  EXPECT_NE(v4->RunOptionsSetTimeout, nullptr);
  EXPECT_STREQ(v4->GetErrorCodeName(EPHOST_CANCELLED), "CANCELLED");
  EXPECT_STREQ(v4->GetErrorCodeName(EPHOST_DEADLINE_EXCEEDED), "DEADLINE_EXCEEDED");
}

}  // namespace
