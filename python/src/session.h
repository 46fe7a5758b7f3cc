// The session object behind ephost.InferenceSession: creation from a path or bytes with the options
// and providers the Python layer collected, what the model declares, the reports, and run (which
// releases the GIL, so that Python threads run concurrently).
#pragma once

#include <pybind11/pybind11.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ephost/ephost_cxx_api.h"
#include "numpy_values.h"
#include "values.h"

namespace ephost_python {

// A provider to append, with its options, in registration-priority order.
struct ProviderRequest {
  std::string name;
  std::vector<std::pair<std::string, std::string>> options;
};

// What the Python layer collected: session configuration entries (ONNX Runtime's key spellings) and
// providers. Turned into C API session options when a session is created.
struct SessionSettings {
  std::vector<std::pair<std::string, std::string>> config;
  std::vector<ProviderRequest> providers;
  std::vector<std::pair<std::string, PyValue>> initializers;  // SessionOptions.add_initializer
  // SessionOptions.set_provider_state_callback: called with a state dict (provider_state_dict) after
  // each change of a provider's state; None: not set.
  pybind11::object provider_state_callback = pybind11::none();
  Ephost::SessionOptions to_options() const;
};

// {"provider", "state" ("in_process", "running", "restarting", "fallen_back"), "failures",
// "process_id", "last_failure"}: what get_provider_states lists and the state callback is given.
pybind11::dict provider_state_dict(const std::string& provider, int32_t state, int32_t failures, int64_t process_id,
                                   const std::string& last_failure);

class PySession {
 public:
  // `model` is a path (str) or the model's bytes. The env must outlive the session: it is kept.
  PySession(std::shared_ptr<Ephost::Env> env, pybind11::object model, const SessionSettings& settings);

  // (name, type string, shape) per input or output, in the model's order. Shape entries: an int for a
  // fixed dim, the symbol's name (str) for a named symbolic one, None for an unnamed one; the shape is
  // None when the rank is unknown (and for sequences).
  pybind11::list inputs() const { return describe(true); }
  pybind11::list outputs() const { return describe(false); }
  std::string partition_report_json() const { return session_.partition_report_json(); }
  std::string ep_context_report_json() const { return session_.ep_context_report_json(); }
  std::string end_profiling() {
    pybind11::gil_scoped_release unlocked;
    return session_.end_profiling();
  }

  // Runs with `feed` (input name -> array, list or None) and returns the values of `output_names`
  // (every output when empty), in that order.
  pybind11::list run(const std::vector<std::string>& output_names, const pybind11::dict& feed,
                     const Ephost::RunOptions* options) const;
  // run with values (OrtValue) in and out.
  std::vector<PyValue> run_with_values(const std::vector<std::string>& output_names,
                                       const std::vector<std::string>& input_names,
                                       const std::vector<PyValue>& inputs, const Ephost::RunOptions* options) const;
  std::string model_metadata_json() const { return session_.model_metadata_json(); }
  const Ephost::Session& native() const { return session_; }

 private:
  pybind11::list describe(bool input) const;
  // The settings' options, with the state callback (kept in state_callback_) when one is set.
  Ephost::SessionOptions options_for(const SessionSettings& settings);

  std::shared_ptr<Ephost::Env> env_;
  // The Python callable the session calls on provider state changes: declared before the session, so
  // that it outlives it (the C API's `user` must).
  std::unique_ptr<pybind11::object> state_callback_;
  Ephost::Session session_;
  std::vector<DeclaredValue> inputs_, outputs_;
  std::vector<std::string> output_names_;
};

}  // namespace ephost_python
