// Runs a program: op after op, each result in a buffer of its own that is freed after its last reader.
#pragma once

#include <functional>
#include <vector>

#include "program.h"
#include "tensor.h"

namespace example_ep {

class Runner {
 public:
  // Gives the buffer of program output `index`, of `shape` (the host's output tensor, in the plugin).
  using OutputAllocator = std::function<float*(size_t index, const Shape& shape)>;

  // `program` must be valid (validate()); decode() guarantees it.
  explicit Runner(Program program);

  const Program& program() const { return program_; }

  // One run over `inputs` (in program input order). Thread-safe: a run keeps its state on its own
  // stack, so concurrent runs of one Runner do not interfere.
  void run(const std::vector<ConstTensor>& inputs, const OutputAllocator& allocate_output) const;

 private:
  Program program_;
  std::vector<size_t> last_reader_;  // per slot: index of the last op that reads it, or SIZE_MAX
  std::vector<int64_t> output_of_;   // per slot: the program output it is, or -1
};

}  // namespace example_ep
