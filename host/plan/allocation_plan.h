// The allocation plan: for every value, where its memory comes from, from a lifetime analysis over
// the execution order (ONNX Runtime's AllocPlanPerValue and ProgramCounter, in one pass).
#pragma once

#include <string>
#include <vector>

#include "plan/execution_plan.h"
#include "plan/plan_graph.h"

namespace ephost::plan {

enum class AllocKind {
  kAllocate,           // the executor allocates a new buffer when the producing step runs
  kReuse,              // the executor hands it the buffer of the dead value `reuse_of`
  kPreExisting,        // graph input or outer-scope value: the caller's buffer
  kStaticInitializer,  // initializer: lives in the session, never allocated per run
  kGraphOutput,        // produced by a step and returned to the caller: allocated, never released
};

const char* alloc_kind_name(AllocKind kind);  // "allocate", "reuse", ...

struct ValuePlan {
  AllocKind kind = AllocKind::kAllocate;
  // kReuse only: the value whose buffer this one takes over. That value died before this one is
  // defined and may itself be kReuse (a chain of owners of one buffer); -1 otherwise.
  int reuse_of = -1;
  // kReuse only: reuse_of is an input of the step that outputs this value, which dies at that step
  // (PlanStep::in_place). The kernel still reads it while writing this one: the executor releases
  // the input's slot after the step (it stays in release_after), never when the output is placed.
  bool in_place = false;
  // Position in ExecutionPlan::order of the step that outputs the value; -1 when no step does
  // (inputs, initializers, outer-scope values, values no step touches).
  int def_step = -1;
  // Position of the last step that reads the value; def_step for an output nothing reads; the last
  // position for graph outputs (they outlive the run); -1 for a value nothing reads or defines.
  int last_use_step = -1;
};

struct AllocationPlan {
  std::vector<ValuePlan> values;  // per value id
  // Per position in the order: the values whose buffers the executor frees after that step runs.
  // Only kAllocate/kReuse values appear, each once, at its last_use_step, and only when no later
  // value takes its buffer over (then the last owner of the chain is the one released).
  std::vector<std::vector<int>> release_after;
};

// Lifetime analysis over `order` (which must list every step once, producers before consumers).
//
// With enable_reuse, a value that would be kAllocate takes over the buffer of a value that died at
// an earlier position when both sizes are provably equal (same static_bytes >= 0, or same non-empty
// shape_key) and both live on the same device. Only kAllocate/kReuse buffers are ever reused; a
// buffer has one live owner at a time (chains are allowed); among candidates the most recently freed
// buffer wins (still warm in cache). An output takes its own step's input only through the step's
// in_place pairs, and only when that step is the input's last reader, the input is read once by the
// step, is executor-owned (not a graph input, initializer or output) and on the same device; sizes
// are checked when the run places the output (a smaller buffer is not taken).
// O(steps + values + step inputs/outputs), expected (hashing).
//
// A value no step touches and that has no flag stays kAllocate with def_step -1: nothing allocates it.
// Throws INVALID_GRAPH for the graph errors make_execution_plan reports (bad ids, two producers), a
// value read but defined by nothing (not produced, not an input, initializer or outer-scope value),
// and a graph output nothing defines; INVALID_ARGUMENT when `order` is not a permutation of the steps
// or runs a step before the producer of one of its inputs.
AllocationPlan make_allocation_plan(const PlanGraph& g, const ExecutionPlan& order, bool enable_reuse);

// One line per value: "v3 't1': reuse of v1, def 2, last use 4", plus a summary line with how many
// buffers are allocated and reused. For logs and reports.
std::string describe(const AllocationPlan& plan, const PlanGraph& g);

}  // namespace ephost::plan
