// Executes one graph (the main graph or a control-flow subgraph): the compiled steps (a kernel per
// single node, a compiled function per fused group; compile/) run in the execution plan's order, with
// buffers placed by the allocation plan and, once a run with the same input shapes has been seen, by
// that signature's memory pattern (plan/).
#pragma once

#include <atomic>
#include <memory>
#include <deque>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/profiler.h"
#include "core/runtime_value.h"
#include "core/tensor.h"
#include "compile/compiled_graph.h"
#include "exec/block_pool.h"
#include "exec/device_resources.h"
#include "core/run_control.h"
#include "graph/graph.h"
#include "plan/memory_pattern.h"
#include "plan/memory_pattern_cache.h"
#include "plan/plan_input.h"

namespace ephost {

struct ExecOptions {
  bool enable_mem_reuse = true;    // session.enable_mem_reuse
  bool enable_mem_pattern = true;  // session.enable_mem_pattern
  int32_t num_threads = 1;
  Profiler* profiler = nullptr;    // session.enable_profiling: a span per step and copy
};

class GraphExecutor;

// Executors for every graph of a session, so a control-flow kernel can find its subgraph's.
using ExecutorMap = std::unordered_map<const Graph*, std::unique_ptr<GraphExecutor>>;

// Counts of what a run did across locations (plugin ABI 3), for reports and tests.
struct RunCopyStats {
  size_t to_device = 0;  // host -> device
  size_t to_host = 0;    // device -> host (graph outputs included)
  size_t between_devices = 0;
};

// What the caller wants of one graph output: where it should be (null: host memory), and optionally a
// tensor to write it into (same element type, shape and location as the output), which the run then
// places the output in directly. An output made where it is wanted is handed over without a copy.
struct OutputRequest {
  const Device* location = nullptr;
  Tensor destination;  // empty: the run allocates the output
};
using OutputRequests = std::vector<OutputRequest>;

// The values of one graph during one run.
struct Frame {
  const Graph* graph = nullptr;
  const GraphExecutor* executor = nullptr;  // the executor running this frame (its initializers)
  const Frame* parent = nullptr;  // enclosing graph's frame, for outer-scope values
  RunStreams* streams = nullptr;  // the run's streams, shared with subgraph frames
  RunCopyStats* copies = nullptr;  // the run's copy counts, shared with subgraph frames
  // By plan value id (GraphPlan::graph: the IR's values, then their copies on other locations):
  std::vector<RuntimeValue> slots;  // tensors, sequences, none
  std::vector<size_t> capacity;     // bytes of the buffer behind each slot
  std::vector<int64_t> observed_bytes;  // for recording a memory pattern
  std::shared_ptr<const plan::MemoryPattern> pattern;
  // Per plan device id (GraphPlan::devices), the pattern's block: host memory (device 0) or a
  // DeviceAllocation.
  std::vector<std::shared_ptr<void>> blocks;
  // Device tensors released before the run ends: freed only after the streams are synchronized, since
  // enqueued work may still read them.
  std::vector<RuntimeValue> released_on_device;
  // Copies made on demand (a host step fed a device tensor, or the reverse): plan value -> copy.
  std::deque<std::pair<int, RuntimeValue>> on_demand;
  // The caller's wishes for the graph outputs (top-level runs), by output position.
  const OutputRequests* output_requests = nullptr;
  const RunLimits* limits = nullptr;  // the run's, shared with subgraph frames; null: none
};

class GraphExecutor {
 public:
  // Runs `compiled` (whose steps are the partition groups `plan` ordered). `executors` holds the
  // executors of every graph of the session, for control-flow nodes to find their subgraphs'.
  // Uploads the constant initializers device steps read (GraphPlan::copies without a step).
  GraphExecutor(std::unique_ptr<CompiledGraph> compiled, GraphPlan plan, const ExecOptions& options,
                const ExecutorMap& executors);
  ~GraphExecutor();

  const Graph& graph() const { return graph_; }
  const CompiledGraph& compiled() const { return *compiled_; }
  const GraphPartition& partition() const { return compiled_->partition(); }
  const std::vector<std::unique_ptr<CompiledStep>>& steps() const { return compiled_->steps(); }
  const GraphPlan& plan() const { return plan_; }
  const plan::ExecutionPlan& execution_plan() const { return plan_.execution; }
  const plan::AllocationPlan& allocation_plan() const { return plan_.allocation; }
  size_t memory_patterns_recorded() const;
  // Every recorded pattern with its input-shape signature, most recently used first.
  std::vector<plan::MemoryPatternCache::Entry> memory_patterns() const { return patterns_.entries(); }
  // The pattern recorded for these input shapes (graph-input order), or null.
  std::shared_ptr<const plan::MemoryPattern> memory_pattern(const std::vector<std::vector<int64_t>>& input_shapes) const {
    return patterns_.find(plan::MemoryPatternCache::signature(input_shapes));
  }

  // Runs the graph. `feeds` bind graph inputs (and may override initializers that are inputs; a
  // device tensor is used in place where its device reads it); outer-scope values come from `parent`.
  // Returns the graph outputs in declaration order, each in host memory unless `output_requests`
  // (empty: all host) says otherwise; every output tensor owns its buffer (or is the requested
  // destination). A run fed a sequence or none neither uses nor records a memory pattern: the sizes
  // inside depend on the sequence's contents, which the signature cannot see. `stats`, when given,
  // receives the run's copy counts.
  // `limits` (top-level runs; a subgraph's run uses its parent's) are checked before the run and
  // before each step: a run told to stop throws EPHOST_CANCELLED or EPHOST_DEADLINE_EXCEEDED.
  std::vector<RuntimeValue> run(const std::vector<std::pair<const Value*, RuntimeValue>>& feeds, const Frame* parent,
                                const OutputRequests& output_requests = {}, RunCopyStats* stats = nullptr,
                                const RunLimits* limits = nullptr) const;
  // The position among the graph outputs of IR value `index`, -1 for a value that is not an output.
  int output_position(size_t index) const { return output_position_[index]; }
  // Whether IR value `index` is made by a step and read only by steps of that step's provider (or by
  // nothing) in this graph: no other provider's kernel, no subgraph, no copy to another location.
  bool read_only_by_producer(size_t index) const { return index < read_only_by_producer_.size() && read_only_by_producer_[index]; }

  // The value of initializer `v` of this graph (shares the IR's buffer).
  const RuntimeValue& initializer_value(const Value& v) const {
    return initializer_values_[static_cast<size_t>(initializer_index_[v.index])];
  }
  // initializer_value; when its bytes were freed after every provider reading it said it was done with
  // them and a step reads it all the same (a provider that broke its word), the bytes read back from
  // the model file (a warning; a clear error when the file changed), kept for this executor's life.
  const RuntimeValue& bound_initializer(const Value& v) const;
  // Drops this executor's references to initializers whose bytes were freed after it was made
  // (session/initializer_freeing.h), so that the memory really goes. Before the executor runs.
  void forget_freed_initializers();
  // A constant initializer uploaded to a device (plan value `id` of a copy without a step), or null.
  const RuntimeValue* uploaded_initializer(int id) const;

  const ExecOptions& options() const { return options_; }
  const ExecutorMap& executors() const { return executors_; }

 private:
  friend class StepContext;
  std::vector<RuntimeValue> run_steps(Frame& frame) const;
  void run_copy(Frame& frame, const PlannedCopy& copy) const;
  void find_values_read_only_by_producer();
  RuntimeValue hand_out(Frame& frame, const Value& v, const OutputRequest& request) const;
  // A host tensor for graph output `t` (on a device) to be copied into.
  Tensor host_output_from_device(const Frame& frame, const Tensor& t) const;
  Profiler::Span profile_step(const Frame& frame, const CompiledStep& step, size_t index) const;
  Profiler::Span profile_copy(const PlannedCopy& copy) const;

  std::unique_ptr<CompiledGraph> compiled_;
  const Graph& graph_;
  GraphPlan plan_;
  ExecOptions options_;
  const ExecutorMap& executors_;
  mutable plan::MemoryPatternCache patterns_;
  mutable BlockPool blocks_;              // host pattern blocks reused across runs
  mutable DeviceBlockPool device_blocks_;  // device pattern blocks reused across runs
  mutable StreamPool streams_;            // device streams reused across runs
  // Initializers as run-time values, so lookups hand out the same type as slots: dense over the
  // initializers, found through initializer_index_ (per value, -1 for the others).
  std::vector<RuntimeValue> initializer_values_;
  std::vector<int32_t> initializer_index_;
  // Freed initializers a step read all the same (bound_initializer), read back once.
  mutable std::mutex read_back_mutex_;
  mutable std::unordered_map<const Value*, std::unique_ptr<RuntimeValue>> read_back_;
  // Per plan value: the upload of a constant initializer to a device, unset for the others.
  std::vector<RuntimeValue> uploaded_;
  std::vector<int> output_position_;  // per IR value
  std::vector<char> read_only_by_producer_;  // per IR value (read_only_by_producer)
};

}  // namespace ephost
