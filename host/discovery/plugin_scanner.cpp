#include "discovery/plugin_scanner.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>

#include "core/plugin_fault.h"
#include "discovery/plugin_probe_json.h"
#include "discovery/search_path.h"
#include "ephost/ephost_plugin.h"

extern char** environ;

namespace ephost {
namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

// The child runs for at least this long before its handshake counts as hung, whatever the per-library
// timeout: starting a process that links the host takes a while on a loaded machine.
constexpr std::chrono::milliseconds kStartupTimeout{10000};
constexpr size_t kMaxLineBytes = 1 << 20;
constexpr size_t kOutputTailBytes = 4096;
constexpr std::chrono::milliseconds kPollSlice{50};

class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() { reset(); }
  Fd(Fd&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  Fd& operator=(Fd&& o) noexcept {
    if (this != &o) {
      reset();
      fd_ = o.fd_;
      o.fd_ = -1;
    }
    return *this;
  }
  int get() const { return fd_; }
  bool open() const { return fd_ >= 0; }
  void reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
};

struct PipeEnds {
  Fd read, write;
};

PipeEnds make_pipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw ScannerUnavailable(fmt::format("pipe failed: {}", std::strerror(errno)));
  PipeEnds p{Fd(fds[0]), Fd(fds[1])};
  ::fcntl(p.read.get(), F_SETFL, ::fcntl(p.read.get(), F_GETFL) | O_NONBLOCK);
  return p;
}

// One scanner child: spawned over a batch of paths, read until it is gone.
struct Child {
  pid_t pid = -1;
  Fd results;
  Fd output;
};

Child spawn_scanner(const std::string& scanner, const std::vector<std::string>& paths) {
  constexpr int kChildResultFd = 3;
  PipeEnds results = make_pipe();
  PipeEnds output = make_pipe();
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  // The plugins' own printing goes to the output pipe, never into the protocol.
  posix_spawn_file_actions_adddup2(&actions, output.write.get(), STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, output.write.get(), STDERR_FILENO);
  posix_spawn_file_actions_adddup2(&actions, results.write.get(), kChildResultFd);
  // Whatever the host blocks or ignores, the child starts with default signal handling.
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attributes, &none);
  posix_spawnattr_setsigdefault(&attributes, &all);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);

  const std::string protocol = std::to_string(kScannerProtocolVersion);
  const std::string result_fd = std::to_string(kChildResultFd);
  std::vector<char*> argv;
  auto arg = [&](const std::string& s) { argv.push_back(const_cast<char*>(s.c_str())); };
  arg(scanner);
  const std::string protocol_flag = "--protocol", fd_flag = "--result-fd", end_flag = "--";
  arg(protocol_flag);
  arg(protocol);
  arg(fd_flag);
  arg(result_fd);
  arg(end_flag);
  for (const std::string& p : paths) arg(p);
  argv.push_back(nullptr);

  Child child;
  const int error = posix_spawn(&child.pid, scanner.c_str(), &actions, &attributes, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  if (error != 0) throw ScannerUnavailable(fmt::format("cannot start {}: {}", scanner, std::strerror(error)));
  child.results = std::move(results.read);
  child.output = std::move(output.read);
  return child;
}

std::string last_output_line(const std::string& tail) {
  size_t end = tail.find_last_not_of(" \t\r\n");
  if (end == std::string::npos) return {};
  size_t start = tail.find_last_of('\n', end);
  start = start == std::string::npos ? 0 : start + 1;
  std::string line = tail.substr(start, end + 1 - start);
  if (line.size() > 200) line = line.substr(0, 200) + "...";
  return line;
}

std::string with_last_output(std::string reason, const std::string& tail) {
  const std::string line = last_output_line(tail);
  if (!line.empty()) reason += fmt::format("; its last output: \"{}\"", line);
  return reason;
}

// Reads one scanner child until it is gone, filling the results of `batch` (paths[first..]).
class ChildSession {
 public:
  ChildSession(const std::vector<std::string>& paths, size_t first, const ScannerOptions& options,
               std::vector<std::optional<ProbeResult>>& results)
      : paths_(paths), next_(first), first_(first), options_(options), results_(results) {}

  // Returns the index of the first path with no result yet.
  size_t run(Child child) {
    child_ = std::move(child);
    deadline_ = Clock::now() + std::max(options_.timeout, kStartupTimeout);
    int status = 0;
    bool timed_out = false;
    while (!reaped(&status)) {
      if (Clock::now() >= deadline_) {
        ::kill(child_.pid, SIGKILL);
        ::waitpid(child_.pid, &status, 0);
        timed_out = true;
        break;
      }
      wait_for_data();
      if (!protocol_error_.empty()) {
        ::kill(child_.pid, SIGKILL);
        ::waitpid(child_.pid, &status, 0);
        break;
      }
    }
    drain();
    conclude(status, timed_out);
    return next_;
  }

 private:
  bool reaped(int* status) {
    const pid_t r = ::waitpid(child_.pid, status, WNOHANG);
    if (r < 0 && errno == ECHILD) status_known_ = false;  // reaped elsewhere (SIGCHLD ignored)
    return r == child_.pid || !status_known_;
  }

  void wait_for_data() {
    pollfd fds[2];
    nfds_t n = 0;
    if (child_.results.open()) fds[n++] = {child_.results.get(), POLLIN, 0};
    if (child_.output.open()) fds[n++] = {child_.output.get(), POLLIN, 0};
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline_ - Clock::now());
    const int wait_ms = static_cast<int>(std::clamp(left, std::chrono::milliseconds(0), kPollSlice).count());
    if (::poll(fds, n, wait_ms) <= 0) return;
    for (nfds_t i = 0; i < n; ++i)
      if (fds[i].revents) read_from(fds[i].fd);
  }

  // Reads what is available without blocking; closes the fd at end of file.
  void read_from(int fd) {
    char buffer[65536];
    for (;;) {
      const ssize_t got = ::read(fd, buffer, sizeof(buffer));
      if (got > 0) {
        if (fd == child_.results.get())
          take_protocol(buffer, static_cast<size_t>(got));
        else
          take_output(buffer, static_cast<size_t>(got));
        if (!protocol_error_.empty()) return;
        continue;
      }
      if (got < 0 && errno == EINTR) continue;
      if (got == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) {
        if (fd == child_.results.get()) child_.results.reset();
        else child_.output.reset();
      }
      return;
    }
  }

  void drain() {
    if (child_.results.open() && protocol_error_.empty()) read_from(child_.results.get());
    if (child_.output.open()) read_from(child_.output.get());
  }

  void take_output(const char* data, size_t size) {
    output_tail_.append(data, size);
    if (output_tail_.size() > kOutputTailBytes) output_tail_.erase(0, output_tail_.size() - kOutputTailBytes);
  }

  void take_protocol(const char* data, size_t size) {
    pending_.append(data, size);
    size_t newline;
    while (protocol_error_.empty() && (newline = pending_.find('\n')) != std::string::npos) {
      std::string line = pending_.substr(0, newline);
      pending_.erase(0, newline + 1);
      handle_line(line);
    }
    if (pending_.size() > kMaxLineBytes) protocol_error_ = "a message longer than 1 MiB";
  }

  void handle_line(const std::string& line) {
    try {
      const json message = json::parse(line);
      if (!message.is_object()) throw std::runtime_error("a message that is not a JSON object");
      if (message.contains("hello")) return handle_hello(message);
      if (!hello_) throw std::runtime_error("a message before the handshake");
      const json& path = message.at("path");
      if (!path.is_string()) throw std::runtime_error("a message whose path is not a string");
      if (message.contains("stage")) return handle_stage(path.get<std::string>(), message.at("stage"));
      if (message.contains("result")) return handle_result(path.get<std::string>(), message.at("result"));
      throw std::runtime_error("a message that is neither a stage nor a result");
    } catch (const std::exception& e) {
      protocol_error_ = e.what();
    }
  }

  void handle_hello(const json& message) {
    const json& abi = message.value("plugin_abi", json());
    const json expected_abi = {EPHOST_PLUGIN_ABI_MIN_VERSION, EPHOST_PLUGIN_ABI_VERSION};
    if (message.at("hello") != kScannerProtocolVersion || abi != expected_abi)
      throw std::runtime_error(fmt::format("a scanner speaking protocol {}, plugin ABI {} (the host speaks protocol "
                                           "{}, plugin ABI {}): is it from another ephost installation?",
                                           message.at("hello").dump(), abi.dump(), kScannerProtocolVersion,
                                           expected_abi.dump()));
    hello_ = true;
  }

  void handle_stage(const std::string& path, const json& stage_json) {
    if (!stage_json.is_string() || !is_probe_stage(stage_json.get<std::string>()))
      throw std::runtime_error("an unknown stage " + stage_json.dump());
    const std::string stage = stage_json.get<std::string>();
    if (!current_) {
      if (next_ >= paths_.size() || paths_[next_] != path || stage != kProbeStageLoad)
        throw std::runtime_error(fmt::format("a stage for '{}' out of order", path));
      current_ = next_;
      deadline_ = Clock::now() + options_.timeout;
      output_tail_.clear();
    } else if (paths_[*current_] != path) {
      throw std::runtime_error(fmt::format("a stage for '{}' while probing '{}'", path, paths_[*current_]));
    }
    stage_ = stage;
  }

  void handle_result(const std::string& path, const json& result) {
    if (!current_ || paths_[*current_] != path) throw std::runtime_error(fmt::format("a result for '{}' out of order", path));
    ProbeResult r = probe_result_from_json(result);
    if (r.outcome != ProbeOutcome::kUsable && r.outcome != ProbeOutcome::kRefused)
      throw std::runtime_error(fmt::format("a result for '{}' with outcome '{}'", path, probe_outcome_name(r.outcome)));
    results_[*current_] = std::move(r);
    current_.reset();
    ++next_;
    deadline_ = Clock::now() + std::max(options_.timeout, kStartupTimeout);
  }

  // The verdict on the library in progress when the child ended (or was killed), or on the scanner.
  void conclude(int status, bool timed_out) {
    const std::string during = probe_stage_text(stage_);
    if (current_) {
      ProbeResult r;
      r.stage = stage_;
      if (!protocol_error_.empty()) {
        r.outcome = ProbeOutcome::kCrashed;
        r.reason = fmt::format("broke the plugin scanner's protocol during {} ({})", during, protocol_error_);
      } else if (timed_out) {
        r.outcome = ProbeOutcome::kTimedOut;
        r.reason = fmt::format("timed out during {}: no answer within {} ms (the plugin scanner killed it)", during,
                               options_.timeout.count());
      } else if (!status_known_) {
        r.outcome = ProbeOutcome::kCrashed;
        r.reason = fmt::format("ended the plugin scanner's process during {} (its exit status was not available)",
                               during);
      } else if (WIFSIGNALED(status)) {
        r.outcome = ProbeOutcome::kCrashed;
        r.reason = fmt::format("crashed during {}: killed by {}", during, signal_name(WTERMSIG(status)));
      } else {
        r.outcome = ProbeOutcome::kExited;
        r.reason = fmt::format("exited with status {} during {}, ending the plugin scanner's process (in process it "
                               "would have ended the application)",
                               WIFEXITED(status) ? WEXITSTATUS(status) : -1, during);
      }
      r.reason = with_last_output(std::move(r.reason), output_tail_);
      results_[*current_] = std::move(r);
      next_ = *current_ + 1;
      return;
    }
    if (next_ >= paths_.size()) return;  // all done; how the child ended no longer matters
    if (next_ > first_ && protocol_error_.empty() && hello_) return;  // progress: a new child goes on
    std::string why;
    if (!protocol_error_.empty())
      why = "sent " + protocol_error_;
    else if (timed_out)
      why = "did not answer within " + std::to_string(std::max(options_.timeout, kStartupTimeout).count()) + " ms";
    else if (WIFSIGNALED(status))
      why = std::string("was killed by ") + signal_name(WTERMSIG(status));
    else
      why = fmt::format("exited with status {}", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    const std::string reason = with_last_output(
        fmt::format("the plugin scanner ({}) {} before probing this library; set EPHOST_PLUGIN_SCAN=inprocess to "
                    "probe in process (unsafe)",
                    options_.scanner, why),
        output_tail_);
    for (size_t i = next_; i < paths_.size(); ++i) {
      ProbeResult r;
      r.outcome = ProbeOutcome::kScannerFailed;
      r.stage = kProbeStageLoad;
      r.reason = reason;
      results_[i] = r;
    }
    next_ = paths_.size();
  }

  static std::string signal_name(int sig) {
    std::string s = signal_description(sig);
    if (s == "an unnamed signal") s = "signal " + std::to_string(sig);
    return s;
  }

  const std::vector<std::string>& paths_;
  size_t next_;
  const size_t first_;
  const ScannerOptions& options_;
  std::vector<std::optional<ProbeResult>>& results_;
  Child child_;
  Clock::time_point deadline_;
  bool hello_ = false;
  bool status_known_ = true;
  std::optional<size_t> current_;
  std::string stage_;
  std::string pending_;
  std::string output_tail_;
  std::string protocol_error_;
};

// Writes one protocol line; a parent that went away ends the child.
void send(int fd, const json& message) {
  const std::string line = message.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
  const char* p = line.data();
  size_t left = line.size();
  while (left > 0) {
    const ssize_t w = ::write(fd, p, left);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) std::_Exit(2);
    p += w;
    left -= static_cast<size_t>(w);
  }
}

}  // namespace

std::string default_scanner_path() { return installed_helper_path(kScannerEnv, kScannerFileName); }

std::vector<ProbeResult> probe_in_scanner(const std::vector<std::string>& paths, const ScannerOptions& options) {
  std::vector<std::optional<ProbeResult>> results(paths.size());
  size_t next = 0;
  while (next < paths.size()) {
    const std::vector<std::string> batch(paths.begin() + static_cast<std::ptrdiff_t>(next), paths.end());
    Child child = spawn_scanner(options.scanner, batch);
    ChildSession session(paths, next, options, results);
    next = session.run(std::move(child));
  }
  std::vector<ProbeResult> out;
  out.reserve(results.size());
  for (auto& r : results) out.push_back(std::move(*r));
  return out;
}

int run_scanner_child(const std::vector<std::string>& paths, int result_fd) {
  send(result_fd, {{"hello", kScannerProtocolVersion},
                   {"plugin_abi", {EPHOST_PLUGIN_ABI_MIN_VERSION, EPHOST_PLUGIN_ABI_VERSION}}});
  for (const std::string& path : paths) {
    ProbeResult result = probe_library(path, [&](const char* stage) { send(result_fd, {{"path", path}, {"stage", stage}}); });
    send(result_fd, {{"path", path}, {"result", probe_result_to_json(result)}});
  }
  return 0;
}

}  // namespace ephost
