// The objects behind the application API's opaque handles (ephost_c_api.h). Internal to app_api/.
#pragma once

#include <deque>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/runtime_value.h"
#include "exec/graph_executor.h"
#include "env/env.h"
#include "session/session.h"
#include "options/session_options.h"

struct EphostEnv {
  // Shared with every session created from it: ReleaseEnv before ReleaseSession leaves the sessions
  // (and the plugins they use) alive until the last of them is released.
  std::shared_ptr<ephost::Env> env;
  std::mutex mutex;
  std::deque<std::string> joined_keys;  // storage for EphostPluginReport::source_keys
};
struct EphostSessionOptions {
  ephost::SessionOptions options;
};
struct EphostSession {
  std::shared_ptr<ephost::Env> env;  // declared first: destroyed after the session
  std::unique_ptr<ephost::Session> session;
  // Storage for EphostProviderState::last_failure: each message handed out once, kept as long as the
  // session (failures are few; the same failure gives the same message).
  std::mutex strings_mutex;
  std::set<std::string> failure_messages;
};
// Any run-time value: a tensor (in host or device memory), a sequence, or none (versions 2 and 3).
struct EphostTensor {
  ephost::RuntimeValue value;
  // For values that may live in a plugin's device memory (run and binding outputs, device tensors):
  // the env whose plugin frees that memory, kept loaded until the value is gone, so that ReleaseEnv
  // before ReleaseTensor is as safe as before ReleaseSession. Null for values the caller made.
  std::shared_ptr<ephost::Env> env;
  ~EphostTensor() { value = ephost::RuntimeValue(); }  // the value first, then (maybe) the env
};
// Run options (version 4): what a run checks between steps.
struct EphostRunOptions {
  ephost::RunControl control;
};
// Inputs and outputs bound ahead of runs (version 3).
struct EphostIoBinding {
  EphostSession* session = nullptr;
  std::vector<std::pair<std::string, ephost::RuntimeValue>> inputs;
  struct Output {
    std::string name;
    ephost::OutputRequest request;  // where it goes, or the tensor it is written into
    ephost::RuntimeValue result;    // after the last run
  };
  std::vector<Output> outputs;
};
