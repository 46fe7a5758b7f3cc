// The kernel context of one compute call served in the provider host: its inputs are tensors over the
// shared arena (written there by the host), and the outputs the plugin allocates are placed in the
// arena after them, so a kernel writes its results straight into memory the host reads. An output that
// no longer fits is allocated in this process and copied into the grown arena after the compute.
// On a device that works on its own memory (plugin ABI 3), inputs are the device buffers the host named
// by id (served_device_memory.h), outputs are allocated on the device and kept under the ids the host
// reserved for them, and the kernel gets the stream the host named.
// Inputs in shared tensor memory of the application are read where they are (shared_region.h), and an
// output the host placed in such memory is allocated there, so the kernel writes it in place: a shared
// tensor it is bound to, when its element type and shape are the ones the host named; shared memory the
// host allocated for it, when it fits.
// Tensors only: sequences, optionals and subgraphs do not cross (yet).
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <vector>

#include "plugin_abi/handles.h"
#include "core/runtime_value.h"
#include "isolation/shared_arena.h"
#include "isolation/shared_region.h"
#include "isolation/wire.h"

namespace ephost::isolation {

// The fields both sides write for one input or output: its place (SlotPlace), then for a tensor its
// element type and shape, and the arena offset (kArena) or the buffer id and offset (kDevice).
void write_tensor_slot(MessageWriter& out, const Tensor* tensor, size_t offset);
void write_device_slot(MessageWriter& out, const Tensor& tensor, uint64_t id, uint64_t offset);
void write_region_slot(MessageWriter& out, const Tensor& tensor, uint64_t region, uint64_t offset);

class ServedDeviceMemory;

class ServedContext final : public EphostKernelContext {
 public:
  ServedContext(SharedArena& arena, const ServedRegions& regions, int32_t threads)
      : arena_(arena), regions_(regions), threads_(threads) {}
  // On `device` (its memory), with the stream `stream` (may be null); outputs kept in `memory` from
  // buffer id `first_output_id` on (one id per output).
  ServedContext(SharedArena& arena, const ServedRegions& regions, int32_t threads, ServedDeviceMemory& memory,
                const Device* device, EphostStream* stream, uint64_t first_output_id)
      : arena_(arena), regions_(regions), threads_(threads), memory_(&memory), device_(device), stream_(stream),
        first_output_id_(first_output_id) {}

  // Reads the inputs' slots, the number of outputs and the outputs' places from the compute request.
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
  const Device* memory_device() const override { return device_; }
  EphostStream* stream() override { return stream_; }
  const RunLimits* run_limits() const override { return nullptr; }

 private:
  // Where the host asked for an output: shared region `region` at `offset`, for this type and shape
  // (a shared tensor it is bound to), or for any output of up to `capacity` bytes (element type 0: memory
  // the host allocated for the output).
  struct Place {
    uint64_t region = 0;
    uint64_t offset = 0;
    int32_t elem_type = 0;
    std::vector<int64_t> shape;
    uint64_t capacity = 0;
  };
  struct Output {
    RuntimeValue value;
    bool in_arena = false;
    size_t offset = 0;
    std::optional<Place> place;
    bool in_place = false;  // allocated at `place`
  };
  void check_output(size_t index) const;

  SharedArena& arena_;
  const ServedRegions& regions_;
  int32_t threads_;
  ServedDeviceMemory* memory_ = nullptr;
  const Device* device_ = nullptr;
  EphostStream* stream_ = nullptr;
  uint64_t first_output_id_ = 0;
  std::vector<RuntimeValue> inputs_;
  std::vector<Output> outputs_;
  size_t cursor_ = 0;  // the first free byte of the arena
};

}  // namespace ephost::isolation
