// One node case as the kit runs it: a session with the plugin first in the providers, the inputs of
// its first data set, runs that can be repeated from any thread, and outputs compared bit for bit.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ephost/ephost_cxx_api.h"
#include "model_io.h"
#include "node_case.h"

namespace ephost_cts {

// A fresh env holding only the built-in CPU plugin and the library at `library` (the plugin, or the
// observer standing in front of it), probed with the kit's private registry cache (private_registry.h).
// Throws Ephost::Exception when the library cannot be loaded.
Ephost::Env env_with(const std::string& library);

class CaseSession {
 public:
  // `model`: the case's model.onnx or another model of the same inputs (an EPContext model).
  CaseSession(const Ephost::Env& env, const ephost_cli::TestCase& c, const std::string& provider,
              const std::string& model = "", const Ephost::SessionOptions* options = nullptr);
  std::vector<Ephost::Tensor> run() const { return bound_->run(); }
  const Ephost::Session& session() const { return *session_; }

 private:
  std::optional<Ephost::Session> session_;
  std::vector<ephost_cli::HostValue> inputs_;
  std::optional<ephost_cli::BoundRun> bound_;
};

// "" when `a` and `b` are the same values bit for bit (tensors, sequences, none); else what differs.
std::string bitwise_difference(const std::vector<Ephost::Tensor>& a, const std::vector<Ephost::Tensor>& b);

// Session options with the plugin first: `provider`, then the CPU fallback.
Ephost::SessionOptions plugin_first(const std::string& provider);

}  // namespace ephost_cts
