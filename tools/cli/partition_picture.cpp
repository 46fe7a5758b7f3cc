#include "partition_picture.h"

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "ephost/ephost_cxx_api.h"

namespace ephost_cli {

namespace {

using json = nlohmann::json;

// ColorBrewer Set3: pale enough for black labels. The CPU plugin is grey: it is the fallback, and the
// picture is about what went elsewhere.
const char* const kPalette[] = {"#8dd3c7", "#fdb462", "#bebada", "#fb8072", "#80b1d3",
                                "#b3de69", "#fccde5", "#ffffb3", "#bc80bd", "#ccebc5"};
constexpr const char* kCpuColor = "#e0e0e0";
// Above this many nodes, edges lose their value labels (they would cover the picture).
constexpr size_t kLabelledEdgesUpTo = 80;

// A DOT double-quoted string.
std::string dot_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

std::string text(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

class DotWriter {
 public:
  explicit DotWriter(const json& report) : report_(report) {
    // Nodes that stand in for a rejected EPContext node (INVALID_GRAPH, then the source model's nodes).
    for (const json& c : report.value("ep_contexts", json::array()))
      if (c.value("fell_back", false))
        for (const json& n : c.value("fallback_node_names", json::array()))
          if (n.is_string()) fallback_for_[n.get<std::string>()] = text(c, "node");
    size_t next = 0;
    for (const json& p : report.value("providers", json::array())) {
      const std::string name = text(p, "name");
      colors_[name] = name == "cpu" ? kCpuColor : kPalette[next++ % std::size(kPalette)];
    }
  }

  std::string write() {
    out_ << "digraph partition {\n"
         << "  rankdir=TB; newrank=true; fontname=\"Helvetica\"; fontsize=11;\n"
         << "  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\", fontsize=10];\n"
         << "  edge [fontname=\"Helvetica\", fontsize=8, color=\"#606060\"];\n";
    legend();
    const json graphs = report_.value("graphs", json::array());
    for (size_t g = 0; g < graphs.size(); ++g) graph(graphs[g], g);
    out_ << "}\n";
    return out_.str();
  }

 private:
  const std::string& color(const std::string& provider) {
    auto it = colors_.find(provider);
    if (it == colors_.end()) it = colors_.emplace(provider, kPalette[colors_.size() % std::size(kPalette)]).first;
    return it->second;
  }

  void legend() {
    const json counts = report_.value("nodes_per_provider", json::object());
    out_ << "  subgraph cluster_legend {\n    label=\"providers\"; style=dashed; color=\"#a0a0a0\";\n";
    size_t i = 0;
    for (const json& p : report_.value("providers", json::array())) {
      const std::string name = text(p, "name");
      std::string label = name;
      if (p.contains("device") && p["device"].is_object()) label += " (" + text(p["device"], "label") + ")";
      label += "\n" + std::to_string(counts.value(name, 0)) + " nodes";
      out_ << "    legend_" << i++ << " [label=" << dot_string(label) << ", fillcolor=" << dot_string(color(name)) << "];\n";
    }
    // Copies each run makes (red edges) apart from constants uploaded once when the session starts.
    size_t per_run = 0, once = 0;
    for (const json& g : report_.value("graphs", json::array()))
      for (const json& c : g.value("copies", json::array())) (text(c, "when") == "every run" ? per_run : once)++;
    std::string copies = std::to_string(per_run) + " copies per run (red)";
    if (once > 0) copies += "\n" + std::to_string(once) + " constants uploaded once";
    out_ << "    legend_copies [shape=plaintext, style=\"\", label=" << dot_string(copies) << "];\n  }\n";
  }

  void graph(const json& g, size_t gi) {
    const std::string prefix = "g" + std::to_string(gi) + "_";
    const bool sub = !g.value("parent_node", json()).is_null();
    const std::string indent = sub ? "    " : "  ";
    if (sub)
      out_ << "  subgraph cluster_" << prefix << " {\n    label="
           << dot_string("subgraph " + text(g, "graph") + " of node " + text(g, "parent_node"))
           << "; style=dotted; color=\"#808080\";\n";

    const json nodes = g.value("nodes", json::array());
    const bool labelled = nodes.size() <= kLabelledEdgesUpTo;
    // Who makes each value, and which step (group or node) each node runs in.
    std::map<std::string, std::string> producer;
    std::vector<std::string> step_of(nodes.size());
    for (size_t k = 0; k < nodes.size(); ++k) {
      for (const json& o : nodes[k].value("outputs", json::array()))
        if (o.is_string() && !o.get<std::string>().empty()) producer[o.get<std::string>()] = prefix + "n" + std::to_string(k);
      const json group = nodes[k].value("fused_group", json());
      step_of[k] = group.is_string() ? group.get<std::string>() : text(nodes[k], "node");
    }
    // Copies: (value, consumer step) -> "from -> to".
    std::map<std::pair<std::string, std::string>, std::string> copies;
    for (const json& c : g.value("copies", json::array()))
      for (const json& consumer : c.value("consumers", json::array()))
        copies[{text(c, "value"), consumer.is_string() ? consumer.get<std::string>() : ""}] =
            text(c, "from") + " \xe2\x86\x92 " + text(c, "to");

    // Graph inputs and outputs.
    std::set<std::string> inputs;
    for (const json& i : g.value("inputs", json::array())) {
      const std::string name = i.get<std::string>();
      inputs.insert(name);
      out_ << indent << dot_string(prefix + "in_" + name) << " [shape=ellipse, style=\"\", label=" << dot_string(name) << "];\n";
    }
    // Nodes, fused groups as boxes of their own.
    std::map<std::string, std::vector<size_t>> groups;
    for (size_t k = 0; k < nodes.size(); ++k) {
      const json group = nodes[k].value("fused_group", json());
      if (group.is_string()) groups[group.get<std::string>()].push_back(k);
    }
    std::set<size_t> drawn;
    size_t cluster = 0;
    for (const auto& [name, members] : groups) {
      const std::string provider = text(nodes[members.front()], "provider");
      out_ << indent << "subgraph cluster_" << prefix << "f" << cluster++ << " {\n"
           << indent << "  label=" << dot_string(name + " (" + provider + ")") << "; style=\"rounded,dashed\"; color="
           << dot_string(color(provider)) << "; penwidth=2;\n";
      for (size_t k : members) {
        node(nodes[k], prefix + "n" + std::to_string(k), indent + "  ");
        drawn.insert(k);
      }
      out_ << indent << "}\n";
    }
    for (size_t k = 0; k < nodes.size(); ++k)
      if (!drawn.count(k)) node(nodes[k], prefix + "n" + std::to_string(k), indent);

    // Edges: producer (or graph input) -> consumer, red where the value is copied on the way.
    for (size_t k = 0; k < nodes.size(); ++k) {
      std::set<std::string> seen;  // a node reading one value twice gets one edge
      for (const json& in : nodes[k].value("inputs", json::array())) {
        if (!in.is_string() || in.get<std::string>().empty()) continue;
        const std::string value = in.get<std::string>();
        if (!seen.insert(value).second) continue;
        std::string from;
        if (auto p = producer.find(value); p != producer.end()) from = p->second;
        else if (inputs.count(value)) from = prefix + "in_" + value;
        else continue;  // initializers and outer-scope values: not drawn
        const std::string to = prefix + "n" + std::to_string(k);
        edge(from, to, value, labelled, copies, step_of[k], indent);
      }
    }
    std::map<std::string, std::string> copied_out;
    for (const json& c : g.value("outputs_copied_to_host", json::array()))
      copied_out[text(c, "value")] = text(c, "from") + " \xe2\x86\x92 host";
    for (const json& o : g.value("outputs", json::array())) {
      const std::string name = o.get<std::string>();
      out_ << indent << dot_string(prefix + "out_" + name) << " [shape=ellipse, style=\"\", label=" << dot_string(name) << "];\n";
      std::string from;
      if (auto p = producer.find(name); p != producer.end()) from = p->second;
      else if (inputs.count(name)) from = prefix + "in_" + name;
      else continue;
      std::map<std::pair<std::string, std::string>, std::string> out_copy;
      if (auto c = copied_out.find(name); c != copied_out.end()) out_copy[{name, ""}] = c->second;
      edge(from, prefix + "out_" + name, name, false, out_copy, "", indent);
    }
    if (sub) out_ << "  }\n";
  }

  void node(const json& n, const std::string& id, const std::string& indent) {
    const std::string provider = text(n, "provider");
    const std::string op = text(n, "op_type");
    std::string label = text(n, "node") + "\n" + op;
    if (n.contains("device") && n["device"].is_string()) label += "\n@" + n["device"].get<std::string>();
    std::string tooltip = op + " on " + provider, extra;
    if (op == "EPContext") {
      // A cached compiled context the provider loaded: drawn as a stack (a precompiled part).
      label += "\n(cached context)";
      extra = ", shape=box3d, style=filled, penwidth=1.5";
    }
    if (auto f = fallback_for_.find(text(n, "node")); f != fallback_for_.end()) {
      label += "\nfallback for " + f->second;
      tooltip += "; runs because EPContext node " + f->second + " was rejected (INVALID_GRAPH)";
      extra = ", style=\"rounded,filled,dashed\", color=\"#d62728\", penwidth=1.5";
    }
    out_ << indent << dot_string(id) << " [label=" << dot_string(label) << ", fillcolor=" << dot_string(color(provider))
         << ", tooltip=" << dot_string(tooltip) << extra << "];\n";
  }

  void edge(const std::string& from, const std::string& to, const std::string& value, bool labelled,
            const std::map<std::pair<std::string, std::string>, std::string>& copies, const std::string& step,
            const std::string& indent) {
    out_ << indent << dot_string(from) << " -> " << dot_string(to);
    auto c = copies.find({value, step});
    if (c != copies.end())
      out_ << " [color=\"#d62728\", penwidth=2.2, fontcolor=\"#d62728\", label=" << dot_string("copy " + value + "\n" + c->second)
           << "]";
    else if (labelled)
      out_ << " [label=" << dot_string(value) << "]";
    else
      out_ << " [tooltip=" << dot_string(value) << "]";
    out_ << ";\n";
  }

  const json& report_;
  std::map<std::string, std::string> colors_;
  std::map<std::string, std::string> fallback_for_;  // node -> the rejected EPContext node it replaces
  std::ostringstream out_;
};

void write_text(const std::string& path, const std::string& content) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << content;
  out.close();
  if (!out) throw Ephost::Exception(EPHOST_FAIL, "cannot write " + path);
}

std::string shell_quoted(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace

std::string partition_dot(const nlohmann::json& report) { return DotWriter(report).write(); }

void write_partition_picture(const nlohmann::json& report, const std::string& path, const std::string& format) {
  const std::string dot = partition_dot(report);
  const std::string ext = format.empty() ? std::filesystem::path(path).extension().string() : "." + format;
  if (ext != ".svg" && ext != ".png" && ext != ".pdf") {
    write_text(path, dot);
    return;
  }
  const std::string dot_path = path + ".dot";
  write_text(dot_path, dot);
  const std::string command = "dot -T" + ext.substr(1) + " -o " + shell_quoted(path) + " " + shell_quoted(dot_path) + " 2>&1";
  const int status = std::system(command.c_str());
  const bool missing = WIFEXITED(status) && WEXITSTATUS(status) == 127;
  if (status != 0) {
    if (missing)
      throw Ephost::Exception(EPHOST_FAIL, "drawing " + path + " needs graphviz's `dot` (apt-get install graphviz); "
                                           "the graph description is in " + dot_path +
                                           " (--dot FILE.dot writes only that)");
    throw Ephost::Exception(EPHOST_FAIL, "graphviz's `dot` failed to draw " + path + " from " + dot_path);
  }
  std::filesystem::remove(dot_path);
}

}  // namespace ephost_cli
