// Unused-initializer elimination: initializers that are not graph inputs and that no node, graph
// output or subgraph (outer-scope read) of their graph uses are dropped. Recurses into subgraphs.
#include <onnx/onnx_pb.h>

#include <fmt/format.h>

#include "core/log.h"
#include "transform/pass.h"
#include "transform/proto_util.h"

namespace ephost {

namespace {

using namespace transform_detail;

size_t remove_unused(onnx::GraphProto& g) {
  size_t rewrites = 0;
  for (auto& node : *g.mutable_node())
    for (auto& a : *node.mutable_attribute())
      if (a.has_g()) rewrites += remove_unused(*a.mutable_g());
  if (g.initializer_size() == 0) return rewrites;

  std::unordered_set<std::string> used = names_read_by_subgraphs(g);
  for (const auto& node : g.node())
    for (const auto& in : node.input())
      if (!in.empty()) used.insert(in);
  for (const auto& o : g.output()) used.insert(o.name());
  for (const auto& in : g.input()) used.insert(in.name());

  auto* inits = g.mutable_initializer();
  const int n = inits->size();
  int w = 0;
  for (int r = 0; r < n; ++r) {
    if (!used.count(inits->Get(r).name())) {
      if (log_level() <= EPHOST_LOG_VERBOSE)
        log_verbose(fmt::format("UnusedInitializerElimination: removed initializer '{}'", inits->Get(r).name()));
      ++rewrites;
      continue;
    }
    if (w != r) inits->SwapElements(w, r);
    ++w;
  }
  if (w < n) inits->DeleteSubrange(w, n - w);
  return rewrites;
}

class UnusedInitializerElimination : public GraphPass {
 public:
  std::string name() const override { return "UnusedInitializerElimination"; }
  int min_level() const override { return 1; }
  size_t apply(onnx::ModelProto& model, TransformContext&) override { return remove_unused(*model.mutable_graph()); }
};

}  // namespace

std::unique_ptr<GraphPass> make_unused_initializer_elimination_pass() {
  return std::make_unique<UnusedInitializerElimination>();
}

}  // namespace ephost
