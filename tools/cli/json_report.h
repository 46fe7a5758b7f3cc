// Renders a JSON report of the library (partition report, plugin report) as readable text without
// depending on its exact schema: scalars as "key: value", arrays of flat objects as tables (one row
// per object, one column per key, in the library's order), nested structures as indented sections.
#pragma once

#include <ostream>
#include <string>

namespace ephost_cli {

// Throws Ephost::Exception (FAIL) when `json_text` is not JSON.
void print_json_report(std::ostream& os, const std::string& json_text, const std::string& title);

}  // namespace ephost_cli
