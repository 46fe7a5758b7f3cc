// ABI section, the contract before any session: negotiation across version ranges, the struct_size
// rules and describe's fields, checked on the library opened directly (raw_plugin.h), in a child.
#include <cstring>
#include <regex>
#include <set>

#include "isolation.h"
#include "raw_plugin.h"
#include "sections.h"

namespace ephost_cts {
namespace {

constexpr char kSection[] = "abi";
constexpr uint32_t kCurrent = EPHOST_PLUGIN_ABI_VERSION;

void add(ChildChannel& out, const std::string& name, Outcome outcome, const std::string& detail) {
  out.check({kSection, name, outcome, detail});
}

// Offers [min, max] and judges the answer: accepting inside the range with a usable table, or
// refusing with NOT_IMPLEMENTED and a message naming what the plugin speaks.
void check_offer(ChildChannel& out, const RawPlugin& plugin, const std::string& name, uint32_t min, uint32_t max,
                 bool must_refuse) {
  out.step("negotiating with a host that offers [" + std::to_string(min) + "," + std::to_string(max) + "]");
  const NegotiationAnswer a = negotiate(plugin, min, max);
  const std::string problem = answer_problem(a, min, max);
  if (!problem.empty()) return add(out, name, Outcome::kFail, problem);
  if (a.refusal.code != EPHOST_OK) {
    if (a.refusal.code != EPHOST_NOT_IMPLEMENTED || a.refusal.message.empty())
      return add(out, name, Outcome::kFail,
                 "a refusal must be NOT_IMPLEMENTED with a message saying which versions the plugin speaks; got code " +
                     std::to_string(a.refusal.code) + " '" + a.refusal.message + "'");
    return add(out, name, Outcome::kPass, "refused: " + a.refusal.message);
  }
  if (must_refuse && a.version <= kCurrent)
    return add(out, name, Outcome::kFail, "accepted ABI " + std::to_string(a.version) + " outside the range");
  if (a.version > kCurrent)
    return add(out, name, Outcome::kSkip,
               "answered ABI " + std::to_string(a.version) + ", newer than this kit knows (" + std::to_string(kCurrent) + ")");
  add(out, name, Outcome::kPass, "speaks ABI " + std::to_string(a.version));
}

bool valid_name(const char* s) {
  return s && std::regex_match(s, std::regex("[A-Za-z0-9_.-]+"));
}
bool valid_semver(const char* s) {
  static const std::regex semver(
      R"(^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$)");
  return s && std::regex_match(s, semver);
}

// describe's fields: what the host requires of them (plugin_api/README.md, "Describe").
std::string describe_problem(const EphostPluginInfo& info) {
  if (!valid_name(info.name)) return std::string("name '") + (info.name ? info.name : "(null)") + "' is not [A-Za-z0-9_.-]+";
  if (!valid_semver(info.version))
    return std::string("version '") + (info.version ? info.version : "(null)") + "' is not semver MAJOR.MINOR.PATCH";
  if (info.device_type < EPHOST_DEVICE_CPU || info.device_type > EPHOST_DEVICE_NPU)
    return "device_type " + std::to_string(info.device_type) + " is not cpu (0), gpu (1) or npu (2)";
  if (info.num_context_source_keys > 1024) return std::to_string(info.num_context_source_keys) + " source keys";
  if (info.num_context_source_keys > 0 && info.context_source_keys == nullptr)
    return "num_context_source_keys is " + std::to_string(info.num_context_source_keys) + " but context_source_keys is NULL";
  std::set<std::string> keys;
  for (size_t i = 0; i < info.num_context_source_keys; ++i) {
    const char* key = info.context_source_keys[i];
    if (key == nullptr || *key == '\0') return "source key " + std::to_string(i) + " is empty";
    if (!keys.insert(key).second) return std::string("source key '") + key + "' is listed twice";
  }
  return "";
}

struct DescribedCopy {
  std::string name, version;
  std::vector<std::string> keys;
};
DescribedCopy copy_of(const EphostPluginInfo& info) {
  DescribedCopy c{info.name ? info.name : "", info.version ? info.version : "", {}};
  for (size_t i = 0; i < info.num_context_source_keys && info.context_source_keys; ++i)
    c.keys.push_back(info.context_source_keys[i] ? info.context_source_keys[i] : "");
  return c;
}

void check_describe(ChildChannel& out, const EphostPlugin& table) {
  out.step("describe");
  // The host tells the plugin how large its EphostPluginInfo is; bytes past it are not the plugin's.
  constexpr size_t kGuard = 64;
  std::vector<unsigned char> buffer(sizeof(EphostPluginInfo) + kGuard, 0xA5);
  auto* info = new (buffer.data()) EphostPluginInfo{};
  info->struct_size = sizeof(EphostPluginInfo);
  StatusText failed = take_status(table.describe(info));
  if (failed.code != EPHOST_OK)
    return add(out, "describe/fields", Outcome::kFail, "describe failed: " + failed.message);
  bool guard_intact = true;
  for (size_t i = sizeof(EphostPluginInfo); i < buffer.size(); ++i) guard_intact &= buffer[i] == 0xA5;
  add(out, "struct_size/describe writes within EphostPluginInfo::struct_size",
      guard_intact ? Outcome::kPass : Outcome::kFail, guard_intact ? "" : "describe wrote past struct_size");
  const std::string problem = describe_problem(*info);
  add(out, "describe/fields", problem.empty() ? Outcome::kPass : Outcome::kFail,
      problem.empty() ? std::string("name ") + info->name + ", version " + info->version : problem);
  if (!problem.empty()) return;
  // Strings must stay valid until the library is unloaded: still the same after more calls.
  const DescribedCopy first = copy_of(*info);
  EphostPluginInfo again{};
  again.struct_size = sizeof(again);
  take_status(table.describe(&again));
  EphostProvider* provider = nullptr;
  if (take_status(table.provider_create(nullptr, nullptr, 0, &provider)).code == EPHOST_OK && provider)
    table.provider_release(provider);
  const DescribedCopy later = copy_of(*info);
  const bool same = later.name == first.name && later.version == first.version && later.keys == first.keys;
  add(out, "lifetimes/describe strings live until unload", same ? Outcome::kPass : Outcome::kFail,
      same ? "" : "strings describe returned changed after a second describe and a provider's life");
  const bool keys = info->num_context_source_keys > 0;
  if (!keys) return add(out, "struct_size/EPContext members", Outcome::kSkip, "no source keys");
  if (table.context_emit && !table.context_load)
    return add(out, "struct_size/EPContext members", Outcome::kFail,
               "source keys and context_emit, but no context_load: its contexts could never be loaded");
  if (!table.context_emit && !table.context_load)
    return add(out, "struct_size/EPContext members", Outcome::kSkip,
               "source keys but neither context_emit nor context_load: every context with those keys is load_failed "
               "and falls back (the header calls context_load required with source keys)");
  add(out, "struct_size/EPContext members", Outcome::kPass, "");
}

void contract(ChildChannel& out, const std::string& path) {
  out.step("loading " + path);
  RawPlugin plugin(path);
  add(out, "load", plugin.error().empty() ? Outcome::kPass : Outcome::kFail, plugin.error());
  if (!plugin.error().empty()) return;
  check_offer(out, plugin, "negotiation/host of ABI 1 only [1,1]", 1, 1, false);
  check_offer(out, plugin, "negotiation/future host [1,9]", 1, 9, false);
  check_offer(out, plugin, "negotiation/host newer than the plugin [9,12]", 9, 12, true);
  check_offer(out, plugin, "negotiation/current host [" + std::to_string(EPHOST_PLUGIN_ABI_MIN_VERSION) + "," +
                               std::to_string(kCurrent) + "]",
              EPHOST_PLUGIN_ABI_MIN_VERSION, kCurrent, false);
  // The host loads a library again for another env: the same offer must get the same answer.
  out.step("negotiating twice");
  const NegotiationAnswer a = negotiate(plugin, EPHOST_PLUGIN_ABI_MIN_VERSION, kCurrent);
  const NegotiationAnswer b = negotiate(plugin, EPHOST_PLUGIN_ABI_MIN_VERSION, kCurrent);
  const bool usable = answer_problem(b, EPHOST_PLUGIN_ABI_MIN_VERSION, kCurrent).empty() &&
                      b.refusal.code == EPHOST_OK && b.table != nullptr;
  const bool same = usable && a.version == b.version && a.table && a.table->struct_size == b.table->struct_size;
  add(out, "negotiation/same answer twice", same ? Outcome::kPass : Outcome::kFail,
      same ? "" : "a second negotiation with the same offer answered differently or not at all");
  if (!usable) return;
  const bool size_ok = b.table->struct_size >= EphostPluginSize(b.version);
  add(out, "struct_size/function table", size_ok ? Outcome::kPass : Outcome::kFail,
      "struct_size " + std::to_string(b.table->struct_size) + ", ABI " + std::to_string(b.version) + " needs " +
          std::to_string(EphostPluginSize(b.version)));
  check_describe(out, *b.table);
}

}  // namespace

void check_abi_contract(const KitSetup& setup, Report& report) {
  const ChildResult r = run_in_child([&](ChildChannel& out) { contract(out, setup.plugin); }, setup.timeout_s);
  for (const Check& c : r.checks) report.add(c);
  if (!r.completed) report.add(child_failure(kSection, "contract", r.failure, r.last_step));
}

}  // namespace ephost_cts
