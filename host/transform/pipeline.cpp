#include <fmt/format.h>

#include "core/log.h"
#include "graph/graph.h"
#include "transform/pass.h"

namespace ephost {

namespace {
constexpr int kMaxRounds = 4;
}

void PassPipeline::add(std::unique_ptr<GraphPass> pass) {
  if (pass) passes_.push_back(std::move(pass));
}

std::vector<PassResult> PassPipeline::run(Graph& main, TransformContext& context) const {
  std::vector<PassResult> results;
  std::vector<GraphPass*> active;
  for (const auto& p : passes_)
    if (p->min_level() <= context.level) {
      active.push_back(p.get());
      results.push_back(PassResult{p->name(), 0});
    }
  for (int round = 0; round < kMaxRounds && !active.empty(); ++round) {
    size_t changed = 0;
    for (size_t i = 0; i < active.size(); ++i) {
      size_t n = active[i]->apply(main, context);
      results[i].rewrites += n;
      changed += n;
      if (n) log_verbose(fmt::format("graph transform round {}: {} made {} rewrite(s)", round + 1, results[i].pass, n));
    }
    if (!changed) break;
  }
  return results;
}

PassPipeline default_pipeline() {
  PassPipeline p;
  p.add(make_noop_elimination_pass());
  p.add(make_shape_source_rewrite_pass());
  p.add(make_constant_folding_pass());
  p.add(make_conv_batchnorm_fusion_pass());
  p.add(make_unique_dequantize_pass());
  p.add(make_unused_initializer_elimination_pass());
  return p;
}

}  // namespace ephost
