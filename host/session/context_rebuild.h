// A cache that heals itself (ep.context_rebuild=1). When a session's cached contexts are rejected
// (another driver, device or format), the session runs at once through the fallback, and this job
// recompiles the source model in the background with the same providers and options, then replaces
// the ctx model and its binaries, so that the next session loads them as optimal.
//
// Nothing half-written is ever visible under the final names: the compile session writes into a
// hidden folder beside the ctx model, and only a finished, uncancelled rebuild renames its files into
// place, binaries first and the ctx model last. A lock file (flock, released by the kernel when a
// process dies) keeps two processes from rebuilding one cache at once; the second one skips. A killed
// rebuild leaves the old files, and a stale hidden folder that the next rebuild removes.
#pragma once

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "env/env.h"
#include "options/session_options.h"

namespace ephost {

class ContextRebuild {
 public:
  struct Status {
    // "running", "written", "skipped" (another process holds the lock), "cancelled", "failed".
    std::string state;
    std::string ctx_path;  // the ctx model being replaced
    std::string reason;    // why it failed or was skipped
    std::vector<std::string> files;  // written ("written" only), ctx model last
    double seconds = 0;
  };

  // Starts the job: compiles `source_path` with `options` (the session's own, minus what loads the
  // ctx model) into new files for `ctx_path`, with contexts embedded when `embed`.
  ContextRebuild(Env& env, SessionOptions options, std::string ctx_path, std::string source_path, bool embed);
  // Cancels (what is compiled is thrown away, nothing is renamed) and waits for the job.
  ~ContextRebuild();
  ContextRebuild(const ContextRebuild&) = delete;
  ContextRebuild& operator=(const ContextRebuild&) = delete;

  Status status() const;
  // Waits until the job is no longer running.
  void wait() const;

 private:
  void run(Env& env, SessionOptions options, std::string source_path, bool embed);
  void finish(std::string state, std::string reason = {}, std::vector<std::string> files = {});

  mutable std::mutex mutex_;
  mutable std::condition_variable done_;
  Status status_;
  std::atomic<bool> cancelled_{false};
  std::thread thread_;
};

}  // namespace ephost
