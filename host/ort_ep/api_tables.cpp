#include "ort_ep/api_tables.h"

#include <fmt/format.h>

#include <cstring>
#include <mutex>
#include <set>
#include <string>

#include "core/log.h"
#include "ort_ep/api_impl.h"
#include "ort_ep/ort_objects.h"

namespace ephost::ort_ep {
namespace {

// Logged once per entry: which functions a plugin wanted that the adapter does not have.
void note_missing(const char* entry) {
  static std::mutex mutex;
  static auto* noted = new std::set<std::string>();
  std::lock_guard<std::mutex> lock(mutex);
  if (noted->insert(entry).second)
    log_warning(fmt::format("an ONNX Runtime plugin EP called {}, which ephost's ONNX Runtime adapter does not "
                            "implement: it answered ORT_NOT_IMPLEMENTED (or 0 where the function returns no status)",
                            entry));
}

OrtStatus* not_implemented(const char* entry) {
  note_missing(entry);
  return make_status(ORT_NOT_IMPLEMENTED,
                     fmt::format("{} is not implemented by ephost's ONNX Runtime adapter", entry));
}

// One stub per unimplemented entry, so that each names its own function. Called through the entry's
// real type with its real arguments, which they ignore: on the platforms ephost runs on the caller
// owns the argument area, and the return register carries the status or the 0.
#define ORT_ENTRY(ret, name, params)
#define ORT_STUB_STATUS(name) \
  OrtStatus* name() noexcept { return not_implemented(TABLE_NAME "::" #name); }
#define ORT_STUB_VOID(name) \
  void name() noexcept { note_missing(TABLE_NAME "::" #name); }
#define ORT_STUB_ZERO(name)                  \
  void* name() noexcept {                    \
    note_missing(TABLE_NAME "::" #name);     \
    return nullptr;                          \
  }
namespace stub {
#define TABLE_NAME "OrtApi"
#include "ort_ep/ort_api_entries.inc"
#undef TABLE_NAME
namespace ep {
#define TABLE_NAME "OrtEpApi"
#include "ort_ep/ort_ep_api_entries.inc"
#undef TABLE_NAME
}  // namespace ep
namespace editor {
#define TABLE_NAME "OrtModelEditorApi"
#include "ort_ep/ort_model_editor_entries.inc"
#undef TABLE_NAME
}  // namespace editor
}  // namespace stub
#undef ORT_ENTRY
#undef ORT_STUB_STATUS
#undef ORT_STUB_VOID
#undef ORT_STUB_ZERO

#define ORT_STUB_STATUS(name) t.name = reinterpret_cast<OrtUnimplementedEntry>(&STUBS::name);
#define ORT_STUB_VOID(name) t.name = reinterpret_cast<OrtUnimplementedEntry>(&STUBS::name);
#define ORT_STUB_ZERO(name) t.name = reinterpret_cast<OrtUnimplementedEntry>(&STUBS::name);
#define ORT_ENTRY(ret, name, params) t.name = &IMPLS::name;

OrtApi make_api() {
  OrtApi t{};
#define STUBS stub
#define IMPLS api
#include "ort_ep/ort_api_entries.inc"
#undef STUBS
#undef IMPLS
  return t;
}

OrtEpApi make_ep_api() {
  OrtEpApi t{};
#define STUBS stub::ep
#define IMPLS api::ep
#include "ort_ep/ort_ep_api_entries.inc"
#undef STUBS
#undef IMPLS
  return t;
}

OrtModelEditorApi make_editor_api() {
  OrtModelEditorApi t{};
#define STUBS stub::editor
#define IMPLS api::editor
#include "ort_ep/ort_model_editor_entries.inc"
#undef STUBS
#undef IMPLS
  return t;
}
#undef ORT_ENTRY
#undef ORT_STUB_STATUS
#undef ORT_STUB_VOID
#undef ORT_STUB_ZERO

thread_local uint32_t last_requested_version = 0;

const OrtApi* get_api(uint32_t version) {
  last_requested_version = version;
  if (version < EPHOST_ORT_API_VERSION_MIN || version > EPHOST_ORT_API_VERSION_MAX) {
    log_warning(fmt::format("an ONNX Runtime plugin EP asked for API version {}; ephost's ONNX Runtime adapter "
                            "answers versions {} to {} (NULL for this one)",
                            version, EPHOST_ORT_API_VERSION_MIN, EPHOST_ORT_API_VERSION_MAX));
    return nullptr;
  }
  return ort_api();
}

// The ONNX Runtime release whose API the host serves, as GetVersionString answers it.
const char* version_string() { return "1.30.0"; }

}  // namespace

const OrtApiBase* ort_api_base() {
  static const OrtApiBase base{get_api, version_string};
  return &base;
}

const OrtApi* ort_api() {
  static const OrtApi table = make_api();
  return &table;
}

const OrtEpApi* ort_ep_api() {
  static const OrtEpApi table = make_ep_api();
  return &table;
}

const OrtModelEditorApi* ort_model_editor_api() {
  static const OrtModelEditorApi table = make_editor_api();
  return &table;
}

ImplementedCounts implemented_counts() {
  ImplementedCounts c;
#define ORT_ENTRY(ret, name, params) ++n, ++total;
#define ORT_STUB_STATUS(name) ++total;
#define ORT_STUB_VOID(name) ++total;
#define ORT_STUB_ZERO(name) ++total;
  {
    size_t n = 0, total = 0;
#include "ort_ep/ort_api_entries.inc"
    c.api = n, c.api_total = total;
  }
  {
    size_t n = 0, total = 0;
#include "ort_ep/ort_ep_api_entries.inc"
    c.ep_api = n, c.ep_api_total = total;
  }
  {
    size_t n = 0, total = 0;
#include "ort_ep/ort_model_editor_entries.inc"
    c.editor = n, c.editor_total = total;
  }
#undef ORT_ENTRY
#undef ORT_STUB_STATUS
#undef ORT_STUB_VOID
#undef ORT_STUB_ZERO
  return c;
}

size_t ort_api_size_of_version(uint32_t version) {
  switch (version) {
    case 22: return 318;
    case 23: return 390;
    case 24: return 415;
    case 25: case 26: return 419;
    case 28: return 424;
    case 29: return 425;
    case 30: return 426;
    default: return 0;
  }
}

size_t ort_ep_api_size_of_version(uint32_t version) {
  switch (version) {
    case 22: return 2;
    case 23: return 16;
    case 24: return 50;
    case 25: case 26: case 28: return 73;
    case 29: case 30: return 74;
    default: return 0;
  }
}

}  // namespace ephost::ort_ep

namespace ephost::ort_ep {

void reset_requested_api_version() { last_requested_version = 0; }
uint32_t requested_api_version() { return last_requested_version; }

OrtExperimentalFnPtr experimental_function(const char* name) {
  // An unknown name answers NULL, as ONNX Runtime does.
  struct Named {
    const char* name;
    OrtExperimentalFnPtr fn;
  };
  static const Named kServed[] = {
      {ORT_EXPERIMENTAL_GET_EP_CONTEXT_CONFIG, reinterpret_cast<OrtExperimentalFnPtr>(&api::experimental::GetEpContextConfig)},
      {ORT_EXPERIMENTAL_RELEASE_EP_CONTEXT_CONFIG,
       reinterpret_cast<OrtExperimentalFnPtr>(&api::experimental::ReleaseEpContextConfig)},
      {ORT_EXPERIMENTAL_GET_EP_CONTEXT_READ_FUNC,
       reinterpret_cast<OrtExperimentalFnPtr>(&api::experimental::EpContextConfig_GetReadFunc)},
      {ORT_EXPERIMENTAL_GET_EP_CONTEXT_WRITE_FUNC,
       reinterpret_cast<OrtExperimentalFnPtr>(&api::experimental::EpContextConfig_GetWriteFunc)},
  };
  for (const Named& n : kServed)
    if (std::strcmp(n.name, name) == 0) return n.fn;
  return nullptr;
}

}  // namespace ephost::ort_ep
