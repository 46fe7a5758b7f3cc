// Weight sharing across sessions (seed: "EPContext with Weight Sharing"). Unlike ONNX Runtime, where
// each EP keeps a singleton, the host holds the shared workspaces, in the Env, for every plugin:
//
// Generation (ep.context_enable=1 with ep.share_ep_contexts=1): the first session of a group names
// the binary `<model1_name>_<ep>.bin`; every session adds its compiled partitions to the workspace's
// container, where identical pieces (weights) are stored once; the session with
// ep.stop_share_ep_contexts=1 writes the single binary and clears the workspace. N models give N
// ctx models and one binary.
//
// Loading (ep.share_ep_contexts=1): the first session that needs a binary reads it, takes the
// graphs it uses and leaves the others here; a later session takes its graphs from here without
// reading the file again. The workspace holds plain bytes and each session loads its own compute
// units from them, so sessions may be destroyed in any order.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>
#include <string>

#include "epcontext/context_binary.h"

namespace ephost {

class ContextShareRegistry {
 public:
  struct Generation {
    std::string bin_path;   // canonical path of the binary the last session writes
    std::string first_model;  // the model whose name the binary carries
    ContextBinaryBuilder builder;
  };

  // Everything below is called with the lock held.
  std::unique_lock<std::mutex> lock() { return std::unique_lock<std::mutex>(mutex_); }

  // The generation workspace of `plugin`, or null when no group is open.
  Generation* generation(const std::string& plugin);
  Generation& open_generation(const std::string& plugin, const std::string& bin_path, const std::string& model);
  void close_generation(const std::string& plugin) { generations_.erase(plugin); }
  // Plugins with an open generation group (written by no session yet).
  std::vector<std::string> open_generations() const;

  // Loading: graph `name` of binary `bin_path`, removed from the workspace; nullopt when absent.
  std::optional<Bytes> take(const std::string& bin_path, const std::string& name);
  void put(const std::string& bin_path, const std::string& name, Bytes bytes);
  size_t waiting_graphs(const std::string& bin_path) const;

 private:
  std::mutex mutex_;
  std::map<std::string, Generation> generations_;
  std::map<std::string, std::map<std::string, Bytes>> loaded_;  // bin path -> graph name -> bytes
};

}  // namespace ephost
