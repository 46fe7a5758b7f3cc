// Shared by the EPContext unit tests (epcontext_*_test.cpp): a small network the example EP
// (samples/example_ep) compiles into two partitions, Envs on each example build (SDK 1.0.0, 2.0.0,
// 1.1.0), providers made straight from a registry (no session), hand-made EPContext nodes, and
// helpers that read what generation wrote.
#pragma once

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "discovery/plugin_record.h"
#include "epcontext/context_binary.h"
#include "graph/graph.h"
#include "model/loader.h"
#include "model_builders.h"
#include "provider/provider.h"
#include "env/env.h"
#include "session/session.h"
#include "test_paths.h"

namespace epctx_test {

namespace fs = std::filesystem;
using ephost_test::TempDir;

inline std::vector<float> pattern(size_t n, float scale, float phase) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = scale * std::sin(0.37f * static_cast<float>(i) + phase);
  return v;
}

// x[1,3,8,8] -> Conv(w1) conv1 -> Relu relu1 -> Sigmoid sigmoid -> Conv(w2) conv2 -> Add(bias) add -> y[1,4,8,8].
// With claim=Conv,Relu,Add the example EP compiles {conv1, relu1} and {conv2, add}; the Sigmoid stays
// on the CPU plugin. `variant` changes w2 and bias only (w1 is common: weight sharing has something to share).
inline onnx::ModelProto conv_net(int variant = 0) {
  using namespace ephost_test;
  onnx::ModelProto m = make_model(13);
  auto* g = m.mutable_graph();
  g->set_name("net");
  add_input(g, "x", kFloat, {1, 3, 8, 8});
  add_output(g, "y", kFloat, {1, 4, 8, 8});
  add_initializer(g, float_tensor("w1", {16, 3, 3, 3}, pattern(16 * 27, 0.3f, 0.0f)));
  add_initializer(g, float_tensor("w2", {4, 16, 3, 3}, pattern(4 * 16 * 9, 0.2f, 1.0f + static_cast<float>(variant))));
  add_initializer(g, float_tensor("bias", {1, 4, 1, 1}, {0.1f, -0.2f, 0.3f, 0.05f * static_cast<float>(variant)}));
  attr_ints(add_node(g, "Conv", {"x", "w1"}, {"c1"}, "conv1"), "pads", {1, 1, 1, 1});
  add_node(g, "Relu", {"c1"}, {"r1"}, "relu1");
  add_node(g, "Sigmoid", {"r1"}, {"s1"}, "sigmoid");
  attr_ints(add_node(g, "Conv", {"s1", "w2"}, {"c2"}, "conv2"), "pads", {1, 1, 1, 1});
  add_node(g, "Add", {"c2", "bias"}, {"y"}, "add");
  return m;
}

inline std::string write_model(const onnx::ModelProto& m, const std::string& path) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  m.SerializeToOstream(&out);
  return path;
}

inline onnx::ModelProto read_model(const std::string& path) {
  onnx::ModelProto m;
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(m.ParseFromIstream(&in)) << path;
  return m;
}

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
  ASSERT_TRUE(out.good()) << "cannot write " << path;
}

inline std::set<std::string> files_in(const std::string& dir) {
  std::set<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.insert(e.path().filename().string());
  return out;
}

inline std::vector<const onnx::NodeProto*> context_nodes(const onnx::ModelProto& m) {
  std::vector<const onnx::NodeProto*> out;
  for (const auto& n : m.graph().node())
    if (n.op_type() == "EPContext") out.push_back(&n);
  return out;
}

inline std::vector<std::string> node_names(const onnx::ModelProto& m) {
  std::vector<std::string> out;
  for (const auto& n : m.graph().node()) out.push_back(n.name());
  return out;
}

inline const onnx::AttributeProto* attr(const onnx::NodeProto& n, const std::string& name) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}
inline std::string attr_s(const onnx::NodeProto& n, const std::string& name) {
  const auto* a = attr(n, name);
  return a ? a->s() : "<absent>";
}
inline int64_t attr_i(const onnx::NodeProto& n, const std::string& name) {
  const auto* a = attr(n, name);
  return a ? a->i() : -999;
}

inline std::string metadata(const onnx::ModelProto& m, const std::string& key) {
  std::string out = "<absent>";
  int found = 0;
  for (const auto& kv : m.metadata_props())
    if (kv.key() == key) {
      out = kv.value();
      ++found;
    }
  EXPECT_LE(found, 1) << "metadata key '" << key << "' appears " << found << " times";
  return out;
}

// Envs on each example build, alone in their folders (one per process: discovery runs once).
inline ephost::Env& env_on(const std::string& dir) {
  static std::map<std::string, std::unique_ptr<ephost::Env>> envs;
  auto& e = envs[dir];
  if (!e) {
    std::vector<std::string> dirs{dir};
    e = std::make_unique<ephost::Env>(EPHOST_LOG_ERROR, &dirs);
  }
  return *e;
}
inline ephost::Env& example_env() { return env_on(EPHOST_EXAMPLE_PLUGIN_DIR); }           // SDK 1.0.0
inline ephost::Env& example_sdk2_env() { return env_on(EPHOST_EXAMPLE_SDK2_PLUGIN_DIR); }  // SDK 2.0.0
inline ephost::Env& example_sdk1_1_env() { return env_on(EPHOST_EXAMPLE_SDK1_1_PLUGIN_DIR); }  // SDK 1.1.0
// The test plugin "alpha" (source keys ALPHA, AlphaExecutionProvider; no context_judge, no context_load).
inline ephost::Env& alpha_env() {
  static std::unique_ptr<ephost::Env> e = [] {
    std::vector<std::string> none;
    auto env = std::make_unique<ephost::Env>(EPHOST_LOG_ERROR, &none);
    const ephost::PluginRecord& r = env->registry().load_library(std::string(EPHOST_TEST_PLUGIN_DIR) +
                                                                 "/libephost_test_alpha.so");
    EXPECT_TRUE(r.loaded) << r.reason;
    return env;
  }();
  return *e;
}

using Providers = std::vector<std::unique_ptr<ephost::Provider>>;

// Providers of `env`'s plugins `names`, in that order (the example EP claims Conv, Relu and Add).
inline Providers providers_of(ephost::Env& env, const std::vector<std::string>& names) {
  Providers out;
  for (const std::string& name : names) {
    const ephost::PluginRecord* rec = env.registry().find_loaded(name);
    // Lazy loading: a plugin the registry cache knew is loaded when first needed (here).
    if (!rec || !env.registry().ensure_loaded(*rec)) {
      ADD_FAILURE() << "plugin '" << name << "' is not loaded" << (rec ? ": " + rec->skip_reason() : "");
      continue;
    }
    std::vector<std::pair<std::string, std::string>> options;
    if (name == "example") options.emplace_back("claim", "Conv,Relu,Add");
    out.push_back(ephost::create_provider(*rec, options));
  }
  return out;
}

inline ephost::SessionOptions session_options(const std::vector<std::pair<std::string, std::string>>& extra = {}) {
  ephost::SessionOptions o;
  o.set("ep.example.claim", "Conv,Relu,Add");
  for (const auto& kv : extra) o.set(kv.first, kv.second);
  return o;
}

// A session on `model` whose example EP compiles both partitions and writes `<model>_ctx.onnx` (and the
// binary) beside it, as ep.context_enable=1 does.
inline std::unique_ptr<ephost::Session> compile(ephost::Env& env, const std::string& model,
                                                std::vector<std::pair<std::string, std::string>> extra = {}) {
  extra.emplace_back("ep.context_enable", "1");
  return ephost::Session::create_from_file(env, model, session_options(extra));
}

// A Model and the IR built from it (the IR points into the model).
struct BuiltModel {
  std::unique_ptr<ephost::Model> model;
  std::unique_ptr<ephost::Graph> ir;
  const ephost::Node& node(const std::string& name) const {
    for (const auto& n : ir->nodes)
      if (n->name == name) return *n;
    throw std::runtime_error("no node " + name);
  }
  std::vector<const ephost::Node*> contexts() const {
    std::vector<const ephost::Node*> out;
    for (const auto& n : ir->nodes)
      if (n->op_type == "EPContext") out.push_back(n.get());
    return out;
  }
};

inline BuiltModel build(const onnx::ModelProto& m) {
  BuiltModel b;
  b.model = std::make_unique<ephost::Model>();
  *b.model->proto = m;
  b.model->read_header();
  b.ir = ephost::build_graph_ir(*b.model);
  return b;
}

// The attributes of a hand-made EPContext node.
struct ContextSpec {
  ContextSpec(std::string name_, std::string source_ = "EXAMPLE", int64_t main_context_ = 1, int64_t embed_mode_ = 0,
              std::string cache_ = "", std::string partition_name_ = "")
      : name(std::move(name_)),
        source(std::move(source_)),
        main_context(main_context_),
        embed_mode(embed_mode_),
        cache(std::move(cache_)),
        partition_name(std::move(partition_name_)) {}
  std::string name;
  std::string source;
  int64_t main_context;
  int64_t embed_mode;
  std::string cache;           // ep_cache_context: a file (embed_mode 0) or the payload (embed_mode 1)
  std::string partition_name;  // "" leaves it out
  std::string model_filename;  // onnx_model_filename, "" leaves it out
  std::vector<std::string> inputs{"X"};
  std::vector<std::string> outputs;  // default: "<name>_out"
};

inline void add_context_node(onnx::ModelProto& m, const ContextSpec& s) {
  using namespace ephost_test;
  auto* g = m.mutable_graph();
  std::vector<std::string> outputs = s.outputs.empty() ? std::vector<std::string>{s.name + "_out"} : s.outputs;
  onnx::NodeProto* n = add_node(g, "EPContext", s.inputs, outputs, s.name, "com.microsoft");
  attr_int(n, "main_context", s.main_context);
  attr_int(n, "embed_mode", s.embed_mode);
  auto str = [n](const std::string& key, const std::string& v) {
    auto* a = n->add_attribute();
    a->set_name(key);
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s(v);
  };
  if (!s.cache.empty() || s.embed_mode == 1) str("ep_cache_context", s.cache);
  str("source", s.source);
  if (!s.partition_name.empty()) str("partition_name", s.partition_name);
  if (!s.model_filename.empty()) str("onnx_model_filename", s.model_filename);
  if (s.outputs.empty()) add_output(g, outputs[0]);
}

// A model X[2,3] -> the given EPContext nodes (each output a graph output).
inline onnx::ModelProto context_model(const std::vector<ContextSpec>& specs) {
  onnx::ModelProto m = ephost_test::make_model(13);
  auto* op = m.add_opset_import();
  op->set_domain("com.microsoft");
  op->set_version(1);
  ephost_test::add_input(m.mutable_graph(), "X");
  for (const auto& s : specs) add_context_node(m, s);
  return m;
}

inline ephost::Bytes bytes_of(size_t n, uint8_t seed) {
  ephost::Bytes b(n);
  for (size_t i = 0; i < n; ++i) b[i] = static_cast<uint8_t>(seed + i * 31);
  return b;
}

inline ephost::Bytes concat(const std::vector<ephost::Bytes>& pieces) {
  ephost::Bytes out;
  for (const auto& p : pieces) out.insert(out.end(), p.begin(), p.end());
  return out;
}

inline std::string as_string(const ephost::Bytes& b) { return std::string(b.begin(), b.end()); }

// A container with graphs name -> pieces, serialized.
inline std::string container(const std::vector<std::pair<std::string, std::vector<ephost::Bytes>>>& graphs) {
  ephost::ContextBinaryBuilder b;
  for (const auto& [name, pieces] : graphs) b.add_graph(name, pieces);
  return as_string(b.serialize());
}

}  // namespace epctx_test
