#include "session.h"

#include <pybind11/stl.h>

#include <algorithm>

namespace py = pybind11;

namespace ephost_python {
namespace {

Ephost::Session create_session(const Ephost::Env& env, py::handle model, const Ephost::SessionOptions& options) {
  if (py::isinstance<py::bytes>(model) || py::isinstance<py::bytearray>(model) ||
      py::isinstance<py::memoryview>(model)) {
    // CreateSessionFromArray copies the bytes, so the buffer is only read during the call.
    py::buffer_info buffer = py::reinterpret_borrow<py::buffer>(model).request();
    return Ephost::Session(env, buffer.ptr, static_cast<size_t>(buffer.size * buffer.itemsize), options);
  }
  if (py::isinstance<py::str>(model) || py::hasattr(model, "__fspath__")) {
    const std::string path = py::module_::import("os").attr("fspath")(model).cast<std::string>();
    return Ephost::Session(env, path, options);
  }
  throw Ephost::Exception(EPHOST_INVALID_ARGUMENT, "path_or_bytes must be a path (str or os.PathLike) or the "
                                                   "model's bytes, got " +
                                                       py::str(py::type::of(model)).cast<std::string>());
}

std::vector<DeclaredValue> declared_values(const Ephost::Session& session, bool input) {
  std::vector<DeclaredValue> out;
  const std::vector<std::string> names = input ? session.input_names() : session.output_names();
  for (size_t i = 0; i < names.size(); ++i) {
    const Ephost::Session::ValueType t = input ? session.input_type(i) : session.output_type(i);
    out.push_back({names[i], t.kind, t.optional_kind, t.elem_type});
  }
  return out;
}

}  // namespace

Ephost::SessionOptions SessionSettings::to_options() const {
  Ephost::SessionOptions options;
  for (const auto& [key, value] : config) options.add_config(key, value);
  for (const ProviderRequest& p : providers) options.append_provider(p.name, p.options);
  for (const auto& [name, value] : initializers) options.add_initializer(name, value.tensor());
  return options;
}

py::dict provider_state_dict(const std::string& provider, int32_t state, int32_t failures, int64_t process_id,
                             const std::string& last_failure) {
  static const char* const kNames[] = {"in_process", "running", "restarting", "fallen_back"};
  py::dict d;
  d["provider"] = provider;
  d["state"] = state >= 0 && state < 4 ? kNames[state] : "unknown";
  d["failures"] = failures;
  d["process_id"] = process_id;
  d["last_failure"] = last_failure;
  return d;
}

namespace {

// The C callback: on the thread that saw the change, which may hold no GIL (runs release it). An
// exception the Python callable raises is reported as unraisable: the run it happened in goes on.
void call_provider_state_callback(const EphostProviderState* state, void* user) {
  py::gil_scoped_acquire gil;
  try {
    (*static_cast<py::object*>(user))(provider_state_dict(state->provider ? state->provider : "", state->state,
                                                          state->failures, state->process_id,
                                                          state->last_failure ? state->last_failure : ""));
  } catch (py::error_already_set& e) {
    e.discard_as_unraisable("ephost provider state callback");
  } catch (const std::exception&) {
    // A dict that could not be made: nothing the callback could be told.
  }
}

}  // namespace

Ephost::SessionOptions PySession::options_for(const SessionSettings& settings) {
  Ephost::SessionOptions options = settings.to_options();
  if (!settings.provider_state_callback.is_none()) {
    state_callback_ = std::make_unique<py::object>(settings.provider_state_callback);
    options.set_provider_state_callback(call_provider_state_callback, state_callback_.get());
  }
  return options;
}

PySession::PySession(std::shared_ptr<Ephost::Env> env, py::object model, const SessionSettings& settings)
    : env_(std::move(env)), session_(create_session(*env_, model, options_for(settings))) {
  inputs_ = declared_values(session_, true);
  outputs_ = declared_values(session_, false);
  for (const DeclaredValue& v : outputs_) output_names_.push_back(v.name);
}

py::list PySession::describe(bool input) const {
  py::list out;
  const std::vector<DeclaredValue>& values = input ? inputs_ : outputs_;
  for (size_t i = 0; i < values.size(); ++i) {
    const Ephost::Session::TensorType t = input ? session_.input_tensor_type(i) : session_.output_tensor_type(i);
    py::object shape = py::none();
    if (t.rank >= 0) {
      const std::vector<std::string> symbols = input ? session_.input_dim_names(i) : session_.output_dim_names(i);
      py::list dims;
      for (size_t d = 0; d < t.dims.size(); ++d) {
        if (t.dims[d] >= 0)
          dims.append(py::int_(t.dims[d]));
        else if (!symbols[d].empty())
          dims.append(py::str(symbols[d]));
        else
          dims.append(py::none());
      }
      shape = std::move(dims);
    }
    out.append(py::make_tuple(values[i].name, onnx_type_string(values[i]), shape));
  }
  return out;
}

py::list PySession::run(const std::vector<std::string>& output_names, const py::dict& feed,
                        const Ephost::RunOptions* options) const {
  std::vector<std::string> names;
  std::vector<Ephost::Tensor> values;
  InputBuffers buffers;
  for (auto item : feed) {
    const std::string name = py::str(item.first).cast<std::string>();
    auto declared = std::find_if(inputs_.begin(), inputs_.end(), [&](const DeclaredValue& v) { return v.name == name; });
    if (declared == inputs_.end()) {
      std::string known;
      for (const DeclaredValue& v : inputs_) known += (known.empty() ? "" : ", ") + v.name;
      throw Ephost::Exception(EPHOST_INVALID_ARGUMENT, "input_feed names '" + name +
                                                           "', which is no input of the model (inputs: " + known + ")");
    }
    names.push_back(name);
    values.push_back(buffers.value_for(*declared, item.second));
  }
  const std::vector<std::string>& wanted = output_names.empty() ? output_names_ : output_names;
  std::vector<Ephost::Tensor> results;
  {
    // The buffers stay alive (and untouched by Python) while the C API reads them.
    py::gil_scoped_release release;
    results = session_.run(names, values, wanted, options);
  }
  py::list out;
  for (const Ephost::Tensor& r : results) out.append(to_python(r));
  return out;
}

std::vector<PyValue> PySession::run_with_values(const std::vector<std::string>& output_names,
                                                const std::vector<std::string>& input_names,
                                                const std::vector<PyValue>& inputs,
                                                const Ephost::RunOptions* options) const {
  std::vector<Ephost::Tensor> values;
  for (const PyValue& v : inputs) values.push_back(v.tensor());
  const std::vector<std::string>& wanted = output_names.empty() ? output_names_ : output_names;
  std::vector<Ephost::Tensor> results;
  {
    py::gil_scoped_release release;  // `inputs` (and the arrays they view) are held by the caller
    results = session_.run(input_names, values, wanted, options);
  }
  std::vector<PyValue> out;
  for (Ephost::Tensor& r : results) out.emplace_back(std::move(r));
  return out;
}

}  // namespace ephost_python
