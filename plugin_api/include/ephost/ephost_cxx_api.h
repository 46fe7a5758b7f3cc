// ephost_cxx_api.h — header-only C++ wrapper over the application C API (ephost_c_api.h).
//
// RAII owners for env, session options, session and values (tensors, sequences, optionals); failures throw Ephost::Exception (namespace Ephost, like ONNX Runtime's Ort::) with
// the status code and message. Nothing here adds behaviour: every call maps to one C function.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "ephost/ephost_c_api.h"
#include "ephost/ephost_session_options_keys.h"

namespace Ephost {

inline const EphostApi& api() {
  static const EphostApi* table = EphostGetApi(EPHOST_API_VERSION);
  if (!table)
    throw std::runtime_error(std::string("libephost ") + EphostGetVersionString() +
                             " does not provide API version " + std::to_string(EPHOST_API_VERSION));
  return *table;
}

class Exception : public std::runtime_error {
 public:
  Exception(EphostStatusCode code, const std::string& message)
      : std::runtime_error(std::string(api().GetErrorCodeName(code)) + ": " + message), code_(code),
        message_(message) {}
  EphostStatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

 private:
  EphostStatusCode code_;
  std::string message_;
};

// Throws when `status` is an error; releases it either way.
inline void check(EphostStatus* status) {
  if (!status) return;
  EphostStatusCode code = api().GetErrorCode(status);
  std::string message = api().GetErrorMessage(status);
  api().ReleaseStatus(status);
  throw Exception(code, message);
}

inline std::string take_string(char* s) {
  std::string out = s ? s : "";
  api().FreeString(s);
  return out;
}

// The library's version, e.g. "0.1.0" (EphostGetVersionString, exported since API version 1; "" if it
// gives none).
inline std::string version_string() {
  const char* v = EphostGetVersionString();
  return v ? v : "";
}

// The process-wide minimum log level (SetDefaultLogLevel, API version 4).
inline void set_default_log_level(EphostLogLevel level) { check(api().SetDefaultLogLevel(level)); }

// The name of a status code, e.g. "INVALID_GRAPH" (GetErrorCodeName, API version 1).
inline std::string error_code_name(EphostStatusCode code) { return api().GetErrorCodeName(code); }

// A value: a tensor, or (API version 2) a sequence of tensors or an empty optional (kind()).
class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(EphostTensor* t) : t_(t, &release) {}
  // A tensor over `data` (not copied; must outlive the tensor).
  template <typename T>
  static Tensor wrap(EphostElementType type, const std::vector<int64_t>& shape, T* data, size_t count) {
    EphostTensor* t = nullptr;
    check(api().CreateTensorWithData(type, shape.data(), shape.size(), data, count * sizeof(T), &t));
    return Tensor(t);
  }
  // A zero-filled tensor owned by the library.
  static Tensor allocate(EphostElementType type, const std::vector<int64_t>& shape) {
    EphostTensor* t = nullptr;
    check(api().CreateTensor(type, shape.data(), shape.size(), &t));
    return Tensor(t);
  }
  // A zero-filled host tensor in shared memory, which providers in a provider host process read and
  // write in place (CreateSharedTensor; API version 6: ownership and lifetime are described there).
  static Tensor shared(EphostElementType type, const std::vector<int64_t>& shape) {
    EphostTensor* t = nullptr;
    check(api().CreateSharedTensor(type, shape.data(), shape.size(), &t));
    return Tensor(t);
  }
  // A sequence of copies of `elements` (all of element type `type`).
  static Tensor sequence(EphostElementType type, const std::vector<Tensor>& elements) {
    std::vector<const EphostTensor*> raw;
    for (const auto& e : elements) raw.push_back(e.get());
    EphostTensor* t = nullptr;
    check(api().CreateSequence(type, raw.data(), raw.size(), &t));
    return Tensor(t);
  }
  // An empty optional.
  static Tensor none() {
    EphostTensor* t = nullptr;
    check(api().CreateOptionalNone(&t));
    return Tensor(t);
  }
  EphostTensor* get() const { return t_.get(); }
  explicit operator bool() const { return t_ != nullptr; }
  // EPHOST_VALUE_TENSOR, EPHOST_VALUE_SEQUENCE or EPHOST_VALUE_NONE.
  EphostValueKind kind() const { return api().ValueGetKind(t_.get()); }
  // Sequences: their tensors' element type, their length, their elements (sharing the buffers).
  EphostElementType sequence_type() const {
    EphostElementType type = EPHOST_ELEMENT_UNDEFINED;
    check(api().SequenceGetInfo(t_.get(), &type, nullptr));
    return type;
  }
  size_t sequence_length() const {
    size_t n = 0;
    check(api().SequenceGetInfo(t_.get(), nullptr, &n));
    return n;
  }
  Tensor element(size_t index) const {
    EphostTensor* t = nullptr;
    check(api().SequenceGetElement(t_.get(), index, &t));
    return Tensor(t);
  }
  std::vector<Tensor> elements() const {
    std::vector<Tensor> out;
    for (size_t i = 0, n = sequence_length(); i < n; ++i) out.push_back(element(i));
    return out;
  }
  EphostElementType type() const { return api().TensorGetElementType(t_.get()); }
  std::vector<int64_t> shape() const {
    const int64_t* s = nullptr;
    size_t r = 0;
    api().TensorGetShape(t_.get(), &s, &r);
    return std::vector<int64_t>(s, s + r);
  }
  size_t size() const { return api().TensorGetElementCount(t_.get()); }
  // Where the elements live (TensorGetLocation; API version 3): host, or "<plugin>:<device>".
  bool on_device() const {
    EphostMemoryLocation location = EPHOST_LOCATION_HOST;
    check(api().TensorGetLocation(t_.get(), &location, nullptr, nullptr));
    return location == EPHOST_LOCATION_DEVICE;
  }
  // Whether the elements lie in shared memory (TensorIsShared; API version 6).
  bool is_shared() const {
    int32_t shared = 0;
    check(api().TensorIsShared(t_.get(), &shared));
    return shared != 0;
  }
  // Copy `source`'s elements into this tensor, whatever the two locations (CopyTensor; API version 3).
  void copy_from(const Tensor& source) { check(api().CopyTensor(source.get(), t_.get())); }
  template <typename T>
  T* data() const { return static_cast<T*>(api().TensorGetData(t_.get())); }
  template <typename T>
  std::vector<T> to_vector() const {
    const T* p = data<T>();
    return std::vector<T>(p, p + size());
  }

 private:
  static void release(EphostTensor* t) { api().ReleaseTensor(t); }
  std::shared_ptr<EphostTensor> t_;
};

class SessionOptions;

class Env {
 public:
  explicit Env(EphostLogLevel level = EPHOST_LOG_WARNING) {
    EphostEnv* e = nullptr;
    check(api().CreateEnv(level, &e));
    e_.reset(e);
  }
  // Discovery limited to `dirs` (hermetic).
  Env(EphostLogLevel level, const std::vector<std::string>& dirs) {
    std::vector<const char*> raw;
    for (const auto& d : dirs) raw.push_back(d.c_str());
    raw.push_back(nullptr);
    EphostEnv* e = nullptr;
    check(api().CreateEnvWithPluginDirs(level, raw.data(), &e));
    e_.reset(e);
  }
  // With env options (ephost_env_options_keys.h, API version 3): (key, value) pairs. `dirs` == nullptr
  // searches EPHOST_PLUGIN_PATH and the default directory, as the first constructor does.
  Env(EphostLogLevel level, const std::vector<std::string>* dirs,
      const std::vector<std::pair<std::string, std::string>>& options) {
    std::vector<const char*> raw_dirs, keys, values;
    if (dirs) {
      for (const auto& d : *dirs) raw_dirs.push_back(d.c_str());
      raw_dirs.push_back(nullptr);
    }
    for (const auto& kv : options) {
      keys.push_back(kv.first.c_str());
      values.push_back(kv.second.c_str());
    }
    EphostEnv* e = nullptr;
    check(api().CreateEnvWithOptions(level, dirs ? raw_dirs.data() : nullptr, keys.data(), values.data(),
                                     keys.size(), &e));
    e_.reset(e);
  }
  EphostEnv* get() const { return e_.get(); }
  void register_plugin(const std::string& path) { check(api().RegisterPluginLibrary(e_.get(), path.c_str())); }
  // The EPContext nodes of a model and every installed plugin's verdict on them (JSON).
  std::string inspect_ep_context_model_json(const std::string& model_path) const {
    char* s = nullptr;
    check(api().InspectEpContextModelJson(e_.get(), model_path.c_str(), nullptr, &s));
    return take_string(s);
  }
  // The same, with session options, e.g. where external initializers live (InspectEpContextModelJson,
  // API version 2).
  std::string inspect_ep_context_model_json(const std::string& model_path, const SessionOptions& options) const;
  std::string plugin_report_json() const {
    char* s = nullptr;
    check(api().GetPluginReportJson(e_.get(), &s));
    return take_string(s);
  }
  std::vector<EphostPluginReport> plugin_reports() const {
    std::vector<EphostPluginReport> out;
    size_t n = api().GetPluginReportCount(e_.get());
    for (size_t i = 0; i < n; ++i) {
      EphostPluginReport r{};
      r.struct_size = sizeof(r);
      check(api().GetPluginReport(e_.get(), i, &r));
      out.push_back(r);
    }
    return out;
  }
  // Every device of the loaded plugins (GetDeviceCount, GetDevice; API version 3).
  std::vector<EphostDeviceReport> devices() const {
    std::vector<EphostDeviceReport> out;
    size_t n = api().GetDeviceCount(e_.get());
    for (size_t i = 0; i < n; ++i) {
      EphostDeviceReport r{};
      r.struct_size = sizeof(r);
      check(api().GetDevice(e_.get(), i, &r));
      out.push_back(r);
    }
    return out;
  }
  // A tensor in the memory of device `device` of plugin `provider` (CreateDeviceTensor; API version 3).
  // The env must outlive it.
  Tensor device_tensor(const std::string& provider, uint32_t device, EphostElementType type,
                       const std::vector<int64_t>& shape) const;

 private:
  struct Deleter {
    void operator()(EphostEnv* e) const { api().ReleaseEnv(e); }
  };
  std::unique_ptr<EphostEnv, Deleter> e_;
};

class SessionOptions {
 public:
  // AppendProvider for device `device` of the plugin (AppendProviderForDevice; API version 3).
  SessionOptions& append_provider_for_device(const std::string& name, uint32_t device,
                                             const std::vector<std::pair<std::string, std::string>>& options = {}) {
    std::vector<const char*> keys, values;
    for (const auto& kv : options) {
      keys.push_back(kv.first.c_str());
      values.push_back(kv.second.c_str());
    }
    check(api().AppendProviderForDevice(o_.get(), name.c_str(), device, keys.data(), values.data(), keys.size()));
    return *this;
  }
  SessionOptions() {
    EphostSessionOptions* o = nullptr;
    check(api().CreateSessionOptions(&o));
    o_.reset(o);
  }
  EphostSessionOptions* get() const { return o_.get(); }
  SessionOptions& add_config(const std::string& key, const std::string& value) {
    check(api().AddSessionConfigEntry(o_.get(), key.c_str(), value.c_str()));
    return *this;
  }
  // Fixes every graph input dimension named `dim_name` to `value` (> 0) when the model loads, so the
  // session's shapes are static (ONNX Runtime's AddFreeDimensionOverrideByName). Sets the entry
  // session.free_dimension_override.<dim_name> (API version 4); the session's creation checks it.
  SessionOptions& add_free_dimension_override_by_name(const std::string& dim_name, int64_t value) {
    return add_config(std::string(kEphostSessionOptionsFreeDimensionOverridePrefix) + dim_name, std::to_string(value));
  }
  // The same for dimensions whose denotation is `denotation` (ONNX Runtime's AddFreeDimensionOverride).
  SessionOptions& add_free_dimension_override(const std::string& denotation, int64_t value) {
    return add_config(std::string(kEphostSessionOptionsFreeDimensionOverrideDenotationPrefix) + denotation,
                      std::to_string(value));
  }
  // A value for initializer (or graph input) `name` (AddInitializer, API version 4); copied.
  SessionOptions& add_initializer(const std::string& name, const Tensor& value) {
    check(api().AddInitializer(o_.get(), name.c_str(), value.get()));
    return *this;
  }
  SessionOptions& set_threads(int32_t n) {
    check(api().SetIntraOpNumThreads(o_.get(), n));
    return *this;
  }
  // Progress of session creation (API 3; SetSessionProgressCallback): `callback` is called on the
  // creating thread with a stage name, units done and total. It must outlive the sessions created.
  SessionOptions& set_progress_callback(EphostProgressCallback callback, void* user) {
    check(api().SetSessionProgressCallback(o_.get(), callback, user));
    return *this;
  }
  // Changes of the state of the sessions' providers that run in a provider host process (API 5;
  // SetProviderStateCallback): `callback` is called with the state after each change, on the thread
  // of the call that saw it. `user` must outlive the sessions created; nullptr removes it.
  SessionOptions& set_provider_state_callback(EphostProviderStateCallback callback, void* user) {
    check(api().SetProviderStateCallback(o_.get(), callback, user));
    return *this;
  }
  SessionOptions& set_optimization_level(EphostGraphOptimizationLevel level) {
    check(api().SetGraphOptimizationLevel(o_.get(), level));
    return *this;
  }
  SessionOptions& append_provider(const std::string& name,
                                  const std::vector<std::pair<std::string, std::string>>& options = {}) {
    std::vector<const char*> keys, values;
    for (const auto& kv : options) {
      keys.push_back(kv.first.c_str());
      values.push_back(kv.second.c_str());
    }
    check(api().AppendProvider(o_.get(), name.c_str(), keys.data(), values.data(), keys.size()));
    return *this;
  }

 private:
  struct Deleter {
    void operator()(EphostSessionOptions* o) const { api().ReleaseSessionOptions(o); }
  };
  std::unique_ptr<EphostSessionOptions, Deleter> o_;
};

inline std::string Env::inspect_ep_context_model_json(const std::string& model_path,
                                                      const SessionOptions& options) const {
  char* s = nullptr;
  check(api().InspectEpContextModelJson(e_.get(), model_path.c_str(), options.get(), &s));
  return take_string(s);
}

// Options of runs (API version 4; as ONNX Runtime's Ort::RunOptions): a tag, a terminate flag that
// stops the runs using these options (Exception code EPHOST_CANCELLED), and a timeout that gives each
// of them a deadline (EPHOST_DEADLINE_EXCEEDED). Must outlive those runs.
class RunOptions {
 public:
  RunOptions() {
    EphostRunOptions* o = nullptr;
    check(api().CreateRunOptions(&o));
    o_.reset(o);
  }
  EphostRunOptions* get() const { return o_.get(); }
  // Thread-safe: may be called while runs with these options are in progress.
  RunOptions& set_terminate(bool terminate) {
    check(api().RunOptionsSetTerminate(o_.get(), terminate ? 1 : 0));
    return *this;
  }
  RunOptions& set_tag(const std::string& tag) {
    check(api().RunOptionsSetTag(o_.get(), tag.c_str()));
    return *this;
  }
  // Each run using these options fails once it has run this long; zero: no deadline. Thread-safe; a
  // run reads it when it starts.
  RunOptions& set_timeout(std::chrono::milliseconds timeout) {
    check(api().RunOptionsSetTimeout(o_.get(), static_cast<int64_t>(timeout.count())));
    return *this;
  }

 private:
  struct Deleter {
    void operator()(EphostRunOptions* o) const { api().ReleaseRunOptions(o); }
  };
  std::unique_ptr<EphostRunOptions, Deleter> o_;
};

class Session {
 public:
  Session(const Env& env, const std::string& model_path, const SessionOptions& options = SessionOptions()) {
    EphostSession* s = nullptr;
    check(api().CreateSession(env.get(), model_path.c_str(), options.get(), &s));
    s_.reset(s);
  }
  Session(const Env& env, const void* data, size_t size, const SessionOptions& options = SessionOptions()) {
    EphostSession* s = nullptr;
    check(api().CreateSessionFromArray(env.get(), data, size, options.get(), &s));
    s_.reset(s);
  }
  EphostSession* get() const { return s_.get(); }
  std::vector<std::string> input_names() const {
    std::vector<std::string> out;
    for (size_t i = 0; i < api().SessionGetInputCount(s_.get()); ++i) {
      const char* n = nullptr;
      check(api().SessionGetInputName(s_.get(), i, &n));
      out.emplace_back(n);
    }
    return out;
  }
  std::vector<std::string> output_names() const {
    std::vector<std::string> out;
    for (size_t i = 0; i < api().SessionGetOutputCount(s_.get()); ++i) {
      const char* n = nullptr;
      check(api().SessionGetOutputName(s_.get(), i, &n));
      out.emplace_back(n);
    }
    return out;
  }
  std::string partition_report_json() const {
    char* s = nullptr;
    check(api().SessionGetPartitionReportJson(s_.get(), &s));
    return take_string(s);
  }
  // Where each provider runs and how it is doing now (API 5; SessionGetProviderState).
  struct ProviderState {
    std::string provider;
    EphostProviderStateKind state = EPHOST_PROVIDER_IN_PROCESS;
    int32_t failures = 0;
    int64_t process_id = -1;
    std::string last_failure;
  };
  std::vector<ProviderState> provider_states() const {
    size_t count = 0;
    check(api().SessionGetProviderCount(s_.get(), &count));
    std::vector<ProviderState> out;
    for (size_t i = 0; i < count; ++i) {
      EphostProviderState c{};
      c.struct_size = sizeof c;
      check(api().SessionGetProviderState(s_.get(), i, &c));
      out.push_back({c.provider, static_cast<EphostProviderStateKind>(c.state), c.failures, c.process_id,
                     c.last_failure});
    }
    return out;
  }
  // With session.enable_profiling=1 (API 3; SessionEndProfiling): writes the trace recorded so far
  // and returns its path. Later events go to a new file.
  std::string end_profiling() {
    char* s = nullptr;
    check(api().SessionEndProfiling(s_.get(), &s));
    return take_string(s);
  }
  // Declared kind of an input or output (SessionGetInputKind / SessionGetOutputKind).
  struct ValueType {
    EphostValueKind kind = EPHOST_VALUE_UNDEFINED;
    EphostValueKind optional_kind = EPHOST_VALUE_UNDEFINED;
    int32_t elem_type = EPHOST_ELEMENT_UNDEFINED;
  };
  ValueType input_type(size_t index) const {
    ValueType t;
    check(api().SessionGetInputKind(s_.get(), index, &t.kind, &t.optional_kind, &t.elem_type));
    return t;
  }
  ValueType output_type(size_t index) const {
    ValueType t;
    check(api().SessionGetOutputKind(s_.get(), index, &t.kind, &t.optional_kind, &t.elem_type));
    return t;
  }
  // Declared element type and shape of a tensor input or output (SessionGetInputType /
  // SessionGetOutputType, API version 1): rank -1 when unknown, dims -1 where symbolic; element type 0
  // and rank -1 for sequences and optionals.
  struct TensorType {
    int32_t elem_type = EPHOST_ELEMENT_UNDEFINED;
    int64_t rank = -1;
    std::vector<int64_t> dims;
  };
  // Symbolic names of an input's or output's dims, "" where a dim is fixed or unnamed (API version 3);
  // empty for an unknown rank.
  std::vector<std::string> input_dim_names(size_t index) const { return dim_names(index, true); }
  std::vector<std::string> output_dim_names(size_t index) const { return dim_names(index, false); }
  TensorType input_tensor_type(size_t index) const {
    TensorType t;
    const int64_t* dims = nullptr;
    check(api().SessionGetInputType(s_.get(), index, &t.elem_type, &t.rank, &dims));
    if (t.rank > 0 && dims) t.dims.assign(dims, dims + t.rank);
    return t;
  }
  TensorType output_tensor_type(size_t index) const {
    TensorType t;
    const int64_t* dims = nullptr;
    check(api().SessionGetOutputType(s_.get(), index, &t.elem_type, &t.rank, &dims));
    if (t.rank > 0 && dims) t.dims.assign(dims, dims + t.rank);
    return t;
  }
  // What happened to each EPContext node (JSON array; empty for an ordinary model).
  std::string ep_context_report_json() const {
    char* s = nullptr;
    check(api().SessionGetEpContextReportJson(s_.get(), &s));
    return take_string(s);
  }
  std::vector<std::string> dim_names(size_t index, bool input) const {
    const TensorType t = input ? input_tensor_type(index) : output_tensor_type(index);
    std::vector<std::string> names;
    for (int64_t d = 0; d < t.rank; ++d) {
      const char* name = nullptr;
      check(input ? api().SessionGetInputDimName(s_.get(), index, static_cast<size_t>(d), &name)
                  : api().SessionGetOutputDimName(s_.get(), index, static_cast<size_t>(d), &name));
      names.emplace_back(name ? name : "");
    }
    return names;
  }
  // The bound-run form of run (as ONNX Runtime's IoBinding; API version 3): inputs and outputs are bound
  // once, device tensors stay on their device across runs. The session must outlive the binding.
  class IoBinding {
   public:
    explicit IoBinding(const Session& session) : session_(session.get()) {
      EphostIoBinding* b = nullptr;
      check(api().CreateIoBinding(session_, &b));
      b_.reset(b);
    }
    EphostIoBinding* get() const { return b_.get(); }
    IoBinding& bind_input(const std::string& name, const Tensor& value) {
      check(api().BindInput(b_.get(), name.c_str(), value.get()));
      return *this;
    }
    // Write output `name` into `value` (host or device tensor of its type and shape).
    IoBinding& bind_output(const std::string& name, const Tensor& value) {
      check(api().BindOutput(b_.get(), name.c_str(), value.get()));
      return *this;
    }
    // Hand output `name` over on device `device` of plugin `provider` (an empty provider: host memory).
    IoBinding& bind_output_to_device(const std::string& name, const std::string& provider, uint32_t device) {
      check(api().BindOutputToDevice(b_.get(), name.c_str(), provider.empty() ? nullptr : provider.c_str(), device));
      return *this;
    }
    void run() { check(api().RunWithBinding(session_, b_.get())); }
    // With run options (RunWithBindingAndOptions; API version 4); null: none.
    void run(const RunOptions* options) {
      check(api().RunWithBindingAndOptions(session_, b_.get(), options ? options->get() : nullptr));
    }
    Tensor output(const std::string& name) const {
      EphostTensor* t = nullptr;
      check(api().IoBindingGetOutput(b_.get(), name.c_str(), &t));
      return Tensor(t);
    }
    void clear() { api().ClearIoBinding(b_.get()); }

   private:
    struct Deleter {
      void operator()(EphostIoBinding* b) const { api().ReleaseIoBinding(b); }
    };
    EphostSession* session_;
    std::unique_ptr<EphostIoBinding, Deleter> b_;
  };

  // The model's metadata as JSON (SessionGetModelMetadataJson; API version 4).
  std::string model_metadata_json() const {
    char* s = nullptr;
    check(api().SessionGetModelMetadataJson(s_.get(), &s));
    return take_string(s);
  }

  std::vector<Tensor> run(const std::vector<std::string>& input_names, const std::vector<Tensor>& inputs,
                          const std::vector<std::string>& output_names) const {
    return run(input_names, inputs, output_names, nullptr);
  }
  // With run options (RunWithOptions; API version 4); null: none.
  std::vector<Tensor> run(const std::vector<std::string>& input_names, const std::vector<Tensor>& inputs,
                          const std::vector<std::string>& output_names, const RunOptions* options) const {
    std::vector<const char*> in_names, out_names;
    std::vector<const EphostTensor*> in;
    for (const auto& n : input_names) in_names.push_back(n.c_str());
    for (const auto& t : inputs) in.push_back(t.get());
    for (const auto& n : output_names) out_names.push_back(n.c_str());
    std::vector<EphostTensor*> out(output_names.size(), nullptr);
    check(api().RunWithOptions(s_.get(), options ? options->get() : nullptr, in_names.data(), in.data(), in.size(),
                               out_names.data(), out_names.size(), out.data()));
    std::vector<Tensor> result;
    for (auto* t : out) result.emplace_back(t);
    return result;
  }

 private:
  struct Deleter {
    void operator()(EphostSession* s) const { api().ReleaseSession(s); }
  };
  std::unique_ptr<EphostSession, Deleter> s_;
};

inline Tensor Env::device_tensor(const std::string& provider, uint32_t device, EphostElementType type,
                                 const std::vector<int64_t>& shape) const {
  EphostTensor* t = nullptr;
  check(api().CreateDeviceTensor(e_.get(), provider.c_str(), device, type, shape.data(), shape.size(), &t));
  return Tensor(t);
}

}  // namespace Ephost
