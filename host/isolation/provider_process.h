// One provider host process (the installed helper ephost-provider-host): started over a socketpair and
// a shared memfd, asked one request at a time, killed when a call passes its deadline or the run it
// serves stops. A process that died says how (the signal, or the exit status); nothing it does can
// stop or hang the host: every wait has a deadline and a dead peer is an answer (EPIPE), not a signal.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>

#include "isolation/shared_arena.h"

namespace ephost::isolation {

inline constexpr const char* kProviderHostFileName = "ephost-provider-host";
// Environment variable naming the provider host executable (overrides the installed one).
inline constexpr const char* kProviderHostEnv = "EPHOST_PROVIDER_HOST";

// The provider host the host uses: $EPHOST_PROVIDER_HOST when set, else the one installed beside the
// plugin scanner (<directory of libephost>/ephost/).
std::string default_provider_host_path();

// The process died or was killed during a call: `what()` says how ("was killed by SIGSEGV (...)",
// "did not answer within 2000 ms and was killed"). `stopped` marks a call the run's own limits ended
// (terminate, run deadline): the process was killed for the run, not for its fault.
class ProcessLost : public std::runtime_error {
 public:
  ProcessLost(const std::string& how, bool stopped) : std::runtime_error(how), stopped(stopped) {}
  bool stopped;
};

class ProviderProcess {
 public:
  using Clock = std::chrono::steady_clock;

  // Starts `executable` for the plugin at `plugin_path`. Throws EP_FAIL when it cannot start.
  explicit ProviderProcess(const std::string& executable);
  // Kills the process (if alive) and reaps it.
  ~ProviderProcess();
  ProviderProcess(const ProviderProcess&) = delete;
  ProviderProcess& operator=(const ProviderProcess&) = delete;

  // Sends `request` and returns the reply frame. Throws ProcessLost when the process is gone, or when
  // no reply came within `timeout` or `should_stop` (may be empty; asked every few milliseconds) said to
  // stop: the process is then killed. Not thread-safe: the owner serializes calls.
  std::string call(const std::string& request, Clock::duration timeout,
                   const std::function<bool()>& should_stop = {});
  // call() in two halves, for requests sent one after the other without waiting for each reply (a copy
  // in chunks: the provider host uploads one chunk while the host writes the next into the arena). The
  // process answers in order, so each receive() returns the reply to the oldest request not answered yet.
  // send() never throws: a peer that is gone is found by the receive() after it.
  void send(const std::string& request);
  // `timeout` is the whole call's (the error names it); zero: what was left of it at this receive().
  std::string receive(Clock::time_point deadline, const std::function<bool()>& should_stop = {},
                      Clock::duration timeout = Clock::duration::zero());

  bool alive() const { return alive_; }
  // Whether the process ended since the last call (reaped now, saying how in `how`): a process that
  // died between calls is noticed before a request is sent into its socket.
  bool ended_between_calls(std::string& how);
  pid_t pid() const { return pid_; }
  SharedArena& arena() { return arena_; }

  // Arena bytes [0, end) that copies to the device queued on stream `stream` still read in the provider
  // host (stream 0: none). A copy on a stream is only queued there, and its reply does not wait for it
  // (plugin ABI 3's stream semantics: the work after it on the stream runs after it), so until the
  // stream is synchronized those bytes must not be written; the host writes after them (a later copy
  // on the same stream) or has the stream synchronized first (isolated_device.h).
  struct PendingUploads {
    uint64_t stream = 0;
    size_t end = 0;
  };
  PendingUploads& pending_uploads() { return pending_; }

 private:
  // Kills the process and says how it ended.
  std::string kill_and_reap();
  // Reaps a process whose socket closed, saying how it ended.
  std::string reap();

  pid_t pid_ = -1;
  int socket_ = -1;
  bool alive_ = false;
  bool send_failed_ = false;  // a send() found the peer gone: the next receive() says how
  SharedArena arena_;
  PendingUploads pending_;
};

}  // namespace ephost::isolation
