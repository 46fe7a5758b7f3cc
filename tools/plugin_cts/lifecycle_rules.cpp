#include "lifecycle_rules.h"

#include <dlfcn.h>

#include <stdexcept>
#include <vector>

#include "observer/observer.h"
#include "plugin_call_rules.h"

namespace ephost_cts {

namespace {
constexpr size_t kShownViolations = 5;
}  // namespace

void check_lifecycle_rules(ChildChannel& out, const std::string& section, const std::string& observer) {
  out.step("checking the lifecycle rules on every call the host made");
  void* library = dlopen(observer.c_str(), RTLD_NOW | RTLD_NOLOAD);
  auto calls_of = library ? reinterpret_cast<EphostCtsCallsFn>(dlsym(library, "ephost_cts_calls")) : nullptr;
  if (calls_of == nullptr) throw std::runtime_error("the observer " + observer + " is not loaded");
  std::vector<ephost::observer::PluginCall> calls;
  calls_of(&calls);
  const std::vector<std::string> problems = ephost::observer::lifecycle_violations(calls);
  std::string detail;
  if (problems.empty()) {
    detail = std::to_string(calls.size()) + " calls: every provider, kernel, compute unit and state released once, "
             "in order, and used only while alive; every run start ended";
  } else {
    for (size_t i = 0; i < problems.size() && i < kShownViolations; ++i) detail += (i ? "; " : "") + problems[i];
    if (problems.size() > kShownViolations)
      detail += " (and " + std::to_string(problems.size() - kShownViolations) + " more)";
  }
  out.check({section, "lifecycle rules", problems.empty() ? Outcome::kPass : Outcome::kFail, detail});
}

}  // namespace ephost_cts
