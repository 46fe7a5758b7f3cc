// `ephost run --memory-svg FILE`: the memory patterns the run recorded (partition report,
// "memory_patterns"), drawn as SVG. One panel per graph and memory block (host, or a device): the
// horizontal axis is the plan's step order, the vertical one the offset in the block, and each
// intermediate value is a rectangle covering its bytes for the steps it is alive. The dashed line is
// the busiest step's live bytes, below which no pattern can go; the gap to the block's top is what
// fragmentation costs. Hovering a rectangle names the value, its size and its steps.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace ephost_cli {

// The SVG document; throws Ephost::Exception (FAIL) when the report holds no memory pattern, saying why
// that may be.
std::string memory_svg(const nlohmann::json& report);

}  // namespace ephost_cli
