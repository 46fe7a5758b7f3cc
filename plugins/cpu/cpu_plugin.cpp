#include "cpu_plugin.h"

#include <sys/utsname.h>

#include <memory>
#include <string>

#include "cpu_provider.h"
#include "ephost/sdk/plugin.hpp"

#if defined(EPHOST_WITH_DNNL)
#include <oneapi/dnnl/dnnl.h>
#endif

namespace {

std::string backend_version() {
#if defined(EPHOST_WITH_DNNL)
  const dnnl_version_t* v = dnnl_version();
  return std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->patch);
#else
  return "none";
#endif
}

std::string machine() {
  struct utsname u {};
  if (uname(&u) == 0 && u.machine[0] != '\0') return u.machine;
  return "x86_64";
}

struct CpuDescribe {
  ephost::sdk::Description operator()() const {
    ephost::sdk::Description d;
    d.name = "cpu";
    d.vendor = "ephost";
    d.version = "0.1.0";
    d.device_type = EPHOST_DEVICE_CPU;
    d.sdk_version = backend_version();
    d.hardware_architecture = machine();
    d.default_priority = -1000;
    return d;
  }
};

struct CpuCreate {
  std::unique_ptr<ephost::sdk::Provider> operator()(const ephost::sdk::Options& options) const {
    return std::make_unique<ephost::cpu::CpuProvider>(options);
  }
};

}  // namespace

EPHOST_DEFINE_PLUGIN_ENTRY(ephost_cpu_plugin_negotiate, CpuDescribe, CpuCreate)
