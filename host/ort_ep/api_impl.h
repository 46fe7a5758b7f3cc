// The host's implementations of ONNX Runtime's table entries: one function per implemented entry, with
// the entry's signature, declared from the entry lists (include/ort_ep/ort_*_entries.inc) so that a
// signature that drifts from the table fails to compile. Defined in the api_*.cpp files by subject;
// assembled into tables by api_tables.cpp.
#pragma once

#include "ort_ep/ort_abi.h"

namespace ephost::ort_ep::api {

#define ORT_ENTRY(ret, name, params) ret name params noexcept;
#define ORT_STUB_STATUS(name)
#define ORT_STUB_VOID(name)
#define ORT_STUB_ZERO(name)
#include "ort_ep/ort_api_entries.inc"
namespace ep {
#include "ort_ep/ort_ep_api_entries.inc"
}  // namespace ep
namespace editor {
#include "ort_ep/ort_model_editor_entries.inc"
}  // namespace editor
#undef ORT_ENTRY
#undef ORT_STUB_STATUS
#undef ORT_STUB_VOID
#undef ORT_STUB_ZERO

// The experimental functions GetExperimentalFunction answers (api_experimental.cpp), with the types
// ort_abi.h gives them.
namespace experimental {
OrtStatus* GetEpContextConfig(const OrtSessionOptions* session_options, OrtEpContextConfig** config) noexcept;
void ReleaseEpContextConfig(OrtEpContextConfig* config) noexcept;
OrtStatus* EpContextConfig_GetReadFunc(const OrtEpContextConfig* config, OrtReadNamedBufferFunc* read_func,
                                       void** state) noexcept;
OrtStatus* EpContextConfig_GetWriteFunc(const OrtEpContextConfig* config, OrtWriteNamedBufferFunc* write_func,
                                        void** state) noexcept;
}  // namespace experimental

}  // namespace ephost::ort_ep::api
