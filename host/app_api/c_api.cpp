// The application ABI (ephost_c_api.h): a versioned table of functions over the host's C++ objects.
// Every entry catches everything (ephost::guard): no exception and no abort leaves libephost.
#include "ephost/ephost_c_api.h"

#include <algorithm>
#include <cstring>
#include <nlohmann/json.hpp>
#include <deque>
#include <mutex>

#include "plugin_abi/versioned_table.h"
#include "app_api/c_api_devices.h"
#include "app_api/handles.h"
#include "core/error.h"
#include "core/log.h"
#include "core/status.h"
#include "discovery/plugin_registry.h"
#include "epcontext/context_inspect.h"
#include "env/env.h"
#include "isolation/shared_region.h"
#include "session/session.h"
#include "options/session_config.h"


namespace ephost {
namespace {

void require(const void* p, const char* what) {
  if (!p) fail(EPHOST_INVALID_ARGUMENT, "{} must not be NULL", what);
}

// A pointer that is not a live status (released already, or never one) is never read.
constexpr const char* kNotAStatus = "not a status: this pointer was never returned by libephost, or was released";
EphostStatusCode GetErrorCode(const EphostStatus* s) {
  if (!s) return EPHOST_OK;
  return is_live_status(s) ? s->code : EPHOST_INVALID_ARGUMENT;
}
const char* GetErrorMessage(const EphostStatus* s) {
  if (!s) return "";
  return is_live_status(s) ? s->message.c_str() : kNotAStatus;
}
void ReleaseStatus(EphostStatus* s) { release_status(s); }
const char* GetErrorCodeName(EphostStatusCode code) { return status_code_name(code); }
void FreeString(char* s) { delete[] s; }

char* copy_string(const std::string& s) {
  char* out = new char[s.size() + 1];
  std::memcpy(out, s.c_str(), s.size() + 1);
  return out;
}

EphostStatus* CreateEnvImpl(EphostLogLevel level, const std::vector<std::string>* dirs, const EnvConfig& config,
                            EphostEnv** out) {
  return guard([&] {
    require(out, "out_env");
    auto env = std::make_unique<EphostEnv>();
    env->env = std::make_shared<Env>(level, dirs, config);
    *out = env.release();
  });
}
std::vector<std::string> plugin_dir_list(const char* const* dirs) {
  std::vector<std::string> list;
  for (size_t i = 0; dirs && dirs[i]; ++i) list.emplace_back(dirs[i]);
  return list;
}
EphostStatus* CreateEnv(EphostLogLevel level, EphostEnv** out) {
  return CreateEnvImpl(level, nullptr, make_env_config({}), out);
}
EphostStatus* CreateEnvWithPluginDirs(EphostLogLevel level, const char* const* dirs, EphostEnv** out) {
  const std::vector<std::string> list = plugin_dir_list(dirs);
  return CreateEnvImpl(level, &list, make_env_config({}), out);
}
EphostStatus* CreateEnvWithOptions(EphostLogLevel level, const char* const* dirs, const char* const* keys,
                                   const char* const* values, size_t n, EphostEnv** out) {
  EnvConfig config;
  if (EphostStatus* s = guard([&] {
        require(out, "out_env");
        if (n && (!keys || !values)) fail(EPHOST_INVALID_ARGUMENT, "{} env options but keys or values is NULL", n);
        std::vector<std::pair<std::string, std::string>> options;
        for (size_t i = 0; i < n; ++i) {
          require(keys[i], "env option key");
          require(values[i], "env option value");
          options.emplace_back(keys[i], values[i]);
        }
        config = make_env_config(options);
      }))
    return s;
  const std::vector<std::string> list = plugin_dir_list(dirs);
  return CreateEnvImpl(level, dirs ? &list : nullptr, config, out);
}
void ReleaseEnv(EphostEnv* env) { delete env; }

EphostStatus* RegisterPluginLibrary(EphostEnv* env, const char* path) {
  return guard([&] {
    require(env, "env");
    require(path, "path");
    const PluginRecord& rec = env->env->registry().load_library(path);
    if (!rec.loaded) fail(EPHOST_INVALID_ARGUMENT, "plugin library '{}' was not loaded: {}", path, rec.skip_reason());
  });
}
size_t GetPluginReportCount(const EphostEnv* env) { return env ? env->env->registry().snapshot().size() : 0; }

EphostStatus* GetPluginReport(const EphostEnv* cenv, size_t index, EphostPluginReport* out) {
  return guard([&] {
    require(cenv, "env");
    require(out, "out");
    auto* env = const_cast<EphostEnv*>(cenv);
    // A snapshot: another thread may be registering a library meanwhile.
    const std::vector<const PluginRecord*> records = env->env->registry().snapshot();
    if (index >= records.size())
      fail(EPHOST_INVALID_ARGUMENT, "plugin report index {} out of range ({} entries)", index, records.size());
    if (out->struct_size < sizeof(uint32_t)) fail(EPHOST_INVALID_ARGUMENT, "out->struct_size is not set");
    const PluginRecord& r = *records[index];
    std::string keys;
    for (const auto& k : r.context_source_keys) keys += (keys.empty() ? "" : ",") + k;
    const char* joined;
    {
      std::lock_guard<std::mutex> lock(env->mutex);
      env->joined_keys.push_back(keys);
      joined = env->joined_keys.back().c_str();
    }
    EphostPluginReport report{};
    report.struct_size = out->struct_size;
    report.path = r.path.c_str();
    report.name = r.name.c_str();
    report.vendor = r.vendor.c_str();
    report.version = r.version.c_str();
    report.device_type = r.device_type.c_str();
    report.sdk_version = r.sdk_version.c_str();
    report.hardware_architecture = r.hardware_architecture.c_str();
    report.driver_version = r.driver_version.c_str();
    report.source_keys = joined;
    report.default_priority = r.default_priority;
    report.abi_version = r.abi_version;
    report.loaded = r.loaded ? 1 : 0;
    report.reason = r.skip_reason().c_str();
    // Copy only what the caller's struct has room for (it may be an older, shorter one).
    std::memcpy(out, &report, std::min<size_t>(out->struct_size, sizeof(report)));
  });
}
EphostStatus* GetPluginReportJson(const EphostEnv* env, char** out) {
  return guard([&] {
    require(env, "env");
    require(out, "out_json");
    *out = copy_string(env->env->registry().report_json());
  });
}

EphostStatus* CreateSessionOptions(EphostSessionOptions** out) {
  return guard([&] {
    require(out, "out_options");
    *out = new EphostSessionOptions();
  });
}
void ReleaseSessionOptions(EphostSessionOptions* o) { delete o; }
EphostStatus* AddSessionConfigEntry(EphostSessionOptions* o, const char* key, const char* value) {
  return guard([&] {
    require(o, "options");
    require(key, "key");
    require(value, "value");
    o->options.set(key, value);
  });
}
EphostStatus* SetIntraOpNumThreads(EphostSessionOptions* o, int32_t n) {
  return guard([&] {
    require(o, "options");
    if (n < 0) fail(EPHOST_INVALID_ARGUMENT, "intra-op thread count must be >= 0 (0 = default), got {}", n);
    o->options.intra_op_threads = n;
  });
}
EphostStatus* SetGraphOptimizationLevel(EphostSessionOptions* o, EphostGraphOptimizationLevel level) {
  return guard([&] {
    require(o, "options");
    if (level != EPHOST_OPT_DISABLE_ALL && level != EPHOST_OPT_ENABLE_BASIC && level != EPHOST_OPT_ENABLE_EXTENDED &&
        level != EPHOST_OPT_ENABLE_ALL)
      fail(EPHOST_INVALID_ARGUMENT, "unknown graph optimization level {}", static_cast<int>(level));
    o->options.optimization_level = level;
  });
}
EphostStatus* AppendProvider(EphostSessionOptions* o, const char* name, const char* const* keys,
                             const char* const* values, size_t n) {
  return guard([&] {
    require(o, "options");
    require(name, "provider_name");
    if (n && (!keys || !values)) fail(EPHOST_INVALID_ARGUMENT, "{} provider options but keys or values is NULL", n);
    // "<plugin>" or, since API 3, "<plugin>:<device index>".
    ProviderRequest r = parse_provider_request(name);
    for (size_t i = 0; i < n; ++i) {
      require(keys[i], "option key");
      require(values[i], "option value");
      r.options.emplace_back(keys[i], values[i]);
    }
    o->options.providers.push_back(std::move(r));
  });
}

const SessionOptions& options_or_default(const EphostSessionOptions* o) {
  static const SessionOptions defaults;
  return o ? o->options : defaults;
}

EphostStatus* CreateSession(EphostEnv* env, const char* path, const EphostSessionOptions* o, EphostSession** out) {
  return guard([&] {
    require(env, "env");
    require(path, "model_path");
    require(out, "out_session");
    auto s = std::make_unique<EphostSession>();
    s->env = env->env;
    s->session = Session::create_from_file(*env->env, path, options_or_default(o));
    *out = s.release();
  });
}
EphostStatus* CreateSessionFromArray(EphostEnv* env, const void* data, size_t size, const EphostSessionOptions* o,
                                     EphostSession** out) {
  return guard([&] {
    require(env, "env");
    require(data, "model_data");
    require(out, "out_session");
    auto s = std::make_unique<EphostSession>();
    s->env = env->env;
    s->session = Session::create_from_buffer(*env->env, data, size, options_or_default(o));
    *out = s.release();
  });
}
void ReleaseSession(EphostSession* s) { delete s; }
size_t SessionGetInputCount(const EphostSession* s) { return s ? s->session->inputs().size() : 0; }
size_t SessionGetOutputCount(const EphostSession* s) { return s ? s->session->outputs().size() : 0; }

const Value& io_value(const EphostSession* s, size_t index, bool input) {
  require(s, "session");
  const auto& list = input ? s->session->inputs() : s->session->outputs();
  if (index >= list.size())
    fail(EPHOST_INVALID_ARGUMENT, "{} index {} out of range (the model has {})", input ? "input" : "output", index,
         list.size());
  return *list[index];
}
EphostStatus* SessionGetInputName(const EphostSession* s, size_t i, const char** out) {
  return guard([&] {
    require(out, "out_name");
    *out = io_value(s, i, true).name.c_str();
  });
}
EphostStatus* SessionGetOutputName(const EphostSession* s, size_t i, const char** out) {
  return guard([&] {
    require(out, "out_name");
    *out = io_value(s, i, false).name.c_str();
  });
}
EphostStatus* io_type(const EphostSession* s, size_t i, bool input, int32_t* et, int64_t* rank, const int64_t** dims) {
  return guard([&] {
    const Value& v = io_value(s, i, input);
    if (et) *et = v.type.elem_type;
    if (rank) *rank = v.type.has_shape ? static_cast<int64_t>(v.type.dims.size()) : -1;
    if (dims) *dims = v.type.dims.data();
  });
}
EphostStatus* SessionGetInputType(const EphostSession* s, size_t i, int32_t* et, int64_t* rank, const int64_t** dims) {
  return io_type(s, i, true, et, rank, dims);
}
EphostStatus* SessionGetOutputType(const EphostSession* s, size_t i, int32_t* et, int64_t* rank, const int64_t** dims) {
  return io_type(s, i, false, et, rank, dims);
}
EphostStatus* io_dim_name(const EphostSession* s, size_t i, bool input, size_t dim, const char** out) {
  return guard([&] {
    require(out, "out_name");
    const Value& v = io_value(s, i, input);
    const size_t rank = v.type.has_shape ? v.type.dims.size() : 0;
    if (!v.type.has_shape || dim >= rank)
      fail(EPHOST_INVALID_ARGUMENT, "{} '{}' has {}; dimension {} does not exist", input ? "input" : "output", v.name,
           v.type.has_shape ? fmt::format("rank {}", rank) : std::string("an unknown rank"), dim);
    // dim_params runs parallel to dims; an older graph builder may leave it short.
    *out = dim < v.type.dim_params.size() ? v.type.dim_params[dim].c_str() : "";
  });
}
EphostStatus* SessionGetInputDimName(const EphostSession* s, size_t i, size_t dim, const char** out) {
  return io_dim_name(s, i, true, dim, out);
}
EphostStatus* SessionGetOutputDimName(const EphostSession* s, size_t i, size_t dim, const char** out) {
  return io_dim_name(s, i, false, dim, out);
}
EphostStatus* SetSessionProgressCallback(EphostSessionOptions* o, EphostProgressCallback callback, void* user) {
  return guard([&] {
    require(o, "options");
    o->options.progress = callback;
    o->options.progress_user = user;
  });
}
int32_t provider_state_kind(bool isolated, ephost::IsolatedProviderState state) {
  if (!isolated) return EPHOST_PROVIDER_IN_PROCESS;
  switch (state) {
    case ephost::IsolatedProviderState::kRunning: return EPHOST_PROVIDER_RUNNING;
    case ephost::IsolatedProviderState::kRestarting: return EPHOST_PROVIDER_RESTARTING;
    case ephost::IsolatedProviderState::kFallenBack: return EPHOST_PROVIDER_FALLEN_BACK;
  }
  return EPHOST_PROVIDER_RUNNING;
}
EphostStatus* SessionGetProviderCount(const EphostSession* s, size_t* out) {
  return guard([&] {
    require(s, "session");
    require(out, "out_count");
    *out = s->session->providers().size();
  });
}
EphostStatus* SessionGetProviderState(const EphostSession* s, size_t index, EphostProviderState* out) {
  return guard([&] {
    require(s, "session");
    require(out, "out_state");
    if (out->struct_size < EPHOST_STRUCT_SIZE_THROUGH(EphostProviderState, provider))
      fail(EPHOST_INVALID_ARGUMENT, "EphostProviderState.struct_size is {}: set it to sizeof(EphostProviderState)",
           out->struct_size);
    const std::vector<ephost::Session::ProviderState> states = s->session->provider_states();
    if (index >= states.size())
      fail(EPHOST_INVALID_ARGUMENT, "provider index {} is out of range: the session has {} providers", index,
           states.size());
    const ephost::Session::ProviderState& state = states[index];
    EphostProviderState filled{};
    filled.struct_size = out->struct_size;
    filled.provider = s->session->providers()[index]->name().c_str();  // the session's own string
    filled.state = provider_state_kind(state.isolated, state.health.state);
    filled.failures = state.health.failures;
    filled.process_id = state.health.process_id;
    {
      auto& session = const_cast<EphostSession&>(*s);
      std::lock_guard<std::mutex> lock(session.strings_mutex);
      filled.last_failure = session.failure_messages.insert(state.health.last_failure).first->c_str();
    }
    std::memcpy(out, &filled, std::min<size_t>(out->struct_size, sizeof filled));
  });
}
EphostStatus* SetProviderStateCallback(EphostSessionOptions* o, EphostProviderStateCallback callback, void* user) {
  return guard([&] {
    require(o, "options");
    if (!callback) {
      o->options.provider_state = nullptr;
      return;
    }
    o->options.provider_state = [callback, user](const std::string& provider, const ephost::IsolatedProviderHealth& h) {
      EphostProviderState state{};
      state.struct_size = sizeof state;
      state.provider = provider.c_str();
      state.state = provider_state_kind(true, h.state);
      state.failures = h.failures;
      state.process_id = h.process_id;
      state.last_failure = h.last_failure.c_str();
      callback(&state, user);
    };
  });
}
EphostStatus* SessionEndProfiling(EphostSession* s, char** out) {
  return guard([&] {
    require(s, "session");
    require(out, "out_path");
    *out = copy_string(s->session->end_profiling());
  });
}
EphostStatus* SessionGetPartitionReportJson(const EphostSession* s, char** out) {
  return guard([&] {
    require(s, "session");
    require(out, "out_json");
    *out = copy_string(s->session->partition_report_json());
  });
}

EphostStatus* SessionGetEpContextReportJson(const EphostSession* s, char** out) {
  return guard([&] {
    require(s, "session");
    require(out, "out_json");
    nlohmann::json report = nlohmann::json::parse(s->session->partition_report_json());
    *out = copy_string(report["ep_contexts"].dump(2));
  });
}
EphostStatus* InspectEpContextModelJson(EphostEnv* env, const char* path, const EphostSessionOptions* options,
                                        char** out) {
  return guard([&] {
    require(env, "env");
    require(path, "model_path");
    require(out, "out_json");
    const SessionConfig config = parse_session_config(options ? options->options : SessionOptions());
    std::lock_guard<std::mutex> lock(env->mutex);
    *out = copy_string(inspect_context_model(env->env->registry(), path, config.external_data_folder));
  });
}

EphostStatus* RunWithOptions(EphostSession* s, const EphostRunOptions* o, const char* const* input_names,
                             const EphostTensor* const* inputs, size_t n_in, const char* const* output_names,
                             size_t n_out, EphostTensor** outputs) {
  return guard([&] {
    const RunLimits limits(o ? &o->control : nullptr);  // the run's clock starts now
    require(s, "session");
    if (n_in && (!input_names || !inputs)) fail(EPHOST_INVALID_ARGUMENT, "input_names and inputs must not be NULL");
    if (n_out && (!output_names || !outputs)) fail(EPHOST_INVALID_ARGUMENT, "output_names and outputs must not be NULL");
    std::vector<std::string> in_names, out_names;
    std::vector<RuntimeValue> in;
    for (size_t i = 0; i < n_in; ++i) {
      require(input_names[i], "input name");
      if (!inputs[i]) fail(EPHOST_INVALID_ARGUMENT, "input '{}' is NULL", input_names[i]);
      in_names.emplace_back(input_names[i]);
      in.push_back(inputs[i]->value);
    }
    for (size_t i = 0; i < n_out; ++i) {
      require(output_names[i], "output name");
      out_names.emplace_back(output_names[i]);
    }
    if (n_out == 0) return;  // nothing requested: nothing to compute
    std::vector<RuntimeValue> results = s->session->run(in_names, in, out_names, nullptr, nullptr, &limits);
    for (size_t i = 0; i < n_out; ++i) outputs[i] = new EphostTensor{std::move(results[i]), s->env};
  });
}
EphostStatus* Run(EphostSession* s, const char* const* input_names, const EphostTensor* const* inputs, size_t n_in,
                  const char* const* output_names, size_t n_out, EphostTensor** outputs) {
  return RunWithOptions(s, nullptr, input_names, inputs, n_in, output_names, n_out, outputs);
}

// ---- run options and model metadata (version 4) ----
EphostStatus* CreateRunOptions(EphostRunOptions** out) {
  return guard([&] {
    require(out, "out_options");
    *out = new EphostRunOptions();
  });
}
void ReleaseRunOptions(EphostRunOptions* o) { delete o; }
EphostStatus* RunOptionsSetTerminate(EphostRunOptions* o, int32_t terminate) {
  return guard([&] {
    require(o, "run_options");
    o->control.terminate.store(terminate != 0, std::memory_order_relaxed);
  });
}
EphostStatus* RunOptionsSetTimeout(EphostRunOptions* o, int64_t timeout_ms) {
  return guard([&] {
    require(o, "run_options");
    if (timeout_ms < 0)
      fail(EPHOST_INVALID_ARGUMENT, "run timeout is {} ms: give a number of milliseconds >= 0 (0: no deadline)",
           timeout_ms);
    o->control.timeout_ms.store(timeout_ms, std::memory_order_relaxed);
  });
}
EphostStatus* RunOptionsSetTag(EphostRunOptions* o, const char* tag) {
  return guard([&] {
    require(o, "run_options");
    require(tag, "tag");
    const size_t length = std::strlen(tag);
    if (length > 1024) fail(EPHOST_INVALID_ARGUMENT, "run tag is {} bytes: at most 1024", length);
    o->control.tag = tag;
  });
}
EphostStatus* SessionGetModelMetadataJson(const EphostSession* s, char** out) {
  return guard([&] {
    require(s, "session");
    require(out, "out_json");
    *out = copy_string(s->session->model_metadata_json());
  });
}
EphostStatus* AddInitializer(EphostSessionOptions* o, const char* name, const EphostTensor* value) {
  return guard([&] {
    require(o, "options");
    require(name, "name");
    require(value, "value");
    const Tensor& t = value->value.tensor("the initializer");
    if (t.on_device())
      fail(EPHOST_INVALID_ARGUMENT, "initializer '{}' lives on a device: give a host tensor (copy it with CopyTensor)",
           name);
    for (auto& [added, tensor] : o->options.initializers)
      if (added == name) {
        tensor = t.clone();
        return;
      }
    o->options.initializers.emplace_back(name, t.clone());
  });
}
EphostStatus* SetDefaultLogLevel(EphostLogLevel level) {
  return guard([&] {
    if (level < EPHOST_LOG_VERBOSE || level > EPHOST_LOG_FATAL)
      fail(EPHOST_INVALID_ARGUMENT, "log level {} is none of 0 (verbose) to 4 (fatal)", static_cast<int>(level));
    log_set_level(level);
  });
}

std::vector<int64_t> shape_of(const int64_t* shape, size_t rank) {
  if (rank && !shape) fail(EPHOST_INVALID_ARGUMENT, "shape is NULL but rank is {}", rank);
  std::vector<int64_t> dims(shape, shape + rank);
  element_count(dims);  // validates
  return dims;
}

EphostStatus* CreateTensorWithData(EphostElementType et, const int64_t* shape, size_t rank, void* data, size_t size,
                                   EphostTensor** out) {
  return guard([&] {
    require(out, "out_tensor");
    if (!element_type_known(et)) fail(EPHOST_INVALID_ARGUMENT, "unsupported element type {}", static_cast<int>(et));
    std::vector<int64_t> dims = shape_of(shape, rank);
    size_t expected = byte_count(et, dims);
    if (size != expected)
      fail(EPHOST_INVALID_ARGUMENT, "buffer holds {} bytes but a {} tensor of shape {} needs {}", size,
           element_type_name(et), shape_to_string(dims), expected);
    if (expected && !data) fail(EPHOST_INVALID_ARGUMENT, "data is NULL");
    // Over shared tensor memory: it must lie within (a wrong size is refused now, not read past later).
    isolation::find_shared_region(data, expected);
    *out = new EphostTensor{Tensor::borrow(et, std::move(dims), data), nullptr};
  });
}
EphostStatus* CreateTensor(EphostElementType et, const int64_t* shape, size_t rank, EphostTensor** out) {
  return guard([&] {
    require(out, "out_tensor");
    if (!element_type_known(et)) fail(EPHOST_INVALID_ARGUMENT, "unsupported element type {}", static_cast<int>(et));
    Tensor t = Tensor::allocate(et, shape_of(shape, rank));
    if (et != EPHOST_ELEMENT_STRING && t.byte_size()) std::memset(t.data(), 0, t.byte_size());
    *out = new EphostTensor{std::move(t), nullptr};
  });
}
void ReleaseTensor(EphostTensor* t) { delete t; }
EphostStatus* CreateSharedTensor(EphostElementType et, const int64_t* shape, size_t rank, EphostTensor** out) {
  return guard([&] {
    require(out, "out_tensor");
    if (!element_type_known(et)) fail(EPHOST_INVALID_ARGUMENT, "unsupported element type {}", static_cast<int>(et));
    if (et == EPHOST_ELEMENT_STRING)
      fail(EPHOST_INVALID_ARGUMENT, "a string tensor cannot live in shared memory (its elements are pointers)");
    std::vector<int64_t> dims = shape_of(shape, rank);
    std::shared_ptr<isolation::SharedRegion> region = isolation::SharedRegion::create(byte_count(et, dims));
    char* base = region->base();
    *out = new EphostTensor{Tensor::borrow(et, std::move(dims), base, std::move(region)), nullptr};
  });
}
EphostStatus* TensorIsShared(const EphostTensor* t, int32_t* out) {
  return guard([&] {
    require(out, "out_shared");
    if (!t || !t->value.is_tensor()) fail(EPHOST_INVALID_ARGUMENT, "TensorIsShared: the value is not a tensor");
    const Tensor& tensor = t->value.tensor();
    *out = !tensor.on_device() && isolation::find_shared_region(tensor.data(), std::max<size_t>(tensor.byte_size(), 1))
               ? 1 : 0;
  });
}
// The tensor a handle holds, or null for a NULL handle or another kind.
const Tensor* tensor_of(const EphostTensor* t) { return t && t->value.is_tensor() ? &t->value.tensor() : nullptr; }
EphostElementType TensorGetElementType(const EphostTensor* t) {
  const Tensor* x = tensor_of(t);
  return x ? static_cast<EphostElementType>(x->elem_type()) : EPHOST_ELEMENT_UNDEFINED;
}
void TensorGetShape(const EphostTensor* t, const int64_t** shape, size_t* rank) {
  const Tensor* x = tensor_of(t);
  if (shape) *shape = x ? x->shape().data() : nullptr;
  if (rank) *rank = x ? x->shape().size() : 0;
}
void* TensorGetData(EphostTensor* t) {
  const Tensor* x = tensor_of(t);
  return x ? const_cast<void*>(x->data()) : nullptr;
}
size_t TensorGetElementCount(const EphostTensor* t) {
  const Tensor* x = tensor_of(t);
  return x ? static_cast<size_t>(x->element_count()) : 0;
}
size_t GetElementSize(EphostElementType et) { return element_size(et); }

// ---- sequence and optional values (version 2) ----
EphostValueKind ValueGetKind(const EphostTensor* v) {
  return v ? static_cast<EphostValueKind>(to_abi_kind(v->value.kind())) : EPHOST_VALUE_UNDEFINED;
}
EphostStatus* CreateSequence(EphostElementType et, const EphostTensor* const* elements, size_t count,
                             EphostTensor** out) {
  return guard([&] {
    require(out, "out_sequence");
    if (count && !elements) fail(EPHOST_INVALID_ARGUMENT, "elements is NULL but count is {}", count);
    std::vector<Tensor> copies;
    copies.reserve(count);
    for (size_t i = 0; i < count; ++i) {
      const Tensor* t = tensor_of(elements[i]);
      if (!t) fail(EPHOST_INVALID_ARGUMENT, "sequence element {} is {}", i, elements[i] ? "not a tensor" : "NULL");
      // Sequences own their elements (the host shares them freely): the caller's buffers are copied.
      copies.push_back(t->clone());
    }
    *out = new EphostTensor{make_sequence(et, std::move(copies)), nullptr};
  });
}
EphostStatus* CreateOptionalNone(EphostTensor** out) {
  return guard([&] {
    require(out, "out_value");
    *out = new EphostTensor{RuntimeValue::none(), nullptr};
  });
}
EphostStatus* SequenceGetInfo(const EphostTensor* seq, EphostElementType* et, size_t* length) {
  return guard([&] {
    require(seq, "sequence");
    const TensorSequence& s = seq->value.sequence("the handle");
    if (et) *et = static_cast<EphostElementType>(s.elem_type);
    if (length) *length = s.elements.size();
  });
}
EphostStatus* SequenceGetElement(const EphostTensor* seq, size_t index, EphostTensor** out) {
  return guard([&] {
    require(seq, "sequence");
    require(out, "out_tensor");
    const TensorSequence& s = seq->value.sequence("the handle");
    if (index >= s.elements.size())
      fail(EPHOST_INVALID_ARGUMENT, "sequence element {} requested, the sequence has {}", index, s.elements.size());
    *out = new EphostTensor{s.elements[index], seq->env};
  });
}
EphostStatus* io_kind(const EphostSession* s, size_t i, bool input, EphostValueKind* kind,
                      EphostValueKind* optional_kind, int32_t* et) {
  return guard([&] {
    const Value& v = io_value(s, i, input);
    if (kind) *kind = static_cast<EphostValueKind>(v.type.kind);
    if (optional_kind) *optional_kind = static_cast<EphostValueKind>(v.type.optional_kind);
    if (et) *et = v.type.tensor_elem_type;
  });
}
EphostStatus* SessionGetInputKind(const EphostSession* s, size_t i, EphostValueKind* kind,
                                  EphostValueKind* optional_kind, int32_t* et) {
  return io_kind(s, i, true, kind, optional_kind, et);
}
EphostStatus* SessionGetOutputKind(const EphostSession* s, size_t i, EphostValueKind* kind,
                                   EphostValueKind* optional_kind, int32_t* et) {
  return io_kind(s, i, false, kind, optional_kind, et);
}

// The table of API `version`: filled with every function of the newest version, then cut to that
// version's size (EphostApiSize), so an application asking for version 1 gets a version 1 table.
EphostApi make_api(uint32_t version) {
  EphostApi a{};
  a.version = version;
  a.GetErrorCode = &GetErrorCode;
  a.GetErrorMessage = &GetErrorMessage;
  a.ReleaseStatus = &ReleaseStatus;
  a.GetErrorCodeName = &GetErrorCodeName;
  a.FreeString = &FreeString;
  a.CreateEnv = &CreateEnv;
  a.CreateEnvWithPluginDirs = &CreateEnvWithPluginDirs;
  a.ReleaseEnv = &ReleaseEnv;
  a.RegisterPluginLibrary = &RegisterPluginLibrary;
  a.GetPluginReportCount = &GetPluginReportCount;
  a.GetPluginReport = &GetPluginReport;
  a.GetPluginReportJson = &GetPluginReportJson;
  a.CreateSessionOptions = &CreateSessionOptions;
  a.ReleaseSessionOptions = &ReleaseSessionOptions;
  a.AddSessionConfigEntry = &AddSessionConfigEntry;
  a.SetIntraOpNumThreads = &SetIntraOpNumThreads;
  a.SetGraphOptimizationLevel = &SetGraphOptimizationLevel;
  a.AppendProvider = &AppendProvider;
  a.CreateSession = &CreateSession;
  a.CreateSessionFromArray = &CreateSessionFromArray;
  a.ReleaseSession = &ReleaseSession;
  a.SessionGetInputCount = &SessionGetInputCount;
  a.SessionGetOutputCount = &SessionGetOutputCount;
  a.SessionGetInputName = &SessionGetInputName;
  a.SessionGetOutputName = &SessionGetOutputName;
  a.SessionGetInputType = &SessionGetInputType;
  a.SessionGetOutputType = &SessionGetOutputType;
  a.SessionGetPartitionReportJson = &SessionGetPartitionReportJson;
  a.Run = &Run;
  a.CreateTensorWithData = &CreateTensorWithData;
  a.CreateTensor = &CreateTensor;
  a.ReleaseTensor = &ReleaseTensor;
  a.TensorGetElementType = &TensorGetElementType;
  a.TensorGetShape = &TensorGetShape;
  a.TensorGetData = &TensorGetData;
  a.TensorGetElementCount = &TensorGetElementCount;
  a.GetElementSize = &GetElementSize;
  a.ValueGetKind = &ValueGetKind;
  a.CreateSequence = &CreateSequence;
  a.CreateOptionalNone = &CreateOptionalNone;
  a.SequenceGetInfo = &SequenceGetInfo;
  a.SequenceGetElement = &SequenceGetElement;
  a.SessionGetInputKind = &SessionGetInputKind;
  a.SessionGetOutputKind = &SessionGetOutputKind;
  a.SessionGetEpContextReportJson = &SessionGetEpContextReportJson;
  a.InspectEpContextModelJson = &InspectEpContextModelJson;
  fill_device_api(a);
  a.SessionGetInputDimName = &SessionGetInputDimName;
  a.SessionGetOutputDimName = &SessionGetOutputDimName;
  a.SetSessionProgressCallback = &SetSessionProgressCallback;
  a.SessionEndProfiling = &SessionEndProfiling;
  a.CreateEnvWithOptions = &CreateEnvWithOptions;
  a.CreateRunOptions = &CreateRunOptions;
  a.ReleaseRunOptions = &ReleaseRunOptions;
  a.RunOptionsSetTerminate = &RunOptionsSetTerminate;
  a.RunOptionsSetTag = &RunOptionsSetTag;
  a.RunWithOptions = &RunWithOptions;
  a.SessionGetModelMetadataJson = &SessionGetModelMetadataJson;
  a.SetDefaultLogLevel = &SetDefaultLogLevel;
  a.AddInitializer = &AddInitializer;
  a.RunOptionsSetTimeout = &RunOptionsSetTimeout;
  a.SessionGetProviderCount = &SessionGetProviderCount;
  a.SessionGetProviderState = &SessionGetProviderState;
  a.SetProviderStateCallback = &SetProviderStateCallback;
  a.CreateSharedTensor = &CreateSharedTensor;
  a.TensorIsShared = &TensorIsShared;
  return cut_to_version_size(a, EphostApiSize(version), "application API table");
}

}  // namespace
}  // namespace ephost

extern "C" EPHOST_EXPORT const EphostApi* EphostGetApi(uint32_t version) {
  // One table per version, each ending with the last member its version added.
  static const EphostApi tables[] = {ephost::make_api(1), ephost::make_api(2), ephost::make_api(3),
                                     ephost::make_api(4), ephost::make_api(5), ephost::make_api(6)};
  static_assert(sizeof(tables) / sizeof(tables[0]) == EPHOST_API_VERSION, "one table per API version");
  if (version >= 1 && version <= EPHOST_API_VERSION) return &tables[version - 1];
  return nullptr;
}

extern "C" EPHOST_EXPORT const char* EphostGetVersionString(void) { return EPHOST_VERSION; }
