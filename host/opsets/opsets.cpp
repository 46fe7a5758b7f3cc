#include "opsets/opsets.h"

#include <onnx/defs/schema.h>

#include <mutex>
#include <unordered_map>
#include <utility>

#include "core/log.h"
#include "opsets/new_type_names.h"

namespace ephost::opsets {

namespace {

// One entry per opset above onnx 1.12's: the file that writes its schemas. Opsets without an entry
// (yet) add no operator versions; their models resolve every operator to its newest version below.
struct OpsetEntry {
  int opset;
  void (*add)(std::vector<onnx::OpSchema>&);
};
constexpr OpsetEntry kOpsetTable[] = {
    {18, add_opset18_schemas},
    {19, add_opset19_schemas},
    {20, add_opset20_schemas},
    {21, add_opset21_schemas},
    {22, add_opset22_schemas},
    {23, add_opset23_schemas},
    {24, add_opset24_schemas},
    {25, add_opset25_schemas},
    {26, add_opset26_schemas},
    {27, add_opset27_schemas},
};

struct State {
  std::string problem;
  std::vector<std::pair<std::string, int>> registered;
};

State& state() {
  static State s;
  return s;
}

// onnx 1.12's DomainToVersionRange has no way to change a known domain (AddDomainToVersion refuses one
// by assert only). Map() and LastReleaseVersionMap() hand out const references to members of a
// non-const singleton, so writing through them is well defined; it happens once, before the schemas
// of the raised range are registered and before any model is checked.
void raise_default_domain_range() {
  auto& ranges = onnx::OpSchemaRegistry::DomainToVersionRange::Instance();
  auto& map = const_cast<std::unordered_map<std::string, std::pair<int, int>>&>(ranges.Map());
  auto& release = const_cast<std::unordered_map<std::string, int>&>(ranges.LastReleaseVersionMap());
  auto it = map.find(onnx::ONNX_DOMAIN);
  if (it == map.end() || it->second.second < kNewestOpset)
    map[onnx::ONNX_DOMAIN] = {it == map.end() ? kOldestOpset : it->second.first, kNewestOpset};
  if (release[onnx::ONNX_DOMAIN] < kNewestOpset) release[onnx::ONNX_DOMAIN] = kNewestOpset;
}

void register_all() {
  State& s = state();
  auto note = [&](const std::string& problem) {
    log_error("onnx schema registration: " + problem);
    if (s.problem.empty()) s.problem = problem;
  };
  try {
    // onnx registers its own schemas on first use of the registry: before ours, so that ours never
    // race with (or are mistaken for) onnx's.
    (void)onnx::OpSchemaRegistry::Schema("Add", onnx::ONNX_DOMAIN);
    // Before any schema of ours lists "tensor(int4)" and the like.
    register_new_type_names();
    raise_default_domain_range();
    for (const OpsetEntry& entry : kOpsetTable) {
      std::vector<onnx::OpSchema> schemas;
      entry.add(schemas);
      for (onnx::OpSchema& schema : schemas) {
        const std::string name = schema.Name();
        const int since = schema.SinceVersion();
        const std::string domain = schema.domain();
        if (since != entry.opset) {
          note(name + " is listed under opset " + std::to_string(entry.opset) + " but says since_version " +
               std::to_string(since));
          continue;
        }
        // onnx reports a refused schema on stderr only: check that it is there afterwards.
        onnx::OpSchemaRegistry::OpSchemaRegisterOnce once(schema);
        const onnx::OpSchema* found = onnx::OpSchemaRegistry::Schema(name, since, domain);
        if (!found || found->SinceVersion() != since) {
          note("onnx refused the schema of " + name + "-" + std::to_string(since));
          continue;
        }
        s.registered.emplace_back(name, since);
      }
    }
  } catch (const std::exception& e) {
    note(e.what());
  }
}

}  // namespace

void register_schemas() {
  static std::once_flag once;
  std::call_once(once, register_all);
}

const std::string& registration_problem() {
  register_schemas();
  return state().problem;
}

std::vector<std::pair<std::string, int>> registered_versions() {
  register_schemas();
  return state().registered;
}

}  // namespace ephost::opsets
