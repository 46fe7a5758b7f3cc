// The EPContext nodes of a session's model that could not be used: their plugin judged the context
// unsupported or failed to load it (status INVALID_GRAPH), so the host ran the source model's nodes
// instead, or found no provider for them. libephost logs each at warning level; `ephost run` and
// `ephost test` also print them beside their results, where a user comparing outputs or timings
// looks (a fallback runs slower, on other providers).
#pragma once

#include <string>
#include <vector>

#include "ephost/ephost_cxx_api.h"

namespace ephost_cli {

// One line per unusable context: "EPContext node 'x' (source S, provider P): INVALID_GRAPH: <reason>;
// fell back to N node(s) on the next providers". Empty for an ordinary model.
std::vector<std::string> unusable_context_lines(const Ephost::Session& session);

// With ep.context_rebuild=1: waits (polling the EP-context report) while the background rebuild of a
// rejected cache runs, then says how it ended ("EPContext cache rebuilt: <files>", "... skipped: ...").
// Empty when no rebuild was started.
std::string wait_for_context_rebuild(const Ephost::Session& session);

}  // namespace ephost_cli
