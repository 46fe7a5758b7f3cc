#include "raw_plugin.h"

#include <dlfcn.h>

#include <cstdio>
#include <exception>
#include <map>
#include <memory>

namespace ephost_cts {
namespace {

// The kit's status objects (EphostStatus is opaque to plugins: only the host looks inside).
struct KitStatus {
  EphostStatusCode code;
  std::string message;
};
KitStatus* kit_status(const EphostStatus* s) { return reinterpret_cast<KitStatus*>(const_cast<EphostStatus*>(s)); }

EphostStatus* status_create(EphostStatusCode code, const char* message) {
  if (code == EPHOST_OK) return nullptr;
  return reinterpret_cast<EphostStatus*>(new KitStatus{code, message ? message : ""});
}
void status_release(EphostStatus* s) { delete kit_status(s); }
EphostStatusCode status_code(const EphostStatus* s) { return s ? kit_status(s)->code : EPHOST_OK; }
const char* status_message(const EphostStatus* s) { return s ? kit_status(s)->message.c_str() : ""; }
void log(const EphostProvider*, EphostLogLevel, const char*) {}

}  // namespace

const EphostHostApi* negotiation_host(uint32_t version) {
  static std::map<uint32_t, std::unique_ptr<EphostHostApi>> tables;
  auto& table = tables[version];
  if (!table) {
    table = std::make_unique<EphostHostApi>();
    table->struct_size = EphostHostApiSize(version);
    table->abi_version = version;
    table->status_create = &status_create;
    table->status_release = &status_release;
    table->status_code = &status_code;
    table->status_message = &status_message;
    table->log = &log;
  }
  return table.get();
}

StatusText take_status(EphostStatus* status) {
  StatusText text;
  if (status == nullptr) return text;
  text.code = status_code(status);
  text.message = status_message(status);
  status_release(status);
  return text;
}

RawPlugin::RawPlugin(const std::string& path) {
  handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle_ == nullptr) {
    const char* why = dlerror();
    error_ = std::string("cannot load ") + path + ": " + (why ? why : "dlopen failed");
    return;
  }
  entry_ = reinterpret_cast<EphostPluginNegotiateFn>(dlsym(handle_, EPHOST_PLUGIN_ENTRY_POINT));
  if (entry_ == nullptr) error_ = path + " does not export " + EPHOST_PLUGIN_ENTRY_POINT;
}

NegotiationAnswer negotiate(const RawPlugin& plugin, uint32_t host_min, uint32_t host_max) {
  NegotiationAnswer answer;
  EphostPluginNegotiation n{};
  n.struct_size = sizeof(n);
  n.host_min_abi_version = host_min;
  n.host_max_abi_version = host_max;
  const uint32_t table_version = host_max < EPHOST_PLUGIN_ABI_VERSION ? host_max : EPHOST_PLUGIN_ABI_VERSION;
  n.host_api = negotiation_host(table_version);
  try {
    answer.refusal = take_status(plugin.entry()(&n));
  } catch (const std::exception& e) {
    answer.threw = true;
    answer.exception = e.what();
  } catch (...) {
    answer.threw = true;
    answer.exception = "an exception that is no std::exception";
  }
  answer.version = n.plugin_abi_version;
  answer.table = n.plugin;
  return answer;
}

std::string answer_problem(const NegotiationAnswer& a, uint32_t host_min, uint32_t host_max) {
  if (a.threw) return "a C++ exception crossed the ABI from negotiation: " + a.exception;
  if (a.refusal.code != EPHOST_OK) return "";
  if (a.version < host_min || a.version > host_max)
    return "answered ABI " + std::to_string(a.version) + ", outside the offered range [" + std::to_string(host_min) +
           "," + std::to_string(host_max) + "]";
  if (a.table == nullptr) return "accepted but answered no function table";
  if (a.table->abi_version != a.version)
    return "the table says ABI " + std::to_string(a.table->abi_version) + " but negotiation answered " +
           std::to_string(a.version);
  if (a.version <= EPHOST_PLUGIN_ABI_VERSION && a.table->struct_size < EphostPluginSize(a.version))
    return "table struct_size " + std::to_string(a.table->struct_size) + " is below ABI " + std::to_string(a.version) +
           "'s " + std::to_string(EphostPluginSize(a.version));
  const struct {
    const char* name;
    bool present;
  } required[] = {{"describe", a.table->describe != nullptr},
                  {"provider_create", a.table->provider_create != nullptr},
                  {"provider_release", a.table->provider_release != nullptr},
                  {"get_capability", a.table->get_capability != nullptr}};
  for (const auto& m : required)
    if (!m.present) return std::string("the table lacks required member ") + m.name;
  return "";
}

}  // namespace ephost_cts
