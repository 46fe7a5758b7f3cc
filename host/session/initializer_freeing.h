// The session's side of plugin ABI 5's value_initializer_done: while the first plan is compiled (each
// once its last reader is made), once a plan is made (at creation, after EPContext writing; again after
// a provider fell back), the main graph's initializers that every step
// reading them is done with lose their bytes (model/initializer_release.h says when that is allowed and
// how they are read back), and the executors let go of their references so that the memory goes.
#pragma once

#include <cstddef>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "compile/compiled_graph.h"
#include "graph/graph.h"
#include "model/loader.h"
#include "model/initializer_release.h"
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

// Frees the main graph's initializers while the plan is compiled, each as soon as the last step that
// reads it (or computes a precomputed value from it) is made and every step reading it said it was
// done (the rule of free_done_initializers), so that a provider's packed copies and the host's bytes
// are not all alive at once: the peak of session creation drops too, not only what the session keeps.
// Only at creation (no executor shares the bytes yet), and not for a plan whose EPContext model is
// written after compiling (that reads the bytes). What it leaves is freed after the plan
// (free_done_initializers).
class FreeingWhileCompiling {
 public:
  // For `partitions` of the session whose main graph is `main` (nothing to do without an
  // InitializerRelease). Call before the partitions are compiled.
  FreeingWhileCompiling(const Graph& main, const std::vector<GraphPartition>& partitions);
  // Step `step` of `graph` was made (compile_graphs' callback).
  void step_compiled(const Graph& graph, const CompiledStep& step);
  size_t freed_bytes() const { return freed_bytes_; }
  size_t freed_count() const { return freed_count_; }

 private:
  // What one partition group (keyed by its first node, as its step is) reads.
  struct GroupReads {
    std::unordered_set<const Value*> direct;  // constant initializers its nodes read: the step reads them
    std::vector<const Value*> waits;  // also those behind precomputed values it reads: freed after it
  };
  // Adds to `out` the constant initializers computing `v` needs: v itself, or, for a precomputed value
  // not computed yet (a QDQ model's dequantized weight, made on first request), those its producer's
  // inputs need, recursively; notes in needed_by_ the precomputed values on the way (`computing`).
  void initializers_behind(const Value* v, std::unordered_set<const Value*>& out,
                           std::vector<const Value*>& computing, int depth = 0);
  // Whether a precomputed value made from `v` is not computed yet.
  bool still_needed(const Value* v) const;

  const Graph& main_;
  InitializerRelease* release_ = nullptr;
  std::unordered_map<const Value*, std::vector<const Value*>> needed_by_;  // initializer -> precomputed values
  std::unordered_map<const Node*, GroupReads> groups_;
  std::unordered_map<const Value*, size_t> steps_left_;  // per candidate: steps not made yet that need it
  std::unordered_map<const Value*, std::vector<InitializerReader>> readers_;  // the steps made that read it
  size_t freed_bytes_ = 0, freed_count_ = 0;
};

}  // namespace ephost
