#include "isolation/provider_process.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "core/error.h"
#include "core/plugin_fault.h"
#include "discovery/search_path.h"
#include "isolation/wire.h"

extern char** environ;

namespace ephost::isolation {
namespace {

// The descriptors the provider host finds open: its end of the socket, and the shared memfd.
constexpr int kChildSocketFd = 3;
constexpr int kChildArenaFd = 4;
constexpr size_t kInitialArenaBytes = size_t{1} << 20;

std::string describe_status(int status) {
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    const std::string text = signal_description(sig);
    return fmt::format("was killed by {}", text == "an unnamed signal" ? "signal " + std::to_string(sig) : text);
  }
  if (WIFEXITED(status)) return fmt::format("exited with status {}", WEXITSTATUS(status));
  return "ended";
}

}  // namespace

std::string default_provider_host_path() { return installed_helper_path(kProviderHostEnv, kProviderHostFileName); }

ProviderProcess::ProviderProcess(const std::string& executable) : arena_(SharedArena::create(kInitialArenaBytes)) {
  if (executable.empty() || ::access(executable.c_str(), X_OK) != 0)
    fail(EPHOST_EP_FAIL, "the provider host '{}' is not installed or not executable (set {} to its path, or run "
         "the plugin in process with ep.<name>.isolation=in_process)", executable.empty() ? kProviderHostFileName :
         executable, kProviderHostEnv);
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0)
    fail(EPHOST_EP_FAIL, "isolated provider: socketpair failed: {}", std::strerror(errno));
  // The child's descriptors 3 and 4 are made from ones above them: a dup2 onto 3 must not overwrite the
  // arena when the arena is descriptor 3 here (a process that had nothing else open).
  const int child_end = ::fcntl(fds[1], F_DUPFD_CLOEXEC, kChildArenaFd + 1);
  const int arena_copy = ::fcntl(arena_.fd(), F_DUPFD_CLOEXEC, kChildArenaFd + 1);
  ::close(fds[1]);
  if (child_end < 0 || arena_copy < 0) {
    for (int fd : {fds[0], child_end, arena_copy})
      if (fd >= 0) ::close(fd);
    fail(EPHOST_EP_FAIL, "isolated provider: cannot duplicate descriptors: {}", std::strerror(errno));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, child_end, kChildSocketFd);
  posix_spawn_file_actions_adddup2(&actions, arena_copy, kChildArenaFd);
  // Whatever the application blocks or ignores, the provider host starts with default signal handling.
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attributes, &none);
  posix_spawnattr_setsigdefault(&attributes, &all);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  const std::string protocol = std::to_string(kProtocolVersion), socket_fd = std::to_string(kChildSocketFd),
                    arena_fd = std::to_string(kChildArenaFd), arena_size = std::to_string(arena_.size());
  std::vector<char*> argv;
  for (const std::string* s : {&executable, &protocol, &socket_fd, &arena_fd, &arena_size})
    argv.push_back(const_cast<char*>(s->c_str()));
  argv.push_back(nullptr);
  const int error = posix_spawn(&pid_, executable.c_str(), &actions, &attributes, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  ::close(child_end);
  ::close(arena_copy);
  if (error != 0) {
    ::close(fds[0]);
    fail(EPHOST_EP_FAIL, "cannot start the provider host {}: {}", executable, std::strerror(error));
  }
  socket_ = fds[0];
  alive_ = true;
}

ProviderProcess::~ProviderProcess() {
  if (alive_) kill_and_reap();
  if (socket_ >= 0) ::close(socket_);
}

std::string ProviderProcess::call(const std::string& request, Clock::duration timeout,
                                  const std::function<bool()>& should_stop) {
  if (!alive_) throw ProcessLost("was gone already", false);
  const auto deadline = Clock::now() + timeout;
  send(request);
  return receive(deadline, should_stop, timeout);
}

void ProviderProcess::send(const std::string& request) {
  if (alive_ && !send_failed_ && !write_frame(socket_, request)) send_failed_ = true;
}

std::string ProviderProcess::receive(Clock::time_point deadline, const std::function<bool()>& should_stop,
                                     Clock::duration timeout) {
  if (!alive_) throw ProcessLost("was gone already", false);
  const Clock::duration whole = timeout > Clock::duration::zero() ? timeout : deadline - Clock::now();
  const auto budget = std::max<int64_t>(0, std::chrono::duration_cast<std::chrono::milliseconds>(whole).count());
  std::string reply;
  // A peer that closed its socket while requests went out still has its replies to the earlier ones
  // (or its end) to read: the socket says which.
  ReadResult result = ReadResult::kClosed;
  if (should_stop)
    result = read_frame(socket_, deadline, reply, should_stop);
  else
    result = read_frame_until(socket_, deadline, reply, nullptr, nullptr);
  switch (result) {
    case ReadResult::kFrame: return reply;
    case ReadResult::kClosed: throw ProcessLost(reap(), false);
    case ReadResult::kTimedOut: {
      kill_and_reap();
      throw ProcessLost(fmt::format("did not answer within its deadline of {} ms and was killed", budget), false);
    }
    case ReadResult::kStopped: kill_and_reap(); throw ProcessLost("was killed: the run it served was stopped", true);
  }
  throw ProcessLost("ended", false);
}

bool ProviderProcess::ended_between_calls(std::string& how) {
  if (!alive_) return false;
  int status = 0;
  if (::waitpid(pid_, &status, WNOHANG) != pid_) return false;
  alive_ = false;
  how = describe_status(status);
  return true;
}

std::string ProviderProcess::kill_and_reap() {
  ::kill(pid_, SIGKILL);
  return reap();
}

std::string ProviderProcess::reap() {
  alive_ = false;
  int status = 0;
  // The socket closed: the process is ending. It cannot take long, but a process that closed its socket
  // and lives on is killed rather than waited for.
  for (int i = 0; i < 200; ++i) {
    const pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r == pid_) return describe_status(status);
    if (r < 0 && errno != EINTR) return "ended";
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ::kill(pid_, SIGKILL);
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  return "closed its socket and was killed";
}

}  // namespace ephost::isolation
