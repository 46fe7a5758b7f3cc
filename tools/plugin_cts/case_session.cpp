#include "case_session.h"

#include <cstring>
#include <filesystem>

#include "ephost/ephost_env_options_keys.h"
#include "private_registry.h"
#include "tensor_io.h"

namespace fs = std::filesystem;

namespace ephost_cts {

Ephost::Env env_with(const std::string& library) {
  // No plugin folder, and the kit's own registry cache (private_registry.h), never the user's.
  const std::vector<std::string> no_folders;
  Ephost::Env env(EPHOST_LOG_FATAL, &no_folders, {{kEphostEnvOptionsPluginRegistry, private_registry_file()}});
  env.register_plugin(library);
  return env;
}

Ephost::SessionOptions plugin_first(const std::string& provider) {
  Ephost::SessionOptions options;
  options.append_provider(provider);
  return options;
}

CaseSession::CaseSession(const Ephost::Env& env, const ephost_cli::TestCase& c, const std::string& provider,
                         const std::string& model, const Ephost::SessionOptions* options) {
  const Ephost::SessionOptions first = plugin_first(provider);
  session_.emplace(env, model.empty() ? (c.dir / "model.onnx").string() : model, options ? *options : first);
  const fs::path data = c.dir / "test_data_set_0";
  const std::vector<ephost_cli::ValueInfo> infos = ephost_cli::session_inputs(*session_);
  std::string unsupported;
  inputs_ = ephost_cli::load_value_files(ephost_cli::numbered_files(data.string(), "input_"), infos, "inputs",
                                         unsupported);
  if (!unsupported.empty()) throw Ephost::Exception(EPHOST_NOT_IMPLEMENTED, "inputs: " + unsupported);
  ephost_cli::bind_by_name_or_position(inputs_, infos, "inputs");
  ephost_cli::adopt_declared_types(inputs_, infos);
  bound_.emplace(*session_, inputs_);
}

namespace {

std::string tensor_difference(const Ephost::Tensor& a, const Ephost::Tensor& b) {
  if (a.kind() != b.kind()) return "kinds differ";
  if (a.kind() == EPHOST_VALUE_NONE) return "";
  if (a.kind() == EPHOST_VALUE_SEQUENCE) {
    const auto ea = a.elements(), eb = b.elements();
    if (ea.size() != eb.size()) return "sequence lengths differ";
    for (size_t i = 0; i < ea.size(); ++i) {
      const std::string d = tensor_difference(ea[i], eb[i]);
      if (!d.empty()) return "element " + std::to_string(i) + ": " + d;
    }
    return "";
  }
  if (a.type() != b.type() || a.shape() != b.shape()) return "element types or shapes differ";
  if (a.type() == EPHOST_ELEMENT_STRING) {
    for (size_t i = 0; i < a.size(); ++i)
      if (std::strcmp(a.data<const char*>()[i], b.data<const char*>()[i]) != 0)
        return "string " + std::to_string(i) + " differs";
    return "";
  }
  const size_t bytes = EphostTensorDataSize(a.type(), a.size());  // packed sub-byte types too
  if (bytes && std::memcmp(a.data<void>(), b.data<void>(), bytes) != 0) {
    const auto* pa = a.data<unsigned char>();
    const auto* pb = b.data<unsigned char>();
    size_t i = 0;
    while (pa[i] == pb[i]) ++i;
    return "bytes differ from element " + std::to_string(i * 8 / EphostElementBits(a.type()));
  }
  return "";
}

}  // namespace

std::string bitwise_difference(const std::vector<Ephost::Tensor>& a, const std::vector<Ephost::Tensor>& b) {
  if (a.size() != b.size()) return "output counts differ";
  for (size_t i = 0; i < a.size(); ++i) {
    const std::string d = tensor_difference(a[i], b[i]);
    if (!d.empty()) return "output " + std::to_string(i) + ": " + d;
  }
  return "";
}

}  // namespace ephost_cts
