// One call the host made into a plugin, as the plugin observer (plugin_interposer.h) saw it cross the
// plugin ABI: which function, when it began and returned, on which thread, the handles it was given and
// made, what it returned. The tests' call record (tests/plugins/plugin_call_record.h) and the conformance
// kit (tools/plugin_cts) keep these; the lifecycle rules (plugin_call_rules.h) read them.
#pragma once

#include <cstdint>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace ephost::observer {

struct PluginCall {
  std::string plugin;    // the plugin's name in the record ("alpha", "beta", "fakedev", ...)
  // The member of EphostPlugin called ("describe", "provider_create", "kernel_compute", "compile",
  // "on_run_end", "context_load", and since ABI 3 "device_count", "provider_create_for_device",
  // "device_allocate", "copy_to_device", "stream_create", ...), of an EphostComputeInfo compile or
  // context_load made ("create_state", "compute", "release_state", "release"), or "negotiate" (the entry
  // point) and "unload" (the library's static destructors ran: dlclose).
  std::string function;
  uint64_t begin = 0;  // when the call started and when it returned, on one clock that every call
  uint64_t end = 0;    // ticks: two calls overlapped when each began before the other returned
  std::thread::id thread;
  bool failed = false;  // it returned an error status

  const void* object = nullptr;    // the handle called on: provider, kernel, compute unit (its `user`) or stream
  const void* provider = nullptr;  // the provider a kernel or compute unit is made by (kernel_create, compile,
                                   // context_load)
  const void* state = nullptr;     // compute, release_state: the state handed in
  const void* made = nullptr;      // what the call made: provider, kernel, compute unit, state, stream, or a
                                   // device buffer's handle
  std::string name;  // compile, context_emit: the fused group; get_capability: the graph
  std::string node;  // kernel_create, kernel_compute: the node (read through the host at the time of the
                     // call); get_capability: the node owning the graph ("" for a main graph);
                     // context_judge, context_load: the EPContext node
  std::vector<std::pair<std::string, std::string>> options;  // provider_create(_for_device)

  // negotiate: the range the host offered, the version answered; describe: the host table's
  // abi_version at that time. Both: the host table's struct_size.
  uint32_t offered_min = 0, offered_max = 0, version = 0, host_api_size = 0;
  uint32_t info_size = 0;  // describe: EphostPluginInfo::struct_size as the host set it
  int32_t verdict = -1;    // context_judge: the EphostContextVerdict answered

  // Device calls (plugin ABI 3): the device (UINT32_MAX: none), the bytes allocated or copied, the
  // stream given (copies) and a buffer's offset (device_allocate: the one made; device_free: the one freed).
  uint32_t device = UINT32_MAX;
  uint64_t bytes = 0;
  const void* stream = nullptr;
  uint64_t offset = 0;
};

}  // namespace ephost::observer
