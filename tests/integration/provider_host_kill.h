// Helpers for the tests that kill an isolated provider's host process (provider_isolation_*_test.cpp):
// the process id the session's report gives, and a SIGKILL that waits until the process ended.
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "ephost/ephost_cxx_api.h"

namespace ephost_test {

// The process id of the provider host serving the session's first provider (-1 when in process).
inline long provider_host_pid(const Ephost::Session& s) {
  return nlohmann::json::parse(s.partition_report_json())["providers"][0]["isolation"].value("process_id", -1L);
}

// Kills the session's provider host and waits until it can be reaped (all its threads gone), without
// reaping it: its parent, this process's session, notices on its next call that it ended between calls.
// Use under ASSERT_NO_FATAL_FAILURE.
inline void kill_provider_host(const Ephost::Session& s) {
  const long pid = provider_host_pid(s);
  ASSERT_GT(pid, 0) << s.partition_report_json();
  ASSERT_EQ(::kill(static_cast<pid_t>(pid), SIGKILL), 0);
  for (int i = 0; i < 2000; ++i) {
    siginfo_t info{};
    if (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == pid)
      return;
    usleep(5000);
  }
  FAIL() << "provider host " << pid << " did not end within 10 s of SIGKILL";
}

}  // namespace ephost_test
