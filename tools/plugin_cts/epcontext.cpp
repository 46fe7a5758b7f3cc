// EPContext section (a plugin with source keys that emits contexts): compile with ep.context_enable=1,
// load the EPContext model, and require the plugin to judge its own context OPTIMAL, load it, and
// give bit-identical outputs. Inside the host's first context_judge (observer.h's hook, where the
// plugin's provider and the EPContext node are valid), the plugin's context_judge is also handed
// 10,000 damaged blobs: random bytes, truncations and bit flips of its own context. It must never
// crash and never say OPTIMAL for one of them.
#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>

#include "case_session.h"
#include "isolation.h"
#include "lifecycle_rules.h"
#include "observer/observer.h"
#include "ort_observer/ort_observer.h"
#include "sections.h"

namespace fs = std::filesystem;

namespace ephost_cts {
namespace {

constexpr char kSection[] = "epcontext";
constexpr size_t kDamagedBlobs = 10000;
constexpr size_t kMaxRoundTrips = 5;

struct Fuzz {
  ChildChannel* out = nullptr;
  bool ran = false;
};

// Blob `i` of the damaged set, from the plugin's own `blob`, with what was done to it.
std::vector<unsigned char> damaged(const unsigned char* blob, size_t size, size_t i, std::mt19937_64& rng,
                                   std::string& what) {
  std::vector<unsigned char> out;
  switch (i % 3) {
    case 0: {  // random bytes, up to twice the real size
      out.resize(rng() % (2 * size + 16));
      for (auto& b : out) b = static_cast<unsigned char>(rng());
      what = "random " + std::to_string(out.size()) + " bytes";
      break;
    }
    case 1: {  // the context cut short
      const size_t keep = size ? rng() % size : 0;
      out.assign(blob, blob + keep);
      what = "truncated to " + std::to_string(keep) + " of " + std::to_string(size) + " bytes";
      break;
    }
    default: {  // one to three bits flipped
      out.assign(blob, blob + size);
      what = "bits flipped at";
      for (int flips = 1 + static_cast<int>(rng() % 3); flips > 0 && size; --flips) {
        const size_t bit = rng() % (size * 8);
        out[bit / 8] ^= static_cast<unsigned char>(1u << (bit % 8));
        what += " " + std::to_string(bit);
      }
    }
  }
  return out;
}

void judge_damaged(void* user, const EphostHostApi* host, const EphostPlugin* plugin, EphostProvider* provider,
                   const EphostNode* node, const void* blob, size_t size) {
  Fuzz& fuzz = *static_cast<Fuzz*>(user);
  fuzz.ran = true;
  std::mt19937_64 rng(20240611);
  const auto* bytes = static_cast<const unsigned char*>(blob);
  size_t optimal = 0, failed = 0;
  std::string first_optimal;
  for (size_t i = 0; i < kDamagedBlobs; ++i) {
    std::string what;
    std::vector<unsigned char> b = damaged(bytes, size, i, rng, what);
    if (b.size() == size && std::equal(b.begin(), b.end(), bytes)) continue;  // not damaged after all
    if (i % 500 == 0 || i % 3 != 0) fuzz.out->step("judging damaged blob " + std::to_string(i) + ": " + what);
    // A copy of exactly its size: a judge that reads past the end reads past an allocation.
    std::unique_ptr<unsigned char[]> exact(new unsigned char[b.size() ? b.size() : 1]);
    std::copy(b.begin(), b.end(), exact.get());
    EphostContextVerdict verdict = EPHOST_CONTEXT_NOT_MINE;
    const char* reason = nullptr;
    EphostStatus* status = plugin->context_judge(provider, node, exact.get(), b.size(), &verdict, &reason);
    if (status) {
      ++failed;
      host->status_release(status);
    } else if (verdict == EPHOST_CONTEXT_OPTIMAL && optimal++ == 0) {
      first_optimal = what;
    }
  }
  fuzz.out->check({kSection, "context_judge on 10,000 damaged blobs",
                   optimal ? Outcome::kFail : Outcome::kPass,
                   optimal ? "OPTIMAL for " + std::to_string(optimal) + " damaged blobs, first: " + first_optimal
                           : "never crashed, never OPTIMAL (" + std::to_string(failed) + " returned an error status)"});
}

// The ONNX Runtime kind of judge: ValidateCompiledModelCompatibilityInfo on damaged versions of the
// compatibility string the host hands it (each a C string in a buffer of exactly its size).
void validate_damaged(void* user, const OrtApiBase* host, OrtEpFactory* factory, const OrtHardwareDevice* const* devices,
                      size_t num_devices, const char* info) {
  Fuzz& fuzz = *static_cast<Fuzz*>(user);
  fuzz.ran = true;
  const OrtApi* api = host->GetApi(EPHOST_ORT_API_VERSION_MIN);
  std::mt19937_64 rng(20240611);
  const std::string own = info ? info : "";
  const auto* bytes = reinterpret_cast<const unsigned char*>(own.data());
  size_t optimal = 0, failed = 0;
  std::string first_optimal;
  for (size_t i = 0; i < kDamagedBlobs; ++i) {
    std::string what;
    std::vector<unsigned char> b = damaged(bytes, own.size(), i, rng, what);
    const std::string text(reinterpret_cast<const char*>(b.data()), strnlen(reinterpret_cast<const char*>(b.data()), b.size()));
    if (text == own) continue;  // not damaged after all
    if (i % 500 == 0 || i % 3 != 0) fuzz.out->step("judging damaged blob " + std::to_string(i) + ": " + what);
    std::unique_ptr<char[]> exact(new char[text.size() + 1]);
    std::copy(text.begin(), text.end(), exact.get());
    exact[text.size()] = '\0';
    OrtCompiledModelCompatibility verdict = OrtCompiledModelCompatibility_EP_NOT_APPLICABLE;
    OrtStatus* status = factory->ValidateCompiledModelCompatibilityInfo(factory, devices, num_devices, exact.get(), &verdict);
    if (status) {
      ++failed;
      api->ReleaseStatus(status);
    } else if (verdict == OrtCompiledModelCompatibility_EP_SUPPORTED_OPTIMAL && optimal++ == 0) {
      first_optimal = what;
    }
  }
  fuzz.out->check({kSection, "ValidateCompiledModelCompatibilityInfo on 10,000 damaged strings",
                   optimal ? Outcome::kFail : Outcome::kPass,
                   optimal ? "EP_SUPPORTED_OPTIMAL for " + std::to_string(optimal) + " damaged strings, first: " + first_optimal
                           : "never crashed, never EP_SUPPORTED_OPTIMAL (" + std::to_string(failed) +
                                 " returned an error status)"});
}

// The fuzz check's name for this kind of plugin.
std::string judge_check(const KitSetup& setup) {
  return setup.ort ? "ValidateCompiledModelCompatibilityInfo on 10,000 damaged strings"
                   : "context_judge on 10,000 damaged blobs";
}

void round_trips_in(ChildChannel& out, const KitSetup& setup, const PluginFacts& facts, bool fuzz_judge);

// `fuzz`: also hand context_judge the damaged blobs (off when a first attempt crashed doing that, so
// that the round trips are still judged).
void round_trips(ChildChannel& out, const KitSetup& setup, const PluginFacts& facts, bool fuzz_judge) {
  setenv(EPHOST_CTS_TARGET_ENV, setup.plugin.c_str(), 1);
  out.step("loading the plugin behind the observer");
  round_trips_in(out, setup, facts, fuzz_judge);
  check_lifecycle_rules(out, kSection, setup.observer);
}

// round_trips' checks, with an env of their own (gone when they return).
void round_trips_in(ChildChannel& out, const KitSetup& setup, const PluginFacts& facts, bool fuzz_judge) {
  const Ephost::Env env = env_with(setup.observer);
  void* observer = dlopen(setup.observer.c_str(), RTLD_NOW | RTLD_NOLOAD);
  void* set_hook = observer ? dlsym(observer, setup.ort ? EPHOST_CTS_ORT_HOOK_SYMBOL : "ephost_cts_set_judge_hook")
                            : nullptr;
  if (set_hook == nullptr) throw std::runtime_error("the observer " + setup.observer + " is not loaded");
  Fuzz fuzz{&out};
  if (facts.has_context_judge && fuzz_judge && setup.ort)
    reinterpret_cast<EphostCtsSetOrtValidateHookFn>(set_hook)(&validate_damaged, &fuzz);
  else if (facts.has_context_judge && fuzz_judge)
    reinterpret_cast<EphostCtsSetJudgeHookFn>(set_hook)(&judge_damaged, &fuzz);
  const fs::path work = fs::temp_directory_path() / ("ephost-plugin-cts-" + std::to_string(getpid()));
  size_t trips = 0, without_context = 0;
  for (size_t i = 0; i < facts.claimed.size() && trips < kMaxRoundTrips; ++i) {
    if (!facts.claimed_fused[i]) continue;
    const ephost_cli::TestCase& c = facts.claimed[i];
    ++trips;
    const std::string name = "emit -> load round trip/" + c.name;
    out.step("compiling " + c.name + " into an EPContext model");
    std::string problem;
    try {
      fs::create_directories(work / c.name);
      const std::string ctx = (work / c.name / "model_ctx.onnx").string();
      Ephost::SessionOptions generate = plugin_first(facts.name);
      generate.add_config("ep.context_enable", "1").add_config("ep.context_file_path", ctx);
      const auto expected = CaseSession(env, c, facts.name, "", &generate).run();
      out.step("loading the EPContext model of " + c.name);
      Ephost::SessionOptions strict = plugin_first(facts.name);
      strict.add_config("session.disable_ep_context_fallback", "1");
      CaseSession loaded(env, c, facts.name, ctx, &strict);
      const nlohmann::json contexts = nlohmann::json::parse(loaded.session().ep_context_report_json());
      for (const auto& n : contexts)
        if (!n.value("loaded", false) || n.value("verdict", "") != "optimal")
          problem = "context " + n.value("node", "") + ": " + n.value("verdict", "") + " (" + n.value("reason", "") + ")";
      if (contexts.empty() && setup.ort) {
        // An ONNX Runtime plugin EP that makes no EPContext node when asked caches no context: not judged.
        ++without_context;
        continue;
      }
      if (contexts.empty()) problem = "the EPContext model holds no EPContext node";
      if (problem.empty()) problem = bitwise_difference(loaded.run(), expected);
    } catch (const Ephost::Exception& e) {
      problem = e.what();
    }
    out.check({kSection, name, problem.empty() ? Outcome::kPass : Outcome::kFail, problem});
  }
  std::error_code ignored;
  fs::remove_all(work, ignored);
  if (trips == 0)
    out.check({kSection, "emit -> load round trip", Outcome::kSkip, "the plugin compiles no fused group of the node cases"});
  else if (without_context == trips)
    out.check({kSection, "emit -> load round trip", Outcome::kSkip,
               "Compile made no EPContext node (ep_context_nodes) for any fused group: the plugin caches no context"});
  if (!fuzz.ran && fuzz_judge)
    out.check({kSection, judge_check(setup), Outcome::kSkip,
               setup.ort ? "no compiled model reached ValidateCompiledModelCompatibilityInfo (no "
                           "ep_compatibility_info.<ep> entry, or no such member)"
                         : facts.has_context_judge ? "no context reached context_judge" : "the plugin has no context_judge"});
}

}  // namespace

void check_epcontext(const KitSetup& setup, const PluginFacts& facts, Report& report) {
  if (!facts.load_error.empty()) {
    report.add({kSection, "contexts", Outcome::kFail, "libephost cannot use the plugin: " + facts.load_error});
    return;
  }
  if (facts.source_keys.empty()) {
    report.add({kSection, "contexts", Outcome::kSkip, "the plugin has no EPContext source keys"});
    return;
  }
  if (!facts.has_context_emit) {
    report.add({kSection, "contexts", Outcome::kSkip, "source keys, but no context_emit: the plugin caches no context"});
    return;
  }
  const ChildResult r =
      run_in_child([&](ChildChannel& out) { round_trips(out, setup, facts, true); }, setup.timeout_s);
  for (const Check& c : r.checks) report.add(c);
  if (r.completed) return;
  const bool judging = r.last_step.rfind("judging damaged blob", 0) == 0;
  report.add(child_failure(kSection, judging ? judge_check(setup) : "contexts", r.failure, r.last_step));
  if (!judging) return;
  const ChildResult again =
      run_in_child([&](ChildChannel& out) { round_trips(out, setup, facts, false); }, setup.timeout_s);
  for (const Check& c : again.checks) report.add(c);
  if (!again.completed) report.add(child_failure(kSection, "contexts", again.failure, again.last_step));
}

}  // namespace ephost_cts
