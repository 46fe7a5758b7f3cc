// The kernel context of one compute call served in the provider host: its inputs are tensors over the
// shared arena (written there by the host), and the outputs the plugin allocates are placed in the
// arena after them, so a kernel writes its results straight into memory the host reads. An output that
// no longer fits is allocated in this process and copied into the grown arena after the compute.
// Host-memory tensors only: sequences, optionals, subgraphs and device memory do not cross (yet).
#pragma once

#include <cstdint>
#include <deque>
#include <vector>

#include "plugin_abi/handles.h"
#include "core/runtime_value.h"
#include "isolation/shared_arena.h"
#include "isolation/wire.h"

namespace ephost::isolation {

// The tensor fields both sides write for one input or output: present, element type, shape, offset.
void write_tensor_slot(MessageWriter& out, const Tensor* tensor, size_t offset);

class ServedContext final : public EphostKernelContext {
 public:
  ServedContext(SharedArena& arena, int32_t threads) : arena_(arena), threads_(threads) {}

  // Reads the inputs' slots and the number of outputs from the compute request.
  void read_inputs(MessageReader& in);
  // Writes the arena's size and the outputs' slots into the reply, copying into the arena any output
  // that was allocated outside it.
  void write_outputs(MessageWriter& out);

  size_t num_inputs() const override { return inputs_.size(); }
  const RuntimeValue* input(size_t index) const override;
  size_t num_outputs() const override { return outputs_.size(); }
  Tensor& allocate_output(size_t index, int32_t elem_type, std::vector<int64_t> shape) override;
  Tensor* allocated_output(size_t index) override;
  void set_output(size_t index, RuntimeValue value) override;
  void begin_sequence_output(size_t index, int32_t elem_type, size_t length) override;
  TensorSequence& sequence_output(size_t index) override;
  int32_t num_threads() const override { return threads_; }
  std::vector<RuntimeValue> run_subgraph(const std::string& attribute, std::vector<RuntimeValue> inputs) override;
  const Device* memory_device() const override { return nullptr; }
  EphostStream* stream() override { return nullptr; }
  const RunLimits* run_limits() const override { return nullptr; }

 private:
  struct Output {
    RuntimeValue value;
    bool in_arena = false;
    size_t offset = 0;
  };
  void check_output(size_t index) const;

  SharedArena& arena_;
  int32_t threads_;
  std::vector<RuntimeValue> inputs_;
  std::vector<Output> outputs_;
  size_t cursor_ = 0;  // the first free byte of the arena
};

}  // namespace ephost::isolation
