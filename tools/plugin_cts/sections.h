// The kit's three sections and what they share. Each section runs its risky parts in children
// (isolation.h) and adds its checks to the report.
#pragma once

#include <string>
#include <vector>

#include "node_case.h"
#include "report.h"

namespace ephost_cts {

struct KitSetup {
  std::string plugin;     // the library under test
  std::string observer;   // libephost_cts_observer.so (observer/observer.h)
  std::string cases_dir;  // the ONNX backend node cases shipped with the kit
  int timeout_s = 120;    // a child that reports nothing for this long is killed (FAIL)
  // An ONNX Runtime plugin EP library (CreateEpFactories / ReleaseEpFactory): checked through libephost's
  // adapter, with the ONNX Runtime observer (ort_observer/ort_observer.h) as `observer`.
  bool ort = false;
  // The library's provider the session checks run on: "" for its first (an ephost plugin's only one). An
  // ONNX Runtime plugin EP library serves one provider per factory; the kit checks each in turn.
  std::string provider;
};

// Whether the library at `path` is an ONNX Runtime plugin EP library (opened in a child).
bool is_ort_plugin_ep(const std::string& path, int timeout_s);

// What the plugin is, learned once: from its own negotiation and describe (raw_plugin.h) and from a
// session per node case through libephost (which cases it claims nodes of).
struct PluginFacts {
  std::string load_error;  // non-empty: libephost could not load it (and why)
  std::string name;
  std::vector<std::string> source_keys;
  bool has_context_emit = false, has_context_judge = false, has_context_load = false;
  std::vector<ephost_cli::TestCase> cases;    // every shipped case
  std::vector<ephost_cli::TestCase> claimed;  // those the plugin runs a node of
  std::vector<bool> claimed_fused;            // parallel to `claimed`: in a fused group
};
PluginFacts learn_plugin(const KitSetup& setup, Report& report);
// The names of the providers libephost makes of the library, in order (one per factory of an ONNX Runtime
// plugin EP library); empty when it makes none (the sections then say why).
std::vector<std::string> library_providers(const KitSetup& setup);

// The plugin ABI: negotiation across version ranges, struct_size rules, describe's fields
// (abi_contract.cpp); lifetimes, 8 threads at once, on_run_start/on_run_end pairing, valid claims
// (abi_runtime.cpp).
void check_abi_contract(const KitSetup& setup, Report& report);
// The same for an ONNX Runtime plugin EP library: its exports, its factories as libephost's adapter
// creates them, the API version it asked for, its name, vendor, version and devices (ort_contract.cpp).
void check_ort_contract(const KitSetup& setup, Report& report);
void check_abi_runtime(const KitSetup& setup, const PluginFacts& facts, Report& report);
// Every claimed node case against its expected outputs, the plugin first in the providers.
void check_numerical(const KitSetup& setup, const PluginFacts& facts, Report& report);
// EPContext: emit -> load round trip bit-identical; context_judge on 10,000 damaged blobs.
void check_epcontext(const KitSetup& setup, const PluginFacts& facts, Report& report);

// A check that failed because the child doing it crashed, hung or could not start.
Check child_failure(const std::string& section, const std::string& what, const std::string& failure,
                    const std::string& last_step);

}  // namespace ephost_cts
