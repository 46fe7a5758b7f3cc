// ephost-plugin-cts PLUGIN.so [--json] [--section abi|numerical|epcontext]...: the conformance kit a
// plugin author runs against their provider plugin (README.md beside this file). Each section's
// risky work runs in child processes, so a plugin that crashes or hangs gets a FAIL, not a dead kit.
// Exit status: 0 when no check failed, 1 when one did, 2 for a usage error.
#include <CLI/CLI.hpp>
#include <unistd.h>

#include <filesystem>
#include <iostream>

#include "private_registry.h"
#include "report.h"
#include "sections.h"

namespace fs = std::filesystem;
using namespace ephost_cts;

namespace {

fs::path executable_dir() {
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path(".") : self.parent_path();
}

// An installed kit finds its files relative to itself; the build tree's kit where they were built.
std::string locate(const char* env_name, const fs::path& installed, const char* built) {
  if (const char* from_env = std::getenv(env_name); from_env && *from_env) return from_env;
  std::error_code ec;
  if (fs::exists(installed, ec)) return installed.lexically_normal().string();
  return built;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Checks a provider plugin against the ephost plugin ABI: ABI behaviour, numerical results on the "
               "ONNX backend node cases, EPContext caching.",
               "ephost-plugin-cts"};
  KitSetup setup;
  std::vector<std::string> sections;
  bool json = false, verbose = false;
  app.add_option("plugin", setup.plugin, "The plugin library (.so)")->required()->check(CLI::ExistingFile);
  app.add_option("--section", sections, "Only these sections (repeatable): abi, numerical, epcontext")
      ->check(CLI::IsMember({"abi", "numerical", "epcontext"}))
      ->type_size(1)
      ->allow_extra_args(false);
  app.add_flag("--json", json, "Print the verdict as JSON");
  app.add_flag("-v,--verbose", verbose, "Also print passing checks");
  app.add_option("--cases", setup.cases_dir, "ONNX node cases to use instead of the shipped ones")
      ->check(CLI::ExistingDirectory);
  app.add_option("--timeout", setup.timeout_s, "Seconds a check may go without progress before it fails")
      ->check(CLI::Range(1, 3600))
      ->default_str("120");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  if (sections.empty()) sections = {"abi", "numerical", "epcontext"};
  setup.plugin = fs::absolute(setup.plugin).string();
  const fs::path prefix = executable_dir().parent_path();
  setup.ort = is_ort_plugin_ep(setup.plugin, setup.timeout_s);
  setup.observer = setup.ort ? locate("EPHOST_CTS_ORT_OBSERVER", prefix / EPHOST_CTS_INSTALLED_ORT_OBSERVER,
                                      EPHOST_CTS_BUILT_ORT_OBSERVER)
                             : locate("EPHOST_CTS_OBSERVER", prefix / EPHOST_CTS_INSTALLED_OBSERVER,
                                      EPHOST_CTS_BUILT_OBSERVER);
  if (setup.cases_dir.empty())
    setup.cases_dir = locate("EPHOST_CTS_CASES", prefix / EPHOST_CTS_INSTALLED_CASES, EPHOST_CTS_BUILT_CASES);

  Report report;
  try {
    // Before any child is forked or env created: every one of them uses the kit's own registry cache.
    const PrivateRegistry registry;
    const auto wants = [&](const char* s) { return std::find(sections.begin(), sections.end(), s) != sections.end(); };
    if (wants("abi")) setup.ort ? check_ort_contract(setup, report) : check_abi_contract(setup, report);
    // An ONNX Runtime plugin EP library is one provider per factory: the session checks run on each, and
    // name it ("<check> [<provider>]") when there are several.
    std::vector<std::string> providers = setup.ort ? library_providers(setup) : std::vector<std::string>{};
    if (providers.size() < 2) providers = {""};
    for (const std::string& provider : providers) {
      KitSetup one = setup;
      one.provider = provider;
      Report part;
      const PluginFacts facts = learn_plugin(one, part);
      if (wants("abi")) check_abi_runtime(one, facts, part);
      if (wants("numerical")) check_numerical(one, facts, part);
      if (wants("epcontext")) check_epcontext(one, facts, part);
      for (Check c : part.checks()) {
        if (!provider.empty()) c.name += " [" + provider + "]";
        report.add(std::move(c));
      }
    }
  } catch (const std::exception& e) {
    std::cerr << "ephost-plugin-cts: error: " << e.what() << std::endl;
    return 2;
  }
  if (json)
    std::cout << report.to_json(setup.plugin, sections).dump(2) << std::endl;
  else
    report.print(std::cout, sections, verbose);
  return report.failed() ? 1 : 0;
}
