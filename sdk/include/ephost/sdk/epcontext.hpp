// ephost plugin SDK — caching compiled groups as EPContext nodes: ContextProvider, the ContextSink it
// writes a group into, and the ContextJudgement it gives a cached context before it is loaded.
// Part of the plugin SDK; include "ephost/sdk/plugin.hpp", which brings every part.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ephost/ephost_plugin.h"
#include "ephost/sdk/graph.hpp"
#include "ephost/sdk/host.hpp"
#include "ephost/sdk/provider.hpp"
#include "ephost/sdk/status.hpp"

namespace ephost::sdk {

// Where emit_context writes one compiled group: the bytes of its context, appended piece by piece, and
// attributes of its EPContext node. Valid during emit_context only.
class ContextSink {
 public:
  explicit ContextSink(EphostContextSink* s) : s_(s) {}
  // Appends `size` bytes (copied). Pieces are concatenated in call order, and judge_context /
  // load_context later receive exactly that concatenation. The host stores each distinct piece once,
  // so handing every weight tensor as its own piece deduplicates weights across partitions and across
  // the sessions of a weight-sharing group.
  void append(const void* data, size_t size) { check(host().context_set_blob(s_, data, size)); }
  void append(const std::vector<uint8_t>& bytes) { append(bytes.data(), bytes.size()); }
  // Sets "ep_sdk_version", "hardware_architecture", "notes" (strings) or "max_size" (a decimal
  // integer). The host fills the first two from the Description when they are not set.
  void set_attribute(const std::string& name, const std::string& value) {
    check(host().context_set_attribute(s_, name.c_str(), value.c_str()));
  }

 private:
  EphostContextSink* s_;
};

// A provider's verdict on a context before it is loaded, with the field that decided. The reason is
// what the user reads in the INVALID_GRAPH diagnostic: name the field and both values.
struct ContextJudgement {
  EphostContextVerdict verdict = EPHOST_CONTEXT_OPTIMAL;
  std::string reason;

  static ContextJudgement optimal() { return {EPHOST_CONTEXT_OPTIMAL, {}}; }
  static ContextJudgement prefer_recompile(std::string why) { return {EPHOST_CONTEXT_PREFER_RECOMPILE, std::move(why)}; }
  static ContextJudgement unsupported(std::string why) { return {EPHOST_CONTEXT_UNSUPPORTED, std::move(why)}; }
  static ContextJudgement not_mine(std::string why) { return {EPHOST_CONTEXT_NOT_MINE, std::move(why)}; }
};

// A provider whose compiled groups can be cached as EPContext nodes. Deriving from it (and returning
// std::unique_ptr<YourProvider> from the plugin's Create) is what makes EPHOST_DEFINE_PLUGIN fill the
// table's context_emit / context_judge / context_load; every other plugin keeps them NULL, so the host
// knows it cannot cache their groups.
class ContextProvider : public Provider {
 public:
  // Session option ep.context_enable=1: called once per group this provider compiled, after all
  // compiles, with the fused_name compile received. Write the compiled program into `sink`.
  virtual void emit_context(const std::string& fused_name, ContextSink& sink) = 0;
  // Decides whether the context `blob` (what emit_context wrote; valid during the call) can be loaded.
  // `context_node` is the EPContext node (attributes "ep_sdk_version", "hardware_architecture", ...).
  // Must never crash on arbitrary bytes: check sizes before reading.
  virtual ContextJudgement judge_context(const Node& context_node, const uint8_t* blob, size_t size) = 0;
  // Turns a context judged usable into a runnable group (copy what it needs: `blob` and `context_node`
  // are valid during the call only). Its compute receives the EPContext node's inputs and outputs.
  virtual std::unique_ptr<CompiledGroup> load_context(const Node& context_node, const uint8_t* blob,
                                                      size_t size) = 0;
};

}  // namespace ephost::sdk
