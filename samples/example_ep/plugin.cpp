// The example EP's entry point: who it is (Describe) and how a session gets a provider (Create).
// Everything else lives in the files named after their job; see README.md.
#include <memory>

#include "ephost/sdk/plugin.hpp"
#include "provider.h"

// The version of the (imaginary) backend SDK this plugin is built with. Programs record it, and a
// context made with another major version is refused: the tests build the plugin a second time with
// another value to check that.
#ifndef EXAMPLE_EP_SDK_VERSION
#define EXAMPLE_EP_SDK_VERSION "1.0.0"
#endif

// The machine the programs are compiled for: the build machine's architecture.
#if defined(EXAMPLE_EP_HARDWARE_ARCHITECTURE)
#elif defined(__x86_64__) || defined(_M_X64)
#define EXAMPLE_EP_HARDWARE_ARCHITECTURE "x86_64"
#elif defined(__aarch64__) || defined(_M_ARM64)
#define EXAMPLE_EP_HARDWARE_ARCHITECTURE "aarch64"
#elif defined(__riscv) && __riscv_xlen == 64
#define EXAMPLE_EP_HARDWARE_ARCHITECTURE "riscv64"
#else
#define EXAMPLE_EP_HARDWARE_ARCHITECTURE "unknown"
#endif

namespace {

const example_ep::BuildIdentity& build_identity() {
  static const example_ep::BuildIdentity identity{EXAMPLE_EP_SDK_VERSION, EXAMPLE_EP_HARDWARE_ARCHITECTURE};
  return identity;
}

struct Describe {
  ephost::sdk::Description operator()() const {
    ephost::sdk::Description d;
    d.name = "example";
    d.vendor = "ephost samples";
    d.version = "1.0.0";
    d.device_type = EPHOST_DEVICE_CPU;
    // EPContext nodes whose `source` is one of these are offered to this plugin.
    d.context_source_keys = {"EXAMPLE", "ExampleExecutionProvider"};
    d.sdk_version = build_identity().sdk_version;
    d.hardware_architecture = build_identity().hardware_architecture;
    d.default_priority = 200;
    return d;
  }
};

struct Create {
  // Returning the concrete type (a ContextProvider) is what makes the SDK fill the EPContext slots.
  std::unique_ptr<example_ep::ExampleProvider> operator()(const ephost::sdk::Options& options) const {
    return std::make_unique<example_ep::ExampleProvider>(example_ep::ProviderOptions::parse(options), build_identity());
  }
};

}  // namespace

EPHOST_DEFINE_PLUGIN(Describe, Create)
