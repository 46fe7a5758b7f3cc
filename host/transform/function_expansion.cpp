// Function expansion: instantiates a function body (schema-defined, context-dependent, or model-local)
// for an IR node; the graph editor puts the body's nodes in the node's place and types them.
#include "transform/function_expansion.h"

#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>

#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/error.h"
#include "graph/graph_editor.h"
#include "transform/proto_util.h"

namespace ephost {

namespace expansion_detail {

// Every value name of the model, to give the names a body defines new, unique ones.
class NameAllocator {
 public:
  explicit NameAllocator(const onnx::ModelProto& model) { add_graph(model.graph()); }

  std::string fresh(const std::string& base) {
    std::string name = base;
    for (int k = 1; used_.count(name); ++k) name = base + "_" + std::to_string(k);
    used_.insert(name);
    return name;
  }

 private:
  void add_graph(const onnx::GraphProto& g) {
    for (const auto& v : g.input()) used_.insert(v.name());
    for (const auto& v : g.output()) used_.insert(v.name());
    for (const auto& v : g.value_info()) used_.insert(v.name());
    for (const auto& t : g.initializer()) used_.insert(t.name());
    for (const auto& n : g.node()) {
      for (const auto& o : n.output()) used_.insert(o);
      for (const auto& a : n.attribute()) {
        if (a.has_g()) add_graph(a.g());
        for (const auto& sub : a.graphs()) add_graph(sub);
      }
    }
  }

  std::unordered_set<std::string> used_;
};

}  // namespace expansion_detail

namespace {

using expansion_detail::NameAllocator;
using transform_detail::is_default_domain;

std::string canonical_domain(const std::string& d) { return is_default_domain(d) ? std::string() : d; }
std::string shown_domain(const std::string& d) { return d.empty() ? "ai.onnx" : d; }

const onnx::FunctionProto* find_local_function(const onnx::ModelProto& model, const onnx::NodeProto& node) {
  const std::string domain = canonical_domain(node.domain());
  for (const auto& f : model.functions())
    if (f.name() == node.op_type() && canonical_domain(f.domain()) == domain) return &f;
  return nullptr;
}

// The node's schema at the model's opset for its domain; null when the domain is not imported or the
// op is unknown there.
const onnx::OpSchema* find_schema(const Model& model, const onnx::NodeProto& node) {
  const std::string domain = canonical_domain(node.domain());
  const int64_t version = model.opset(domain);
  if (version < 1) return nullptr;
  return onnx::OpSchemaRegistry::Schema(node.op_type(), static_cast<int>(version), domain);
}

bool schema_has_body(const onnx::OpSchema* schema) {
  return schema && (schema->HasFunction() || schema->HasContextDependentFunction());
}

// ---------------------------------------------------------------------------------------------
// Opsets: a body written for opset F of a domain runs in a model importing opset M of it only when
// every op it uses means the same at both. Ops change either in signature (inputs, outputs,
// attributes, defaults: ReduceSum-13 moving axes to an input, Softmax-13 changing axis' default) or
// only in the types they accept (Pow-15 adding bfloat16); only the latter is compatible.

bool same_parameters(const std::vector<onnx::OpSchema::FormalParameter>& a,
                     const std::vector<onnx::OpSchema::FormalParameter>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].GetOption() != b[i].GetOption() || a[i].GetIsHomogeneous() != b[i].GetIsHomogeneous() ||
        a[i].GetMinArity() != b[i].GetMinArity())
      return false;
  return true;
}

bool same_signature(const onnx::OpSchema& a, const onnx::OpSchema& b) {
  if (!same_parameters(a.inputs(), b.inputs()) || !same_parameters(a.outputs(), b.outputs())) return false;
  if (a.attributes().size() != b.attributes().size()) return false;
  for (const auto& [name, attr] : a.attributes()) {
    auto it = b.attributes().find(name);
    if (it == b.attributes().end()) return false;
    const auto& other = it->second;
    if (attr.type != other.type || attr.required != other.required ||
        attr.default_value.SerializeAsString() != other.default_value.SerializeAsString())
      return false;
  }
  return true;
}

void for_each_body_node(const google::protobuf::RepeatedPtrField<onnx::NodeProto>& nodes,
                        const std::function<void(const onnx::NodeProto&)>& fn) {
  for (const auto& n : nodes) {
    fn(n);
    for (const auto& a : n.attribute()) {
      if (a.has_g()) for_each_body_node(a.g().node(), fn);
      for (const auto& g : a.graphs()) for_each_body_node(g.node(), fn);
    }
  }
}

// Checks the body's opsets against the model's; returns the imports the model lacks.
std::vector<std::pair<std::string, int64_t>> check_body_opsets(const Model& model, const onnx::FunctionProto& body,
                                                               const std::string& label) {
  std::vector<std::pair<std::string, int64_t>> missing;
  for (const auto& import : body.opset_import()) {
    const std::string domain = canonical_domain(import.domain());
    const int64_t body_version = import.version();
    const int64_t model_version = model.opset(domain);
    if (model_version < 1) {
      missing.emplace_back(domain, body_version);
      continue;
    }
    if (model_version == body_version) continue;
    std::string problem;
    for_each_body_node(body.node(), [&](const onnx::NodeProto& n) {
      if (!problem.empty() || canonical_domain(n.domain()) != domain) return;
      const auto* written = onnx::OpSchemaRegistry::Schema(n.op_type(), static_cast<int>(body_version), domain);
      const auto* running = onnx::OpSchemaRegistry::Schema(n.op_type(), static_cast<int>(model_version), domain);
      if (!written && !running) return;  // not a schema op (e.g. another model-local function)
      if (written && running && (written == running || same_signature(*written, *running))) return;
      problem = fmt::format("{} (version {} at opset {}, {} at opset {})", n.op_type(),
                            written ? std::to_string(written->since_version()) : std::string("none"), body_version,
                            running ? std::to_string(running->since_version()) : std::string("none"),
                            model_version);
    });
    if (!problem.empty())
      fail(EPHOST_INVALID_GRAPH,
           "{}: its function body is written for {} opset {} but the model imports opset {}, and the body's op {} "
           "changed in between; the node cannot run as its function body",
           label, shown_domain(domain), body_version, model_version, problem);
  }
  return missing;
}

// ---------------------------------------------------------------------------------------------
// Names

// Renames within a body: formal names and the names the body defines, nearest scope first.
struct NameScope {
  const NameScope* parent = nullptr;
  std::unordered_map<std::string, std::string> names;

  const std::string* find(const std::string& name) const {
    for (const NameScope* s = this; s; s = s->parent) {
      auto it = s->names.find(name);
      if (it != s->names.end()) return &it->second;
    }
    return nullptr;
  }
};

// ---------------------------------------------------------------------------------------------
// One node -> the nodes of its body

class BodyInstance {
 public:
  BodyInstance(const onnx::NodeProto& call, const onnx::OpSchema* schema, std::string prefix, NameAllocator& names)
      : call_(call), schema_(schema), prefix_(std::move(prefix)), names_(names) {
    for (const auto& a : call.attribute()) call_attributes_[a.name()] = &a;
  }

  std::vector<onnx::NodeProto> instantiate(const onnx::FunctionProto& body, const std::string& label) {
    NameScope scope;
    for (int i = 0; i < body.input_size(); ++i)
      scope.names[body.input(i)] = i < call_.input_size() ? call_.input(i) : std::string();
    std::unordered_map<std::string, std::string> formal_outputs;
    for (int i = 0; i < body.output_size(); ++i) {
      const bool given = i < call_.output_size() && !call_.output(i).empty();
      formal_outputs[body.output(i)] = given ? call_.output(i) : names_.fresh(prefix_ + "/" + body.output(i));
    }

    std::vector<onnx::NodeProto> out;
    out.reserve(static_cast<size_t>(body.node_size()));
    for (int k = 0; k < body.node_size(); ++k) {
      const onnx::NodeProto& n = body.node(k);
      onnx::NodeProto& copy = out.emplace_back();
      copy.set_op_type(n.op_type());
      copy.set_domain(canonical_domain(n.domain()));
      copy.set_name(prefix_ + "/" + (n.name().empty() ? n.op_type() + "_" + std::to_string(k) : n.name()));
      if (!n.doc_string().empty()) copy.set_doc_string(n.doc_string());
      for (const auto& in : n.input()) {
        if (in.empty()) {
          copy.add_input();
          continue;
        }
        const std::string* renamed = scope.find(in);
        if (!renamed)
          fail(EPHOST_INVALID_GRAPH, "{}: its function body's node '{}' ({}) reads '{}', which the body does not define",
               label, n.name(), n.op_type(), in);
        copy.add_input(*renamed);
      }
      bind_attributes(n, &copy, scope);
      for (const auto& o : n.output()) {
        if (o.empty()) {
          copy.add_output();
          continue;
        }
        auto formal = formal_outputs.find(o);
        const std::string renamed = formal != formal_outputs.end() ? formal->second : names_.fresh(prefix_ + "/" + o);
        scope.names[o] = renamed;
        copy.add_output(renamed);
      }
    }

    // A formal output no body node produces passes a formal input through.
    for (int i = 0; i < body.output_size() && i < call_.output_size(); ++i) {
      if (call_.output(i).empty()) continue;
      bool produced = false;
      for (const auto& n : out)
        for (const auto& o : n.output()) produced |= o == call_.output(i);
      if (produced) continue;
      const std::string* source = scope.find(body.output(i));
      if (!source || source->empty())
        fail(EPHOST_INVALID_GRAPH, "{}: its function body does not produce output '{}'", label, body.output(i));
      onnx::NodeProto& copy = out.emplace_back();
      copy.set_op_type("Identity");
      copy.set_name(prefix_ + "/" + body.output(i) + "_passthrough");
      copy.add_input(*source);
      copy.add_output(call_.output(i));
    }
    return out;
  }

 private:
  // Copies n's attributes into `copy`, resolving references to the calling node's attributes.
  void bind_attributes(const onnx::NodeProto& n, onnx::NodeProto* copy, const NameScope& scope) {
    for (const auto& a : n.attribute()) {
      if (!a.ref_attr_name().empty()) {
        const onnx::AttributeProto* value = nullptr;
        auto it = call_attributes_.find(a.ref_attr_name());
        if (it != call_attributes_.end()) {
          value = it->second;
        } else if (schema_) {
          auto def = schema_->attributes().find(a.ref_attr_name());
          if (def != schema_->attributes().end() && def->second.default_value.type() != onnx::AttributeProto::UNDEFINED)
            value = &def->second.default_value;
        }
        if (!value) continue;  // neither given nor defaulted: the body node's attribute is absent
        onnx::AttributeProto* bound = copy->add_attribute();
        *bound = *value;  // graphs from the calling node already live in its graph's scope
        bound->set_name(a.name());
        bound->clear_ref_attr_name();
        continue;
      }
      onnx::AttributeProto* bound = copy->add_attribute();
      *bound = a;
      if (bound->has_g()) rename_subgraph(*bound->mutable_g(), scope);
      for (auto& g : *bound->mutable_graphs()) rename_subgraph(g, scope);
    }
  }

  // Gives the names a body subgraph defines fresh ones and maps its reads; names it reads from
  // neither the body nor itself belong to the calling node's graph (a graph the calling node passed
  // in, e.g. through a context-dependent builder) and stay as they are.
  void rename_subgraph(onnx::GraphProto& g, const NameScope& parent) {
    NameScope scope;
    scope.parent = &parent;
    auto define = [&](std::string* name) {
      if (name->empty()) return;
      auto it = scope.names.find(*name);
      if (it == scope.names.end()) it = scope.names.emplace(*name, names_.fresh(prefix_ + "/" + *name)).first;
      *name = it->second;
    };
    auto read = [&](std::string* name) {
      if (name->empty()) return;
      if (const std::string* renamed = scope.find(*name)) *name = *renamed;
    };
    for (auto& v : *g.mutable_input()) define(v.mutable_name());
    for (auto& t : *g.mutable_initializer()) define(t.mutable_name());
    for (auto& n : *g.mutable_node()) {
      for (auto& in : *n.mutable_input()) read(&in);
      // Attributes first (they may refer to the calling node's), then subgraphs see this scope.
      onnx::NodeProto bound;
      bind_attributes(n, &bound, scope);
      *n.mutable_attribute() = std::move(*bound.mutable_attribute());
      for (auto& o : *n.mutable_output()) define(&o);
    }
    for (auto& v : *g.mutable_output()) read(v.mutable_name());
    for (auto& v : *g.mutable_value_info()) read(v.mutable_name());
  }

  const onnx::NodeProto& call_;
  const onnx::OpSchema* schema_;
  std::string prefix_;
  NameAllocator& names_;
  std::unordered_map<std::string, const onnx::AttributeProto*> call_attributes_;
};

// ---------------------------------------------------------------------------------------------
// One IR node -> its body, instantiated

// The function body of `node`: a model-local function, a schema's, or one onnx builds for the node from
// its input types (context-dependent). `built` holds a body built for the node; `schema` is set for
// schema functions.
const onnx::FunctionProto& find_body(const Model& model, const Node& node, const std::string& label,
                                     const onnx::OpSchema** schema, onnx::FunctionProto* built) {
  const onnx::NodeProto& call = *node.proto;
  if (const onnx::FunctionProto* local = find_local_function(*model.proto, call)) return *local;
  *schema = find_schema(model, call);
  if (!schema_has_body(*schema))
    fail(EPHOST_INVALID_GRAPH, "{}: no function body is defined for it at {} opset {}", label,
         shown_domain(canonical_domain(call.domain())), model.opset(canonical_domain(call.domain())));
  if ((*schema)->HasFunction()) return *(*schema)->GetFunction();
  std::vector<onnx::TypeProto> input_types;
  for (const Value* in : node.inputs) {
    onnx::TypeProto type;
    if (in) type_proto_from_info(in->type, &type);
    input_types.push_back(std::move(type));
  }
  bool ok = false;
  std::string why;
  try {
    onnx::FunctionBodyBuildContextImpl context(call, input_types);
    ok = (*schema)->BuildContextDependentFunction(context, *built);
  } catch (const std::exception& e) {
    why = std::string(": ") + e.what();
  }
  if (!ok)
    fail(EPHOST_INVALID_GRAPH,
         "{}: onnx could not build its function body for this node (it depends on the input types, which must be "
         "known){}",
         label, why);
  return *built;
}

}  // namespace

FunctionBodies::FunctionBodies(Model& model)
    : model_(model), names_(std::make_unique<expansion_detail::NameAllocator>(*model.proto)) {}

FunctionBodies::~FunctionBodies() = default;

std::vector<onnx::NodeProto> FunctionBodies::instantiate(const Node& node) {
  const std::string label = fmt::format("node '{}' ({})", node.name, node.op_type);
  if (!node.proto) fail(EPHOST_INVALID_GRAPH, "{}: the node has no NodeProto to expand", label);
  const onnx::OpSchema* schema = nullptr;
  onnx::FunctionProto built;
  const onnx::FunctionProto& body = find_body(model_, node, label, &schema, &built);
  for (const auto& [domain, version] : check_body_opsets(model_, body, label)) {
    model_.opsets[domain] = version;
    auto* import = model_.proto->add_opset_import();
    import->set_domain(domain);
    import->set_version(version);
  }
  return BodyInstance(*node.proto, schema, node.name, *names_).instantiate(body, label);
}

size_t expand_function_nodes(FunctionBodies& bodies, Graph& main, const std::vector<Node*>& nodes) {
  if (nodes.empty()) return 0;
  GraphEditor editor(main);
  for (Node* node : nodes) editor.replace(*node, bodies.instantiate(*node));  // typed where spliced in
  editor.commit();
  return nodes.size();
}

bool has_function_body(const Model& model, const onnx::NodeProto& node) {
  return find_local_function(*model.proto, node) != nullptr || schema_has_body(find_schema(model, node));
}

}  // namespace ephost
