// ABI section, through libephost with the observer in front of the plugin (observer/observer.h):
// sessions created and released in overlapping lifetimes, runs from 8 threads at once,
// on_run_start/on_run_end pairing, claims that the host accepts (nodes of the graph, groups
// acyclic once contracted), and once the env is gone the lifecycle rules on every call (lifecycle_rules.h).
#include <dlfcn.h>

#include <condition_variable>
#include <mutex>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <thread>

#include "case_session.h"
#include "diamond_models.h"
#include "isolation.h"
#include "lifecycle_rules.h"
#include "nondeterminism.h"
#include "observer/observer.h"
#include "sections.h"

namespace ephost_cts {
namespace {

constexpr char kSection[] = "abi";
constexpr int kThreads = 8;
constexpr int kRunsPerThread = 6;
constexpr size_t kMaxCases = 10;

// Every `step`-th claimed case, at most kMaxCases, leaving out nondeterministic ones.
std::vector<ephost_cli::TestCase> sample(const std::vector<ephost_cli::TestCase>& claimed) {
  std::vector<ephost_cli::TestCase> usable;
  for (const auto& c : claimed)
    if (ephost_cli::nondeterministic_ops((c.dir / "model.onnx").string()).empty()) usable.push_back(c);
  std::vector<ephost_cli::TestCase> out;
  const size_t step = usable.size() > kMaxCases ? usable.size() / kMaxCases : 1;
  for (size_t i = 0; i < usable.size() && out.size() < kMaxCases; i += step) out.push_back(usable[i]);
  return out;
}

// The claims of `provider` the host refused in `session`, "" when none.
std::string refused_claims(const Ephost::Session& session, const std::string& provider) {
  const nlohmann::json report = nlohmann::json::parse(session.partition_report_json());
  std::string out;
  for (const auto& graph : report.at("graphs"))
    for (const auto& note : graph.at("refused_claims"))
      if (note.at("provider") == provider && note.value("refused", true))
        out += (out.empty() ? "" : "; ") + note.at("reason").get<std::string>();
  return out;
}

// Holds threads until all have arrived, so that their runs start together.
class StartLine {
 public:
  explicit StartLine(int count) : waiting_(count) {}
  void arrive_and_wait() {
    std::unique_lock<std::mutex> lock(mutex_);
    if (--waiting_ == 0) all_here_.notify_all();
    all_here_.wait(lock, [&] { return waiting_ == 0; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable all_here_;
  int waiting_;
};

std::string concurrent_difference(const CaseSession& s, const std::vector<Ephost::Tensor>& expected) {
  std::vector<std::string> problems(kThreads);
  StartLine start(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      start.arrive_and_wait();
      try {
        for (int r = 0; r < kRunsPerThread && problems[t].empty(); ++r) problems[t] = bitwise_difference(s.run(), expected);
      } catch (const Ephost::Exception& e) {
        problems[t] = std::string("run failed: ") + e.what();
      }
    });
  for (auto& t : threads) t.join();
  for (int t = 0; t < kThreads; ++t)
    if (!problems[t].empty()) return "thread " + std::to_string(t) + ": " + problems[t];
  return "";
}

void check_case(ChildChannel& out, const Ephost::Env& env, const std::string& provider, const ephost_cli::TestCase& c) {
  out.step("running " + c.name + " from " + std::to_string(kThreads) + " threads");
  std::optional<CaseSession> first;
  std::vector<Ephost::Tensor> expected;
  try {
    first.emplace(env, c, provider);
    expected = first->run();
  } catch (const Ephost::Exception& e) {
    out.check({kSection, "lifetimes/" + c.name, Outcome::kFail, std::string("session or first run failed: ") + e.what()});
    return;
  }
  const std::string refused = refused_claims(first->session(), provider);
  out.check({kSection, "claims valid/" + c.name, refused.empty() ? Outcome::kPass : Outcome::kFail,
             refused.empty() ? "" : "the host refused: " + refused});
  const std::string concurrent = concurrent_difference(*first, expected);
  out.check({kSection, "8 threads at once/" + c.name, concurrent.empty() ? Outcome::kPass : Outcome::kFail,
             concurrent.empty() ? "" : "concurrent runs differ from a lone run: " + concurrent});
  // Providers of two sessions live side by side; the first goes before the second runs again.
  out.step("overlapping session lifetimes on " + c.name);
  std::string problem;
  try {
    CaseSession second(env, c, provider);
    first.reset();
    problem = bitwise_difference(second.run(), expected);
    if (problem.empty()) problem = bitwise_difference(CaseSession(env, c, provider).run(), expected);
  } catch (const Ephost::Exception& e) {
    problem = std::string("failed: ") + e.what();
  }
  out.check({kSection, "lifetimes/" + c.name, problem.empty() ? Outcome::kPass : Outcome::kFail,
             problem.empty() ? "sessions created, run and released in overlapping lifetimes" : problem});
}

// A model in which the plugin takes A and C but not B, so a fused group of A and C would be cyclic.
void check_acyclic_groups(ChildChannel& out, const Ephost::Env& env, const std::string& provider) {
  out.step("claims on cycle-prone models");
  for (const DiamondModel& m : diamond_models()) {
    try {
      Ephost::Session session(env, m.bytes.data(), m.bytes.size(), plugin_first(provider));
      const nlohmann::json report = nlohmann::json::parse(session.partition_report_json());
      std::map<std::string, std::string> by_output;  // node name -> provider
      for (const auto& node : report.at("graphs").at(0).at("nodes"))
        by_output[node.at("node").get<std::string>().substr(node.at("node").get<std::string>().rfind('_') + 1)] =
            node.at("provider").get<std::string>();
      const std::string refused = refused_claims(session, provider);
      const bool interesting = !refused.empty() || (by_output["a"] == provider && by_output["y"] == provider &&
                                                    by_output["b"] != provider);
      if (!interesting) continue;
      out.check({kSection, "claims valid/acyclic groups (" + m.description + ")",
                 refused.empty() ? Outcome::kPass : Outcome::kFail,
                 refused.empty() ? "takes A and C, not B, without a cyclic group" : "the host refused: " + refused});
      return;
    } catch (const Ephost::Exception&) {
      // A model the CPU plugin cannot complete says nothing about the plugin's claims.
    }
  }
  out.check({kSection, "claims valid/acyclic groups", Outcome::kSkip,
             "the plugin takes no pair of the elementwise ops the kit builds cycle-prone models from without the op "
             "between them"});
}

void check_observed(ChildChannel& out, const EphostCtsObservation& o, bool ort) {
  // ONNX Runtime's names of what the ONNX Runtime observer counts in each slot (ort_observer.h).
  static const char* const kOrtNames[] = {"GetSupportedDevices", "CreateEp", "ReleaseEp", "GetCapability",
                                          "kernel create function", "OrtKernelImpl::Compute", "OrtKernelImpl::Release",
                                          "Compile", "CreateState", "Compute", "ReleaseState",
                                          "ReleaseNodeComputeInfos", "OnRunStart", "OnRunEnd",
                                          "GetCompiledModelCompatibilityInfo",
                                          "ValidateCompiledModelCompatibilityInfo", ""};
  static const char* const kEphostNames[] = {"describe", "provider_create", "provider_release", "get_capability",
                                       "kernel_create", "kernel_compute", "kernel_release", "compile",
                                       "create_state", "compute", "release_state", "release", "on_run_start",
                                       "on_run_end", "context_emit", "context_judge", "context_load"};
  const char* const* kNames = ort ? kOrtNames : kEphostNames;
  std::string called, failing;
  for (int i = 0; i < EPHOST_CTS_MEMBER_COUNT; ++i) {
    if (o.calls[i]) called += (called.empty() ? "" : ", ") + std::string(kNames[i]) + " " + std::to_string(o.calls[i]);
    if (o.failures[i])
      failing += (failing.empty() ? "" : ", ") + std::string(kNames[i]) + " failed " + std::to_string(o.failures[i]) + "x";
  }
  out.check({kSection, "lifetimes/every function exercised succeeds", failing.empty() ? Outcome::kPass : Outcome::kFail,
             (failing.empty() ? "called: " + called : failing + " (called: " + called + ")") + "; up to " +
                 std::to_string(std::max(o.max_kernel_computes_in_flight, o.max_computes_in_flight)) +
                 " computes in flight at once"});
  const uint64_t starts = o.calls[EPHOST_CTS_ON_RUN_START], ends = o.calls[EPHOST_CTS_ON_RUN_END];
  if (starts == 0 && ends == 0) {
    out.check({kSection, "on_run_start/on_run_end pairing", Outcome::kSkip,
               ort ? "the plugin has neither OnRunStart nor OnRunEnd" : "the plugin has neither"});
  } else {
    const bool paired = starts == ends && o.run_ends_without_start == 0 && !o.failures[EPHOST_CTS_ON_RUN_START] &&
                        !o.failures[EPHOST_CTS_ON_RUN_END];
    out.check({kSection, "on_run_start/on_run_end pairing", paired ? Outcome::kPass : Outcome::kFail,
               std::to_string(starts) + " starts, " + std::to_string(ends) + " ends, up to " +
                   std::to_string(o.max_runs_in_flight) + " runs at once" +
                   (paired ? "" : "; a hook failed or ends did not match starts")});
  }
}

void runtime(ChildChannel& out, const KitSetup& setup, const PluginFacts& facts) {
  setenv(EPHOST_CTS_TARGET_ENV, setup.plugin.c_str(), 1);
  out.step("loading the plugin behind the observer");
  {
    Ephost::Env env = env_with(setup.observer);
    // Held open, so that the observer's record outlives the env.
    void* observer = dlopen(setup.observer.c_str(), RTLD_NOW | RTLD_NOLOAD);
    auto observe =
        observer ? reinterpret_cast<EphostCtsObservationFn>(dlsym(observer, "ephost_cts_observation")) : nullptr;
    if (observe == nullptr) throw std::runtime_error("the observer " + setup.observer + " is not loaded");
    for (const auto& c : sample(facts.claimed)) check_case(out, env, facts.name, c);
    check_acyclic_groups(out, env, facts.name);
    EphostCtsObservation o{};
    observe(&o);
    check_observed(out, o, setup.ort);
  }
  check_lifecycle_rules(out, kSection, setup.observer);
}

}  // namespace

void check_abi_runtime(const KitSetup& setup, const PluginFacts& facts, Report& report) {
  if (!facts.load_error.empty()) {
    report.add({kSection, "sessions", Outcome::kFail, "libephost cannot use the plugin: " + facts.load_error});
    return;
  }
  if (facts.claimed.empty())
    report.add({kSection, "8 threads at once", Outcome::kSkip, "the plugin claims no node of the shipped node cases"});
  const ChildResult r = run_in_child([&](ChildChannel& out) { runtime(out, setup, facts); }, setup.timeout_s);
  for (const Check& c : r.checks) report.add(c);
  if (!r.completed) report.add(child_failure(kSection, "sessions", r.failure, r.last_step));
}

}  // namespace ephost_cts
