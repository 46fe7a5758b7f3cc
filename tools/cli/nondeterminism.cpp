#include "nondeterminism.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <climits>
#include <fstream>
#include <set>
#include <unordered_map>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>

namespace ephost_cli {

namespace {

bool is_default_domain(const std::string& d) { return d.empty() || d == "ai.onnx"; }

bool is_random_generator(const std::string& op) {
  static const std::set<std::string> kOps = {"RandomNormal", "RandomNormalLike", "RandomUniform",
                                             "RandomUniformLike", "Bernoulli", "Multinomial"};
  return kOps.count(op) > 0;
}

// A one-element bool tensor holding false.
bool is_false_scalar(const onnx::TensorProto& t) {
  if (t.data_type() != onnx::TensorProto::BOOL) return false;
  int64_t count = 1;
  for (int64_t d : t.dims()) count *= d;
  if (count != 1) return false;
  if (t.has_raw_data()) return t.raw_data().size() == 1 && t.raw_data()[0] == 0;
  return t.int32_data_size() == 1 && t.int32_data(0) == 0;
}

// Names that hold a constant false, in a graph and the graphs enclosing it: initializers that are not
// also graph inputs (those a caller may override), and Constant nodes' `value` outputs.
class ConstantFalseScope {
 public:
  ConstantFalseScope(const onnx::GraphProto& g, const ConstantFalseScope* parent) : parent_(parent) {
    for (const auto& t : g.initializer()) known_[t.name()] = is_false_scalar(t);
    for (const auto& in : g.input()) known_[in.name()] = false;  // fed at run time
    for (const auto& n : g.node())
      if (n.op_type() == "Constant" && is_default_domain(n.domain()) && n.output_size() == 1) {
        bool is_false = false;
        for (const auto& a : n.attribute())
          if (a.name() == "value" && a.has_t()) is_false = is_false_scalar(a.t());
        known_[n.output(0)] = is_false;
      }
  }
  bool is_constant_false(const std::string& name) const {
    for (const ConstantFalseScope* s = this; s; s = s->parent_) {
      auto it = s->known_.find(name);
      if (it != s->known_.end()) return it->second;
    }
    return false;
  }

 private:
  const ConstantFalseScope* parent_;
  std::unordered_map<std::string, bool> known_;  // nearest definition of a name wins
};

int64_t attr_int(const onnx::NodeProto& n, const std::string& name, int64_t fallback) {
  for (const auto& a : n.attribute())
    if (a.name() == name && a.type() == onnx::AttributeProto::INT) return a.i();
  return fallback;
}

class Finder {
 public:
  explicit Finder(int64_t opset) : opset_(opset) {}

  void visit_graph(const onnx::GraphProto& g, const ConstantFalseScope* parent, int depth) {
    if (depth > 64) return;  // the loader rejects such models
    ConstantFalseScope scope(g, parent);
    for (const auto& n : g.node()) {
      if (is_default_domain(n.domain())) {
        if (is_random_generator(n.op_type())) found_.insert(n.op_type());
        if (n.op_type() == "Dropout" && is_training_dropout(n, scope)) found_.insert(n.op_type());
      }
      for (const auto& a : n.attribute()) {
        if (a.has_g()) visit_graph(a.g(), &scope, depth + 1);
        for (const auto& sub : a.graphs()) visit_graph(sub, &scope, depth + 1);
      }
    }
  }

  std::vector<std::string> result() const { return {found_.begin(), found_.end()}; }

 private:
  bool is_training_dropout(const onnx::NodeProto& n, const ConstantFalseScope& scope) const {
    if (opset_ > 0 && opset_ < 7) return attr_int(n, "is_test", 0) == 0;
    return n.input_size() > 2 && !n.input(2).empty() && !scope.is_constant_false(n.input(2));
  }

  int64_t opset_;
  std::set<std::string> found_;
};

}  // namespace

std::vector<std::string> nondeterministic_ops(const std::string& model_path) {
  std::ifstream file(model_path, std::ios::binary);
  if (!file) return {};
  google::protobuf::io::IstreamInputStream stream(&file);
  google::protobuf::io::CodedInputStream input(&stream);
  input.SetTotalBytesLimit(INT_MAX);
  input.SetRecursionLimit(100);
  onnx::ModelProto model;
  if (!model.ParseFromCodedStream(&input)) return {};

  int64_t opset = 0;
  for (const auto& op : model.opset_import())
    if (is_default_domain(op.domain())) opset = op.version();
  Finder finder(opset);
  finder.visit_graph(model.graph(), nullptr, 0);
  for (const auto& f : model.functions()) {
    onnx::GraphProto body;  // a function's formal inputs are never constants; its Constant nodes may be
    *body.mutable_node() = f.node();
    finder.visit_graph(body, nullptr, 0);
  }
  return finder.result();
}

}  // namespace ephost_cli
