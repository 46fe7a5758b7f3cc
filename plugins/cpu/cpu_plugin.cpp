#include "cpu_plugin.h"

#include <sys/utsname.h>

#include <memory>
#include <string>

#include "cpu_provider.h"
#include "math/isa.h"
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

// The machine and, on x86-64, the ISA tier the plugin's own loops run ("x86_64/avx512"; math/isa.h),
// so that `ephost plugins` and `ephost bench` say which path a number came from.
std::string hardware_architecture() {
  std::string arch = machine();
#if defined(__x86_64__)
  arch += std::string("/") + ephost::cpu::math::isa_name(ephost::cpu::math::active_isa());
#endif
  return arch;
}

struct CpuDescribe {
  ephost::sdk::Description operator()() const {
    ephost::sdk::Description d;
    d.name = "cpu";
    d.vendor = "ephost";
    d.version = "0.1.0";
    d.device_type = EPHOST_DEVICE_CPU;
    d.sdk_version = backend_version();
    d.hardware_architecture = hardware_architecture();
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
