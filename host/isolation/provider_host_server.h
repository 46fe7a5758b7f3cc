// The provider host's side (the ephost-provider-host executable): loads one plugin in its own process,
// creates its provider, rebuilds the graphs the host sends, and answers the host's requests one at a
// time through the plugin's native table (NativeProvider), with the host table served locally by the
// host library linked into this process. Tensors of a compute call live in the shared arena.
#pragma once

#include <cstddef>

namespace ephost::isolation {

// Serves requests on `socket_fd` until the host closes it (then returns 0). `arena_fd` is the shared
// memfd, `arena_size` its size when the host started this process.
int serve_provider_host(int socket_fd, int arena_fd, size_t arena_size);

}  // namespace ephost::isolation
