#include "isolation.h"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <exception>
#include <iostream>

namespace ephost_cts {

void ChildChannel::send(const nlohmann::json& line) {
  const std::string text = line.dump() + "\n";
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = write(fd_, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) _exit(3);  // the parent is gone: nobody to report to
    done += static_cast<size_t>(n);
  }
}
void ChildChannel::step(const std::string& text) { send({{"type", "step"}, {"text", text}}); }
void ChildChannel::check(const Check& c) { send({{"type", "check"}, {"check", to_json(c)}}); }
void ChildChannel::data(const nlohmann::json& value) { send({{"type", "data"}, {"value", value}}); }

namespace {

std::string describe_status(int status) {
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    const char* name = sigabbrev_np(sig);
    return "crashed (signal " + std::to_string(sig) + (name ? std::string(", SIG") + name : "") + ")";
  }
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  return "ended abnormally";
}

void take_line(const std::string& line, ChildResult& result) {
  nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return;
  const std::string type = j.value("type", "");
  if (type == "step") result.last_step = j.value("text", "");
  if (type == "check") result.checks.push_back(check_from_json(j.at("check")));
  if (type == "data") result.data.push_back(j.at("value"));
}

}  // namespace

ChildResult run_in_child(const std::function<void(ChildChannel&)>& work, int idle_timeout_s) {
  ChildResult result;
  int fds[2];
  if (pipe(fds) != 0) {
    result.failure = std::string("cannot create a pipe: ") + std::strerror(errno);
    return result;
  }
  std::cout.flush();
  std::cerr.flush();
  const pid_t pid = fork();
  if (pid < 0) {
    result.failure = std::string("cannot fork: ") + std::strerror(errno);
    close(fds[0]);
    close(fds[1]);
    return result;
  }
  if (pid == 0) {
    close(fds[0]);
    ChildChannel channel(fds[1]);
    int code = 0;
    try {
      work(channel);
    } catch (const std::exception& e) {
      channel.step(std::string("stopped by an exception: ") + e.what());
      code = 2;
    }
    // _exit: the plugin's static destructors are part of what is tested elsewhere, not here, and
    // must not run the parent's atexit handlers twice.
    _exit(code);
  }
  close(fds[1]);
  std::string pending;
  char buffer[65536];
  bool timed_out = false;
  while (true) {
    pollfd p{fds[0], POLLIN, 0};
    int ready = poll(&p, 1, idle_timeout_s * 1000);
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) {
      timed_out = true;
      kill(pid, SIGKILL);
      break;
    }
    ssize_t n = read(fds[0], buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    pending.append(buffer, static_cast<size_t>(n));
    size_t newline;
    while ((newline = pending.find('\n')) != std::string::npos) {
      take_line(pending.substr(0, newline), result);
      pending.erase(0, newline + 1);
    }
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out)
    result.failure = "timed out (nothing reported for " + std::to_string(idle_timeout_s) + " s)";
  else if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
    result.completed = true;
  else
    result.failure = describe_status(status);
  return result;
}

}  // namespace ephost_cts
