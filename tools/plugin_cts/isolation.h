// Risky work in a child process (fork), as Vulkan's loader tests and gst-plugin-scanner keep a bad
// driver from taking the harness down: a plugin that crashes, aborts or hangs costs a FAIL verdict,
// not the kit. The child reports through a pipe, one JSON object per line: checks, data, and the
// step it is on, so that a crash or a timeout is blamed on that step.
//
// The parent forks before it has created any thread or loaded any plugin (fork copies one thread
// only), so each child starts clean and creates its own env.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "report.h"

namespace ephost_cts {

// What a child writes to its parent.
class ChildChannel {
 public:
  explicit ChildChannel(int fd) : fd_(fd) {}
  void step(const std::string& text);            // what it is about to do
  void check(const Check& check);                // a finished check
  void data(const nlohmann::json& value);        // anything else the parent needs

 private:
  void send(const nlohmann::json& line);
  int fd_;
};

struct ChildResult {
  std::vector<Check> checks;
  std::vector<nlohmann::json> data;
  std::string last_step;
  bool completed = false;  // exited 0 after its work
  std::string failure;     // otherwise: "crashed (signal 11, SIGSEGV)", "timed out after 60 s", "exited 3"
};

// Runs `work` in a child. `idle_timeout_s`: the child is killed when it reports nothing for that long.
ChildResult run_in_child(const std::function<void(ChildChannel&)>& work, int idle_timeout_s);

}  // namespace ephost_cts
