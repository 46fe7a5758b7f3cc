// The lifecycle rules ephost_plugin.h states, checked on what the test plugins recorded the host did
// to them (plugin_call_record.h): negotiation and describe, provider options, get_capability per graph,
// kernels and compute units from creation to release, on_run_start/on_run_end around every run (a failed
// one too), concurrent computes, release order down to the library's unloading. Every test ends with
// the rules any complete history must satisfy (plugin_call_rules.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <thread>

#include "ephost/ephost_cxx_api.h"
#include "ephost/ephost_env_options_keys.h"
#include "ephost/ephost_plugin.h"
#include "plugin_call_record.h"
#include "plugin_call_rules.h"
#include "chain_check.h"
#include "test_support.h"

namespace {

using ephost_test::describe_calls;
using ephost_test::PluginCall;
using Calls = std::vector<PluginCall>;

Calls where(const Calls& calls, const std::function<bool(const PluginCall&)>& keep) {
  Calls out;
  std::copy_if(calls.begin(), calls.end(), std::back_inserter(out), keep);
  return out;
}

Calls named(const Calls& calls, const std::string& function) {
  return where(calls, [&](const PluginCall& c) { return c.function == function; });
}

Calls on(const Calls& calls, const void* object) {
  return where(calls, [&](const PluginCall& c) { return c.object == object; });
}

std::map<std::string, std::string> options_of(const PluginCall& c) {
  return std::map<std::string, std::string>(c.options.begin(), c.options.end());
}

bool overlap(const PluginCall& a, const PluginCall& b) { return a.begin < b.end && b.begin < a.end; }

// x [2,3] through Add, Mul, Relu, Sub, Sigmoid (test_support.h): alpha takes Add and Mul as kernels,
// beta compiles the chain of Add, Mul and Relu that is left to it.
constexpr int64_t kRows = 2, kCols = 3;

class PluginLifecycle : public ::testing::Test {
 protected:
  // An env whose plugin folder (`folder`, or the test's own) holds exactly `plugins` (test plugin libraries).
  std::unique_ptr<Ephost::Env> make_env(const std::vector<std::string>& plugins,
                                        const ephost_test::TempDir* folder = nullptr) {
    const ephost_test::TempDir& dir = folder ? *folder : plugin_dir_;
    ephost_test::install_plugins(dir, plugins);
    return std::make_unique<Ephost::Env>(EPHOST_LOG_ERROR, std::vector<std::string>{dir.path()});
  }
  std::unique_ptr<Ephost::Session> chain_session(const Ephost::Env& env, const Ephost::SessionOptions& options) {
    const std::string bytes = ephost_test::chain_model(kRows, kCols).bytes();
    return std::make_unique<Ephost::Session>(env, bytes.data(), bytes.size(), options);
  }
  // The rules every complete history satisfies; call once the sessions and the env are released.
  void expect_lifecycle_rules() {
    const Calls calls = record_.calls();
    for (const std::string& problem : ephost_test::lifecycle_violations(calls)) ADD_FAILURE() << problem;
    if (HasFailure()) std::cerr << "calls:\n  " << describe_calls(calls) << std::endl;
  }

  // The calls of `plugin` that began after `since` (a plugin_call_clock_tick()).
  Calls calls_since(const std::string& plugin, uint64_t since) const {
    return where(record_.calls(plugin), [&](const PluginCall& c) { return c.begin > since; });
  }

  ephost_test::PluginCallRecording record_;  // first made, last gone: it sees the plugins unloaded
  ephost_test::TempDir plugin_dir_;
  ephost_test::TempDir model_dir_;
};

// "The host calls it once, offering the range of ABI versions it speaks and its own function table";
// "the plugin answers with the version it will speak"; the host table's abi_version "is filled in by the
// host after negotiation succeeds"; describe is "called once after negotiation" with `info->struct_size`
// set by the host; members after ABI 1 are "present when struct_size covers them".
TEST_F(PluginLifecycle, NegotiationThenDescribeWithTheNegotiatedVersion) {
  // Probed in process, so loaded at env creation (a probe in the scanner defers the load until the
  // plugin is first needed: lazy_loading_test.cpp).
  ephost_test::install_plugins(plugin_dir_, {"ephost_test_alpha", "ephost_test_alpha_abi1"});
  const std::vector<std::string> dirs{plugin_dir_.path()};
  auto env = std::make_unique<Ephost::Env>(EPHOST_LOG_ERROR, &dirs,
                                           std::vector<std::pair<std::string, std::string>>{
                                               {kEphostEnvOptionsPluginScan, "inprocess"}});
  const struct {
    const char* plugin;
    uint32_t version;
    size_t host_table_size;  // exactly the host table's members of that version
  } expected[] = {{"alpha", EPHOST_PLUGIN_ABI_VERSION, EphostHostApiSize(EPHOST_PLUGIN_ABI_VERSION)},
                  {"alpha_abi1", 1, EphostHostApiSize(1)}};
  for (const auto& e : expected) {
    SCOPED_TRACE(e.plugin);
    const Calls calls = record_.calls(e.plugin);
    ASSERT_EQ(calls.size(), 2u) << "negotiate and describe, nothing else before a session:\n  "
                                << describe_calls(calls);
    const PluginCall& negotiate = calls[0];
    EXPECT_EQ(negotiate.function, "negotiate");
    EXPECT_EQ(negotiate.offered_min, EPHOST_PLUGIN_ABI_MIN_VERSION);
    EXPECT_EQ(negotiate.offered_max, EPHOST_PLUGIN_ABI_VERSION);
    EXPECT_EQ(negotiate.version, e.version);
    EXPECT_FALSE(negotiate.failed);
    const PluginCall& describe = calls[1];
    EXPECT_EQ(describe.function, "describe");
    EXPECT_EQ(describe.version, e.version) << "the host table says the negotiated version by describe";
    EXPECT_EQ(describe.info_size, sizeof(EphostPluginInfo));
    EXPECT_EQ(describe.host_api_size, e.host_table_size) << "the host table is that of the negotiated version";
    EXPECT_EQ(describe.thread, negotiate.thread);
  }
  for (const EphostPluginReport& r : env->plugin_reports()) {
    if (std::string(r.name) == "alpha_abi1") {
      EXPECT_EQ(r.abi_version, 1u) << "the report shows the version spoken";
    }
  }
  env.reset();
  expect_lifecycle_rules();
}

// provider_create: "`keys`/`values` are the provider options: every `ep.<name>.<key>` session entry, plus
// intra_op_num_threads" (and AppendProvider's own options, ephost_c_api.h); one provider per session.
TEST_F(PluginLifecycle, ProviderOptionsReachTheirProviderOnly) {
  auto env = make_env({"ephost_test_alpha", "ephost_test_beta"});
  Ephost::SessionOptions options;
  options.append_provider("alpha", {{"claim", "all"}}).append_provider("beta");
  options.add_config("ep.alpha.misbehave", "none").add_config("ep.beta.check_cycles", "1").set_threads(3);
  auto first = chain_session(*env, options);
  auto second = chain_session(*env, options);

  const Calls alpha = named(record_.calls("alpha"), "provider_create");
  const Calls beta = named(record_.calls("beta"), "provider_create");
  ASSERT_EQ(alpha.size(), 2u) << "one provider per session";
  ASSERT_EQ(beta.size(), 2u) << "one provider per session";
  EXPECT_NE(alpha[0].made, alpha[1].made);
  for (const PluginCall& c : alpha)
    EXPECT_EQ(options_of(c), (std::map<std::string, std::string>{
                                 {"claim", "all"}, {"misbehave", "none"}, {"intra_op_num_threads", "3"}}));
  for (const PluginCall& c : beta)
    EXPECT_EQ(options_of(c),
              (std::map<std::string, std::string>{{"check_cycles", "1"}, {"intra_op_num_threads", "3"}}));
  first.reset();
  second.reset();
  env.reset();
  expect_lifecycle_rules();
}

// get_capability is "called once for the main graph and once per nested subgraph".
TEST_F(PluginLifecycle, GetCapabilityOncePerGraph) {
  auto env = make_env({"ephost_test_alpha"});
  const std::string bytes = ephost_test::nested_if_model();
  auto session = std::make_unique<Ephost::Session>(*env, bytes.data(), bytes.size());
  const Calls calls = named(record_.calls("alpha"), "get_capability");
  std::multiset<std::pair<std::string, std::string>> graphs;  // (graph, node that owns it)
  for (const PluginCall& c : calls) graphs.emplace(c.name, c.node);
  EXPECT_EQ(graphs, (std::multiset<std::pair<std::string, std::string>>{{"test", ""},
                                                                        {"outer_then", "outer_if"},
                                                                        {"outer_else", "outer_if"},
                                                                        {"inner_then", "inner_if"},
                                                                        {"inner_else", "inner_if"}}))
      << describe_calls(calls);
  const Calls created = named(record_.calls("alpha"), "provider_create");
  ASSERT_EQ(created.size(), 1u);
  for (const PluginCall& c : calls) EXPECT_EQ(c.object, created[0].made) << "all on the session's provider";
  session.reset();
  env.reset();
  expect_lifecycle_rules();
}

// kernel_create for each claimed node ("the node stays valid for the session's lifetime": read again at
// every compute), kernel_compute on every run, kernel_release once, then the provider.
TEST_F(PluginLifecycle, KernelsFromCreateToRelease) {
  auto env = make_env({"ephost_test_alpha"});
  Ephost::SessionOptions options;
  options.append_provider("alpha");
  auto session = chain_session(*env, options);
  for (int run = 0; run < 3; ++run) ephost_test::expect_chain_output(*session, kRows, kCols);
  session.reset();

  const Calls calls = record_.calls("alpha");
  const Calls kernels = named(calls, "kernel_create");
  std::set<std::string> nodes;
  for (const PluginCall& k : kernels) nodes.insert(k.node);
  EXPECT_EQ(nodes, (std::set<std::string>{"add", "mul"}));
  ASSERT_EQ(kernels.size(), 2u) << describe_calls(calls);
  for (const PluginCall& k : kernels) {
    SCOPED_TRACE(k.node);
    const Calls computes = on(named(calls, "kernel_compute"), k.made);
    EXPECT_EQ(computes.size(), 3u) << "once per run";
    for (const PluginCall& c : computes) EXPECT_EQ(c.node, k.node) << "the node a kernel keeps stays valid";
    EXPECT_EQ(on(named(calls, "kernel_release"), k.made).size(), 1u);
  }
  env.reset();
  expect_lifecycle_rules();
}

// A compiled group's compute unit: "create_state once per session, compute once per run ..., release_state
// when the session ends, then release". Two sessions: two units, two states, never mixed.
TEST_F(PluginLifecycle, ComputeUnitsFromCompileToRelease) {
  auto env = make_env({"ephost_test_beta"});
  Ephost::SessionOptions options;
  options.append_provider("beta");
  auto first = chain_session(*env, options);
  auto second = chain_session(*env, options);
  for (int run = 0; run < 2; ++run) ephost_test::expect_chain_output(*first, kRows, kCols);
  for (int run = 0; run < 3; ++run) ephost_test::expect_chain_output(*second, kRows, kCols);
  first.reset();
  second.reset();

  const Calls calls = record_.calls("beta");
  const Calls compiles = named(calls, "compile");
  ASSERT_EQ(compiles.size(), 2u) << "one fused group per session:\n  " << describe_calls(calls);
  std::set<const void*> states;
  size_t computes_seen = 0;
  for (const PluginCall& unit : compiles) {
    const Calls created = on(named(calls, "create_state"), unit.made);
    ASSERT_EQ(created.size(), 1u) << "create_state once per session";
    const void* state = created[0].made;
    ASSERT_NE(state, nullptr);
    states.insert(state);
    const Calls computes = on(named(calls, "compute"), unit.made);
    computes_seen += computes.size();
    for (const PluginCall& c : computes) EXPECT_EQ(c.state, state) << "compute gets its session's state";
    const Calls released = on(named(calls, "release_state"), unit.made);
    ASSERT_EQ(released.size(), 1u);
    EXPECT_EQ(released[0].state, state);
    EXPECT_EQ(on(named(calls, "release"), unit.made).size(), 1u);
  }
  EXPECT_EQ(computes_seen, 5u) << "once per run";
  EXPECT_EQ(states.size(), 2u) << "each session has its own state";
  env.reset();
  expect_lifecycle_rules();
}

// on_run_start and on_run_end are "called before and after every Run of a session that uses this provider".
TEST_F(PluginLifecycle, EveryRunIsBracketedByRunStartAndEnd) {
  auto env = make_env({"ephost_test_alpha", "ephost_test_beta"});
  Ephost::SessionOptions options;
  options.append_provider("alpha").append_provider("beta");
  auto session = chain_session(*env, options);
  for (int run = 0; run < 3; ++run) ephost_test::expect_chain_output(*session, kRows, kCols);
  session.reset();

  const std::set<std::string> run_calls = {"on_run_start", "kernel_compute", "compute", "on_run_end"};
  for (const std::string plugin : {"alpha", "beta"}) {
    SCOPED_TRACE(plugin);
    std::string sequence;
    for (const PluginCall& c : record_.calls(plugin))
      if (run_calls.count(c.function)) sequence += (sequence.empty() ? "" : " ") + c.function;
    const std::string one_run = plugin == "alpha" ? "on_run_start kernel_compute kernel_compute on_run_end"
                                                  : "on_run_start compute on_run_end";
    EXPECT_EQ(sequence, one_run + " " + one_run + " " + one_run);
  }
  env.reset();
  expect_lifecycle_rules();
}

// "on_run_end is called even when the run failed".
TEST_F(PluginLifecycle, RunEndFollowsAFailedRun) {
  auto env = make_env({"ephost_test_alpha", "ephost_test_beta"});
  Ephost::SessionOptions options;
  options.append_provider("alpha", {{"misbehave", "fail_compute"}}).append_provider("beta");
  auto session = chain_session(*env, options);
  for (int run = 0; run < 2; ++run) {
    try {
      ephost_test::expect_chain_output(*session, kRows, kCols);
      ADD_FAILURE() << "alpha's compute fails, so must the run";
    } catch (const Ephost::Exception& e) {
      EXPECT_EQ(e.code(), EPHOST_EP_FAIL) << e.what();
    }
  }
  session.reset();

  const Calls alpha = record_.calls("alpha");
  const Calls failed = where(alpha, [](const PluginCall& c) { return c.failed; });
  ASSERT_EQ(failed.size(), 2u) << describe_calls(alpha);
  for (const PluginCall& f : failed) {
    EXPECT_EQ(f.function, "kernel_compute");
    const Calls ends_after = where(named(alpha, "on_run_end"), [&](const PluginCall& c) { return c.begin > f.end; });
    EXPECT_FALSE(ends_after.empty()) << "alpha's on_run_end after its failed compute";
  }
  EXPECT_EQ(named(alpha, "on_run_end").size(), 2u);
  EXPECT_EQ(named(record_.calls("beta"), "on_run_end").size(), 2u) << "every provider of the session";
  env.reset();
  expect_lifecycle_rules();
}

// The same when the run fails in another provider's on_run_start: a provider whose on_run_start ran
// gets its on_run_end.
TEST_F(PluginLifecycle, RunEndFollowsARunStartThatAnotherProviderFailed) {
  auto env = make_env({"ephost_test_alpha", "ephost_test_beta"});
  Ephost::SessionOptions options;
  options.append_provider("beta").append_provider("alpha", {{"misbehave", "fail_run_start"}});
  auto session = chain_session(*env, options);
  EXPECT_THROW(ephost_test::expect_chain_output(*session, kRows, kCols), Ephost::Exception);
  session.reset();
  const Calls beta = record_.calls("beta");
  EXPECT_EQ(named(beta, "on_run_start").size(), 1u) << describe_calls(beta);
  EXPECT_EQ(named(beta, "on_run_end").size(), 1u) << describe_calls(beta);
  env.reset();
  expect_lifecycle_rules();
}

// compute "may be called from several threads at once (concurrent runs)" with "the same state". The
// providers' `rendezvous` option makes two computes wait for each other, so a host that serialized them
// would fail the runs instead of passing by luck.
TEST_F(PluginLifecycle, ConcurrentRunsComputeAtOnceWithOneState) {
  auto env = make_env({"ephost_test_alpha", "ephost_test_beta"});
  Ephost::SessionOptions options;
  options.append_provider("alpha", {{"rendezvous", "2"}}).append_provider("beta", {{"rendezvous", "2"}});
  auto session = chain_session(*env, options);
  constexpr int kThreads = 2, kRuns = 4;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&] {
      try {
        for (int run = 0; run < kRuns; ++run) ephost_test::expect_chain_output(*session, kRows, kCols);
      } catch (const Ephost::Exception& e) {
        ADD_FAILURE() << e.what();
      }
    });
  for (auto& t : threads) t.join();
  session.reset();

  for (const std::string plugin : {"alpha", "beta"}) {
    SCOPED_TRACE(plugin);
    const Calls calls = record_.calls(plugin);
    const Calls computes = named(calls, plugin == "alpha" ? "kernel_compute" : "compute");
    EXPECT_EQ(computes.size(), static_cast<size_t>(kThreads * kRuns * (plugin == "alpha" ? 2 : 1)));
    bool concurrent = false;
    for (const PluginCall& a : computes)
      for (const PluginCall& b : computes)
        concurrent = concurrent || (&a != &b && a.object == b.object && a.thread != b.thread && overlap(a, b));
    EXPECT_TRUE(concurrent) << "two threads in one kernel or unit at once:\n  " << describe_calls(computes);
    for (const PluginCall& c : computes) EXPECT_FALSE(c.failed) << "every compute saw a state its unit made";
    if (plugin == "beta") {
      const Calls created = named(calls, "create_state");
      ASSERT_EQ(created.size(), 1u);
      for (const PluginCall& c : computes) EXPECT_EQ(c.state, created[0].made) << "one state for all runs";
    }
    EXPECT_EQ(named(calls, "on_run_start").size(), static_cast<size_t>(kThreads * kRuns));
    EXPECT_EQ(named(calls, "on_run_end").size(), static_cast<size_t>(kThreads * kRuns));
  }
  env.reset();
  expect_lifecycle_rules();
}

// get_capability: "A failure is logged and reported, and the provider gets no nodes of that graph; it
// never fails the session."
TEST_F(PluginLifecycle, FailedGetCapabilityGetsNoNodes) {
  auto env = make_env({"ephost_test_alpha"});
  Ephost::SessionOptions options;
  options.append_provider("alpha", {{"misbehave", "fail_capability"}});
  auto session = chain_session(*env, options);
  ephost_test::expect_chain_output(*session, kRows, kCols);
  session.reset();
  const Calls alpha = record_.calls("alpha");
  const Calls capability = named(alpha, "get_capability");
  ASSERT_EQ(capability.size(), 1u);
  EXPECT_TRUE(capability[0].failed);
  EXPECT_TRUE(named(alpha, "kernel_create").empty()) << describe_calls(alpha);
  EXPECT_TRUE(named(alpha, "kernel_compute").empty()) << describe_calls(alpha);
  env.reset();
  expect_lifecycle_rules();
}

// A session whose creation fails still releases everything it made ("released with provider_release").
TEST_F(PluginLifecycle, FailedSessionReleasesWhatItMade) {
  auto env = make_env({"ephost_test_alpha", "ephost_test_beta"});
  Ephost::SessionOptions options;
  options.append_provider("alpha", {{"misbehave", "fail_create_kernel"}}).append_provider("beta");
  EXPECT_THROW(chain_session(*env, options), Ephost::Exception);
  for (const std::string plugin : {"alpha", "beta"}) {
    const Calls calls = record_.calls(plugin);
    EXPECT_EQ(named(calls, "provider_create").size(), 1u) << describe_calls(calls);
    EXPECT_EQ(named(calls, "provider_release").size(), 1u) << describe_calls(calls);
  }
  env.reset();
  expect_lifecycle_rules();
}

// ---- EPContext: the example EP (samples/example_ep) caches what it compiles ----------------------------

// Generation options: cache each compiled group of the chain as an EPContext node in `ctx_path`. The
// example EP takes Add, Mul and Sigmoid: two groups ({Add, Mul} and {Sigmoid}), Relu and Sub stay on the CPU.
Ephost::SessionOptions example_options(const std::string& ctx_path = "") {
  Ephost::SessionOptions options;
  options.append_provider("example", {{"claim", "Add,Mul,Sigmoid"}}).append_provider("cpu");
  if (!ctx_path.empty()) options.add_config("ep.context_enable", "1").add_config("ep.context_file_path", ctx_path);
  return options;
}

// context_emit is "called once per fused group this provider compiled, after all compiles of the
// session, with the `fused_name` compile received".
TEST_F(PluginLifecycle, ContextEmitOncePerCompiledGroupAfterAllCompiles) {
  auto env = make_env({"ephost_test_example_sdk1"});
  const std::string model = ephost_test::chain_model(kRows, kCols).save(model_dir_, "chain.onnx");
  auto session = std::make_unique<Ephost::Session>(*env, model, example_options(model_dir_.file("chain_ctx.onnx")));
  ephost_test::expect_chain_output(*session, kRows, kCols);
  session.reset();

  const Calls calls = record_.calls("example");
  std::multiset<std::string> compiled, emitted;
  uint64_t last_compile = 0;
  for (const PluginCall& c : named(calls, "compile")) {
    compiled.insert(c.name);
    last_compile = std::max(last_compile, c.end);
  }
  for (const PluginCall& c : named(calls, "context_emit")) {
    emitted.insert(c.name);
    EXPECT_GT(c.begin, last_compile) << "context_emit after all compiles: " << c.name;
  }
  EXPECT_EQ(compiled.size(), 2u) << describe_calls(calls);
  EXPECT_EQ(emitted, compiled);
  env.reset();
  expect_lifecycle_rules();
}

// context_judge decides before context_load; a loaded context is a compute unit the host "calls
// create_state/compute/release_state/release the same way" as a compiled one.
TEST_F(PluginLifecycle, ContextJudgedThenLoadedAndRunLikeACompiledGroup) {
  auto env = make_env({"ephost_test_example_sdk1"});
  const std::string model = ephost_test::chain_model(kRows, kCols).save(model_dir_, "chain.onnx");
  const std::string ctx = model_dir_.file("chain_ctx.onnx");
  { Ephost::Session generates(*env, model, example_options(ctx)); }
  const uint64_t loading = ephost_test::plugin_call_clock_tick();
  auto session = std::make_unique<Ephost::Session>(*env, ctx, example_options());
  for (int run = 0; run < 2; ++run) ephost_test::expect_chain_output(*session, kRows, kCols);
  session.reset();

  const Calls calls = calls_since("example", loading);
  EXPECT_TRUE(named(calls, "compile").empty()) << "the cached groups are not compiled again:\n  "
                                               << describe_calls(calls);
  const Calls judged = named(calls, "context_judge"), loaded = named(calls, "context_load");
  ASSERT_EQ(judged.size(), 2u) << describe_calls(calls);
  ASSERT_EQ(loaded.size(), 2u) << describe_calls(calls);
  for (const PluginCall& load : loaded) {
    SCOPED_TRACE(load.node);
    const Calls judge = where(judged, [&](const PluginCall& j) { return j.node == load.node; });
    ASSERT_EQ(judge.size(), 1u);
    EXPECT_EQ(judge[0].verdict, EPHOST_CONTEXT_OPTIMAL);
    EXPECT_LT(judge[0].end, load.begin) << "judged before it is loaded";
    EXPECT_EQ(on(named(calls, "create_state"), load.made).size(), 1u);
    EXPECT_EQ(on(named(calls, "compute"), load.made).size(), 2u) << "once per run";
    EXPECT_EQ(on(named(calls, "release"), load.made).size(), 1u);
  }
  env.reset();
  expect_lifecycle_rules();
}

// UNSUPPORTED: the host "run[s] the partition's original nodes on the remaining providers instead" —
// "not back to you" (plugin_api/README.md): the context is not loaded, its nodes are not compiled again.
TEST_F(PluginLifecycle, ContextJudgedUnsupportedIsNeitherLoadedNorCompiled) {
  const std::string model = ephost_test::chain_model(kRows, kCols).save(model_dir_, "chain.onnx");
  const std::string ctx = model_dir_.file("chain_ctx.onnx");
  {
    ephost_test::TempDir sdk2_dir;  // a build with backend SDK 2.0.0 writes the contexts
    auto generator = make_env({"ephost_test_example_sdk2"}, &sdk2_dir);
    Ephost::Session generates(*generator, model, example_options(ctx));
  }
  auto env = make_env({"ephost_test_example_sdk1"});
  auto session = std::make_unique<Ephost::Session>(*env, ctx, example_options());
  ephost_test::expect_chain_output(*session, kRows, kCols);
  session.reset();

  const Calls calls = record_.calls("example");
  const Calls judged = named(calls, "context_judge");
  ASSERT_EQ(judged.size(), 2u) << describe_calls(calls);
  for (const PluginCall& j : judged) EXPECT_EQ(j.verdict, EPHOST_CONTEXT_UNSUPPORTED) << j.node;
  EXPECT_TRUE(named(calls, "context_load").empty()) << describe_calls(calls);
  EXPECT_TRUE(named(calls, "compile").empty()) << describe_calls(calls);
  env.reset();
  expect_lifecycle_rules();
}

// Release order: "release_state when the session ends, then release"; providers after what they made;
// the library is unloaded with the env, after its providers (its tables are "valid until the library is
// unloaded").
TEST_F(PluginLifecycle, ReleaseOrderDownToTheLibrary) {
  auto env = make_env({"ephost_test_alpha", "ephost_test_beta"});
  Ephost::SessionOptions options;
  options.append_provider("alpha").append_provider("beta");
  auto session = chain_session(*env, options);
  ephost_test::expect_chain_output(*session, kRows, kCols);
  session.reset();
  for (const std::string plugin : {"alpha", "beta"}) {
    const Calls calls = record_.calls(plugin);
    EXPECT_EQ(named(calls, "provider_release").size(), 1u) << "the session's end releases its provider";
    EXPECT_TRUE(named(calls, "unload").empty()) << "the env still holds the library";
  }
  env.reset();
  for (const std::string plugin : {"alpha", "beta"}) {
    const Calls calls = record_.calls(plugin);
    ASSERT_FALSE(calls.empty());
    EXPECT_EQ(calls.back().function, "unload") << "the env's end unloads the library, last:\n  "
                                               << describe_calls(calls);
    EXPECT_EQ(named(calls, "unload").size(), 1u);
  }
  const Calls beta = record_.calls("beta");
  const std::vector<std::string> beta_order = {"release_state", "release", "provider_release", "unload"};
  std::vector<std::string> seen;
  for (const PluginCall& c : beta)
    if (std::find(beta_order.begin(), beta_order.end(), c.function) != beta_order.end()) seen.push_back(c.function);
  EXPECT_EQ(seen, beta_order);
  expect_lifecycle_rules();
}

}  // namespace
