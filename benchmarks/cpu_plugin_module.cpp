// The built-in CPU plugin built once more as a loadable plugin library named "cpu_module", for
// benchmarks only (ocr_isolation_bench.cpp): a plugin library that runs host-memory models such as
// PP-OCR det, so that the same code runs in process and in a provider host process. (The built-in CPU
// plugin is the host's own code: it never runs isolated.) Its table is the CPU plugin's own, with
// describe renamed; nothing else changes.
#include "cpu_plugin.h"

namespace {

EphostPlugin g_table;
EphostStatus* (*g_describe)(EphostPluginInfo*) = nullptr;

EphostStatus* describe_as_module(EphostPluginInfo* info) {
  EphostStatus* status = g_describe(info);
  if (!status) info->name = "cpu_module";
  return status;
}

}  // namespace

extern "C" EPHOST_EXPORT EphostStatus* ephost_plugin_negotiate(EphostPluginNegotiation* negotiation) {
  EphostStatus* status = ephost_cpu_plugin_negotiate(negotiation);
  if (status || !negotiation->plugin) return status;
  g_table = *negotiation->plugin;  // the SDK's table, built against this header: all of it is there
  g_describe = g_table.describe;
  g_table.describe = &describe_as_module;
  negotiation->plugin = &g_table;
  return nullptr;
}
