// What a session runs: the executors of its graphs (kernels, compiled groups, execution order, value
// placement, copies and memory plans), all made from one partition of the IR. A session holds its
// current plan by shared pointer and each run takes it when the run starts and keeps it until the run
// returns, so a plan swapped in (session/provider_fallback.h) serves the runs that start after it while
// the runs in flight end on the old one, which goes when the last of them returns.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "exec/graph_executor.h"

namespace ephost {

struct SessionPlan {
  ExecutorMap executors;  // per graph, main graph included (the executors keep a reference to the map)
  // The providers this plan leaves out and why, by provider index ("": taking part); empty: none.
  std::vector<std::string> left_out;
  // Initializers freed while this plan was compiled (session/initializer_freeing.h), for the report.
  size_t initializers_freed_while_compiling = 0;

  const GraphExecutor& executor(const Graph& graph) const { return *executors.at(&graph); }
};

}  // namespace ephost
