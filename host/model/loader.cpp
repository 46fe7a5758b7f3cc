// Model loading: read -> parse -> opset check -> external data -> sparse initializers -> structure
// (model/graph_structure.h: duplicates, dangling inputs, cycles; unsorted acyclic graphs are sorted)
// -> onnx checker -> shape inference.
#include "model/loader.h"

#include <fcntl.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <onnx/checker.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>
#include <unistd.h>

#include <algorithm>
#include <boost/filesystem.hpp>
#include <climits>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>
#include <unordered_map>

#include "core/confined_path.h"
#include "core/error.h"
#include "core/log.h"
#include "core/regular_file.h"
#include "model/creation_counts.h"
#include "model/function_calls.h"
#include "model/graph_structure.h"
#include "model/inference_guards.h"

namespace ephost {

namespace fs = boost::filesystem;

namespace {

bool is_default_domain(const std::string& d) { return d.empty() || d == "ai.onnx"; }

// ---------------------------------------------------------------------------------------------
// Parsing

void parse_model(const void* data, size_t size, const std::string& what, onnx::ModelProto* out) {
  if (size > static_cast<size_t>(INT_MAX))
    fail(EPHOST_INVALID_PROTOBUF,
         "{} is {} bytes; a ModelProto cannot exceed 2 GiB (store large initializers as external data)", what,
         size);
  google::protobuf::io::CodedInputStream input(static_cast<const uint8_t*>(data), static_cast<int>(size));
  input.SetRecursionLimit(100);
  if (!out->ParseFromCodedStream(&input) || !input.ConsumedEntireMessage())
    fail(EPHOST_INVALID_PROTOBUF, "failed to parse {} as an ONNX ModelProto ({} bytes)", what, size);
}

// ---------------------------------------------------------------------------------------------
// Opsets

void for_each_graph(onnx::GraphProto& g, const std::function<void(onnx::GraphProto&)>& fn);

// "ai.onnx" is an alias of "" for the default domain; onnx's checker and shape inference only know "".
void normalize_default_domain(onnx::ModelProto& proto) {
  for (auto& op : *proto.mutable_opset_import())
    if (op.domain() == "ai.onnx") op.set_domain("");
  auto fix_nodes = [](google::protobuf::RepeatedPtrField<onnx::NodeProto>& nodes) {
    for (auto& n : nodes)
      if (n.domain() == "ai.onnx") n.set_domain("");
  };
  for_each_graph(*proto.mutable_graph(), [&](onnx::GraphProto& g) { fix_nodes(*g.mutable_node()); });
  for (auto& f : *proto.mutable_functions()) {
    for (auto& op : *f.mutable_opset_import())
      if (op.domain() == "ai.onnx") op.set_domain("");
    fix_nodes(*f.mutable_node());
  }
}

void read_opsets(Model& model) {
  model.ir_version = model.proto->ir_version();
  model.opsets.clear();
  for (const auto& op : model.proto->opset_import()) {
    std::string domain = is_default_domain(op.domain()) ? std::string() : op.domain();
    const std::string shown = domain.empty() ? "ai.onnx" : domain;
    if (op.version() < 1)
      fail(EPHOST_INVALID_GRAPH, "model imports domain '{}' with opset {}; opset versions start at 1", shown,
           op.version());
    auto it = model.opsets.find(domain);
    if (it != model.opsets.end() && it->second != op.version())
      fail(EPHOST_INVALID_GRAPH, "model imports domain '{}' twice, with opsets {} and {}", shown, it->second,
           op.version());
    model.opsets[domain] = op.version();
  }
  // A model may import no ai.onnx opset at all (e.g. one made only of ai.onnx.preview.training ops);
  // then none of its nodes may be in the default domain (checked after domains are normalized).
  auto it = model.opsets.find("");
  if (it != model.opsets.end() && (it->second < kMinSupportedOpset || it->second > kMaxSupportedOpset))
    fail(EPHOST_INVALID_GRAPH, "model uses ai.onnx opset {}; supported ai.onnx opsets are {} to {}", it->second,
         kMinSupportedOpset, kMaxSupportedOpset);
  if (it != model.opsets.end() && it->second > opsets::kOnnxLibraryNewestOpset &&
      !opsets::registration_problem().empty())
    fail(EPHOST_FAIL,
         "model uses ai.onnx opset {}, above onnx 1.12's {}, but the schemas of the newer opsets could not be "
         "registered with onnx: {}",
         it->second, opsets::kOnnxLibraryNewestOpset, opsets::registration_problem());
}

// Nodes of a domain the model does not import have no defined semantics. onnx's checker says so too,
// but it does not run on trusted models, and every provider would then meet opset -1.
void check_node_domains_imported(Model& model) {
  for_each_graph(*model.proto->mutable_graph(), [&](onnx::GraphProto& g) {
    for (const auto& node : g.node())
      if (!model.opsets.count(node.domain()))
        fail(EPHOST_INVALID_GRAPH, "node '{}' ({}) is in domain '{}', which the model does not import (opset_import)",
             node.name().empty() ? "<unnamed>" : node.name(), node.op_type(),
             node.domain().empty() ? "ai.onnx" : node.domain());
  });
}

// ---------------------------------------------------------------------------------------------
// Walking every TensorProto and GraphProto of a model

void for_each_graph_in_attribute(onnx::AttributeProto& a, const std::function<void(onnx::GraphProto&)>& fn) {
  if (a.has_g()) for_each_graph(*a.mutable_g(), fn);
  for (auto& sub : *a.mutable_graphs()) for_each_graph(sub, fn);
}

// Pre-order: fn(g) then g's subgraphs.
void for_each_graph(onnx::GraphProto& g, const std::function<void(onnx::GraphProto&)>& fn) {
  fn(g);
  for (auto& node : *g.mutable_node())
    for (auto& a : *node.mutable_attribute()) for_each_graph_in_attribute(a, fn);
}

void for_each_tensor_in_sparse(onnx::SparseTensorProto& s, const std::function<void(onnx::TensorProto&)>& fn) {
  if (s.has_values()) fn(*s.mutable_values());
  if (s.has_indices()) fn(*s.mutable_indices());
}

void for_each_tensor_in_attribute(onnx::AttributeProto& a, const std::function<void(onnx::TensorProto&)>& fn) {
  if (a.has_t()) fn(*a.mutable_t());
  for (auto& t : *a.mutable_tensors()) fn(t);
  if (a.has_sparse_tensor()) for_each_tensor_in_sparse(*a.mutable_sparse_tensor(), fn);
  for (auto& s : *a.mutable_sparse_tensors()) for_each_tensor_in_sparse(s, fn);
}

void for_each_tensor(onnx::ModelProto& model, const std::function<void(onnx::TensorProto&)>& fn) {
  for_each_graph(*model.mutable_graph(), [&](onnx::GraphProto& g) {
    for (auto& t : *g.mutable_initializer()) fn(t);
    for (auto& s : *g.mutable_sparse_initializer()) for_each_tensor_in_sparse(s, fn);
    for (auto& node : *g.mutable_node())
      for (auto& a : *node.mutable_attribute()) for_each_tensor_in_attribute(a, fn);
  });
  for (auto& f : *model.mutable_functions())
    for (auto& node : *f.mutable_node())
      for (auto& a : *node.mutable_attribute()) {
        for_each_tensor_in_attribute(a, fn);
        for_each_graph_in_attribute(a, [&](onnx::GraphProto& g) {
          for (auto& t : *g.mutable_initializer()) fn(t);
          for (auto& n : *g.mutable_node())
            for (auto& na : *n.mutable_attribute()) for_each_tensor_in_attribute(na, fn);
        });
      }
}

// ---------------------------------------------------------------------------------------------
// External data

bool parse_non_negative(const std::string& s, int64_t* out) {
  if (s.empty()) return false;
  int64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    if (v > (std::numeric_limits<int64_t>::max() - (c - '0')) / 10) return false;
    v = v * 10 + (c - '0');
  }
  *out = v;
  return true;
}

class ExternalDataResolver {
 public:
  ExternalDataResolver(std::string base_dir, bool from_buffer) : base_dir_(std::move(base_dir)), from_buffer_(from_buffer) {}

  void resolve(onnx::TensorProto& t) {
    if (t.data_location() != onnx::TensorProto::EXTERNAL) return;
    const std::string name = t.name().empty() ? std::string("<unnamed>") : t.name();
    if (from_buffer_ && base_dir_.empty())
      fail(EPHOST_INVALID_ARGUMENT,
           "tensor '{}' of a model loaded from a buffer has external data; set the session option "
           "session.model_external_initializers_file_folder_path to the folder that holds its data files",
           name);

    std::string location;
    bool has_location = false;
    int64_t offset = 0, length = -1;
    for (const auto& kv : t.external_data()) {
      if (kv.key() == "location") {
        location = kv.value();
        has_location = true;
      } else if (kv.key() == "offset") {
        if (!parse_non_negative(kv.value(), &offset))
          fail(EPHOST_INVALID_GRAPH, "tensor '{}' has an invalid external data offset '{}'", name, kv.value());
      } else if (kv.key() == "length") {
        if (!parse_non_negative(kv.value(), &length))
          fail(EPHOST_INVALID_GRAPH, "tensor '{}' has an invalid external data length '{}'", name, kv.value());
      }
    }
    if (!has_location || location.empty())
      fail(EPHOST_INVALID_GRAPH, "tensor '{}' has external data without a location", name);
    if (t.data_type() == EPHOST_ELEMENT_STRING)
      fail(EPHOST_INVALID_GRAPH, "string tensor '{}' cannot have external data (location '{}')", name, location);

    const fs::path file = confine(name, location);

    // Bytes the shape needs.
    if (!element_type_known(t.data_type()))
      fail(EPHOST_INVALID_GRAPH, "tensor '{}' has unsupported element type {}", name, t.data_type());
    std::vector<int64_t> dims(t.dims().begin(), t.dims().end());
    int64_t count = 0;
    try {
      count = element_count(dims);
    } catch (const Error& e) {
      fail(EPHOST_INVALID_GRAPH, "tensor '{}': {}", name, e.what());
    }
    const size_t need_bytes = data_bytes(t.data_type(), count);
    if (need_bytes > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      fail(EPHOST_INVALID_GRAPH, "tensor '{}' shape {} is too large", name, shape_to_string(dims));
    const int64_t need = static_cast<int64_t>(need_bytes);
    if (length < 0) length = need;
    if (length != need)
      fail(EPHOST_INVALID_GRAPH,
           "tensor '{}' external data length {} (location '{}') does not match its shape {} of {}, which needs "
           "{} bytes",
           name, length, location, shape_to_string(dims), element_type_name(t.data_type()), need);

    OpenFile& f = open(name, location, file);
    if (offset > f.size || length > f.size - offset)
      fail(EPHOST_INVALID_GRAPH,
           "tensor '{}' external data (location '{}', offset {}, length {}) lies outside the file, which has {} "
           "bytes",
           name, location, offset, length, f.size);
    std::string bytes;
    bytes.resize(static_cast<size_t>(length));
    try {
      if (length > 0) f.file->read_at(static_cast<uint64_t>(offset), &bytes[0], bytes.size());
    } catch (const Error& e) {
      fail(EPHOST_INVALID_GRAPH, "tensor '{}': {}", name, e.what());
    }
    t.set_raw_data(std::move(bytes));
    t.clear_external_data();
    t.set_data_location(onnx::TensorProto::DEFAULT);
  }

 private:
  struct OpenFile {
    std::unique_ptr<RegularFile> file;
    int64_t size = 0;
  };

  // The data file for `location`, confined to the base folder.
  fs::path confine(const std::string& name, const std::string& location) {
    return fs::path(confine_path(base_dir_, location, fmt::format("tensor '{}' external data location", name)));
  }

  OpenFile& open(const std::string& name, const std::string& location, const fs::path& file) {
    auto it = files_.find(file.string());
    if (it != files_.end()) return *it->second;
    auto f = std::make_unique<OpenFile>();
    try {
      f->file = std::make_unique<RegularFile>(file.string(), "external data file");
    } catch (const Error& e) {
      if (e.code() == EPHOST_NO_SUCHFILE)
        fail(EPHOST_NO_SUCHFILE, "external data file '{}' of tensor '{}' (location '{}') does not exist",
             file.string(), name, location);
      fail(EPHOST_INVALID_GRAPH, "external data location '{}' of tensor '{}': {}", location, name, e.what());
    }
    f->size = static_cast<int64_t>(f->file->size());
    return *files_.emplace(file.string(), std::move(f)).first->second;
  }

  std::string base_dir_;
  bool from_buffer_;
  std::unordered_map<std::string, std::unique_ptr<OpenFile>> files_;
};

// ---------------------------------------------------------------------------------------------
// Sparse initializers -> dense initializers

void densify_sparse_initializers(onnx::GraphProto& g) {
  if (g.sparse_initializer_size() == 0) return;
  constexpr uint64_t kMaxDenseBytes = uint64_t(1) << 31;
  for (const auto& sp : g.sparse_initializer()) {
    const std::string& name = sp.values().name();
    std::vector<int64_t> dims(sp.dims().begin(), sp.dims().end());
    Tensor values = tensor_from_proto(sp.values());
    if (values.elem_type() == EPHOST_ELEMENT_STRING)
      fail(EPHOST_NOT_IMPLEMENTED, "sparse initializer '{}' of strings is not supported", name);
    int64_t count = 0;
    try {
      count = element_count(dims);
    } catch (const Error& e) {
      fail(EPHOST_INVALID_GRAPH, "sparse initializer '{}': {}", name, e.what());
    }
    const size_t esize = element_size(values.elem_type());
    if (esize == 0)  // the packed sub-byte types: elements are not addressable bytes
      fail(EPHOST_NOT_IMPLEMENTED, "sparse initializer '{}' of {} is not supported; store it dense", name,
           element_type_name(values.elem_type()));
    if (static_cast<uint64_t>(count) > kMaxDenseBytes / esize)
      fail(EPHOST_INVALID_GRAPH, "sparse initializer '{}' of shape {} is too large to densify", name,
           shape_to_string(dims));
    const int64_t nnz = values.element_count();
    if (values.shape().size() != 1)
      fail(EPHOST_INVALID_GRAPH, "sparse initializer '{}' values must be 1-D, got {}", name,
           shape_to_string(values.shape()));
    Tensor indices = sp.has_indices() && sp.indices().dims_size() > 0 ? tensor_from_proto(sp.indices()) : Tensor();
    if (nnz > 0 && (indices.empty() || indices.elem_type() != EPHOST_ELEMENT_INT64))
      fail(EPHOST_INVALID_GRAPH, "sparse initializer '{}' needs int64 indices", name);
    const bool linear = !indices.empty() && indices.shape().size() == 1;
    if (nnz > 0) {
      const auto& ishape = indices.shape();
      bool ok = (linear && ishape[0] == nnz) ||
                (ishape.size() == 2 && ishape[0] == nnz && ishape[1] == static_cast<int64_t>(dims.size()));
      if (!ok)
        fail(EPHOST_INVALID_GRAPH, "sparse initializer '{}' indices shape {} does not fit {} values of shape {}",
             name, shape_to_string(ishape), nnz, shape_to_string(dims));
    }
    std::string raw(static_cast<size_t>(count) * esize, '\0');
    const auto* idx = indices.empty() ? nullptr : indices.data_as<int64_t>();
    const auto* src = static_cast<const char*>(values.data());
    for (int64_t k = 0; k < nnz; ++k) {
      int64_t flat = 0;
      if (linear) {
        flat = idx[k];
      } else {
        for (size_t d = 0; d < dims.size(); ++d) {
          int64_t i = idx[k * static_cast<int64_t>(dims.size()) + static_cast<int64_t>(d)];
          if (i < 0 || i >= dims[d]) {
            flat = -1;
            break;
          }
          flat = flat * dims[d] + i;
        }
      }
      if (flat < 0 || flat >= count)
        fail(EPHOST_INVALID_GRAPH, "sparse initializer '{}' has an index out of range for shape {}", name,
             shape_to_string(dims));
      std::memcpy(&raw[static_cast<size_t>(flat) * esize], src + static_cast<size_t>(k) * esize, esize);
    }
    onnx::TensorProto* dense = g.add_initializer();
    dense->set_name(name);
    dense->set_data_type(values.elem_type());
    for (int64_t d : dims) dense->add_dims(d);
    dense->set_raw_data(std::move(raw));
  }
  g.clear_sparse_initializer();
}

// ---------------------------------------------------------------------------------------------
// Checker and shape inference

void run_checker(Model& model) {
  onnx::ModelProto& proto = *model.proto;
  if (!proto.has_ir_version() || proto.ir_version() <= 0)
    fail(EPHOST_INVALID_GRAPH, "ONNX checker: the model does not have an ir_version set");
  int ir = static_cast<int>(std::min<int64_t>(proto.ir_version(), onnx::IR_VERSION));
  if (proto.ir_version() > onnx::IR_VERSION)
    log_warning(fmt::format("model ir_version {} is newer than the checker's ({}); checking it as {}",
                            proto.ir_version(), static_cast<int>(onnx::IR_VERSION), ir));
  // onnx's checker wants a shape on every tensor input/output of the main graph; ONNX Runtime accepts
  // tensors of unknown rank there, and so do we: such value infos get an (empty) shape for the duration
  // of the check only.
  std::vector<onnx::TypeProto_Tensor*> patched;
  struct Restore {
    std::vector<onnx::TypeProto_Tensor*>& patched;
    ~Restore() {
      for (auto* tt : patched) tt->clear_shape();
    }
  } restore{patched};
  auto patch = [&](onnx::ValueInfoProto& vi) {
    if (vi.type().value_case() == onnx::TypeProto::kTensorType && !vi.type().tensor_type().has_shape()) {
      auto* tt = vi.mutable_type()->mutable_tensor_type();
      tt->mutable_shape();
      patched.push_back(tt);
    }
  };
  onnx::GraphProto& main = *proto.mutable_graph();
  for (auto& vi : *main.mutable_input()) patch(vi);
  for (auto& vi : *main.mutable_output()) patch(vi);
  for (auto& vi : *main.mutable_value_info()) patch(vi);

  onnx::checker::CheckerContext ctx;
  ctx.set_ir_version(ir);
  std::unordered_map<std::string, int> imports;
  for (const auto& op : proto.opset_import()) imports[op.domain()] = static_cast<int>(op.version());
  ctx.set_opset_imports(imports);
  ctx.set_model_dir(model.base_dir);
  try {
    onnx::checker::LexicalScopeContext lex;
    onnx::checker::check_graph(proto.graph(), ctx, lex);
    if (ir >= 8) onnx::checker::check_model_local_functions(proto, ctx, lex);
  } catch (const std::exception& e) {
    fail(EPHOST_INVALID_GRAPH, "the model failed the ONNX checker: {}", e.what());
  }
}

// "" when every node with a known schema matches it (inputs, outputs, attributes), else what does not.
std::string schema_mismatch(onnx::ModelProto& proto) {
  std::unordered_map<std::string, int> opsets;
  for (const auto& op : proto.opset_import())
    opsets[is_default_domain(op.domain()) ? std::string() : op.domain()] = static_cast<int>(op.version());
  std::string problem;
  for_each_graph(*proto.mutable_graph(), [&](onnx::GraphProto& g) {
    if (!problem.empty()) return;
    for (const auto& node : g.node()) {
      auto it = opsets.find(is_default_domain(node.domain()) ? std::string() : node.domain());
      if (it == opsets.end()) continue;
      const onnx::OpSchema* schema = onnx::OpSchemaRegistry::Schema(node.op_type(), it->second, it->first);
      if (!schema) continue;
      try {
        schema->Verify(node);
      } catch (const std::exception& e) {
        problem = fmt::format("node '{}' ({}) does not match its schema: {}", node.name(), node.op_type(), e.what());
        return;
      }
    }
  });
  return problem;
}

// "node 'g' (GatherND)" when the model has one node of that type, else "a GatherND node (of 'a', 'b')".
std::string describe_nodes_of_type(onnx::ModelProto& proto, const std::string& op_type) {
  std::vector<std::string> names;
  for_each_graph(*proto.mutable_graph(), [&](onnx::GraphProto& g) {
    for (int i = 0; i < g.node_size(); ++i) {
      const auto& n = g.node(i);  // unnamed nodes as the IR names them
      if (n.op_type() == op_type) names.push_back(n.name().empty() ? fmt::format("{}_{}", op_type, i) : n.name());
    }
  });
  if (names.size() == 1) return fmt::format("node '{}' ({})", names[0], op_type);
  std::string list;
  for (size_t i = 0; i < names.size() && i < 5; ++i) list += (i ? ", '" : "'") + names[i] + "'";
  return fmt::format("a {} node{}", op_type, list.empty() ? std::string() : " (of " + list + ")");
}

std::unique_ptr<Model> finish_loading(std::unique_ptr<onnx::ModelProto> proto, std::string path,
                                      std::string base_dir, bool from_buffer, const LoadOptions& options) {
  // Before anything reads onnx's schema registry (the opset guard, the checker, inference, expansion).
  opsets::register_schemas();
  auto model = std::make_unique<Model>();
  model->proto = std::move(proto);
  model->path = std::move(path);
  model->base_dir = std::move(base_dir);
  read_opsets(*model);
  normalize_default_domain(*model->proto);
  check_node_domains_imported(*model);
  // Before anything follows calls between local functions (the checker, shape inference, expansion).
  check_function_calls(*model->proto);

  ExternalDataResolver resolver(model->base_dir, from_buffer);
  for_each_tensor(*model->proto, [&](onnx::TensorProto& t) { resolver.resolve(t); });
  for_each_graph(*model->proto->mutable_graph(), densify_sparse_initializers);
  // Data sizes must match types and shapes before onnx's checker or shape inference read them (onnx
  // 1.12 copies raw_data into vectors sized from it without checking).
  for_each_tensor(*model->proto, [](onnx::TensorProto& t) {
    validate_tensor_proto(t);
    move_new_type_fields_to_raw_data(t);
  });

  check_graph_structure(*model->proto->mutable_graph(), model->proto->graph().name().empty()
                                                          ? std::string("main graph")
                                                          : fmt::format("graph '{}'", model->proto->graph().name()));

  model->overridden_dimensions =
      apply_free_dimension_overrides(*model->proto->mutable_graph(), options.free_dimension_overrides);
  if (options.run_checker) run_checker(*model);
  if (options.infer_shapes) infer_model_shapes(*model);
  return model;
}

}  // namespace

std::unique_ptr<Model> load_model_from_file(const std::string& path, const LoadOptions& options) {
  if (path.empty()) fail(EPHOST_INVALID_ARGUMENT, "model path is empty");
  // A FIFO, a device or a directory is refused before a byte is read (and the open never blocks).
  const RegularFile file(path, "model file");
  const uint64_t size = file.size();
  const int fd = file.fd();
  if (size == 0) fail(EPHOST_INVALID_PROTOBUF, "model file '{}' is empty (0 bytes)", path);
  if (size > static_cast<uint64_t>(INT_MAX))
    fail(EPHOST_INVALID_PROTOBUF,
         "model file '{}' is {} bytes; a ModelProto cannot exceed 2 GiB (store large initializers as external data)",
         path, size);

  auto proto = std::make_unique<onnx::ModelProto>();
  {
    google::protobuf::io::FileInputStream file_stream(fd);
    google::protobuf::io::CodedInputStream input(&file_stream);
    input.SetTotalBytesLimit(INT_MAX);
    input.SetRecursionLimit(100);
    if (!proto->ParseFromCodedStream(&input) || !input.ConsumedEntireMessage() || file_stream.GetErrno() != 0)
      fail(EPHOST_INVALID_PROTOBUF, "failed to parse '{}' as an ONNX ModelProto ({} bytes)", path, size);
  }

  fs::path dir = fs::absolute(fs::path(path)).parent_path();
  return finish_loading(std::move(proto), path, dir.string(), false, options);
}

std::unique_ptr<Model> load_model_from_buffer(const void* data, size_t size, const LoadOptions& options) {
  if (size == 0) fail(EPHOST_INVALID_PROTOBUF, "model buffer is empty (0 bytes)");
  if (!data) fail(EPHOST_INVALID_ARGUMENT, "model buffer is NULL but its size is {}", size);
  auto proto = std::make_unique<onnx::ModelProto>();
  parse_model(data, size, "the model buffer", proto.get());
  return finish_loading(std::move(proto), std::string(), options.external_data_folder, true, options);
}

bool infer_shapes_guarded(onnx::ModelProto& proto) {
  // onnx's shape inference trusts that nodes match their schemas (the checker's job) and can crash on
  // ones that do not (a model loaded without the checker, or changed since): verify that much first.
  std::string problem = schema_mismatch(proto);
  if (!problem.empty()) {
    log_warning(fmt::format("shape inference skipped: {}", problem));
    return false;
  }
  // ... and that attributes it uses as indices are in range (model/inference_guards.h).
  install_inference_guards();
  GuardFindings findings;
  try {
    onnx::ShapeInferenceOptions opts(/*check_type=*/false, /*error_mode=*/0, /*data_prop=*/false);
    onnx::shape_inference::InferShapes(proto, onnx::OpSchemaRegistry::Instance(), opts);
  } catch (const std::exception& e) {
    log_warning(fmt::format("shape inference failed, continuing without the shapes it would add: {}", e.what()));
  }
  if (!findings.problems().empty()) {
    const GuardFindings::Problem& first = findings.problems().front();
    fail(EPHOST_INVALID_GRAPH, "{}: {}", describe_nodes_of_type(proto, first.op_type), first.what);
  }
  return true;
}

void infer_model_shapes(Model& model) {
  if (!model.proto) return;
  if (infer_shapes_guarded(*model.proto)) count_shape_inference();
}

}  // namespace ephost
