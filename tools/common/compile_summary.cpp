#include "compile_summary.h"

#include <onnx/onnx_pb.h>

#include <climits>
#include <fstream>
#include <map>
#include <set>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <nlohmann/json.hpp>

#include "tool_errors.h"

namespace ephost_cli {

namespace {

// Names of the EPContext nodes and the count of the other nodes of the ctx model's main graph.
struct CtxModelNodes {
  std::set<std::string> contexts;
  size_t ordinary = 0;
};

CtxModelNodes read_ctx_model_nodes(const std::string& ctx_path) {
  std::ifstream file(ctx_path, std::ios::binary);
  if (!file) throw Ephost::Exception(EPHOST_NO_SUCHFILE, "cannot open the ctx model '" + ctx_path + "'");
  google::protobuf::io::IstreamInputStream stream(&file);
  google::protobuf::io::CodedInputStream input(&stream);
  input.SetTotalBytesLimit(INT_MAX);  // embedded contexts make large models; protobuf's cap is 2 GiB
  onnx::ModelProto model;
  if (!model.ParseFromCodedStream(&input))
    throw Ephost::Exception(EPHOST_INVALID_PROTOBUF, "the ctx model '" + ctx_path + "' is not a readable ONNX model");
  CtxModelNodes out;
  for (const auto& n : model.graph().node()) {
    if (n.op_type() == "EPContext" && n.domain() == "com.microsoft")
      out.contexts.insert(n.name());
    else
      ++out.ordinary;
  }
  return out;
}

std::string plural(size_t n, const std::string& one, const std::string& many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

}  // namespace

CompileSummary summarize_compile(const Ephost::Session& session, const std::string& ctx_path) {
  const std::string text = with_context("partition report", [&] { return session.partition_report_json(); });
  nlohmann::json report = nlohmann::json::parse(text, nullptr, false);
  if (report.is_discarded() || !report.is_object())
    throw Ephost::Exception(EPHOST_FAIL, "the partition report is not a JSON object");

  const CtxModelNodes ctx = read_ctx_model_nodes(ctx_path);
  CompileSummary summary;
  summary.context_nodes = ctx.contexts.size();
  summary.ordinary_nodes = ctx.ordinary;

  std::map<std::string, size_t> index;
  for (const auto& p : report.value("providers", nlohmann::json::array())) {
    const std::string name = p.value("name", "");
    index.emplace(name, summary.providers.size());
    summary.providers.push_back({name});
  }
  std::map<std::string, std::set<std::string>> groups;  // provider -> its groups that became EPContext nodes
  for (const auto& graph : report.value("graphs", nlohmann::json::array())) {
    if (!graph.value("parent_node", nlohmann::json()).is_null()) continue;  // subgraphs live inside nodes
    for (const auto& node : graph.value("nodes", nlohmann::json::array())) {
      const std::string provider = node.value("provider", "");
      auto it = index.find(provider);
      if (it == index.end()) {
        it = index.emplace(provider, summary.providers.size()).first;
        summary.providers.push_back({provider});
      }
      CompileSummary::Provider& p = summary.providers[it->second];
      const nlohmann::json group = node.value("fused_group", nlohmann::json());
      if (group.is_string() && ctx.contexts.count(group.get<std::string>())) {
        ++p.compiled_nodes;
        groups[provider].insert(group.get<std::string>());
      } else {
        ++p.ordinary_nodes;
      }
    }
    break;
  }
  for (auto& p : summary.providers) p.context_nodes = groups[p.name].size();
  return summary;
}

std::vector<std::string> describe_compile(const CompileSummary& summary) {
  std::string contexts, ordinary;
  for (const auto& p : summary.providers) {
    if (p.context_nodes)
      contexts += (contexts.empty() ? "" : ", ") + p.name + ": " + std::to_string(p.context_nodes) + ", holding " +
                  plural(p.compiled_nodes, "node", "nodes");
    if (p.ordinary_nodes) ordinary += (ordinary.empty() ? "" : ", ") + p.name + ": " + std::to_string(p.ordinary_nodes);
  }
  return {"EPContext nodes: " + std::to_string(summary.context_nodes) + (contexts.empty() ? "" : " (" + contexts + ")"),
          "ordinary nodes: " + std::to_string(summary.ordinary_nodes) + (ordinary.empty() ? "" : " (" + ordinary + ")")};
}

}  // namespace ephost_cli
