// What the plugin is and which shipped node cases it claims nodes of, learned in children: its table
// and description from its own negotiation, its claims from one session per case through libephost.
#include <nlohmann/json.hpp>

#include "case_session.h"
#include "isolation.h"
#include "raw_plugin.h"
#include "sections.h"

namespace ephost_cts {
namespace {

void learn_members(ChildChannel& out, const std::string& path) {
  RawPlugin plugin(path);
  if (!plugin.error().empty()) return;
  const NegotiationAnswer a = negotiate(plugin, EPHOST_PLUGIN_ABI_MIN_VERSION, EPHOST_PLUGIN_ABI_VERSION);
  if (!answer_problem(a, EPHOST_PLUGIN_ABI_MIN_VERSION, EPHOST_PLUGIN_ABI_VERSION).empty() || a.table == nullptr) return;
  out.data({{"context_emit", a.table->context_emit != nullptr},
            {"context_judge", a.table->context_judge != nullptr},
            {"context_load", a.table->context_load != nullptr}});
}

void learn_claims(ChildChannel& out, const std::string& path, const std::string& provider,
                  const std::vector<ephost_cli::TestCase>& cases) {
  out.step("loading " + path + " through libephost");
  std::string name;
  std::vector<std::string> keys;
  try {
    Ephost::Env env = env_with(path);
    for (const EphostPluginReport& r : env.plugin_reports())
      if (r.loaded && std::string(r.path) != "<built-in>" && name.empty() && (provider.empty() || provider == r.name)) {
        name = r.name;
        const std::string joined = r.source_keys ? r.source_keys : "";
        for (size_t start = 0; start < joined.size();) {
          size_t comma = joined.find(',', start);
          if (comma == std::string::npos) comma = joined.size();
          if (comma > start) keys.push_back(joined.substr(start, comma - start));
          start = comma + 1;
        }
      }
    out.data({{"name", name}, {"source_keys", keys}});
    for (size_t i = 0; i < cases.size(); ++i) {
      out.step("asking for claims on " + cases[i].name);
      try {
        Ephost::Session session(env, (cases[i].dir / "model.onnx").string(), plugin_first(name));
        const nlohmann::json report = nlohmann::json::parse(session.partition_report_json());
        bool ran = false, fused = false;
        for (const auto& graph : report.at("graphs"))
          for (const auto& node : graph.at("nodes"))
            if (node.at("provider") == name) {
              ran = true;
              fused |= !node.at("fused_group").is_null();
            }
        if (ran) out.data({{"claimed", i}, {"fused", fused}});
      } catch (const Ephost::Exception&) {
        // The numerical section reports cases whose session cannot be created.
      }
    }
  } catch (const Ephost::Exception& e) {
    out.data({{"load_error", e.what()}});
  }
}

}  // namespace

PluginFacts learn_plugin(const KitSetup& setup, Report& report) {
  PluginFacts facts;
  facts.cases = ephost_cli::find_cases(setup.cases_dir);
  // An ONNX Runtime plugin EP says whether it makes EPContext nodes only when asked to compile with
  // contexts: the epcontext section finds out, and skips when it makes none.
  facts.has_context_emit = facts.has_context_judge = facts.has_context_load = setup.ort;
  const ChildResult members = run_in_child([&](ChildChannel& out) { if (!setup.ort) learn_members(out, setup.plugin); },
                                           setup.timeout_s);
  for (const auto& d : members.data) {
    facts.has_context_emit = d.value("context_emit", false);
    facts.has_context_judge = d.value("context_judge", false);
    facts.has_context_load = d.value("context_load", false);
  }
  const ChildResult claims =
      run_in_child([&](ChildChannel& out) { learn_claims(out, setup.plugin, setup.provider, facts.cases); }, setup.timeout_s);
  for (const auto& d : claims.data) {
    if (d.contains("load_error")) facts.load_error = d.at("load_error").get<std::string>();
    if (d.contains("name")) {
      facts.name = d.at("name").get<std::string>();
      facts.source_keys = d.at("source_keys").get<std::vector<std::string>>();
    }
    if (d.contains("claimed")) {
      facts.claimed.push_back(facts.cases.at(d.at("claimed").get<size_t>()));
      facts.claimed_fused.push_back(d.at("fused").get<bool>());
    }
  }
  if (facts.name.empty() && facts.load_error.empty())
    facts.load_error = claims.completed ? "libephost loaded no plugin from the library"
                                        : "loading it through libephost " + claims.failure + " (" + claims.last_step + ")";
  else if (!claims.completed)
    report.add(child_failure("abi", "claims on the node cases", claims.failure, claims.last_step));
  return facts;
}

std::vector<std::string> library_providers(const KitSetup& setup) {
  const ChildResult listed = run_in_child(
      [&](ChildChannel& out) {
        out.step("loading " + setup.plugin + " through libephost");
        try {
          Ephost::Env env = env_with(setup.plugin);
          for (const EphostPluginReport& r : env.plugin_reports())
            if (r.loaded && std::string(r.path) != "<built-in>") out.data({{"provider", r.name}});
        } catch (const Ephost::Exception&) {
          // learn_plugin reports why it cannot be loaded.
        }
      },
      setup.timeout_s);
  std::vector<std::string> names;
  for (const auto& d : listed.data) names.push_back(d.at("provider").get<std::string>());
  return names;
}

Check child_failure(const std::string& section, const std::string& what, const std::string& failure,
                    const std::string& last_step) {
  return {section, what, Outcome::kFail, failure + (last_step.empty() ? "" : " while " + last_step)};
}

}  // namespace ephost_cts
