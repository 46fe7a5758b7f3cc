// Faults a test plugin injects on demand, so that the isolation tests can crash, abort or hang a real
// plugin library inside one chosen call. Provider option `fault`: "<kind>:<call>", kind one of
// segfault, abort, hang; call one of provider_create, get_capability, compile, compute. Option
// `fault_while`: a file path; the fault happens only while that file exists (a test makes it, sees the
// run fail, removes it and sees the next runs succeed). Without `fault`, nothing happens.
//
// A crash at load, before any option is known: when the environment variable
// EPHOST_TEST_FAULTY_CRASH_IN_PID names the process that loads the library (a test names itself), the
// library's constructor segfaults. The plugin scanner's child and a provider host are other processes,
// so there it loads fine: a plugin that only the application cannot load (crash_at_load_in_named_process).
#pragma once

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>

#include "ephost/sdk/plugin.hpp"

namespace ephost_test {

class InjectedFault {
 public:
  InjectedFault() = default;
  explicit InjectedFault(const ephost::sdk::Options& options) {
    const std::string fault = ephost::sdk::option(options, "fault", "");
    while_file_ = ephost::sdk::option(options, "fault_while", "");
    if (fault.empty()) return;
    const size_t colon = fault.find(':');
    kind_ = fault.substr(0, colon);
    call_ = colon == std::string::npos ? "" : fault.substr(colon + 1);
    if ((kind_ != "segfault" && kind_ != "abort" && kind_ != "hang") ||
        (call_ != "provider_create" && call_ != "get_capability" && call_ != "compile" && call_ != "compute"))
      ephost::sdk::fail(EPHOST_INVALID_ARGUMENT, "fault must be <segfault|abort|hang>:<provider_create|"
                                                 "get_capability|compile|compute>, got '" + fault + "'");
  }

  // Misbehaves when `call` is the call the fault names (and its file, if any, exists).
  void at(const char* call) const {
    if (call_ != call) return;
    if (!while_file_.empty() && ::access(while_file_.c_str(), F_OK) != 0) return;
    if (kind_ == "abort") std::abort();
    if (kind_ == "hang")
      for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
    volatile int* nowhere = nullptr;
    *nowhere = 1;
  }

 private:
  std::string kind_, call_, while_file_;
};

// The load-time crash above; the faulty plugin calls it from its library constructor.
inline void crash_at_load_in_named_process() {
  const char* pid = std::getenv("EPHOST_TEST_FAULTY_CRASH_IN_PID");
  if (!pid || std::atol(pid) != static_cast<long>(::getpid())) return;
  volatile int* nowhere = nullptr;
  *nowhere = 1;
}

}  // namespace ephost_test
