// OrtApi entries for the small objects: statuses, key-value pairs, loggers, session options, hardware
// and EP devices, and the doors to the other tables.
#include <fmt/format.h>

#include <cstring>
#include <memory>

#include "core/log.h"
#include "ort_ep/api_impl.h"
#include "ort_ep/api_tables.h"
#include "ort_ep/ort_objects.h"

namespace ephost::ort_ep::api {
namespace {

OrtStatus* invalid(const char* function, const char* what) {
  return make_status(ORT_INVALID_ARGUMENT, fmt::format("OrtApi::{}: {}", function, what));
}

}  // namespace

// ---- statuses ----

OrtStatus* CreateStatus(OrtErrorCode code, const char* msg) noexcept {
  try {
    return make_status(code, msg ? msg : "");
  } catch (...) {
    return nullptr;  // out of memory: ONNX Runtime answers NULL too
  }
}

OrtErrorCode GetErrorCode(const OrtStatus* status) noexcept {
  const OrtStatus* s = checked<OrtStatus>(status, Magic::kStatus);
  return s ? s->code : ORT_OK;
}

const char* GetErrorMessage(const OrtStatus* status) noexcept {
  const OrtStatus* s = checked<OrtStatus>(status, Magic::kStatus);
  return s ? s->message.c_str() : "";
}

void ReleaseStatus(OrtStatus* input) noexcept {
  if (input) take_status(input);
}

// ---- key-value pairs ----

void CreateKeyValuePairs(OrtKeyValuePairs** out) noexcept {
  if (!out) return;
  try {
    *out = new OrtKeyValuePairs();
  } catch (...) {
    *out = nullptr;
  }
}

void AddKeyValuePair(OrtKeyValuePairs* kvps, const char* key, const char* value) noexcept {
  OrtKeyValuePairs* p = checked_mut<OrtKeyValuePairs>(kvps, Magic::kKeyValuePairs);
  // ONNX Runtime ignores an empty key and a NULL value; so does the host.
  if (!p || !key || !*key || !value) return;
  try {
    p->set(key, value);
  } catch (...) {
  }
}

const char* GetKeyValue(const OrtKeyValuePairs* kvps, const char* key) noexcept {
  const OrtKeyValuePairs* p = checked<OrtKeyValuePairs>(kvps, Magic::kKeyValuePairs);
  if (!p || !key) return nullptr;
  const std::string* v = p->find(key);
  return v ? v->c_str() : nullptr;
}

void GetKeyValuePairs(const OrtKeyValuePairs* kvps, const char* const** keys, const char* const** values,
                      size_t* num_entries) noexcept {
  const OrtKeyValuePairs* p = checked<OrtKeyValuePairs>(kvps, Magic::kKeyValuePairs);
  if (!keys || !values || !num_entries) return;
  if (!p) {
    *keys = nullptr, *values = nullptr, *num_entries = 0;
    return;
  }
  *keys = p->key_ptrs.data();
  *values = p->value_ptrs.data();
  *num_entries = p->keys.size();
}

void RemoveKeyValuePair(OrtKeyValuePairs* kvps, const char* key) noexcept {
  OrtKeyValuePairs* p = checked_mut<OrtKeyValuePairs>(kvps, Magic::kKeyValuePairs);
  if (p && key) p->remove(key);
}

void ReleaseKeyValuePairs(OrtKeyValuePairs* input) noexcept {
  if (OrtKeyValuePairs* p = checked_mut<OrtKeyValuePairs>(input, Magic::kKeyValuePairs)) delete p;
}

// ---- loggers ----

OrtStatus* Logger_LogMessage(const OrtLogger* logger, OrtLoggingLevel level, const char* message,
                             const ORTCHAR_T* file_path, int line_number, const char* func_name) noexcept {
  const OrtLogger* l = checked<OrtLogger>(logger, Magic::kLogger);
  if (!l) return invalid("Logger_LogMessage", "the logger is not one the host handed out");
  if (!message) return invalid("Logger_LogMessage", "message is NULL");
  try {
    const std::string where = file_path ? fmt::format(" ({}:{} {})", file_path, line_number, func_name ? func_name : "")
                                        : std::string();
    const std::string text = fmt::format("[{}] {}{}", l->id, message, where);
    // ONNX Runtime's levels are ephost's (VERBOSE 0 .. FATAL 4).
    log_message(static_cast<EphostLogLevel>(level < 0 ? 0 : level > 4 ? 4 : level), text);
    return nullptr;
  } catch (const std::exception& e) {
    return make_status(ORT_FAIL, e.what());
  }
}

OrtStatus* Logger_GetLoggingSeverityLevel(const OrtLogger* logger, OrtLoggingLevel* out) noexcept {
  if (!checked<OrtLogger>(logger, Magic::kLogger)) return invalid("Logger_GetLoggingSeverityLevel", "bad logger");
  if (!out) return invalid("Logger_GetLoggingSeverityLevel", "out is NULL");
  // Messages below WARNING are dropped by ephost's default log level; the plugin may skip formatting them.
  *out = ORT_LOGGING_LEVEL_WARNING;
  return nullptr;
}

// ---- session options ----

OrtStatus* HasSessionConfigEntry(const OrtSessionOptions* options, const char* config_key, int* out) noexcept {
  const OrtSessionOptions* o = checked<OrtSessionOptions>(options, Magic::kSessionOptions);
  if (!o || !config_key || !out) return invalid("HasSessionConfigEntry", "bad session options, key or out");
  *out = o->config.find(config_key) ? 1 : 0;
  return nullptr;
}

OrtStatus* GetSessionConfigEntry(const OrtSessionOptions* options, const char* config_key, char* config_value,
                                 size_t* size) noexcept {
  const OrtSessionOptions* o = checked<OrtSessionOptions>(options, Magic::kSessionOptions);
  if (!o || !config_key || !size) return invalid("GetSessionConfigEntry", "bad session options, key or size");
  const std::string* v = o->config.find(config_key);
  if (!v) return make_status(ORT_INVALID_ARGUMENT, fmt::format("session config entry '{}' is not set", config_key));
  // ONNX Runtime's protocol: the size needed (with the NUL) comes back; a short buffer is an error.
  const size_t needed = v->size() + 1;
  if (!config_value) {
    *size = needed;
    return nullptr;
  }
  if (*size < needed) {
    *size = needed;
    return make_status(ORT_INVALID_ARGUMENT,
                       fmt::format("session config entry '{}': the buffer holds {} bytes, {} are needed", config_key,
                                   *size, needed));
  }
  std::memcpy(config_value, v->c_str(), needed);
  *size = needed;
  return nullptr;
}

OrtStatus* GetSessionOptionsConfigEntries(const OrtSessionOptions* options, OrtKeyValuePairs** out) noexcept {
  const OrtSessionOptions* o = checked<OrtSessionOptions>(options, Magic::kSessionOptions);
  if (!o || !out) return invalid("GetSessionOptionsConfigEntries", "bad session options or out");
  try {
    *out = new OrtKeyValuePairs(o->config);
    return nullptr;
  } catch (const std::exception& e) {
    return make_status(ORT_FAIL, e.what());
  }
}

// Session options a plugin makes itself, as an application does (nothing of ephost's reads them: a plugin
// hands them to its own code).
OrtStatus* CreateSessionOptions(OrtSessionOptions** options) noexcept {
  if (!options) return invalid("CreateSessionOptions", "options (the out pointer) is NULL");
  try {
    auto made = std::make_unique<OrtSessionOptions>();
    made->made_by_plugin = true;
    *options = made.release();
    return nullptr;
  } catch (const std::exception& e) {
    return make_status(ORT_FAIL, e.what());
  }
}

// Frees only options CreateSessionOptions made: those the host hands CreateEp are the host's.
void ReleaseSessionOptions(OrtSessionOptions* input) noexcept {
  OrtSessionOptions* o = checked_mut<OrtSessionOptions>(input, Magic::kSessionOptions);
  if (!o || !o->made_by_plugin) return;
  o->magic = Magic{};
  delete o;
}

OrtStatus* AddSessionConfigEntry(OrtSessionOptions* options, const char* config_key, const char* config_value) noexcept {
  OrtSessionOptions* o = checked_mut<OrtSessionOptions>(options, Magic::kSessionOptions);
  if (!o || !config_key || !*config_key || !config_value)
    return invalid("AddSessionConfigEntry", "bad session options, an empty key or a NULL value");
  if (!o->made_by_plugin)
    return invalid("AddSessionConfigEntry", "these session options are the host's (handed to CreateEp): make your "
                   "own with CreateSessionOptions");
  try {
    o->config.set(config_key, config_value);
    return nullptr;
  } catch (const std::exception& e) {
    return make_status(ORT_FAIL, e.what());
  }
}

// The source model of weightless EPContext models, as bytes instead of the file ep.context_source_model_path
// names (ONNX Runtime looks for it in that order). Borrowed: the bytes must outlive the options. Options the
// host handed CreateEp may be given one too: the EP's later SessionOptionsGetWeightlessSourceModelBuffer
// answers it.
OrtStatus* SessionOptionsSetWeightlessSourceModelBuffer(OrtSessionOptions* options, const void* source_model_data,
                                                        size_t source_model_data_length) noexcept {
  static const char* const kName = "SessionOptionsSetWeightlessSourceModelBuffer";
  OrtSessionOptions* o = checked_mut<OrtSessionOptions>(options, Magic::kSessionOptions);
  if (!o) return invalid(kName, "options is not an OrtSessionOptions (CreateSessionOptions, or CreateEp's)");
  if (!source_model_data || source_model_data_length == 0)
    return invalid(kName, "source_model_data is NULL or source_model_data_length is 0: give the model's bytes");
  o->weightless_buffer = source_model_data;
  o->weightless_buffer_size = source_model_data_length;
  return nullptr;
}

// ---- hardware and EP devices ----

OrtHardwareDeviceType HardwareDevice_Type(const OrtHardwareDevice* device) noexcept {
  const OrtHardwareDevice* d = checked<OrtHardwareDevice>(device, Magic::kHardwareDevice);
  return d ? d->type : OrtHardwareDeviceType_CPU;
}
uint32_t HardwareDevice_VendorId(const OrtHardwareDevice* device) noexcept {
  const OrtHardwareDevice* d = checked<OrtHardwareDevice>(device, Magic::kHardwareDevice);
  return d ? d->vendor_id : 0;
}
const char* HardwareDevice_Vendor(const OrtHardwareDevice* device) noexcept {
  const OrtHardwareDevice* d = checked<OrtHardwareDevice>(device, Magic::kHardwareDevice);
  return d ? d->vendor.c_str() : nullptr;
}
uint32_t HardwareDevice_DeviceId(const OrtHardwareDevice* device) noexcept {
  const OrtHardwareDevice* d = checked<OrtHardwareDevice>(device, Magic::kHardwareDevice);
  return d ? d->device_id : 0;
}
const OrtKeyValuePairs* HardwareDevice_Metadata(const OrtHardwareDevice* device) noexcept {
  const OrtHardwareDevice* d = checked<OrtHardwareDevice>(device, Magic::kHardwareDevice);
  return d ? &d->metadata : nullptr;
}

const char* EpDevice_EpName(const OrtEpDevice* ep_device) noexcept {
  const OrtEpDevice* d = checked<OrtEpDevice>(ep_device, Magic::kEpDevice);
  return d ? d->ep_name.c_str() : nullptr;
}
const char* EpDevice_EpVendor(const OrtEpDevice* ep_device) noexcept {
  const OrtEpDevice* d = checked<OrtEpDevice>(ep_device, Magic::kEpDevice);
  return d ? d->ep_vendor.c_str() : nullptr;
}
const OrtKeyValuePairs* EpDevice_EpMetadata(const OrtEpDevice* ep_device) noexcept {
  const OrtEpDevice* d = checked<OrtEpDevice>(ep_device, Magic::kEpDevice);
  return d ? &d->ep_metadata : nullptr;
}
const OrtKeyValuePairs* EpDevice_EpOptions(const OrtEpDevice* ep_device) noexcept {
  const OrtEpDevice* d = checked<OrtEpDevice>(ep_device, Magic::kEpDevice);
  return d ? &d->ep_options : nullptr;
}
const OrtHardwareDevice* EpDevice_Device(const OrtEpDevice* ep_device) noexcept {
  const OrtEpDevice* d = checked<OrtEpDevice>(ep_device, Magic::kEpDevice);
  return d ? d->device : nullptr;
}

// ---- the other tables ----

const OrtEpApi* GetEpApi(void) noexcept { return ort_ep_api(); }
const OrtModelEditorApi* GetModelEditorApi(void) noexcept { return ort_model_editor_api(); }
const char* GetBuildInfoString(void) noexcept { return "ephost ONNX Runtime plugin-EP adapter, API 22-30"; }

OrtExperimentalFnPtr GetExperimentalFunction(const char* name) noexcept {
  return name ? experimental_function(name) : nullptr;
}

}  // namespace ephost::ort_ep::api
