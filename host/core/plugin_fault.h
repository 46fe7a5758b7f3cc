// What the host can still do when a plugin's own code crashes or hangs in process: name it. A crash
// (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT) or a hang inside a plugin call cannot be survived while
// providers run in the host process, but the report can say which plugin, which library and which
// call, instead of a bare "Segmentation fault". Probing (negotiation, describe) runs in the plugin
// scanner's child process and is survived (discovery/plugin_scanner.h); this covers what runs later:
// provider_create, get_capability, compile, kernels and compute.
//
// Every call into plugin code is bracketed by a PluginCallScope (discovery and provider/ do it). The
// fault reporter, a handler for the fatal signals above, writes one line to stderr naming the call in
// progress on the crashing thread, then hands the signal on to whatever handler was there before (or
// the default action), so the process still dies as it would have. The hang watchdog, a thread, logs
// a warning naming each plugin call that has not returned after a threshold.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace ephost {

// Marks the calling thread as inside plugin code for its lifetime. The strings are not copied: they
// must outlive the scope (the plugin's record, a string the caller holds across the call). Scopes nest
// (a plugin's compute running a subgraph that calls another plugin); the innermost one is reported.
// Costs two thread-local stores and two atomic stores: cheap enough around every kernel compute.
class PluginCallScope {
 public:
  PluginCallScope(const char* plugin, const char* library, const char* call) noexcept;
  ~PluginCallScope();
  PluginCallScope(const PluginCallScope&) = delete;
  PluginCallScope& operator=(const PluginCallScope&) = delete;

 private:
  const char* saved_plugin_;
  const char* saved_library_;
  const char* saved_call_;
  int64_t saved_start_ns_;
};

// The plugin of the innermost PluginCallScope on the calling thread, or nullptr outside plugin calls.
const char* plugin_in_call();

// Installs the fault reporter once per process (later calls do nothing). Chains to the handlers
// installed before it: a signal outside any plugin call goes to them untouched.
void install_plugin_fault_reporter();

// Starts the hang watchdog (once per process), or lowers its threshold: a plugin call running longer
// than `threshold` is logged at warning level, once per call, naming the plugin, its library and the
// call. A threshold of zero or less does nothing.
void start_plugin_hang_watchdog(std::chrono::milliseconds threshold);

// The fault journal: what a process that crashes can still tell the next one. A crash inside a plugin
// call (from the fault reporter's signal handler: one write(2) of a line prepared without allocating)
// and a call the hang watchdog finds running past its threshold each append one line to the journal
// file, opened here ahead of any fault. The next process reads it (isolation/fault_memory.h) and, in
// isolation mode auto, runs that plugin in a provider host process. A call journaled as hung that
// returns after all appends "returned", which cancels that hang. A line (tab-separated):
//   crashed|hung|returned <TAB> <unix seconds> <TAB> <signal | "N ms"> <TAB> <library path> <TAB> <call>
//   <TAB> <plugin> <NL>
// where <plugin> is the PluginCallScope's plugin: the provider (an ONNX Runtime library's factory) for
// calls of one provider, the library's file name for calls of the whole library (loading it). Journals
// written before the plugin field have five fields.
// The journal lives beside the plugin registry cache (plugin_fault_journal_path). `path` "" closes it.
// Later calls replace the file (one journal per process: the last env's). Never throws; a journal that
// cannot be opened is logged and nothing is remembered.
void set_plugin_fault_journal(const std::string& path);

// The journal beside the registry cache file `registry_file` ("<registry_file>.faults"); "" when the
// cache is off ("").
std::string plugin_fault_journal_path(const std::string& registry_file);

// "SIGSEGV (segmentation fault)", "SIGKILL", ...; "an unnamed signal" for the rest. Static storage
// (the fault reporter calls it inside its signal handler).
const char* signal_description(int signal);

}  // namespace ephost
