// One provider host process per provider and env, shared by the env's sessions: each session's isolated
// provider of that provider is a client of it (its own provider, graphs and units in the process, its own
// failure count and fallback). Calls from all clients are serialized by the host's lock (one socket,
// one arena). When the process is lost, the client whose call was in it fails that call; the first
// client to call next starts a new process (once), and every client makes its provider, graphs and
// units again there on its next call (generation tells them the process changed).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "isolation/provider_process.h"

namespace ephost::isolation {

struct SharedProviderHost {
  std::mutex mutex;  // guards everything below, and every call into the process
  std::unique_ptr<ProviderProcess> process;
  uint64_t generation = 0;  // bumped at each process start
  uint64_t next_client = 1;
};

// The provider host of provider `provider` of the library `plugin_path` for env `env` (any pointer that
// identifies it: its plugin registry), made when no live client holds one. It lives as long as a client
// holds it. A library serving several providers (an ONNX Runtime plugin EP's factories) gets a process for
// each, so that one factory's crash costs the others nothing.
std::shared_ptr<SharedProviderHost> shared_provider_host(const void* env, const std::string& plugin_path,
                                                         const std::string& provider);

}  // namespace ephost::isolation
