#include "epcontext/context_generation.h"

#include <algorithm>
#include <onnx/checker.h>
#include <onnx/onnx_pb.h>

#include <boost/filesystem.hpp>
#include <map>
#include <set>
#include <unordered_set>
#include <utility>

#include "plugin_abi/handles.h"
#include "core/atomic_file.h"
#include "core/device.h"
#include "core/error.h"
#include "core/log.h"
#include "discovery/plugin_record.h"
#include "epcontext/binary_ownership.h"
#include "epcontext/context_binary.h"
#include "epcontext/context_schema.h"
#include "graph/type_proto.h"
#include "model/loader.h"

namespace ephost {
namespace fs = boost::filesystem;
namespace {

std::string strip_suffix(const std::string& s, const std::string& suffix) {
  if (s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0)
    return s.substr(0, s.size() - suffix.size());
  return s;
}

// "<folder>/model.onnx" -> "model" (ONNX Runtime replaces ".onnx" in the file name).
std::string model_stem(const std::string& path) {
  std::string name = fs::path(path).filename().string();
  std::string stem = strip_suffix(name, ".onnx");
  return stem == name ? fs::path(path).stem().string() : stem;
}

void set_int(onnx::NodeProto& node, const char* name, int64_t v) {
  auto* a = node.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}
void set_string(onnx::NodeProto& node, const char* name, const std::string& v) {
  auto* a = node.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(v);
}

// The initializers of a copied subgraph lost their bytes when the IR took them
// (release_initializer_data): put them back from the IR, recursively.
void restore_subgraph_initializers(onnx::NodeProto& node, const Node& ir_node);

void restore_graph(onnx::GraphProto& g, const Graph& ir) {
  for (auto& init : *g.mutable_initializer()) {
    const Value* v = ir.find(init.name());
    if (v && v->initializer) {
      v->initializer->ensure_data();  // freed once its readers packed it: read back for the file
      tensor_to_proto(*v->initializer, init.name(), &init);
    }
  }
  for (int i = 0; i < g.node_size() && static_cast<size_t>(i) < ir.nodes.size(); ++i)
    restore_subgraph_initializers(*g.mutable_node(i), *ir.nodes[static_cast<size_t>(i)]);
}

void restore_subgraph_initializers(onnx::NodeProto& node, const Node& ir_node) {
  for (auto& a : *node.mutable_attribute())
    if (a.has_g())
      if (const Graph* sub = ir_node.subgraph(a.name())) restore_graph(*a.mutable_g(), *sub);
}

// Moves every initializer's bytes (main graph and subgraphs) into one external data file.
class ExternalInitializerWriter {
 public:
  explicit ExternalInitializerWriter(std::string location) : location_(std::move(location)) {}
  void move_graph(onnx::GraphProto& g) {
    for (auto& t : *g.mutable_initializer()) move(t);
    for (auto& n : *g.mutable_node())
      for (auto& a : *n.mutable_attribute())
        if (a.has_g()) move_graph(*a.mutable_g());
  }
  const std::string& bytes() const { return bytes_; }

 private:
  void move(onnx::TensorProto& t) {
    if (t.data_type() == onnx::TensorProto::STRING || !t.has_raw_data()) return;  // strings stay inline
    while (bytes_.size() % 64) bytes_.push_back('\0');  // aligned, so the file can be mapped
    const size_t offset = bytes_.size();
    bytes_ += t.raw_data();
    const size_t length = t.raw_data().size();
    t.clear_raw_data();
    t.set_data_location(onnx::TensorProto::EXTERNAL);
    auto add = [&](const char* k, const std::string& v) {
      auto* e = t.add_external_data();
      e->set_key(k);
      e->set_value(v);
    };
    add("location", location_);
    add("offset", std::to_string(offset));
    add("length", std::to_string(length));
  }
  std::string location_;
  std::string bytes_;
};

// "<name>;version=...;sdk_version=...;hardware_architecture=...;driver_version=..." as ONNX Runtime's
// sample EP records compatibility info (metadata ep_compatibility_info.<plugin>). For a provider on a
// device (plugin ABI 3) the hardware architecture and driver are the device's, found at run time, and
// the device is named too: what the cached contexts were compiled for.
std::string compatibility_info(const Provider& p) {
  std::string own = p.compiled_model_compatibility_info();
  if (!own.empty()) return own;
  const PluginRecord& r = p.record();
  const Device* d = p.device();
  const std::string& arch = d && !d->hardware_architecture().empty() ? d->hardware_architecture() : r.hardware_architecture;
  const std::string& driver = d && !d->driver_version().empty() ? d->driver_version() : r.driver_version;
  std::string s = r.name + ";version=" + r.version;
  if (!r.sdk_version.empty()) s += ";sdk_version=" + r.sdk_version;
  if (!arch.empty()) s += ";hardware_architecture=" + arch;
  if (!driver.empty()) s += ";driver_version=" + driver;
  if (d) s += ";device=" + d->name();
  return s;
}

std::string attribute_or(const EphostContextSink& sink, const std::string& key, const std::string& fallback) {
  for (const auto& kv : sink.attributes)
    if (kv.first == key) return kv.second;
  return fallback;
}

// Path of `file` relative to folder `base`, refusing one that would leave it (loading refuses `..`).
std::string relative_inside(const std::string& file, const std::string& base) {
  fs::path rel = fs::path(file).lexically_relative(fs::path(base));
  if (rel.empty() || *rel.begin() == "..")
    fail(EPHOST_INVALID_ARGUMENT,
         "the shared context binary '{}' is not inside the folder of this ctx model ('{}'); the models of a "
         "weight-sharing group must write their ctx models into one folder (set ep.context_file_path)",
         file, base);
  return rel.generic_string();
}

struct EmittedGroup {
  const CompiledStep* step = nullptr;
  EphostContextSink sink;
};

}  // namespace

GenerationSettings read_generation_settings(const EpContextOptions& options, const std::string& model_path) {
  GenerationSettings s;
  s.enabled = options.enable;
  if (!s.enabled) return s;
  s.embed = options.embed;
  s.node_prefix = options.node_prefix;
  s.external_initializers_file = options.external_initializers_file;
  s.overwrite = options.overwrite;
  s.share = options.share;
  s.stop_share = options.stop_share;
  s.ctx_path = options.file_path;
  if (s.ctx_path.empty()) {
    if (model_path.empty())
      fail(EPHOST_INVALID_ARGUMENT,
           "ep.context_enable=1 on a model loaded from a buffer needs ep.context_file_path: the host cannot know "
           "where the ctx model goes (set it, e.g. to \"model_ctx.onnx\")");
    fs::path p(model_path);
    s.ctx_path = (p.parent_path() / (model_stem(model_path) + "_ctx.onnx")).string();
  }
  if (fs::is_directory(s.ctx_path))
    fail(EPHOST_INVALID_ARGUMENT, "ep.context_file_path '{}' is a folder; it must name the ctx model file",
         s.ctx_path);
  if (!model_path.empty()) {
    s.model_name = model_stem(model_path);
    s.source_model_filename = fs::path(model_path).filename().string();
    boost::system::error_code ec;
    if (fs::equivalent(fs::path(model_path), fs::path(s.ctx_path), ec))
      fail(EPHOST_INVALID_ARGUMENT, "ep.context_file_path '{}' is the source model itself", s.ctx_path);
  } else {
    // A buffer has no name: the source is the ctx model's name without "_ctx", or what the user says.
    const std::string& source = options.source_model_path;
    s.source_model_filename =
        source.empty() ? strip_suffix(model_stem(s.ctx_path), "_ctx") + ".onnx" : fs::path(source).filename().string();
    s.model_name = model_stem(s.source_model_filename);
  }
  if (s.embed && s.share)
    fail(EPHOST_INVALID_ARGUMENT,
         "ep.share_ep_contexts=1 shares one context binary between models, which needs ep.context_embed_mode=0");
  if (!s.external_initializers_file.empty()) {
    const fs::path e(s.external_initializers_file);
    if (e.is_absolute() || e.filename() != e)
      fail(EPHOST_INVALID_ARGUMENT,
           "ep.context_model_external_initializers_file_name '{}' must be a file name (it is written beside the "
           "ctx model)",
           s.external_initializers_file);
  }
  boost::system::error_code ec;
  if (!s.overwrite && fs::exists(s.ctx_path, ec))
    fail(EPHOST_FAIL,
         "the EPContext model '{}' exists already; remove it, or set ep.context_overwrite=1 (ephost compile "
         "--force) to generate it again",
         s.ctx_path);
  return s;
}

namespace {

// A provider's context binary (embed mode 0): one per provider, or a weight-sharing group's.
struct Binary {
  std::string path;        // absolute
  std::string reference;   // what ep_cache_context records
  bool write_now = true;
  bool replaces_orphan = false;  // an earlier, interrupted compile left it, and no model uses it
  ContextBinaryBuilder local;
  ContextBinaryBuilder* builder = &local;
};

// Removes the files a failed write created, so that no binary or weights file is left without its
// ctx model. A weight-sharing group's binary stays (the group's earlier ctx models refer to it).
struct RemoveOnFailure {
  std::vector<std::string> created;
  bool done = false;
  ~RemoveOnFailure() {
    boost::system::error_code ec;
    if (!done)
      for (const std::string& path : created) fs::remove(path, ec);
  }
};

// One generation of a ctx model: each step of generate_context_model is one method, in call order.
class ContextModelGeneration {
 public:
  ContextModelGeneration(const GenerationSettings& settings, const Model& model, const GraphExecutor& main,
                         ContextShareRegistry& shared)
      : settings_(settings),
        src_(*model.proto),
        main_(main),
        graph_(main.graph()),
        shared_(shared),
        ctx_dir_(fs::absolute(fs::path(settings.ctx_path)).parent_path()) {
    result_.ctx_path = settings.ctx_path;
  }

  GenerationResult run() {
    emit_contexts();
    std::unique_lock<std::mutex> share_lock;
    if (settings_.share) share_lock = shared_.lock();
    if (!settings_.embed) open_binaries();
    start_model();
    add_nodes();
    add_initializers_and_value_info();
    add_metadata();
    check_model();
    std::string serialized = serialize();
    write_files(serialized);
    return std::move(result_);
  }

 private:
  // Asks each compiling provider for the context of each group it compiled, in execution order.
  void emit_contexts() {
    // Ids past the compiled steps are the host's copy steps between devices (plugin ABI 3): nothing to cache.
    for (int id : main_.execution_plan().order)
      if (static_cast<size_t>(id) < main_.steps().size())
        ordered_.push_back(main_.steps()[static_cast<size_t>(id)].get());
    std::set<std::string> silent;
    for (const CompiledStep* step : ordered_) {
      if (!step->fused) continue;
      const Provider& p = *step->provider;
      if (!p.emits_contexts()) {
        if (silent.insert(p.name()).second)
          log_info(fmt::format("EPContext: provider '{}' cannot cache what it compiles (no context_emit); its groups "
                               "stay ordinary nodes and are compiled again when the ctx model is loaded",
                               p.name()));
        continue;
      }
      auto group = std::make_unique<EmittedGroup>();
      group->step = step;
      p.emit_context(step->name, group->sink);
      if (group->sink.pieces.empty())
        fail(EPHOST_EP_FAIL, "provider '{}' context_emit for '{}' handed the host no bytes", p.name(), step->name);
      if (std::find(provider_order_.begin(), provider_order_.end(), &p) == provider_order_.end())
        provider_order_.push_back(&p);
      emitted_[step] = std::move(group);
    }
  }

  // One binary per provider (shared across sessions with ep.share_ep_contexts); refuses to replace one
  // a ctx model uses.
  void open_binaries() {
    for (const Provider* p : provider_order_) {
      Binary& b = binaries_[p];
      b.path = (ctx_dir_ / (settings_.model_name + "_" + p->name() + ".bin")).string();
      if (settings_.share) {
        ContextShareRegistry::Generation* g = shared_.generation(p->name());
        if (!g) g = &shared_.open_generation(p->name(), b.path, settings_.model_name);
        b.path = g->bin_path;
        b.builder = &g->builder;
        b.write_now = settings_.stop_share;
      }
      b.reference = relative_inside(b.path, ctx_dir_.string());
      if (b.write_now && !settings_.overwrite && fs::exists(b.path)) {
        const std::string user = model_using_binary(b.path, ctx_dir_.string());
        if (!user.empty())
          fail(EPHOST_FAIL, "the context binary '{}' exists already and ctx model '{}' uses it; remove them, or set "
               "ep.context_overwrite=1 (ephost compile --force)", b.path, user);
        log_warning(fmt::format("EPContext: '{}' belongs to no ctx model (a compile was interrupted before writing "
                                "its model): replacing it", b.path));
        b.replaces_orphan = true;
      }
    }
  }

  // The new model's header and graph signature, copied from the source model.
  void start_model() {
    out_ = std::make_unique<onnx::ModelProto>();
    out_->set_ir_version(std::max<int64_t>(src_.ir_version(), 7));
    for (const auto& op : src_.opset_import())
      if (op.domain() != epctx::kDomain) *out_->add_opset_import() = op;
    out_->set_producer_name("ephost");
    out_->set_producer_version(EPHOST_VERSION);
    if (src_.has_domain()) out_->set_domain(src_.domain());
    if (src_.has_model_version()) out_->set_model_version(src_.model_version());
    if (src_.has_doc_string()) out_->set_doc_string(src_.doc_string());
    for (const auto& f : src_.functions()) *out_->add_functions() = f;
    g_ = out_->mutable_graph();
    const onnx::GraphProto& sg = src_.graph();
    g_->set_name(settings_.node_prefix + sg.name());
    if (sg.has_doc_string()) g_->set_doc_string(sg.doc_string());
    *g_->mutable_input() = sg.input();
    *g_->mutable_output() = sg.output();
    for (const auto& vi : sg.input()) typed_.insert(vi.name());
    for (const auto& vi : sg.output()) typed_.insert(vi.name());
  }

  // In execution order: an EPContext node per emitted group, the group's nodes or the single node otherwise.
  void add_nodes() {
    for (const CompiledStep* step : ordered_) {
      auto it = emitted_.find(step);
      if (it != emitted_.end()) {
        add_context_node(*step, it->second->sink);
      } else if (step->fused) {
        for (const Node* n : step->view->nodes) keep_node(*n);
      } else {
        keep_node(*step->node);
      }
    }
  }

  void keep_node(const Node& n) {
    onnx::NodeProto& copy = *g_->add_node();
    copy = *n.proto;
    restore_subgraph_initializers(copy, n);
    for (const Value* v : n.inputs)
      if (v && v->owner == &graph_ && v->initializer) needed_initializers_.insert(v);
    for (const Value* v : n.implicit_inputs)
      if (v && v->owner == &graph_ && v->initializer) needed_initializers_.insert(v);
    ++result_.ordinary_nodes;
  }

  void add_context_node(const CompiledStep& step, const EphostContextSink& sink) {
    const Provider& p = *step.provider;
    const PluginRecord& rec = p.record();
    onnx::NodeProto& node = *g_->add_node();
    node.set_op_type(epctx::kOpType);
    node.set_domain(epctx::kDomain);
    node.set_name(step.name);
    for (const Value* v : step.view->inputs)
      if (!v->is_constant_initializer()) node.add_input(v->name);
    for (const Value* v : step.view->outputs) {
      node.add_output(v->name);
      onnx::TypeProto type;
      if (typed_.insert(v->name).second && type_proto_from_info(v->type, &type)) {
        auto* vi = g_->add_value_info();
        vi->set_name(v->name);
        *vi->mutable_type() = std::move(type);
      }
    }
    // A graph input with a default (an initializer that is also an input) stays an input.
    for (const Value* v : step.view->inputs)
      if (v->initializer && v->is_graph_input) needed_initializers_.insert(v);
    if (settings_.embed) {
      ContextBinaryBuilder payload;
      payload.add_graph(step.name, sink.pieces);
      Bytes bytes = payload.serialize();
      set_int(node, epctx::kMainContext, 1);
      set_string(node, epctx::kCacheContext, std::string(bytes.begin(), bytes.end()));
      set_int(node, epctx::kEmbedMode, 1);
    } else {
      Binary& b = binaries_.at(&p);
      b.builder->add_graph(step.name, sink.pieces);
      // One binary per provider: its first node is the main context, the others find their graph in it.
      const bool is_main = !main_written_[&p];
      main_written_[&p] = true;
      set_int(node, epctx::kMainContext, is_main ? 1 : 0);
      set_string(node, epctx::kCacheContext, is_main ? b.reference : "");
      set_int(node, epctx::kEmbedMode, 0);
    }
    set_string(node, epctx::kSdkVersion, attribute_or(sink, "ep_sdk_version", rec.sdk_version));
    set_string(node, epctx::kModelFilename, settings_.source_model_filename);
    const Device* device = p.device();
    set_string(node, epctx::kHardwareArchitecture,
               attribute_or(sink, "hardware_architecture",
                            device && !device->hardware_architecture().empty() ? device->hardware_architecture()
                                                                               : rec.hardware_architecture));
    set_string(node, epctx::kPartitionName, step.name);
    // The provider's first source key, or another of its keys the provider named (the adapter does for the
    // EPs of an ONNX Runtime library's later factories; plugins cannot set it through context_set_attribute).
    const std::string own_key = rec.context_source_keys.empty() ? rec.name : rec.context_source_keys.front();
    const std::string named = attribute_or(sink, epctx::kSource, own_key);
    const bool is_key = std::find(rec.context_source_keys.begin(), rec.context_source_keys.end(), named) !=
                        rec.context_source_keys.end();
    set_string(node, epctx::kSource, is_key ? named : own_key);
    const std::string notes = attribute_or(sink, "notes", "");
    if (!notes.empty()) set_string(node, epctx::kNotes, notes);
    const std::string max_size = attribute_or(sink, "max_size", "");
    if (!max_size.empty()) set_int(node, epctx::kMaxSize, std::stoll(max_size));
    ++result_.context_nodes;
  }

  // The initializers the kept nodes read, and what the source knew of the values the new graph still has.
  void add_initializers_and_value_info() {
    std::unordered_set<std::string> produced;
    for (const auto& n : g_->node())
      for (const auto& o : n.output()) produced.insert(o);
    for (const auto& vi : src_.graph().value_info())
      if (!typed_.count(vi.name()) && produced.count(vi.name())) *g_->add_value_info() = vi;
    for (const Value* v : graph_.outputs)
      if (v->initializer) needed_initializers_.insert(v);
    for (const Value* v : graph_.initializers)
      if (needed_initializers_.count(v)) {
        v->initializer->ensure_data();
        tensor_to_proto(*v->initializer, v->name, g_->add_initializer());
      }
  }

  // ONNX Runtime 1.23's compatibility info, one key per provider that cached something.
  void add_metadata() {
    std::set<std::string> keys;
    for (const Provider* p : provider_order_) keys.insert(epctx::kCompatibilityInfoPrefix + p->name());
    for (const auto& kv : src_.metadata_props())
      if (!keys.count(kv.key())) *out_->add_metadata_props() = kv;
    for (const Provider* p : provider_order_) {
      auto* kv = out_->add_metadata_props();
      kv->set_key(epctx::kCompatibilityInfoPrefix + p->name());
      kv->set_value(compatibility_info(*p));
    }
    if (result_.context_nodes > 0) {
      auto* op = out_->add_opset_import();
      op->set_domain(epctx::kDomain);
      op->set_version(epctx::kDomainVersion);
    }
  }

  // Checked before anything is written: a model we would refuse to load must not be written.
  void check_model() const {
    epctx::register_schema();
    try {
      onnx::checker::CheckerContext ctx;
      ctx.set_ir_version(static_cast<int>(out_->ir_version()));
      std::unordered_map<std::string, int> opsets;
      for (const auto& op : out_->opset_import()) opsets[op.domain()] = static_cast<int>(op.version());
      ctx.set_opset_imports(opsets);
      onnx::checker::LexicalScopeContext lex;
      onnx::checker::check_graph(*g_, ctx, lex);
    } catch (const std::exception& e) {
      fail(EPHOST_FAIL, "the generated EPContext model fails onnx::checker (a host bug): {}", e.what());
    }
  }

  // Moves the ordinary nodes' initializers to the external file when one is asked for, serializes the
  // binaries (their checksums recorded in the model, epcontext/binary_ownership.h), then the model.
  std::string serialize() {
    if (!settings_.external_initializers_file.empty()) {
      ExternalInitializerWriter writer(settings_.external_initializers_file);
      writer.move_graph(*g_);
      external_bytes_ = writer.bytes();
    }
    for (auto& [p, b] : binaries_) {
      if (!b.write_now) continue;
      Bytes& bytes = binary_bytes_[p] = b.builder->serialize();
      auto* kv = out_->add_metadata_props();
      kv->set_key(binary_checksum_key(b.reference));
      kv->set_value(binary_checksum(bytes));
    }
    std::string serialized;
    if (out_->ByteSizeLong() > static_cast<size_t>(INT32_MAX))
      fail(EPHOST_FAIL,
           "the EPContext model would exceed protobuf's 2 GiB limit; use ep.context_embed_mode=0 and "
           "ep.context_model_external_initializers_file_name");
    if (!out_->SerializeToString(&serialized)) fail(EPHOST_FAIL, "cannot serialize the EPContext model");
    return serialized;
  }

  // Binaries, external initializers, then the model (a reader that sees the model sees the rest). When a
  // later file cannot be written (e.g. the ctx model appeared meanwhile), the files this call created are
  // removed again.
  void write_files(const std::string& serialized) {
    RemoveOnFailure cleanup;
    auto write = [&](const std::string& path, const void* data, size_t size, bool removable, bool overwrite) {
      boost::system::error_code ec;
      const bool existed = fs::exists(path, ec);
      write_file_atomically(path, data, size, overwrite);
      if (removable && !existed) cleanup.created.push_back(path);
    };
    for (auto& [p, b] : binaries_) {
      if (!b.write_now) continue;
      const Bytes& bytes = binary_bytes_.at(p);
      write(b.path, bytes.data(), bytes.size(), !settings_.share, settings_.overwrite || b.replaces_orphan);
      log_info(fmt::format("EPContext: wrote '{}' ({} bytes, {} graph(s), {} of {} piece bytes after deduplication)",
                           b.path, bytes.size(), b.builder->graph_count(), b.builder->stored_piece_bytes(),
                           b.builder->handed_piece_bytes()));
      result_.files.push_back(b.path);
      if (settings_.share) shared_.close_generation(p->name());
    }
    if (!settings_.external_initializers_file.empty()) {
      std::string path = (ctx_dir_ / settings_.external_initializers_file).string();
      write(path, external_bytes_.data(), external_bytes_.size(), true, settings_.overwrite);
      result_.files.push_back(path);
    }
    write_file_atomically(settings_.ctx_path, serialized.data(), serialized.size(), settings_.overwrite);
    cleanup.done = true;
    result_.files.push_back(settings_.ctx_path);
    log_info(fmt::format("EPContext: wrote '{}': {} EPContext node(s), {} ordinary node(s)", settings_.ctx_path,
                         result_.context_nodes, result_.ordinary_nodes));
  }

  const GenerationSettings& settings_;
  const onnx::ModelProto& src_;
  const GraphExecutor& main_;
  const Graph& graph_;
  ContextShareRegistry& shared_;
  const fs::path ctx_dir_;
  GenerationResult result_;

  std::vector<const CompiledStep*> ordered_;  // the main graph's steps in execution order
  std::map<const CompiledStep*, std::unique_ptr<EmittedGroup>> emitted_;
  std::vector<const Provider*> provider_order_;  // providers with emitted groups, first use first
  std::map<const Provider*, Binary> binaries_;
  std::map<const Provider*, bool> main_written_;

  std::unique_ptr<onnx::ModelProto> out_;
  onnx::GraphProto* g_ = nullptr;
  std::unordered_set<const Value*> needed_initializers_;
  std::set<std::string> typed_;  // values whose type the new graph records
  std::string external_bytes_;
  std::map<const Provider*, Bytes> binary_bytes_;
};

}  // namespace

GenerationResult generate_context_model(const GenerationSettings& settings, const Model& model,
                                        const GraphExecutor& main,
                                        const std::vector<std::unique_ptr<Provider>>& providers,
                                        ContextShareRegistry& shared) {
  (void)providers;  // every provider that compiled a step is reached through the step
  return ContextModelGeneration(settings, model, main, shared).run();
}

}  // namespace ephost
