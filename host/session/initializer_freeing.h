// The session's side of plugin ABI 5's value_initializer_done: once a plan is made (at creation, after
// EPContext writing; again after a provider fell back), the main graph's initializers that every step
// reading them is done with lose their bytes (model/initializer_release.h says when that is allowed and
// how they are read back), and the executors let go of their references so that the memory goes.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "model/loader.h"
#include "session/session_plan.h"

namespace ephost {

// Sets up `model.initializer_release` for a model loaded from a file (nothing for a buffer): the
// initializers of `main` (its first IR) are candidates, except those named in `added` (the
// application's, which the file does not hold). The file is read again with `options`.
void track_initializers_from_file(Model& model, const Graph& main, const LoadOptions& options,
                                  const std::vector<std::string>& added);

// Frees what can be freed for `plan` of `main` (a main graph whose model has an InitializerRelease;
// nothing otherwise). A reader the host cannot name (a provider without initializer_reader, a node
// whose subgraphs read the value) keeps the initializer, and so does a graph output. Returns the bytes
// freed by this call. Call it before `plan` runs (no lock: the executors are not shared yet).
size_t free_done_initializers(const Graph& main, SessionPlan& plan);

}  // namespace ephost
