// What ONNX Runtime's SynchronizeBoundInputs / SynchronizeBoundOutputs do (IOBinding's SyncProviders: each
// provider owning a main-graph node that reads a graph input, or writes a graph output, is synchronized
// with IExecutionProvider::Sync), done by ephost's runs themselves: ephost's bound inputs and outputs are
// ready when a run returns, so the application never asks (its IoBinding's synchronize_inputs and
// synchronize_outputs have nothing to wait for). A provider is synchronized (Provider::sync) when its work
// is not otherwise waited for: its memory device has no streams (a device with streams is synchronized
// through them at the end of every run and after every copy out of it), and its plugin has a Sync.
#pragma once

#include <utility>
#include <vector>

#include "core/runtime_value.h"
#include "graph/graph.h"

namespace ephost {

class GraphExecutor;

// Before a run: the providers whose main-graph steps read an input the application handed as a device
// tensor (`feeds`, the run's bound inputs). Throws the first failure, naming the provider and the input.
void sync_device_input_readers(const GraphExecutor& executor,
                               const std::vector<std::pair<const Value*, RuntimeValue>>& feeds);

// After a run, before its outputs are handed over: the providers whose main-graph steps wrote one of
// `outputs` (the outputs the caller asked for). Throws the first failure, naming the provider and the output.
void sync_output_writers(const GraphExecutor& executor, const std::vector<const Value*>& outputs);

}  // namespace ephost
