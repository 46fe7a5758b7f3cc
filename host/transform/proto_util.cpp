#include "transform/proto_util.h"

namespace ephost {
namespace transform_detail {

void collect_outer_reads(const onnx::GraphProto& g, std::unordered_set<std::string>* out) {
  std::unordered_set<std::string> defined;
  for (const auto& in : g.input()) defined.insert(in.name());
  for (const auto& init : g.initializer()) defined.insert(init.name());
  for (const auto& node : g.node())
    for (const auto& o : node.output())
      if (!o.empty()) defined.insert(o);
  auto read = [&](const std::string& name) {
    if (!name.empty() && !defined.count(name)) out->insert(name);
  };
  for (const auto& node : g.node()) {
    for (const auto& in : node.input()) read(in);
    for (const auto& a : node.attribute()) {
      std::unordered_set<std::string> sub;
      if (a.has_g()) collect_outer_reads(a.g(), &sub);
      for (const auto& sg : a.graphs()) collect_outer_reads(sg, &sub);
      for (const auto& name : sub) read(name);
    }
  }
  for (const auto& o : g.output()) read(o.name());
}

}  // namespace transform_detail
}  // namespace ephost
