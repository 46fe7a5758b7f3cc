// Every published version of the two C ABIs keeps its layout (abi_frozen_layout.h,
// plugin_api/ABI_VERSIONING.md). At compile time: each member of the public headers has the type and
// the offset its frozen version gave it, no member is left out of the frozen lists, enum values and
// entry points keep their names and types. At run time: the headers' "since" blocks name the version
// the frozen lists give each member, each version's table size ends with that version's last member,
// and the host hands a plugin a table of exactly the version it negotiated.
#include <gtest/gtest.h>

#include <cstddef>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "plugin_abi/host_api.h"
#include "discovery/negotiation.h"
#include "discovery/plugin_record.h"
#include "abi_frozen_layout.h"
#include "ephost/ephost_c_api.h"
#include "ephost/ephost_plugin.h"
#include "test_paths.h"

namespace {

// ---- mirrors: the frozen lists laid out by this compiler ---------------------------------------------

// Lets a function-pointer type name a member: Frozen<R (*)(A)> name;
template <typename T>
using Frozen = T;
#define EPHOST_MIRROR(name, ...) Frozen<__VA_ARGS__> name;

struct FrozenTensorView { EPHOST_FROZEN_TENSOR_VIEW_ABI_1(EPHOST_MIRROR) };
struct FrozenComputeInfo { EPHOST_FROZEN_COMPUTE_INFO_ABI_1(EPHOST_MIRROR) };
struct FrozenPluginInfo { EPHOST_FROZEN_PLUGIN_INFO_ABI_1(EPHOST_MIRROR) };
struct FrozenHostApiAbi1 { EPHOST_FROZEN_HOST_API_ABI_1(EPHOST_MIRROR) };
struct FrozenHostApiAbi2 { EPHOST_FROZEN_HOST_API_ABI_1(EPHOST_MIRROR) EPHOST_FROZEN_HOST_API_ABI_2(EPHOST_MIRROR) };
struct FrozenHostApiAbi3 {
  EPHOST_FROZEN_HOST_API_ABI_1(EPHOST_MIRROR) EPHOST_FROZEN_HOST_API_ABI_2(EPHOST_MIRROR)
  EPHOST_FROZEN_HOST_API_ABI_3(EPHOST_MIRROR)
};
struct FrozenHostApiAbi4 {
  EPHOST_FROZEN_HOST_API_ABI_1(EPHOST_MIRROR) EPHOST_FROZEN_HOST_API_ABI_2(EPHOST_MIRROR)
  EPHOST_FROZEN_HOST_API_ABI_3(EPHOST_MIRROR) EPHOST_FROZEN_HOST_API_ABI_4(EPHOST_MIRROR)
};
struct FrozenHostApiAbi5 {
  EPHOST_FROZEN_HOST_API_ABI_1(EPHOST_MIRROR) EPHOST_FROZEN_HOST_API_ABI_2(EPHOST_MIRROR)
  EPHOST_FROZEN_HOST_API_ABI_3(EPHOST_MIRROR) EPHOST_FROZEN_HOST_API_ABI_4(EPHOST_MIRROR)
  EPHOST_FROZEN_HOST_API_ABI_5(EPHOST_MIRROR)
};
struct FrozenPlugin { EPHOST_FROZEN_PLUGIN_ABI_1(EPHOST_MIRROR) };
struct FrozenPluginAbi3 { EPHOST_FROZEN_PLUGIN_ABI_1(EPHOST_MIRROR) EPHOST_FROZEN_PLUGIN_ABI_3(EPHOST_MIRROR) };
struct FrozenDeviceBuffer { EPHOST_FROZEN_DEVICE_BUFFER_ABI_3(EPHOST_MIRROR) };
struct FrozenDeviceInfo { EPHOST_FROZEN_DEVICE_INFO_ABI_3(EPHOST_MIRROR) };
struct FrozenTensorMemory { EPHOST_FROZEN_TENSOR_MEMORY_ABI_3(EPHOST_MIRROR) };
struct FrozenProfileSpan { EPHOST_FROZEN_PROFILE_SPAN_ABI_4(EPHOST_MIRROR) };
struct FrozenDeviceReport { EPHOST_FROZEN_DEVICE_REPORT_API_3(EPHOST_MIRROR) };
struct FrozenProviderState { EPHOST_FROZEN_PROVIDER_STATE_API_5(EPHOST_MIRROR) };
struct FrozenNegotiation { EPHOST_FROZEN_NEGOTIATION_ABI_1(EPHOST_MIRROR) };
struct FrozenPluginReport { EPHOST_FROZEN_PLUGIN_REPORT_API_1(EPHOST_MIRROR) };
struct FrozenApiV1 { EPHOST_FROZEN_APP_API_1(EPHOST_MIRROR) };
struct FrozenApiV2 { EPHOST_FROZEN_APP_API_1(EPHOST_MIRROR) EPHOST_FROZEN_APP_API_2(EPHOST_MIRROR) };
struct FrozenApiV3 {
  EPHOST_FROZEN_APP_API_1(EPHOST_MIRROR) EPHOST_FROZEN_APP_API_2(EPHOST_MIRROR) EPHOST_FROZEN_APP_API_3(EPHOST_MIRROR)
};
struct FrozenApiV4 {
  EPHOST_FROZEN_APP_API_1(EPHOST_MIRROR) EPHOST_FROZEN_APP_API_2(EPHOST_MIRROR) EPHOST_FROZEN_APP_API_3(EPHOST_MIRROR)
  EPHOST_FROZEN_APP_API_4(EPHOST_MIRROR)
};
struct FrozenApiV5 {
  EPHOST_FROZEN_APP_API_1(EPHOST_MIRROR) EPHOST_FROZEN_APP_API_2(EPHOST_MIRROR) EPHOST_FROZEN_APP_API_3(EPHOST_MIRROR)
  EPHOST_FROZEN_APP_API_4(EPHOST_MIRROR) EPHOST_FROZEN_APP_API_5(EPHOST_MIRROR)
};
struct FrozenApiV6 {
  EPHOST_FROZEN_APP_API_1(EPHOST_MIRROR) EPHOST_FROZEN_APP_API_2(EPHOST_MIRROR) EPHOST_FROZEN_APP_API_3(EPHOST_MIRROR)
  EPHOST_FROZEN_APP_API_4(EPHOST_MIRROR) EPHOST_FROZEN_APP_API_5(EPHOST_MIRROR) EPHOST_FROZEN_APP_API_6(EPHOST_MIRROR)
};

// ---- compile time: members, enum values, entry points -------------------------------------------------

// A member of the public struct `Real` has the type and the offset that its frozen version (the mirror
// `Newest`, which holds every version's members) gave it.
#define EPHOST_CHECK_FROZEN(Real, Newest, name)                                                           \
  static_assert(std::is_same_v<decltype(Real::name), decltype(Newest::name)>,                            \
                #Real "::" #name " is not of the type its published version gave it "                     \
                "(plugin_api/ABI_VERSIONING.md)");                                                       \
  static_assert(offsetof(Real, name) == offsetof(Newest, name),                                          \
                #Real "::" #name " is not where its published version put it: a member was inserted, "   \
                "removed or resized before it (plugin_api/ABI_VERSIONING.md)");
// Every member of `Real` is in a frozen list: a member appended without being frozen makes it larger.
#define EPHOST_CHECK_ALL_FROZEN(Real, Newest)             \
  static_assert(sizeof(Real) == sizeof(Newest), #Real     \
                " does not match its frozen versions: a member was added without a frozen list for its " \
                "version (plugin_api/ABI_VERSIONING.md)");

#define EPHOST_CHECK_TENSOR_VIEW(name, ...) EPHOST_CHECK_FROZEN(EphostTensorView, FrozenTensorView, name)
#define EPHOST_CHECK_COMPUTE_INFO(name, ...) EPHOST_CHECK_FROZEN(EphostComputeInfo, FrozenComputeInfo, name)
#define EPHOST_CHECK_PLUGIN_INFO(name, ...) EPHOST_CHECK_FROZEN(EphostPluginInfo, FrozenPluginInfo, name)
#define EPHOST_CHECK_HOST_API(name, ...) EPHOST_CHECK_FROZEN(EphostHostApi, FrozenHostApiAbi5, name)
#define EPHOST_CHECK_PLUGIN(name, ...) EPHOST_CHECK_FROZEN(EphostPlugin, FrozenPluginAbi3, name)
#define EPHOST_CHECK_DEVICE_BUFFER(name, ...) EPHOST_CHECK_FROZEN(EphostDeviceBuffer, FrozenDeviceBuffer, name)
#define EPHOST_CHECK_DEVICE_INFO(name, ...) EPHOST_CHECK_FROZEN(EphostDeviceInfo, FrozenDeviceInfo, name)
#define EPHOST_CHECK_TENSOR_MEMORY(name, ...) EPHOST_CHECK_FROZEN(EphostTensorMemory, FrozenTensorMemory, name)
#define EPHOST_CHECK_PROFILE_SPAN(name, ...) EPHOST_CHECK_FROZEN(EphostProfileSpan, FrozenProfileSpan, name)
#define EPHOST_CHECK_DEVICE_REPORT(name, ...) EPHOST_CHECK_FROZEN(EphostDeviceReport, FrozenDeviceReport, name)
#define EPHOST_CHECK_NEGOTIATION(name, ...) EPHOST_CHECK_FROZEN(EphostPluginNegotiation, FrozenNegotiation, name)
#define EPHOST_CHECK_PLUGIN_REPORT(name, ...) EPHOST_CHECK_FROZEN(EphostPluginReport, FrozenPluginReport, name)
#define EPHOST_CHECK_APP_API(name, ...) EPHOST_CHECK_FROZEN(EphostApi, FrozenApiV6, name)
#define EPHOST_CHECK_PROVIDER_STATE(name, ...) EPHOST_CHECK_FROZEN(EphostProviderState, FrozenProviderState, name)

EPHOST_FROZEN_TENSOR_VIEW_ABI_1(EPHOST_CHECK_TENSOR_VIEW)
EPHOST_CHECK_ALL_FROZEN(EphostTensorView, FrozenTensorView)
EPHOST_FROZEN_COMPUTE_INFO_ABI_1(EPHOST_CHECK_COMPUTE_INFO)
EPHOST_CHECK_ALL_FROZEN(EphostComputeInfo, FrozenComputeInfo)
EPHOST_FROZEN_PLUGIN_INFO_ABI_1(EPHOST_CHECK_PLUGIN_INFO)
EPHOST_CHECK_ALL_FROZEN(EphostPluginInfo, FrozenPluginInfo)
EPHOST_FROZEN_HOST_API_ABI_1(EPHOST_CHECK_HOST_API)
EPHOST_FROZEN_HOST_API_ABI_2(EPHOST_CHECK_HOST_API)
EPHOST_FROZEN_HOST_API_ABI_3(EPHOST_CHECK_HOST_API)
EPHOST_FROZEN_HOST_API_ABI_4(EPHOST_CHECK_HOST_API)
EPHOST_FROZEN_HOST_API_ABI_5(EPHOST_CHECK_HOST_API)
EPHOST_CHECK_ALL_FROZEN(EphostHostApi, FrozenHostApiAbi5)
EPHOST_FROZEN_PLUGIN_ABI_1(EPHOST_CHECK_PLUGIN)
EPHOST_FROZEN_PLUGIN_ABI_3(EPHOST_CHECK_PLUGIN)
EPHOST_CHECK_ALL_FROZEN(EphostPlugin, FrozenPluginAbi3)
EPHOST_FROZEN_DEVICE_BUFFER_ABI_3(EPHOST_CHECK_DEVICE_BUFFER)
EPHOST_CHECK_ALL_FROZEN(EphostDeviceBuffer, FrozenDeviceBuffer)
EPHOST_FROZEN_DEVICE_INFO_ABI_3(EPHOST_CHECK_DEVICE_INFO)
EPHOST_CHECK_ALL_FROZEN(EphostDeviceInfo, FrozenDeviceInfo)
EPHOST_FROZEN_TENSOR_MEMORY_ABI_3(EPHOST_CHECK_TENSOR_MEMORY)
EPHOST_CHECK_ALL_FROZEN(EphostTensorMemory, FrozenTensorMemory)
EPHOST_FROZEN_PROFILE_SPAN_ABI_4(EPHOST_CHECK_PROFILE_SPAN)
EPHOST_CHECK_ALL_FROZEN(EphostProfileSpan, FrozenProfileSpan)
EPHOST_FROZEN_NEGOTIATION_ABI_1(EPHOST_CHECK_NEGOTIATION)
EPHOST_CHECK_ALL_FROZEN(EphostPluginNegotiation, FrozenNegotiation)
EPHOST_FROZEN_PLUGIN_REPORT_API_1(EPHOST_CHECK_PLUGIN_REPORT)
EPHOST_CHECK_ALL_FROZEN(EphostPluginReport, FrozenPluginReport)
EPHOST_FROZEN_APP_API_1(EPHOST_CHECK_APP_API)
EPHOST_FROZEN_APP_API_2(EPHOST_CHECK_APP_API)
EPHOST_FROZEN_APP_API_3(EPHOST_CHECK_APP_API)
EPHOST_FROZEN_APP_API_4(EPHOST_CHECK_APP_API)
EPHOST_FROZEN_APP_API_5(EPHOST_CHECK_APP_API)
EPHOST_FROZEN_APP_API_6(EPHOST_CHECK_APP_API)
EPHOST_CHECK_ALL_FROZEN(EphostApi, FrozenApiV6)
EPHOST_FROZEN_PROVIDER_STATE_API_5(EPHOST_CHECK_PROVIDER_STATE)
EPHOST_CHECK_ALL_FROZEN(EphostProviderState, FrozenProviderState)
EPHOST_FROZEN_DEVICE_REPORT_API_3(EPHOST_CHECK_DEVICE_REPORT)
EPHOST_CHECK_ALL_FROZEN(EphostDeviceReport, FrozenDeviceReport)

#define EPHOST_CHECK_ENUM_VALUE(name, value) \
  static_assert(name == value, #name " was renumbered: enum values are frozen (plugin_api/ABI_VERSIONING.md)");
EPHOST_FROZEN_STATUS_CODES(EPHOST_CHECK_ENUM_VALUE)
EPHOST_FROZEN_STATUS_CODES_4(EPHOST_CHECK_ENUM_VALUE)
EPHOST_FROZEN_ELEMENT_TYPES(EPHOST_CHECK_ENUM_VALUE)
EPHOST_FROZEN_ELEMENT_TYPES_4(EPHOST_CHECK_ENUM_VALUE)
EPHOST_FROZEN_LOG_LEVELS(EPHOST_CHECK_ENUM_VALUE)
EPHOST_FROZEN_DEVICE_TYPES(EPHOST_CHECK_ENUM_VALUE)
EPHOST_FROZEN_DEVICE_TYPES_3(EPHOST_CHECK_ENUM_VALUE)
EPHOST_FROZEN_MEMORY_KINDS(EPHOST_CHECK_ENUM_VALUE)
EPHOST_FROZEN_MEMORY_LOCATIONS(EPHOST_CHECK_ENUM_VALUE)
EPHOST_FROZEN_VALUE_KINDS(EPHOST_CHECK_ENUM_VALUE)
EPHOST_FROZEN_ATTRIBUTE_TYPES(EPHOST_CHECK_ENUM_VALUE)
EPHOST_FROZEN_CONTEXT_VERDICTS(EPHOST_CHECK_ENUM_VALUE)
EPHOST_FROZEN_OPTIMIZATION_LEVELS(EPHOST_CHECK_ENUM_VALUE)
EPHOST_FROZEN_PROVIDER_STATES(EPHOST_CHECK_ENUM_VALUE)

// The symbols a plugin exports and an application links, by name and type. Plugins' libraries are
// checked for exporting exactly this entry point by tests/packaging/plugin_entry_point_test.sh.
static_assert(std::string_view(EPHOST_PLUGIN_ENTRY_POINT) == "ephost_plugin_negotiate",
              "the plugin entry point's name is frozen: every built plugin exports it");
static_assert(std::is_same_v<EphostPluginNegotiateFn, EphostStatus* (*)(EphostPluginNegotiation*)>,
              "the plugin entry point's type is frozen");
static_assert(std::is_same_v<decltype(&EphostGetApi), const EphostApi* (*)(uint32_t)>,
              "EphostGetApi's type is frozen");
static_assert(std::is_same_v<decltype(&EphostGetVersionString), const char* (*)(void)>,
              "EphostGetVersionString's type is frozen");

// A new version must be frozen here before it ships; dropping a version breaks its plugins.
static_assert(EPHOST_PLUGIN_ABI_VERSION == 5u && EPHOST_API_VERSION == 6u,
              "a new ABI version: freeze its layout in abi_frozen_layout.h (plugin_api/ABI_VERSIONING.md)");
static_assert(EPHOST_PLUGIN_ABI_MIN_VERSION == 1u, "the host must keep accepting ABI 1 plugins");

// ---- run time: the headers' "since" blocks -------------------------------------------------------------

// A struct's members in declaration order, each with the version of the "since ABI <N>" /
// "since API <N>" block it lies in (0 when no block opens before it).
struct DeclaredMember {
  std::string name;
  int version;
};
using DeclaredStructs = std::map<std::string, std::vector<DeclaredMember>>;

std::vector<DeclaredMember> members_of(const std::string& body) {
  static const std::regex since_block(R"(^[\s=*-]*since (?:ABI|API) (\d+))");
  static const std::regex function_pointer(R"(\(\s*\*\s*(\w+)\s*\))");
  static const std::regex last_identifier(R"((\w+)\s*$)");
  std::vector<DeclaredMember> members;
  int version = 0;
  std::string statement;
  for (size_t i = 0; i < body.size(); ++i) {
    if (body.compare(i, 2, "/*") == 0) {
      const size_t close = body.find("*/", i + 2);
      const std::string comment = body.substr(i + 2, close - i - 2);
      std::smatch m;
      if (std::regex_search(comment, m, since_block)) version = std::stoi(m[1]);
      i = close + 1;
      continue;
    }
    if (body[i] != ';') {
      statement += body[i];
      continue;
    }
    std::smatch m;
    if (std::regex_search(statement, m, function_pointer) || std::regex_search(statement, m, last_identifier))
      members.push_back({m[1], version});
    statement.clear();
  }
  return members;
}

std::string header_text(const std::string& header) {
  std::ifstream file(std::string(EPHOST_TEST_DATA_DIR) + "/../../plugin_api/include/ephost/" + header);
  if (!file) throw std::runtime_error("cannot read the public header " + header);
  std::stringstream text_stream;
  text_stream << file.rdbuf();
  return text_stream.str();
}

// Every `typedef struct X { ... } X;` of a public header.
DeclaredStructs declared_structs(const std::string& header) {
  const std::string text = header_text(header);
  static const std::regex struct_open(R"(typedef struct (\w+) \{)");
  DeclaredStructs out;
  for (std::sregex_iterator it(text.begin(), text.end(), struct_open), end; it != end; ++it) {
    const std::string name = (*it)[1];
    const size_t body_begin = static_cast<size_t>(it->position() + it->length());
    const size_t body_end = text.find("\n} " + name + ";", body_begin);
    out[name] = members_of(text.substr(body_begin, body_end - body_begin));
  }
  return out;
}

// A struct's frozen lists: the members each version added, version 1 first.
struct FrozenStruct {
  const char* header;
  const char* name;
  std::vector<std::vector<const char*>> added_by_version;
};
#define EPHOST_NAME(name, ...) #name,
const std::vector<FrozenStruct>& frozen_structs() {
  static const std::vector<FrozenStruct> all = {
      {"ephost_plugin.h", "EphostTensorView", {{EPHOST_FROZEN_TENSOR_VIEW_ABI_1(EPHOST_NAME)}}},
      {"ephost_plugin.h", "EphostComputeInfo", {{EPHOST_FROZEN_COMPUTE_INFO_ABI_1(EPHOST_NAME)}}},
      {"ephost_plugin.h", "EphostPluginInfo", {{EPHOST_FROZEN_PLUGIN_INFO_ABI_1(EPHOST_NAME)}}},
      {"ephost_plugin.h", "EphostHostApi",
       {{EPHOST_FROZEN_HOST_API_ABI_1(EPHOST_NAME)},
        {EPHOST_FROZEN_HOST_API_ABI_2(EPHOST_NAME)},
        {EPHOST_FROZEN_HOST_API_ABI_3(EPHOST_NAME)},
        {EPHOST_FROZEN_HOST_API_ABI_4(EPHOST_NAME)},
        {EPHOST_FROZEN_HOST_API_ABI_5(EPHOST_NAME)}}},
      {"ephost_plugin.h", "EphostPlugin",
       {{EPHOST_FROZEN_PLUGIN_ABI_1(EPHOST_NAME)}, {}, {EPHOST_FROZEN_PLUGIN_ABI_3(EPHOST_NAME)}}},
      {"ephost_plugin.h", "EphostDeviceBuffer", {{}, {}, {EPHOST_FROZEN_DEVICE_BUFFER_ABI_3(EPHOST_NAME)}}},
      {"ephost_plugin.h", "EphostDeviceInfo", {{}, {}, {EPHOST_FROZEN_DEVICE_INFO_ABI_3(EPHOST_NAME)}}},
      {"ephost_plugin.h", "EphostTensorMemory", {{}, {}, {EPHOST_FROZEN_TENSOR_MEMORY_ABI_3(EPHOST_NAME)}}},
      {"ephost_plugin.h", "EphostProfileSpan", {{}, {}, {}, {EPHOST_FROZEN_PROFILE_SPAN_ABI_4(EPHOST_NAME)}}},
      {"ephost_plugin.h", "EphostPluginNegotiation", {{EPHOST_FROZEN_NEGOTIATION_ABI_1(EPHOST_NAME)}}},
      {"ephost_c_api.h", "EphostPluginReport", {{EPHOST_FROZEN_PLUGIN_REPORT_API_1(EPHOST_NAME)}}},
      {"ephost_c_api.h", "EphostApi",
       {{EPHOST_FROZEN_APP_API_1(EPHOST_NAME)},
        {EPHOST_FROZEN_APP_API_2(EPHOST_NAME)},
        {EPHOST_FROZEN_APP_API_3(EPHOST_NAME)},
        {EPHOST_FROZEN_APP_API_4(EPHOST_NAME)},
        {EPHOST_FROZEN_APP_API_5(EPHOST_NAME)},
        {EPHOST_FROZEN_APP_API_6(EPHOST_NAME)}}},
      {"ephost_c_api.h", "EphostDeviceReport", {{}, {}, {EPHOST_FROZEN_DEVICE_REPORT_API_3(EPHOST_NAME)}}},
      {"ephost_c_api.h", "EphostProviderState", {{}, {}, {}, {}, {EPHOST_FROZEN_PROVIDER_STATE_API_5(EPHOST_NAME)}}},
  };
  return all;
}

std::vector<DeclaredMember> flatten(const FrozenStruct& frozen) {
  std::vector<DeclaredMember> out;
  for (size_t v = 0; v < frozen.added_by_version.size(); ++v)
    for (const char* name : frozen.added_by_version[v]) out.push_back({name, static_cast<int>(v + 1)});
  return out;
}

// Where the header's members and "since" blocks first differ from the frozen lists; "" when they agree.
std::string first_difference(const std::vector<DeclaredMember>& declared, const std::vector<DeclaredMember>& frozen) {
  for (size_t i = 0; i < declared.size() || i < frozen.size(); ++i) {
    if (i == declared.size()) return "the header lacks frozen member " + frozen[i].name;
    if (i == frozen.size()) return "member " + declared[i].name + " is in no frozen list";
    if (declared[i].name != frozen[i].name)
      return "member " + std::to_string(i) + " is " + declared[i].name + " in the header, " + frozen[i].name +
             " in the frozen lists";
    if (declared[i].version != frozen[i].version)
      return declared[i].name + " lies in a \"since " + std::to_string(declared[i].version) +
             "\" block of the header, but version " + std::to_string(frozen[i].version) + " froze it";
  }
  return "";
}

TEST(AbiLayout, EveryMemberLiesInTheSinceBlockOfTheVersionThatFrozeIt) {
  std::map<std::string, DeclaredStructs> headers;
  for (const char* header : {"ephost_plugin.h", "ephost_c_api.h", "ephost_types.h"})
    headers[header] = declared_structs(header);
  size_t frozen_in_headers = 0;
  for (const FrozenStruct& frozen : frozen_structs()) {
    const DeclaredStructs& declared = headers[frozen.header];
    auto it = declared.find(frozen.name);
    ASSERT_NE(it, declared.end()) << frozen.name << " is no longer in " << frozen.header;
    EXPECT_EQ(first_difference(it->second, flatten(frozen)), "") << frozen.name << " in " << frozen.header;
    ++frozen_in_headers;
  }
  size_t declared_in_headers = 0;
  for (const auto& [header, structs] : headers) declared_in_headers += structs.size();
  EXPECT_EQ(declared_in_headers, frozen_in_headers)
      << "a struct of the public headers has no frozen layout: add it to abi_frozen_layout.h";
}

// The three structs without struct_size are exactly the ones frozen by name, the header says so where
// it states the rule and on each of them, and none of them ever grew.
TEST(AbiLayout, OnlyTheStructsFrozenByNameLackStructSize) {
#define EPHOST_NAME_OF(name) #name,
  const std::set<std::string> frozen_by_name = {EPHOST_FROZEN_BY_NAME(EPHOST_NAME_OF)};
#undef EPHOST_NAME_OF
  ASSERT_EQ(frozen_by_name.size(), 3u);
  std::set<std::string> without_struct_size;
  size_t structs_seen = 0;
  for (const char* header : {"ephost_plugin.h", "ephost_c_api.h", "ephost_types.h"})
    for (const auto& [name, members] : declared_structs(header)) {
      ++structs_seen;
      if (members.empty() || members.front().name != "struct_size") without_struct_size.insert(name);
    }
  EXPECT_GE(structs_seen, 10u) << "the headers were not read";
  EXPECT_EQ(without_struct_size, frozen_by_name)
      << "a struct without struct_size must be one of those frozen by name (ephost_plugin.h's rules), and those "
         "must stay without it";

  const std::string text = header_text("ephost_plugin.h");
  const std::string rules = text.substr(0, text.find("#ifndef EPHOST_PLUGIN_H_"));
  EXPECT_NE(rules.find("frozen by name"), std::string::npos) << "the header's rules name the exception";
  for (const std::string& name : frozen_by_name) {
    EXPECT_NE(rules.find(name), std::string::npos) << "the header's rules must name " << name;
    // The comment just before the struct says so too.
    const size_t open = text.find("typedef struct " + name + " {");
    ASSERT_NE(open, std::string::npos) << name;
    const size_t comment = text.rfind("/*", open);
    ASSERT_NE(comment, std::string::npos) << name;
    EXPECT_NE(text.substr(comment, open - comment).find("Frozen by name"), std::string::npos)
        << "the comment on " << name << " must say it is frozen by name";
  }

  for (const FrozenStruct& frozen : frozen_structs()) {
    if (!frozen_by_name.count(frozen.name)) continue;
    size_t lists = 0;
    for (const auto& added : frozen.added_by_version) lists += added.empty() ? 0 : 1;
    EXPECT_EQ(lists, 1u) << frozen.name << " is frozen by name: it never grows, so one version froze all of it";
  }
}

// ---- run time: one table per version ------------------------------------------------------------------

TEST(AbiLayout, EachVersionsSizeEndsWithItsLastMember) {
  EXPECT_EQ(EphostHostApiSize(1), sizeof(FrozenHostApiAbi1));
  EXPECT_EQ(EphostHostApiSize(2), sizeof(FrozenHostApiAbi2));
  EXPECT_EQ(EphostPluginSize(1), sizeof(FrozenPlugin));
  EXPECT_EQ(EphostHostApiSize(3), sizeof(FrozenHostApiAbi3));
  EXPECT_EQ(EphostPluginSize(2), sizeof(FrozenPlugin)) << "EphostPlugin did not grow in ABI 2";
  EXPECT_EQ(EphostPluginSize(3), sizeof(FrozenPluginAbi3));
  EXPECT_EQ(EphostHostApiSize(4), sizeof(FrozenHostApiAbi4));
  EXPECT_EQ(EphostPluginSize(4), sizeof(FrozenPluginAbi3)) << "EphostPlugin did not grow in ABI 4";
  EXPECT_EQ(EphostHostApiSize(5), sizeof(FrozenHostApiAbi5));
  EXPECT_EQ(EphostPluginSize(5), sizeof(FrozenPluginAbi3)) << "EphostPlugin did not grow in ABI 5";
  EXPECT_EQ(EphostApiSize(1), sizeof(FrozenApiV1));
  EXPECT_EQ(EphostApiSize(2), sizeof(FrozenApiV2));
  EXPECT_EQ(EphostApiSize(3), sizeof(FrozenApiV3));
  EXPECT_EQ(EphostApiSize(4), sizeof(FrozenApiV4));
  EXPECT_EQ(EphostApiSize(5), sizeof(FrozenApiV5));
  EXPECT_EQ(EphostApiSize(6), sizeof(FrozenApiV6));
  for (uint32_t unknown : {0u, EPHOST_PLUGIN_ABI_VERSION + 1}) {
    EXPECT_EQ(EphostHostApiSize(unknown), 0u) << unknown;
    EXPECT_EQ(EphostPluginSize(unknown), 0u) << unknown;
  }
  EXPECT_EQ(EphostApiSize(EPHOST_API_VERSION + 1), 0u);
}

// True for a function that is there (and for the size and version fields, which always are).
template <typename Member>
bool present(Member member) {
  if constexpr (std::is_pointer_v<Member>) return member != nullptr;
  return true;
}

TEST(AbiLayout, HostGivesEachNegotiatedVersionATableOfThatVersion) {
  const EphostHostApi v1 = ephost::make_host_api(1);
  EXPECT_EQ(v1.abi_version, 1u);
  EXPECT_EQ(v1.struct_size, EphostHostApiSize(1)) << "an ABI 1 plugin gets an ABI 1 table";
  EXPECT_FALSE(EPHOST_STRUCT_HAS(&v1, EphostHostApi, value_kind));
#define EPHOST_EXPECT_IN_V1(name, ...) EXPECT_TRUE(present(v1.name)) << #name;
#define EPHOST_EXPECT_NOT_IN_V1(name, ...) EXPECT_FALSE(present(v1.name)) << #name " is past an ABI 1 table's end";
  EPHOST_FROZEN_HOST_API_ABI_1(EPHOST_EXPECT_IN_V1)
  EPHOST_FROZEN_HOST_API_ABI_2(EPHOST_EXPECT_NOT_IN_V1)
  EPHOST_FROZEN_HOST_API_ABI_3(EPHOST_EXPECT_NOT_IN_V1)
  EPHOST_FROZEN_HOST_API_ABI_4(EPHOST_EXPECT_NOT_IN_V1)
  EPHOST_FROZEN_HOST_API_ABI_5(EPHOST_EXPECT_NOT_IN_V1)

  const EphostHostApi v2 = ephost::make_host_api(2);
  EXPECT_EQ(v2.abi_version, 2u);
  EXPECT_EQ(v2.struct_size, EphostHostApiSize(2));
  EXPECT_TRUE(EPHOST_STRUCT_HAS(&v2, EphostHostApi, value_create_tensor));
#define EPHOST_EXPECT_IN_V2(name, ...) EXPECT_TRUE(present(v2.name)) << #name;
  EPHOST_FROZEN_HOST_API_ABI_1(EPHOST_EXPECT_IN_V2)
  EPHOST_FROZEN_HOST_API_ABI_2(EPHOST_EXPECT_IN_V2)
#define EPHOST_EXPECT_NOT_IN_V2(name, ...) EXPECT_FALSE(present(v2.name)) << #name " is past an ABI 2 table's end";
  EPHOST_FROZEN_HOST_API_ABI_3(EPHOST_EXPECT_NOT_IN_V2)
  EPHOST_FROZEN_HOST_API_ABI_4(EPHOST_EXPECT_NOT_IN_V2)
  EPHOST_FROZEN_HOST_API_ABI_5(EPHOST_EXPECT_NOT_IN_V2)

  const EphostHostApi v3 = ephost::make_host_api(3);
  EXPECT_EQ(v3.abi_version, 3u);
  EXPECT_EQ(v3.struct_size, EphostHostApiSize(3));
#define EPHOST_EXPECT_IN_V3(name, ...) EXPECT_TRUE(present(v3.name)) << #name;
  EPHOST_FROZEN_HOST_API_ABI_1(EPHOST_EXPECT_IN_V3)
  EPHOST_FROZEN_HOST_API_ABI_2(EPHOST_EXPECT_IN_V3)
  EPHOST_FROZEN_HOST_API_ABI_3(EPHOST_EXPECT_IN_V3)
#define EPHOST_EXPECT_NOT_IN_V3(name, ...) EXPECT_FALSE(present(v3.name)) << #name " is past an ABI 3 table's end";
  EPHOST_FROZEN_HOST_API_ABI_4(EPHOST_EXPECT_NOT_IN_V3)
  EPHOST_FROZEN_HOST_API_ABI_5(EPHOST_EXPECT_NOT_IN_V3)

  const EphostHostApi v4 = ephost::make_host_api(4);
  EXPECT_EQ(v4.abi_version, 4u);
  EXPECT_EQ(v4.struct_size, EphostHostApiSize(4));
#define EPHOST_EXPECT_IN_V4(name, ...) EXPECT_TRUE(present(v4.name)) << #name;
  EPHOST_FROZEN_HOST_API_ABI_1(EPHOST_EXPECT_IN_V4)
  EPHOST_FROZEN_HOST_API_ABI_2(EPHOST_EXPECT_IN_V4)
  EPHOST_FROZEN_HOST_API_ABI_3(EPHOST_EXPECT_IN_V4)
  EPHOST_FROZEN_HOST_API_ABI_4(EPHOST_EXPECT_IN_V4)
#define EPHOST_EXPECT_NOT_IN_V4(name, ...) EXPECT_FALSE(present(v4.name)) << #name " is past an ABI 4 table's end";
  EPHOST_FROZEN_HOST_API_ABI_5(EPHOST_EXPECT_NOT_IN_V4)

  const EphostHostApi v5 = ephost::make_host_api(5);
  EXPECT_EQ(v5.abi_version, 5u);
  EXPECT_EQ(v5.struct_size, EphostHostApiSize(5));
#define EPHOST_EXPECT_IN_V5(name, ...) EXPECT_TRUE(present(v5.name)) << #name;
  EPHOST_FROZEN_HOST_API_ABI_1(EPHOST_EXPECT_IN_V5)
  EPHOST_FROZEN_HOST_API_ABI_2(EPHOST_EXPECT_IN_V5)
  EPHOST_FROZEN_HOST_API_ABI_3(EPHOST_EXPECT_IN_V5)
  EPHOST_FROZEN_HOST_API_ABI_4(EPHOST_EXPECT_IN_V5)
  EPHOST_FROZEN_HOST_API_ABI_5(EPHOST_EXPECT_IN_V5)

  EXPECT_THROW(ephost::make_host_api(EPHOST_PLUGIN_ABI_VERSION + 1), std::logic_error);
}

// A plugin built against ABI 1: it answers 1 and keeps the host table it was offered.
const EphostHostApi* g_abi1_plugin_host = nullptr;
EphostStatus* abi1_describe(EphostPluginInfo*) { return nullptr; }
EphostStatus* abi1_provider_create(const char* const*, const char* const*, size_t, EphostProvider**) { return nullptr; }
void abi1_provider_release(EphostProvider*) {}
EphostStatus* abi1_get_capability(EphostProvider*, const EphostGraph*, EphostCapability*) { return nullptr; }
EphostStatus* abi1_negotiate(EphostPluginNegotiation* negotiation) {
  static const EphostPlugin table = [] {
    EphostPlugin t{};
    t.struct_size = EphostPluginSize(1);
    t.abi_version = 1;
    t.describe = &abi1_describe;
    t.provider_create = &abi1_provider_create;
    t.provider_release = &abi1_provider_release;
    t.get_capability = &abi1_get_capability;
    return t;
  }();
  g_abi1_plugin_host = negotiation->host_api;
  negotiation->plugin_abi_version = 1;
  negotiation->plugin = &table;
  return nullptr;
}

TEST(AbiLayout, NegotiatingAbi1LeavesThePluginAnAbi1Table) {
  ephost::PluginRecord record;
  ephost::negotiate_plugin(&abi1_negotiate, record);
  EXPECT_EQ(record.abi_version, 1u);
  ASSERT_EQ(record.host_api, g_abi1_plugin_host) << "the table the plugin keeps is the record's";
  EXPECT_EQ(record.host_api->abi_version, 1u);
  EXPECT_EQ(record.host_api->struct_size, EphostHostApiSize(1));
  EXPECT_EQ(record.host_api->value_create_tensor, nullptr);
  EXPECT_NE(record.host_api->context_set_attribute, nullptr);
}

TEST(AbiLayout, VersionsIncludeEveryOlderVersion) {
  EXPECT_TRUE(EphostPluginAbiIncludes(2, 1));
  EXPECT_TRUE(EphostPluginAbiIncludes(2, EPHOST_PLUGIN_ABI_NON_TENSOR_VALUES));
  EXPECT_FALSE(EphostPluginAbiIncludes(1, EPHOST_PLUGIN_ABI_NON_TENSOR_VALUES));
  EXPECT_TRUE(EphostPluginAbiIncludes(3, EPHOST_PLUGIN_ABI_NON_TENSOR_VALUES));
  EXPECT_FALSE(EphostPluginAbiIncludes(2, EPHOST_PLUGIN_ABI_DEVICES));
  EXPECT_TRUE(EphostPluginAbiIncludes(3, EPHOST_PLUGIN_ABI_DEVICES));
  EXPECT_FALSE(EphostPluginAbiIncludes(3, EPHOST_PLUGIN_ABI_RUN_CONTROL));
  EXPECT_TRUE(EphostPluginAbiIncludes(4, EPHOST_PLUGIN_ABI_RUN_CONTROL));
  EXPECT_TRUE(EphostPluginAbiIncludes(EPHOST_PLUGIN_ABI_VERSION, EPHOST_PLUGIN_ABI_MIN_VERSION));
}

}  // namespace
