// ephost plugin SDK — SpanTimer: reports what a compute spends its time on, one span per operator or
// fused chain, nested under the step's span in the session's profile (plugin ABI 4).
// Part of the plugin SDK; include "ephost/sdk/plugin.hpp", which brings every part.
//
//   sdk::SpanTimer spans(ctx);               // asks once whether the session profiles
//   for (const Step& s : steps) {
//     run(s);
//     if (spans.on()) spans.close(s.label, s.op_type, s.node_names);
//   }
//
// Spans tile the compute: each begins where the previous one ended (at the timer's creation for the
// first), so that they add up to the step's time less the host's own bookkeeping around the call.
// When the session does not profile, or the host is older than ABI 4, on() is false and nothing is
// read or reported.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ephost/ephost_plugin.h"
#include "ephost/sdk/kernel_context.hpp"

namespace ephost::sdk {

class SpanTimer {
 public:
  explicit SpanTimer(KernelContext& ctx) : ctx_(ctx), on_(ctx.profiling()) {
    if (on_) last_ns_ = ctx.profile_clock_ns();
  }
  bool on() const { return on_; }

  // Reports a span from where the previous one ended to now. `nodes`: the ONNX node names it covers
  // (empty for work of the step itself, such as a layout change).
  void close(const std::string& name, const std::string& op_type, const std::vector<std::string>& nodes) {
    if (!on_) return;
    std::vector<const char*> names;
    names.reserve(nodes.size());
    for (const std::string& n : nodes) names.push_back(n.c_str());
    close(name.c_str(), op_type.c_str(), names.data(), names.size());
  }
  void close(const char* name, const char* op_type, const char* const* nodes, size_t num_nodes) {
    if (!on_) return;
    const int64_t now = ctx_.profile_clock_ns();
    EphostProfileSpan span{};
    span.struct_size = sizeof(EphostProfileSpan);
    span.start_ns = last_ns_;
    span.duration_ns = now - last_ns_;
    span.name = name;
    span.op_type = op_type;
    span.nodes = num_nodes ? nodes : nullptr;
    span.num_nodes = num_nodes;
    ctx_.report_span(span);
    last_ns_ = now;
  }
  // Starts the next span now: the time since the previous one ended is left out (work not worth a span).
  void skip() {
    if (on_) last_ns_ = ctx_.profile_clock_ns();
  }

 private:
  KernelContext& ctx_;
  bool on_;
  int64_t last_ns_ = 0;
};

}  // namespace ephost::sdk
