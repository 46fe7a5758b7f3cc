#include "model/creation_counts.h"

namespace ephost {
namespace {

thread_local CreationCounts* current = nullptr;

}  // namespace

CountCreationWork::CountCreationWork(CreationCounts& into) : previous_(current) { current = &into; }

CountCreationWork::~CountCreationWork() { current = previous_; }

void count_ir_build() {
  if (current) ++current->ir_builds;
}

void count_shape_inference() {
  if (current) ++current->shape_inferences;
}

}  // namespace ephost
