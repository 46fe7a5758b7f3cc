#include "ort_ep/recognition.h"

#include "ephost/ephost_plugin.h"
#include "ort_ep/ort_abi.h"

namespace ephost::ort_ep {

LibraryKind recognize_library(const std::function<bool(const char*)>& exports) {
  if (exports(EPHOST_PLUGIN_ENTRY_POINT)) return LibraryKind::kEphost;
  if (exports(ORT_PROVIDER_BRIDGE_SYMBOL)) return LibraryKind::kOrtProviderBridge;
  if (exports(ORT_EP_CREATE_FACTORIES_SYMBOL) && exports(ORT_EP_RELEASE_FACTORY_SYMBOL))
    return LibraryKind::kOrtPluginEp;
  return LibraryKind::kUnknown;
}

std::string provider_bridge_refusal() {
  return "an ONNX Runtime provider-bridge EP (it exports 'GetProvider'): such libraries need ONNX Runtime's "
         "internals and cannot be hosted; use the vendor's plugin EP library (one exporting 'CreateEpFactories' "
         "and 'ReleaseEpFactory'), which ephost runs";
}

}  // namespace ephost::ort_ep
