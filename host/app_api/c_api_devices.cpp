// Application API version 3: devices, device tensors, copies, bound runs (IoBinding).
#include "app_api/c_api_devices.h"

#include <cstring>

#include "app_api/handles.h"
#include "core/device.h"
#include "core/error.h"
#include "core/status.h"
#include "core/tensor_copy.h"
#include "discovery/plugin_registry.h"
#include "discovery/probed_device_info.h"

namespace ephost {
namespace {

void require(const void* p, const char* what) {
  if (!p) fail(EPHOST_INVALID_ARGUMENT, "{} must not be NULL", what);
}

// One entry of the device list: a device of a plugin loaded in process, or (lazy loading) one that the
// probe of a usable plugin not loaded yet saw. Listing devices loads nothing: the strings live in the
// record (its Device objects or its probed_devices, neither changed once published).
struct ListedDevice {
  const PluginRecord* record = nullptr;
  const Device* device = nullptr;       // loaded in process
  const ProbedDevice* probed = nullptr;  // not loaded yet
  uint32_t index = 0;
};

// Every device of the env's usable plugins, in discovery order.
std::vector<ListedDevice> all_devices(const Env& env) {
  std::vector<ListedDevice> out;
  for (const PluginRecord* r : env.registry().snapshot()) {
    if (!r->loaded.load(std::memory_order_acquire)) continue;
    if (r->in_process.load(std::memory_order_acquire)) {
      for (const auto& d : r->devices) out.push_back({r, d.get(), nullptr, d->index()});
    } else {
      for (size_t i = 0; i < r->probed_devices.size(); ++i)
        out.push_back({r, nullptr, &r->probed_devices[i], static_cast<uint32_t>(i)});
    }
  }
  return out;
}

// A device that is about to be used: its plugin is loaded in process first (lazy loading).
const Device& find_device(const Env& env, const char* provider, uint32_t index) {
  require(provider, "provider_name");
  const PluginRecord* rec = env.registry().find_loaded(provider);
  if (!rec) fail(EPHOST_INVALID_ARGUMENT, "no loaded plugin is named '{}' ('ephost plugins' lists them)", provider);
  if (!env.registry().ensure_loaded(*rec))
    fail(EPHOST_INVALID_ARGUMENT, "plugin '{}' dropped out when it was loaded: {}", provider, rec->skip_reason());
  if (rec->devices.empty()) fail(EPHOST_INVALID_ARGUMENT, "plugin '{}' drives no device of its own", provider);
  if (index >= rec->devices.size())
    fail(EPHOST_INVALID_ARGUMENT, "plugin '{}' has {} device(s); device {} does not exist", provider,
         rec->devices.size(), index);
  return *rec->devices[index];
}

size_t GetDeviceCount(const EphostEnv* env) {
  try {
    return env ? all_devices(*env->env).size() : 0;
  } catch (...) {
    return 0;
  }
}

EphostStatus* GetDevice(const EphostEnv* env, size_t index, EphostDeviceReport* out) {
  return guard([&] {
    require(env, "env");
    require(out, "out");
    if (out->struct_size < sizeof(uint32_t)) fail(EPHOST_INVALID_ARGUMENT, "out->struct_size is not set");
    const std::vector<ListedDevice> devices = all_devices(*env->env);
    if (index >= devices.size())
      fail(EPHOST_INVALID_ARGUMENT, "device index {} out of range ({} devices)", index, devices.size());
    const ListedDevice& listed = devices[index];
    EphostDeviceReport report{};
    report.struct_size = out->struct_size;
    report.plugin = listed.record->name.c_str();
    report.index = listed.index;
    if (const Device* d = listed.device) {
      report.device_type = d->type();
      report.vendor = d->vendor().c_str();
      report.name = d->name().c_str();
      report.driver_version = d->driver_version().c_str();
      report.hardware_architecture = d->hardware_architecture().c_str();
      report.memory_bytes = d->memory_bytes();
      report.host_memory_usable = d->host_memory_usable() ? 1 : 0;
      report.memory_kinds = d->memory_kinds();
    } else {
      const EphostDeviceInfo info = device_info_of(*listed.probed);
      report.device_type = info.device_type;
      report.vendor = info.vendor;
      report.name = info.name;
      report.driver_version = info.driver_version;
      report.hardware_architecture = info.hardware_architecture;
      report.memory_bytes = info.memory_bytes;
      report.host_memory_usable = info.host_memory_usable;
      report.memory_kinds = info.memory_kinds;
    }
    std::memcpy(out, &report, std::min<size_t>(out->struct_size, sizeof(report)));
  });
}

EphostStatus* AppendProviderForDevice(EphostSessionOptions* o, const char* name, uint32_t device,
                                      const char* const* keys, const char* const* values, size_t n) {
  return guard([&] {
    require(o, "options");
    require(name, "provider_name");
    if (n && (!keys || !values)) fail(EPHOST_INVALID_ARGUMENT, "{} provider options but keys or values is NULL", n);
    ProviderRequest r;
    r.name = name;
    r.device = device;
    for (size_t i = 0; i < n; ++i) {
      require(keys[i], "option key");
      require(values[i], "option value");
      r.options.emplace_back(keys[i], values[i]);
    }
    o->options.providers.push_back(std::move(r));
  });
}

EphostStatus* CreateDeviceTensor(EphostEnv* env, const char* provider, uint32_t device, EphostElementType et,
                                 const int64_t* shape, size_t rank, EphostTensor** out) {
  return guard([&] {
    require(env, "env");
    require(out, "out_tensor");
    if (rank && !shape) fail(EPHOST_INVALID_ARGUMENT, "shape is NULL but rank is {}", rank);
    const Device& d = find_device(*env->env, provider, device);
    std::vector<int64_t> dims(shape, shape + rank);
    element_count(dims);  // validates
    *out = new EphostTensor{Tensor::allocate_on_device(d, et, std::move(dims), "a device tensor"), env->env};
  });
}

EphostStatus* TensorGetLocation(const EphostTensor* t, EphostMemoryLocation* location, const char** provider,
                                uint32_t* device) {
  return guard([&] {
    require(t, "tensor");
    const Tensor& x = t->value.tensor("the handle");
    if (location) *location = x.on_device() ? EPHOST_LOCATION_DEVICE : EPHOST_LOCATION_HOST;
    if (provider) *provider = x.on_device() ? x.device()->plugin_name().c_str() : nullptr;
    if (device) *device = x.on_device() ? x.device()->index() : 0;
  });
}

EphostStatus* CopyTensor(const EphostTensor* src, EphostTensor* dst) {
  return guard([&] {
    require(src, "src");
    require(dst, "dst");
    copy_tensor(src->value.tensor("src"), dst->value.tensor("dst"), nullptr, "CopyTensor");
  });
}

EphostStatus* CreateIoBinding(EphostSession* session, EphostIoBinding** out) {
  return guard([&] {
    require(session, "session");
    require(out, "out_binding");
    auto b = std::make_unique<EphostIoBinding>();
    b->session = session;
    *out = b.release();
  });
}
void ReleaseIoBinding(EphostIoBinding* b) { delete b; }

// The binding's entry for output `name`, created when missing.
EphostIoBinding::Output& output_entry(EphostIoBinding* b, const char* name) {
  require(name, "name");
  bool known = false;
  for (const Value* v : b->session->session->outputs()) known = known || v->name == name;
  if (!known) fail(EPHOST_INVALID_ARGUMENT, "the model has no output '{}'", name);
  for (auto& o : b->outputs)
    if (o.name == name) return o;
  b->outputs.push_back({name, {}, {}});
  return b->outputs.back();
}

EphostStatus* BindInput(EphostIoBinding* b, const char* name, const EphostTensor* value) {
  return guard([&] {
    require(b, "binding");
    require(name, "name");
    require(value, "value");
    for (auto& [bound, v] : b->inputs)
      if (bound == name) {
        v = value->value;
        return;
      }
    b->inputs.emplace_back(name, value->value);
  });
}

EphostStatus* BindOutput(EphostIoBinding* b, const char* name, EphostTensor* value) {
  return guard([&] {
    require(b, "binding");
    require(value, "value");
    const Tensor& t = value->value.tensor("the bound output");
    if (t.empty()) fail(EPHOST_INVALID_ARGUMENT, "output '{}' is bound to an empty tensor", name ? name : "");
    EphostIoBinding::Output& o = output_entry(b, name);
    o.request.location = t.device();
    o.request.destination = t;
  });
}

EphostStatus* BindOutputToDevice(EphostIoBinding* b, const char* name, const char* provider, uint32_t device) {
  return guard([&] {
    require(b, "binding");
    const Device* d = provider ? &find_device(b->session->session->env(), provider, device) : nullptr;
    EphostIoBinding::Output& o = output_entry(b, name);
    o.request.location = d;
    o.request.destination = Tensor();
  });
}

EphostStatus* RunWithBindingAndOptions(EphostSession* s, EphostIoBinding* b, const EphostRunOptions* o) {
  return guard([&] {
    const RunLimits limits(o ? &o->control : nullptr);  // the run's clock starts now
    require(s, "session");
    require(b, "binding");
    if (b->session != s) fail(EPHOST_INVALID_ARGUMENT, "the binding belongs to another session");
    std::vector<std::string> in_names, out_names;
    std::vector<RuntimeValue> in;
    for (const auto& [name, value] : b->inputs) {
      in_names.push_back(name);
      in.push_back(value);
    }
    OutputRequests requests;
    for (const auto& o : b->outputs) {
      out_names.push_back(o.name);
      requests.push_back(o.request);
    }
    if (out_names.empty()) fail(EPHOST_INVALID_ARGUMENT, "no output is bound: bind at least one output");
    std::vector<RuntimeValue> results = s->session->run(in_names, in, out_names, &requests, nullptr, &limits);
    for (size_t i = 0; i < results.size(); ++i) b->outputs[i].result = std::move(results[i]);
  });
}
EphostStatus* RunWithBinding(EphostSession* s, EphostIoBinding* b) { return RunWithBindingAndOptions(s, b, nullptr); }

EphostStatus* IoBindingGetOutput(const EphostIoBinding* b, const char* name, EphostTensor** out) {
  return guard([&] {
    require(b, "binding");
    require(name, "name");
    require(out, "out_value");
    for (const auto& o : b->outputs)
      if (o.name == name) {
        if (!o.result.is_set()) fail(EPHOST_INVALID_ARGUMENT, "output '{}' has no value yet: run first", name);
        *out = new EphostTensor{o.result, b->session->env};
        return;
      }
    fail(EPHOST_INVALID_ARGUMENT, "output '{}' is not bound", name);
  });
}

void ClearIoBinding(EphostIoBinding* b) {
  if (!b) return;
  b->inputs.clear();
  b->outputs.clear();
}

}  // namespace

void fill_device_api(EphostApi& a) {
  a.GetDeviceCount = &GetDeviceCount;
  a.GetDevice = &GetDevice;
  a.AppendProviderForDevice = &AppendProviderForDevice;
  a.CreateDeviceTensor = &CreateDeviceTensor;
  a.TensorGetLocation = &TensorGetLocation;
  a.CopyTensor = &CopyTensor;
  a.CreateIoBinding = &CreateIoBinding;
  a.ReleaseIoBinding = &ReleaseIoBinding;
  a.BindInput = &BindInput;
  a.BindOutput = &BindOutput;
  a.BindOutputToDevice = &BindOutputToDevice;
  a.RunWithBinding = &RunWithBinding;
  a.IoBindingGetOutput = &IoBindingGetOutput;
  a.ClearIoBinding = &ClearIoBinding;
  a.RunWithBindingAndOptions = &RunWithBindingAndOptions;
}

}  // namespace ephost
