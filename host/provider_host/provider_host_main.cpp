// ephost-provider-host: the process an isolated provider's plugin runs in (isolation/isolated_provider.h).
// Not meant to be run by hand: libephost starts it over a socketpair and a shared memfd, sends it the
// plugin to load and the graphs to serve, and kills it when a call passes its deadline.
//
//   ephost-provider-host <protocol> <socket fd> <arena fd> <arena size>
#include <fcntl.h>
#include <malloc.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "isolation/provider_host_server.h"
#include "isolation/wire.h"

namespace {

int usage(const char* why) {
  std::fprintf(stderr,
               "ephost-provider-host: %s\n"
               "usage: ephost-provider-host %d SOCKET_FD ARENA_FD ARENA_SIZE\n"
               "(a helper of libephost: it runs one provider plugin in a process of its own)\n",
               why, ephost::isolation::kProtocolVersion);
  return 64;
}

// Ends this process when the application that started it is gone, even while a plugin call hangs (the
// socket's end of file is only seen between calls).
void watch_parent() {
  const pid_t parent = ::getppid();
  std::thread([parent] {
    for (;;) {
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
      if (::getppid() != parent) std::_Exit(0);
    }
  }).detach();
}

// A kernel's buffers are allocated and freed on every compute. In a process that does little else,
// glibc gives a freed block at the top of the heap back to the system (brk) as soon as it exceeds its
// trim threshold, and the next compute takes every page again as a zeroed page fault: a chain over
// 4 MiB tensors spent 10 ms of CPU per call so (perf: exc_page_fault and clear_page under the plugin's
// memset). Memory the plugin freed stays in the process, as it does in an application that runs many
// things. Blocks up to 32 MiB come from the heap, so that they are reused too.
void keep_freed_memory() {
  ::mallopt(M_MMAP_THRESHOLD, 32 << 20);
  ::mallopt(M_TRIM_THRESHOLD, 1 << 30);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) return usage("wrong number of arguments");
  if (std::atoi(argv[1]) != ephost::isolation::kProtocolVersion)
    return usage((std::string("protocol ") + argv[1] + " asked for").c_str());
  const int socket_fd = std::atoi(argv[2]), arena_fd = std::atoi(argv[3]);
  const long long arena_size = std::atoll(argv[4]);
  if (socket_fd < 3 || ::fcntl(socket_fd, F_GETFD) < 0 || arena_fd < 3 || ::fcntl(arena_fd, F_GETFD) < 0 ||
      arena_size <= 0)
    return usage("the socket and arena descriptors must be open descriptors above 2");
  // Processes a plugin starts inherit neither descriptor.
  ::fcntl(socket_fd, F_SETFD, FD_CLOEXEC);
  ::fcntl(arena_fd, F_SETFD, FD_CLOEXEC);
  // A plugin that crashes is reported by the host, not dumped: no core files, no time spent on them.
  const struct rlimit no_core = {0, 0};
  ::setrlimit(RLIMIT_CORE, &no_core);
  ::signal(SIGPIPE, SIG_IGN);
  keep_freed_memory();
  watch_parent();
  return ephost::isolation::serve_provider_host(socket_fd, arena_fd, static_cast<size_t>(arena_size));
}
