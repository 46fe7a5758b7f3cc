// Fuzz harness: the EPContext binary container (epcontext/context_binary.h). Parsing must refuse
// anything malformed with INVALID_GRAPH, and every graph of a container that parsed must assemble;
// a container rebuilt from those graphs must parse back to the same bytes.
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "core/error.h"
#include "epcontext/context_binary.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto bytes = std::make_shared<const ephost::Bytes>(data, data + size);
  try {
    ephost::ContextBinary binary = ephost::ContextBinary::parse(bytes, "fuzzed context binary");
    const std::vector<std::string> names = binary.graph_names();
    if (binary.raw()) {
      if (binary.assemble(binary.resolve("any")) != *bytes) std::abort();  // raw payloads pass through
      return 0;
    }
    ephost::ContextBinaryBuilder builder;
    for (const std::string& name : names) {
      if (binary.resolve(name) != name) std::abort();
      builder.add_graph(name, {binary.assemble(name)});
    }
    if (binary.resolve("\x01 no such graph") != "" && !binary.has_graph("\x01 no such graph")) std::abort();
    auto rebuilt = std::make_shared<const ephost::Bytes>(builder.serialize());
    ephost::ContextBinary again = ephost::ContextBinary::parse(rebuilt, "rebuilt");
    for (const std::string& name : names)
      if (again.assemble(name) != binary.assemble(name)) std::abort();
  } catch (const ephost::Error&) {
  }
  return 0;
}
