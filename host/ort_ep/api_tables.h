// The tables the host serves to ONNX Runtime plugin EPs: OrtApiBase (GetApi answers API versions 22..30
// with the one OrtApi table, laid out as ONNX Runtime's; NULL above 30 or below 22), OrtEpApi and
// OrtModelEditorApi. Every slot is filled: an implemented entry with its function (api_impl.h), any
// other with a stub that answers ORT_NOT_IMPLEMENTED naming it (or 0 / nothing where the entry returns
// no status) and logs it once.
#pragma once

#include <cstddef>
#include <cstdint>

#include "ort_ep/ort_abi.h"

namespace ephost::ort_ep {

const OrtApiBase* ort_api_base();
const OrtApi* ort_api();
const OrtEpApi* ort_ep_api();
const OrtModelEditorApi* ort_model_editor_api();

// How many entries of each table the host implements (the rest are stubs), counted from the entry lists.
struct ImplementedCounts {
  size_t api = 0, api_total = 0, ep_api = 0, ep_api_total = 0, editor = 0, editor_total = 0;
};
ImplementedCounts implemented_counts();

// The number of OrtApi / OrtEpApi entries ONNX Runtime's release of API `version` has (22..30), 0 for
// another version or where it is not known (27). The host's tables are the longest (30); an older
// plugin sees a prefix.
size_t ort_api_size_of_version(uint32_t version);
size_t ort_ep_api_size_of_version(uint32_t version);

// The API version the last GetApi call on this thread asked for (0 since the reset): what a plugin
// asked for in CreateEpFactories, for reports.
void reset_requested_api_version();
uint32_t requested_api_version();

// The experimental functions GetExperimentalFunction answers, by name (nullptr for another name).
OrtExperimentalFnPtr experimental_function(const char* name);

}  // namespace ephost::ort_ep
