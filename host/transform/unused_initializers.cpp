// Unused-initializer elimination: initializers that are not graph inputs and that no node, graph
// output or subgraph (outer-scope read) of their graph uses are dropped, in every graph.
#include <fmt/format.h>

#include "core/log.h"
#include "graph/graph_editor.h"
#include "transform/ir_util.h"
#include "transform/pass.h"

namespace ephost {

namespace {

using namespace transform_detail;

class UnusedInitializerElimination : public GraphPass {
 public:
  std::string name() const override { return "UnusedInitializerElimination"; }
  int min_level() const override { return 1; }
  size_t apply(Graph& main, TransformContext&) override {
    GraphEditor editor(main);
    size_t rewrites = 0;
    for (Graph* g : graphs_of(main)) {
      const std::vector<Value*> initializers = g->initializers;
      for (Value* v : initializers) {
        if (!v->is_constant_initializer() || !v->consumers.empty() || v->is_graph_output) continue;
        if (log_level() <= EPHOST_LOG_VERBOSE)
          log_verbose(fmt::format("UnusedInitializerElimination: removed initializer '{}'", v->name));
        editor.remove_initializer(*v);
        ++rewrites;
      }
    }
    editor.commit();
    return rewrites;
  }
};

}  // namespace

std::unique_ptr<GraphPass> make_unused_initializer_elimination_pass() {
  return std::make_unique<UnusedInitializerElimination>();
}

}  // namespace ephost
