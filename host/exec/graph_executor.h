// Executes one graph (the main graph or a control-flow subgraph): the compiled steps (a kernel per
// single node, a compiled function per fused group; compile/) run in the execution plan's order, with
// buffers placed by the allocation plan and, once a run with the same input shapes has been seen, by
// that signature's memory pattern (plan/).
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/runtime_value.h"
#include "core/tensor.h"
#include "compile/compiled_graph.h"
#include "exec/block_pool.h"
#include "graph/graph.h"
#include "plan/memory_pattern.h"
#include "plan/memory_pattern_cache.h"
#include "plan/plan_input.h"

namespace ephost {

struct ExecOptions {
  bool enable_mem_reuse = true;    // session.enable_mem_reuse
  bool enable_mem_pattern = true;  // session.enable_mem_pattern
  int32_t num_threads = 1;
};

class GraphExecutor;

// Executors for every graph of a session, so a control-flow kernel can find its subgraph's.
using ExecutorMap = std::unordered_map<const Graph*, std::unique_ptr<GraphExecutor>>;

// The values of one graph during one run.
struct Frame {
  const Graph* graph = nullptr;
  const GraphExecutor* executor = nullptr;  // the executor running this frame (its initializers)
  const Frame* parent = nullptr;  // enclosing graph's frame, for outer-scope values
  std::vector<RuntimeValue> slots;  // by Value::index: tensors, sequences, none
  std::vector<size_t> capacity;   // bytes of the buffer behind each slot
  std::vector<int64_t> observed_bytes;  // for recording a memory pattern
  std::shared_ptr<const plan::MemoryPattern> pattern;
  std::shared_ptr<void> pattern_block;
};

class GraphExecutor {
 public:
  // Runs `compiled` (whose steps are the partition groups `plan` ordered). `executors` holds the
  // executors of every graph of the session, for control-flow nodes to find their subgraphs'.
  GraphExecutor(std::unique_ptr<CompiledGraph> compiled, GraphPlan plan, const ExecOptions& options,
                const ExecutorMap& executors);
  ~GraphExecutor();

  const Graph& graph() const { return graph_; }
  const CompiledGraph& compiled() const { return *compiled_; }
  const GraphPartition& partition() const { return compiled_->partition(); }
  const std::vector<std::unique_ptr<CompiledStep>>& steps() const { return compiled_->steps(); }
  const plan::ExecutionPlan& execution_plan() const { return plan_.execution; }
  const plan::AllocationPlan& allocation_plan() const { return plan_.allocation; }
  size_t memory_patterns_recorded() const;
  // The pattern recorded for these input shapes (graph-input order), or null.
  std::shared_ptr<const plan::MemoryPattern> memory_pattern(const std::vector<std::vector<int64_t>>& input_shapes) const {
    return patterns_.find(plan::MemoryPatternCache::signature(input_shapes));
  }

  // Runs the graph. `feeds` bind graph inputs (and may override initializers that are inputs);
  // outer-scope values come from `parent`. Returns the graph outputs in declaration order; every
  // output tensor owns its buffer. A run fed a sequence or none neither uses nor records a memory
  // pattern: the sizes inside depend on the sequence's contents, which the signature cannot see.
  std::vector<RuntimeValue> run(const std::vector<std::pair<const Value*, RuntimeValue>>& feeds,
                                const Frame* parent) const;

  // The value of initializer `v` of this graph (shares the IR's buffer).
  const RuntimeValue& initializer_value(const Value& v) const {
    return initializer_values_[static_cast<size_t>(initializer_index_[v.index])];
  }

  const ExecOptions& options() const { return options_; }
  const ExecutorMap& executors() const { return executors_; }

 private:
  friend class StepContext;

  std::unique_ptr<CompiledGraph> compiled_;
  const Graph& graph_;
  GraphPlan plan_;
  ExecOptions options_;
  const ExecutorMap& executors_;
  mutable plan::MemoryPatternCache patterns_;
  mutable BlockPool blocks_;  // pattern blocks reused across runs
  // Initializers as run-time values, so lookups hand out the same type as slots: dense over the
  // initializers, found through initializer_index_ (per value, -1 for the others).
  std::vector<RuntimeValue> initializer_values_;
  std::vector<int32_t> initializer_index_;
};

}  // namespace ephost
