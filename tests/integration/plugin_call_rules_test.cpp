// The lifecycle rule checker (plugin_call_rules.h) on made-up histories: each broken rule is caught,
// so the lifecycle tests cannot pass because the checker looks at nothing.
#include <gtest/gtest.h>

#include "plugin_call_rules.h"

namespace {

using ephost_test::PluginCall;

// A history written call by call, each call taking the next two ticks (calls never overlap here).
class History {
 public:
  History& call(const std::string& function, const void* object = nullptr, const void* made = nullptr,
                const void* state = nullptr) {
    PluginCall c;
    c.plugin = "fake";
    c.function = function;
    c.object = object;
    c.made = made;
    c.state = state;
    c.begin = ++clock_;
    c.end = ++clock_;
    calls_.push_back(c);
    return *this;
  }
  std::vector<std::string> problems() const { return ephost_test::lifecycle_violations(calls_); }

 private:
  uint64_t clock_ = 0;
  std::vector<PluginCall> calls_;
};

// Handles: any distinct addresses.
int handles[4];
const void* const provider = &handles[0];
const void* const kernel = &handles[1];
const void* const unit = &handles[2];
const void* const state = &handles[3];

// A complete, well-ordered session: one kernel, one compute unit with a state, one run.
History good_session() {
  History h;
  h.call("negotiate").call("describe").call("provider_create", nullptr, provider);
  h.call("get_capability", provider).call("kernel_create", provider, kernel).call("compile", provider, unit);
  h.call("create_state", unit, state).call("on_run_start", provider).call("kernel_compute", kernel);
  h.call("compute", unit, nullptr, state).call("on_run_end", provider);
  return h;
}

void end_session(History& h) {
  h.call("kernel_release", kernel).call("release_state", unit, nullptr, state).call("release", unit);
  h.call("provider_release", provider).call("unload");
}

std::string joined(const std::vector<std::string>& problems) {
  std::string s;
  for (const auto& p : problems) s += p + "\n";
  return s;
}

TEST(PluginCallRules, AWellOrderedHistoryPasses) {
  History h = good_session();
  end_session(h);
  EXPECT_TRUE(h.problems().empty()) << joined(h.problems());
}

TEST(PluginCallRules, SomethingNeverReleasedIsCaught) {
  History h = good_session();
  h.call("kernel_release", kernel).call("release_state", unit, nullptr, state).call("provider_release", provider);
  EXPECT_NE(joined(h.problems()).find("compute unit made by fake compile"), std::string::npos) << joined(h.problems());
}

TEST(PluginCallRules, ProviderReleasedBeforeItsKernelIsCaught) {
  History h = good_session();
  h.call("release_state", unit, nullptr, state).call("release", unit).call("provider_release", provider);
  h.call("kernel_release", kernel).call("unload");
  EXPECT_NE(joined(h.problems()).find("release order"), std::string::npos) << joined(h.problems());
}

TEST(PluginCallRules, ComputeAfterReleaseStateIsCaught) {
  History h = good_session();
  h.call("release_state", unit, nullptr, state).call("compute", unit, nullptr, state).call("release", unit);
  h.call("kernel_release", kernel).call("provider_release", provider);
  EXPECT_NE(joined(h.problems()).find("fake compute("), std::string::npos) << joined(h.problems());
}

TEST(PluginCallRules, ASecondStateForOneUnitIsCaught) {
  int other = 0;
  History h = good_session();
  h.call("create_state", unit, &other);
  EXPECT_NE(joined(h.problems()).find("create_state ran twice"), std::string::npos) << joined(h.problems());
}

TEST(PluginCallRules, RunStartWithoutRunEndIsCaught) {
  History h = good_session();
  h.call("on_run_start", provider);
  end_session(h);
  EXPECT_NE(joined(h.problems()).find("2 on_run_start but 1 on_run_end"), std::string::npos) << joined(h.problems());
}

TEST(PluginCallRules, ACallAfterUnloadIsCaught) {
  History h = good_session();
  end_session(h);
  h.call("describe");
  EXPECT_NE(joined(h.problems()).find("after the library was unloaded"), std::string::npos) << joined(h.problems());
}

TEST(PluginCallRules, DoubleReleaseIsCaught) {
  History h = good_session();
  end_session(h);
  h.call("provider_release", provider);
  EXPECT_NE(joined(h.problems()).find("already released"), std::string::npos) << joined(h.problems());
}

}  // namespace
