#include "model/function_calls.h"

#include <fmt/format.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/error.h"

namespace ephost {
namespace {

using FunctionId = std::pair<std::string, std::string>;  // (domain, name); "" for ai.onnx

std::string normalized(const std::string& domain) { return domain == "ai.onnx" ? std::string() : domain; }

std::string shown(const FunctionId& id) { return id.first.empty() ? id.second : id.first + "." + id.second; }

void collect_calls(const google::protobuf::RepeatedPtrField<onnx::NodeProto>& nodes,
                   const std::map<FunctionId, const onnx::FunctionProto*>& functions, std::vector<FunctionId>& calls);

void collect_calls_in_attributes(const onnx::NodeProto& node,
                                 const std::map<FunctionId, const onnx::FunctionProto*>& functions,
                                 std::vector<FunctionId>& calls) {
  for (const auto& a : node.attribute()) {
    if (a.has_g()) collect_calls(a.g().node(), functions, calls);
    for (const auto& g : a.graphs()) collect_calls(g.node(), functions, calls);
  }
}

void collect_calls(const google::protobuf::RepeatedPtrField<onnx::NodeProto>& nodes,
                   const std::map<FunctionId, const onnx::FunctionProto*>& functions, std::vector<FunctionId>& calls) {
  for (const auto& node : nodes) {
    FunctionId id{normalized(node.domain()), node.op_type()};
    if (functions.count(id)) calls.push_back(std::move(id));
    collect_calls_in_attributes(node, functions, calls);
  }
}

// Depth-first over the call graph: white (unvisited), grey (on the current path), black (done, with
// the depth of its deepest chain below it).
class CallChecker {
 public:
  explicit CallChecker(const onnx::ModelProto& model) {
    for (const auto& f : model.functions()) functions_.emplace(FunctionId{normalized(f.domain()), f.name()}, &f);
  }

  void check() {
    for (const auto& [id, f] : functions_) depth_of(id);
  }

 private:
  int depth_of(const FunctionId& id) {
    auto done = depth_.find(id);
    if (done != depth_.end()) return done->second;
    for (size_t i = 0; i < path_.size(); ++i) {
      if (path_[i] != id) continue;
      std::string cycle;
      for (size_t j = i; j < path_.size(); ++j) cycle += shown(path_[j]) + " -> ";
      fail(EPHOST_INVALID_GRAPH, "model-local function '{}' calls itself: {}{}", shown(id), cycle, shown(id));
    }
    path_.push_back(id);
    if (path_.size() > static_cast<size_t>(kMaxFunctionCallDepth))
      fail(EPHOST_INVALID_GRAPH, "model-local functions call each other more than {} levels deep (from '{}' to '{}')",
           kMaxFunctionCallDepth, shown(path_.front()), shown(id));
    std::vector<FunctionId> calls;
    collect_calls(functions_.at(id)->node(), functions_, calls);
    int deepest = 0;
    for (const FunctionId& callee : calls) deepest = std::max(deepest, depth_of(callee) + 1);
    path_.pop_back();
    depth_[id] = deepest;
    if (deepest + static_cast<int>(path_.size()) > kMaxFunctionCallDepth)
      fail(EPHOST_INVALID_GRAPH, "model-local functions call each other more than {} levels deep (below '{}')",
           kMaxFunctionCallDepth, shown(id));
    return deepest;
  }

  std::map<FunctionId, const onnx::FunctionProto*> functions_;
  std::map<FunctionId, int> depth_;
  std::vector<FunctionId> path_;
};

}  // namespace

void check_function_calls(const onnx::ModelProto& model) {
  if (model.functions_size() == 0) return;
  CallChecker(model).check();
}

}  // namespace ephost
