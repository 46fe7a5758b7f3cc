// ABI section for an ONNX Runtime plugin EP library (CreateEpFactories / ReleaseEpFactory): what the
// library is (its exports, opened directly in a child), then what libephost's adapter makes of it (in
// another child): its factories created, the API version it asked for within what ephost serves (22..30),
// its name, vendor and version as ONNX Runtime requires them, and the devices it supports here.
#include <dlfcn.h>

#include <regex>

#include "case_session.h"
#include "isolation.h"
#include "ort_ep/ort_abi.h"
#include "sections.h"

namespace ephost_cts {
namespace {

constexpr char kSection[] = "abi";

void add(ChildChannel& out, const std::string& name, Outcome outcome, const std::string& detail) {
  out.check({kSection, name, outcome, detail});
}

void exports(ChildChannel& out, const std::string& path) {
  out.step("loading " + path);
  void* library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) return add(out, "load", Outcome::kFail, std::string("dlopen failed: ") + dlerror());
  const bool create = dlsym(library, ORT_EP_CREATE_FACTORIES_SYMBOL) != nullptr;
  const bool release = dlsym(library, ORT_EP_RELEASE_FACTORY_SYMBOL) != nullptr;
  const bool bridge = dlsym(library, ORT_PROVIDER_BRIDGE_SYMBOL) != nullptr;
  if (bridge)
    return add(out, "load", Outcome::kFail,
               "exports GetProvider: an ONNX Runtime provider-bridge library, which needs ONNX Runtime's internals and "
               "cannot be hosted; ship a plugin EP library (CreateEpFactories / ReleaseEpFactory only)");
  if (!create || !release)
    return add(out, "load", Outcome::kFail, "exports CreateEpFactories but not ReleaseEpFactory, or the reverse");
  add(out, "load", Outcome::kPass, "an ONNX Runtime plugin EP library (CreateEpFactories, ReleaseEpFactory)");
}

bool valid_name(const char* s) { return s && std::regex_match(s, std::regex("[A-Za-z0-9_.-]+")); }
bool valid_semver(const char* s) {
  static const std::regex semver(
      R"(^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$)");
  return s && std::regex_match(s, semver);
}

// "ONNX Runtime plugin EP (API 30, factory built for API 30)": the version it asked GetApi for.
int api_asked(const std::string& sdk_version) {
  std::smatch m;
  static const std::regex api(R"(\(API (\d+),)");
  return std::regex_search(sdk_version, m, api) ? std::stoi(m[1]) : -1;
}

void adoption(ChildChannel& out, const std::string& path) {
  out.step("creating the factories through libephost (CreateEpFactories, GetSupportedDevices)");
  try {
    Ephost::Env env = env_with(path);
    // One provider per factory: each is checked (its name, API, fields and devices).
    bool any = false;
    for (const EphostPluginReport& r : env.plugin_reports()) {
      if (std::string(r.path) == "<built-in>") continue;
      any = true;
      if (!r.loaded) return add(out, "factories", Outcome::kFail, std::string("libephost refused it: ") + r.reason);
      add(out, "factories", Outcome::kPass, std::string("factory '") + r.name + "' (" + r.sdk_version + ")");
      const int asked = api_asked(r.sdk_version ? r.sdk_version : "");
      const bool served = asked >= int(EPHOST_ORT_API_VERSION_MIN) && asked <= int(EPHOST_ORT_API_VERSION_MAX);
      add(out, "negotiation/API version asked", served ? Outcome::kPass : Outcome::kFail,
          "asked OrtApiBase::GetApi for " + std::to_string(asked) + (served ? "" : ", outside 22..30"));
      std::string problem;
      if (!valid_name(r.name)) problem = std::string("GetName '") + r.name + "' is not [A-Za-z0-9_.-]+";
      else if (!r.vendor || !*r.vendor) problem = "GetVendor answered nothing";
      else if (!valid_semver(r.version))
        problem = std::string("GetVersion '") + r.version + "' is not a semantic version (ONNX Runtime asks for one)";
      add(out, "describe/fields", problem.empty() ? Outcome::kPass : Outcome::kFail,
          problem.empty() ? std::string("name ") + r.name + ", vendor " + r.vendor + ", version " + r.version : problem);
      size_t devices = 0;
      for (const EphostDeviceReport& d : env.devices()) devices += std::string(d.plugin) == r.name;
      add(out, "devices", devices ? Outcome::kPass : Outcome::kSkip,
          std::string("factory '") + r.name + "': " +
              (devices ? std::to_string(devices) + " device(s) from GetSupportedDevices"
                       : "GetSupportedDevices listed no device on this machine's hardware that ephost can serve"));
    }
    if (!any) add(out, "factories", Outcome::kFail, "libephost made no plugin of it");
  } catch (const Ephost::Exception& e) {
    add(out, "factories", Outcome::kFail, std::string("libephost cannot load it: ") + e.what());
  }
}

}  // namespace

bool is_ort_plugin_ep(const std::string& path, int timeout_s) {
  const ChildResult r = run_in_child(
      [&](ChildChannel& out) {
        void* library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
        out.data({{"ort", library && dlsym(library, ORT_EP_CREATE_FACTORIES_SYMBOL) &&
                              !dlsym(library, "ephost_plugin_negotiate")}});
      },
      timeout_s);
  for (const auto& d : r.data)
    if (d.value("ort", false)) return true;
  return false;
}

void check_ort_contract(const KitSetup& setup, Report& report) {
  const ChildResult e = run_in_child([&](ChildChannel& out) { exports(out, setup.plugin); }, setup.timeout_s);
  for (const Check& c : e.checks) report.add(c);
  if (!e.completed) report.add(child_failure(kSection, "load", e.failure, e.last_step));
  const ChildResult a = run_in_child([&](ChildChannel& out) { adoption(out, setup.plugin); }, setup.timeout_s);
  for (const Check& c : a.checks) report.add(c);
  if (!a.completed) report.add(child_failure(kSection, "factories", a.failure, a.last_step));
}

}  // namespace ephost_cts
