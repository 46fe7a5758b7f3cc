// What kind of plugin a library is, from what it exports: an ephost plugin (ephost_plugin_negotiate), an
// ONNX Runtime plugin EP (CreateEpFactories and ReleaseEpFactory), or an ONNX Runtime provider-bridge
// EP (those and GetProvider, or GetProvider alone), which needs ONNX Runtime's internals and cannot be
// hosted.
#pragma once

#include <functional>
#include <string>

namespace ephost::ort_ep {

enum class LibraryKind {
  kEphost,              // exports ephost_plugin_negotiate (wins over anything else it exports)
  kOrtPluginEp,         // CreateEpFactories + ReleaseEpFactory
  kOrtProviderBridge,   // GetProvider: ONNX Runtime's older provider-bridge libraries
  kUnknown,             // none of these
};

// `exports(symbol)` says whether the library exports `symbol`.
LibraryKind recognize_library(const std::function<bool(const char*)>& exports);

// Why a provider-bridge library is skipped, exactly.
std::string provider_bridge_refusal();

}  // namespace ephost::ort_ep
