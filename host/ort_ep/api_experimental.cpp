// The experimental functions plugin EPs look up by name (GetExperimentalFunction): the EPContext
// configuration (OrtEpContextConfig) and its data read / write callbacks, as ONNX Runtime 1.28 added them.
#include <fmt/format.h>

#include <new>

#include "ort_ep/api_impl.h"
#include "ort_ep/ort_objects.h"

namespace ephost::ort_ep::api::experimental {
namespace {

OrtStatus* invalid(const char* function, const char* what) {
  return make_status(ORT_INVALID_ARGUMENT, fmt::format("{}: {}", function, what));
}

}  // namespace

OrtStatus* GetEpContextConfig(const OrtSessionOptions* session_options, OrtEpContextConfig** config) noexcept {
  if (!checked<OrtSessionOptions>(session_options, Magic::kSessionOptions))
    return invalid(ORT_EXPERIMENTAL_GET_EP_CONTEXT_CONFIG, "session_options is not the ones CreateEp was handed");
  if (!config) return invalid(ORT_EXPERIMENTAL_GET_EP_CONTEXT_CONFIG, "config is NULL");
  auto* made = new (std::nothrow) OrtEpContextConfig;
  if (!made) return make_status(ORT_FAIL, "out of memory");
  *config = made;
  return nullptr;
}

void ReleaseEpContextConfig(OrtEpContextConfig* config) noexcept {
  if (OrtEpContextConfig* c = checked_mut<OrtEpContextConfig>(config, Magic::kEpContextConfig)) delete c;
}

OrtStatus* EpContextConfig_GetReadFunc(const OrtEpContextConfig* config, OrtReadNamedBufferFunc* read_func,
                                       void** state) noexcept {
  const auto* c = checked<OrtEpContextConfig>(config, Magic::kEpContextConfig);
  if (!c) return invalid(ORT_EXPERIMENTAL_GET_EP_CONTEXT_READ_FUNC, "config is not one GetEpContextConfig made");
  if (!read_func || !state) return invalid(ORT_EXPERIMENTAL_GET_EP_CONTEXT_READ_FUNC, "read_func or state is NULL");
  *read_func = c->read;
  *state = c->read_state;
  return nullptr;
}

OrtStatus* EpContextConfig_GetWriteFunc(const OrtEpContextConfig* config, OrtWriteNamedBufferFunc* write_func,
                                        void** state) noexcept {
  const auto* c = checked<OrtEpContextConfig>(config, Magic::kEpContextConfig);
  if (!c) return invalid(ORT_EXPERIMENTAL_GET_EP_CONTEXT_WRITE_FUNC, "config is not one GetEpContextConfig made");
  if (!write_func || !state) return invalid(ORT_EXPERIMENTAL_GET_EP_CONTEXT_WRITE_FUNC, "write_func or state is NULL");
  *write_func = c->write;
  *state = c->write_state;
  return nullptr;
}

}  // namespace ephost::ort_ep::api::experimental
