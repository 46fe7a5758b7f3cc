// `ephost run --dot FILE`: the partition report drawn as a graph (graphviz DOT). Each node is filled
// with its provider's colour, fused groups are boxed with their provider's name, and every copy between
// memory locations is a red edge that says from where to where. FILE ending in .svg, .png or .pdf is
// rendered with graphviz's `dot`; any other name gets the DOT text.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace ephost_cli {

// DOT text for every graph of a partition report (Session::partition_report_json); subgraphs are
// boxes of their own, named after the node that holds them.
std::string partition_dot(const nlohmann::json& report);

// Writes the picture to `path` (see above). Throws Ephost::Exception (FAIL) when the file cannot be
// written or `dot` is missing or fails, saying what to do.
// `format` "svg", "png" or "pdf" renders whatever the name; "" goes by the name's extension.
void write_partition_picture(const nlohmann::json& report, const std::string& path, const std::string& format = "");

}  // namespace ephost_cli
