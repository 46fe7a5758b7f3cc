// Numerical section: every shipped node case run with the plugin first in the providers and compared
// with its expected outputs (the ONNX backend tolerances). A case of which the plugin runs no node is
// SKIP: its numbers are not the plugin's. Cases run in a child; when the plugin crashes or hangs on
// one, that case fails and a new child goes on with the next.
#include "case_session.h"
#include "isolation.h"
#include "sections.h"

namespace ephost_cts {
namespace {

constexpr char kSection[] = "numerical";

// The rest of a case (nodes the plugin left) that the CPU plugin cannot run says nothing about the
// plugin: it is not judged.
bool cpu_cannot_complete(const ephost_cli::CaseResult& r) {
  return r.outcome == ephost_cli::Outcome::kFail && r.reason.find("session creation failed") == 0 &&
         r.reason.find("no provider claimed") != std::string::npos;
}

void run_cases(ChildChannel& out, const KitSetup& setup, const PluginFacts& facts, size_t first) {
  const Ephost::Env env = env_with(setup.plugin);
  const Ephost::SessionOptions options = plugin_first(facts.name);
  for (size_t i = first; i < facts.cases.size(); ++i) {
    const ephost_cli::TestCase& c = facts.cases[i];
    out.step("case " + std::to_string(i) + " " + c.name);
    ephost_cli::CaseResult r;
    try {
      r = ephost_cli::run_case(env, options, c, ephost_cli::Tolerance{}, facts.name);
    } catch (const std::exception& e) {
      r = {ephost_cli::Outcome::kFail, e.what()};
    }
    Check check{kSection, c.name, Outcome::kPass, r.note};
    if (cpu_cannot_complete(r)) {
      check.outcome = Outcome::kSkip;
      check.detail = "not judged: the nodes the plugin leaves cannot run on the CPU plugin (" + r.reason + ")";
    } else if (r.outcome != ephost_cli::Outcome::kPass) {
      check.outcome = r.outcome == ephost_cli::Outcome::kFail ? Outcome::kFail : Outcome::kSkip;
      check.detail = r.reason;
    }
    out.check(check);
  }
}

}  // namespace

void check_numerical(const KitSetup& setup, const PluginFacts& facts, Report& report) {
  if (!facts.load_error.empty()) {
    report.add({kSection, "cases", Outcome::kFail, "libephost cannot use the plugin: " + facts.load_error});
    return;
  }
  size_t next = 0;
  while (next < facts.cases.size()) {
    const ChildResult r = run_in_child([&](ChildChannel& out) { run_cases(out, setup, facts, next); }, setup.timeout_s);
    for (const Check& c : r.checks) report.add(c);
    next += r.checks.size();
    if (r.completed) break;
    if (r.checks.empty() && r.last_step.rfind("case ", 0) != 0) {  // died before its first case
      report.add(child_failure(kSection, "cases", r.failure, r.last_step));
      break;
    }
    if (next < facts.cases.size()) {
      // The child died on case `next`: that case fails, and the rest go on in a new child.
      report.add(child_failure(kSection, facts.cases[next].name, r.failure, r.last_step));
      ++next;
    }
  }
}

}  // namespace ephost_cts
