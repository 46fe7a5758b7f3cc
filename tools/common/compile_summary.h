// What an EPContext compile produced, for the compile tools to print: how many EPContext nodes the ctx
// model holds, per provider and how many of the source model's nodes each holds, against the ordinary
// nodes left (run by providers that compile nothing, or that cannot cache what they compile).
//
// Two sources, both public: the compiling session's partition report (provider and fused group of
// every node of the main graph) and the written ctx model (which fused groups became EPContext nodes:
// each EPContext node carries its group's name).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "ephost/ephost_cxx_api.h"

namespace ephost_cli {

struct CompileSummary {
  struct Provider {
    std::string name;
    size_t context_nodes = 0;   // EPContext nodes it emitted
    size_t compiled_nodes = 0;  // source nodes those hold
    size_t ordinary_nodes = 0;  // nodes it runs that stay ordinary nodes of the ctx model
  };
  size_t context_nodes = 0;   // EPContext nodes of the ctx model
  size_t ordinary_nodes = 0;  // its other nodes
  std::vector<Provider> providers;  // the session's providers, in priority order
};

// Throws Ephost::Exception when the report or the ctx model cannot be read.
CompileSummary summarize_compile(const Ephost::Session& session, const std::string& ctx_path);

// "EPContext nodes: 2 (example: 2, holding 17 nodes)" and "ordinary nodes: 3 (cpu: 3)".
std::vector<std::string> describe_compile(const CompileSummary& summary);

}  // namespace ephost_cli
