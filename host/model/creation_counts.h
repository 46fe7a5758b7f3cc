// How much whole-model work a session's creation does: IR builds (graph/build_graph_ir) and whole-model
// shape inferences (model/loader's infer_model_shapes). The session report shows them
// ("creation": {"ir_builds", "shape_inferences"}) and tests pin them, so that a stage that rebuilds the
// model again shows up.
//
// Counted per thread: a session is created on one thread, and sessions created at the same time on
// other threads count apart. A CountCreationWork scope collects the counts of its thread while it
// lives; scopes nest, and an inner scope (the one-node sessions constant folding creates) keeps its
// counts to itself.
#pragma once

#include <cstddef>

namespace ephost {

struct CreationCounts {
  size_t ir_builds = 0;
  size_t shape_inferences = 0;
};

class CountCreationWork {
 public:
  explicit CountCreationWork(CreationCounts& into);
  ~CountCreationWork();
  CountCreationWork(const CountCreationWork&) = delete;
  CountCreationWork& operator=(const CountCreationWork&) = delete;

 private:
  CreationCounts* previous_;
};

// Called by the work counted; nothing happens outside a CountCreationWork scope.
void count_ir_build();
void count_shape_inference();

}  // namespace ephost
