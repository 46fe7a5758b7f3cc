#include "session/provider_sync.h"

#include <algorithm>
#include <string>

#include "core/device.h"
#include "exec/graph_executor.h"
#include "provider/provider.h"

namespace ephost {
namespace {

// Whether the host waits for `provider`'s work some other way: through the streams of its memory device.
bool synchronized_by_streams(const Provider& provider) {
  const Device* device = provider.memory_device();
  return device && device->has_streams();
}

// Syncs, once each and in step order, the providers of `executor`'s steps that read (`reading`) or write
// one of `values`; `why` says when, naming the first such value.
void sync_providers_touching(const GraphExecutor& executor, const std::vector<const Value*>& values, bool reading,
                             const char* when) {
  if (values.empty()) return;
  std::vector<const Provider*> done;
  for (const auto& step : executor.steps()) {
    const Provider* provider = step->provider;
    if (!provider || !provider->syncs() || synchronized_by_streams(*provider) ||
        std::find(done.begin(), done.end(), provider) != done.end())
      continue;
    const std::vector<const Value*>& side = reading ? step->inputs : step->outputs;
    const auto touched = std::find_if(side.begin(), side.end(), [&](const Value* v) {
      return v && std::find(values.begin(), values.end(), v) != values.end();
    });
    if (touched == side.end()) continue;
    done.push_back(provider);
    const std::string why = std::string(when) + " '" + (*touched)->name + "'";
    provider->sync(why.c_str());
  }
}

}  // namespace

void sync_device_input_readers(const GraphExecutor& executor,
                               const std::vector<std::pair<const Value*, RuntimeValue>>& feeds) {
  std::vector<const Value*> on_device;
  for (const auto& [value, fed] : feeds)
    if (fed.is_tensor() && fed.tensor().on_device()) on_device.push_back(value);
  sync_providers_touching(executor, on_device, true, "before the run, which reads the application's device tensor");
}

void sync_output_writers(const GraphExecutor& executor, const std::vector<const Value*>& outputs) {
  sync_providers_touching(executor, outputs, false, "after the run, before it hands over output");
}

}  // namespace ephost
