// The entry point of libephost_opencl.so: the plugin's identity, a provider per session and device, and the
// devices (every device of every OpenCL platform).
#include "cl_devices.h"
#include "cl_runtime.h"
#include "provider.h"

namespace {

using namespace ephost_opencl;

struct Describe {
  ephost::sdk::Description operator()() const {
    ephost::sdk::Description d;
    d.name = "opencl";
    d.vendor = "ephost";
    d.version = plugin_version();
    d.device_type = EPHOST_DEVICE_GPU;
    d.context_source_keys = {"OPENCL", "OpenCLExecutionProvider"};
    d.sdk_version = "OpenCL 1.2";
    // The driver of the device a bare "opencl" most likely means: the first GPU or accelerator, else the
    // first device. Each device reports its own driver too (ephost plugins).
    const auto& devices = ClRuntime::instance().devices();
    for (const auto& device : devices)
      if (!(device->identity().type & CL_DEVICE_TYPE_CPU)) {
        d.driver_version = device->identity().driver_version;
        break;
      }
    if (d.driver_version.empty() && !devices.empty()) d.driver_version = devices.front()->identity().driver_version;
    d.default_priority = 250;
    return d;
  }
};

struct Create {
  std::unique_ptr<OpenclProvider> operator()(const ephost::sdk::Options& options, uint32_t device) const {
    return std::make_unique<OpenclProvider>(ProviderOptions::parse(options), device);
  }
};

}  // namespace

EPHOST_DEFINE_DEVICE_PLUGIN(Describe, Create, ephost_opencl::OpenclDevices)
