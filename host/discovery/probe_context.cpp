#include "discovery/probe_context.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <system_error>

#ifndef EPHOST_VERSION
#define EPHOST_VERSION "unknown"
#endif

extern char** environ;

namespace ephost {
namespace {

constexpr const char* kVolatileNames[] = {
    "_",         "PWD",          "OLDPWD",        "SHLVL",        "TERM",          "COLORTERM",
    "COLUMNS",   "LINES",        "PS1",           "PS2",          "PS3",           "PS4",
    "PROMPT_COMMAND", "HISTFILE", "HISTSIZE",     "HISTFILESIZE", "HISTCONTROL",   "LS_COLORS",
    "LESSOPEN",  "LESSCLOSE",    "MAIL",          "STY",          "WINDOW",        "WINDOWID",
    "VTE_VERSION", "GPG_TTY",    "INVOCATION_ID", "JOURNAL_STREAM", "DBUS_SESSION_BUS_ADDRESS",
    "XDG_SESSION_ID", "XDG_VTNR", "MAKEFLAGS",    "MAKELEVEL",    "MFLAGS",        "EPHOST_PLUGIN_REGISTRY"};
constexpr const char* kVolatilePrefixes[] = {"SSH_", "TMUX", "TERM_", "KONSOLE_", "GNOME_TERMINAL_", "ITERM_", "WT_"};

// How many changed variables a reason names before "and N more".
constexpr size_t kNamedVariables = 5;

// Entries of `folder` whose names start with `prefix`, as paths.
void add_entries(const std::filesystem::path& folder, const std::string& prefix, std::vector<std::string>& out) {
  std::error_code ec;
  std::filesystem::directory_iterator it(folder, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.rfind(prefix, 0) == 0) out.push_back(it->path().string());
  }
}

}  // namespace

std::string fnv1a64_hex(std::string_view bytes) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return fmt::format("{:016x}", h);
}

bool is_fnv1a64_hex(const std::string& text) {
  return text.size() == 16 &&
         std::all_of(text.begin(), text.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

bool is_volatile_variable(const std::string& name) {
  for (const char* n : kVolatileNames)
    if (name == n) return true;
  for (const char* p : kVolatilePrefixes)
    if (name.rfind(p, 0) == 0) return true;
  return false;
}

std::vector<std::string> accelerator_device_nodes() {
  std::vector<std::string> nodes;
  add_entries("/dev/dri", "", nodes);
  add_entries("/dev/accel", "", nodes);
  add_entries("/dev", "nvidia", nodes);
  for (const char* single : {"/dev/kfd", "/dev/dxg"}) {
    std::error_code ec;
    if (std::filesystem::exists(single, ec)) nodes.push_back(single);
  }
  std::sort(nodes.begin(), nodes.end());
  return nodes;
}

ProbeContext capture_probe_context() {
  ProbeContext context;
  for (char** e = environ; e && *e; ++e) {
    const std::string_view entry(*e);
    const size_t eq = entry.find('=');
    if (eq == std::string_view::npos || eq == 0) continue;
    std::string name(entry.substr(0, eq));
    // Names the registry file could not hold as they are (JSON text is UTF-8) are left out.
    if (!std::all_of(name.begin(), name.end(), [](char c) { return c > ' ' && c < 0x7f; })) continue;
    if (is_volatile_variable(name)) continue;
    // The first definition wins, as getenv sees it.
    context.environment.emplace(std::move(name), fnv1a64_hex(entry.substr(eq + 1)));
  }
  context.host_version = EPHOST_VERSION;
  std::string list;
  for (const std::string& node : accelerator_device_nodes()) list += node + "\n";
  context.devices = fnv1a64_hex(list);
  return context;
}

std::string describe_context_change(const ProbeContext& then, const ProbeContext& now) {
  std::vector<std::string> changed;  // sorted: both maps are
  auto a = then.environment.begin(), b = now.environment.begin();
  while (a != then.environment.end() || b != now.environment.end()) {
    if (b == now.environment.end() || (a != then.environment.end() && a->first < b->first)) {
      changed.push_back(a->first);  // unset since
      ++a;
    } else if (a == then.environment.end() || b->first < a->first) {
      changed.push_back(b->first);  // set since
      ++b;
    } else {
      if (a->second != b->second) changed.push_back(a->first);
      ++a;
      ++b;
    }
  }
  std::vector<std::string> reasons;
  if (!changed.empty()) {
    std::string names;
    for (size_t i = 0; i < changed.size() && i < kNamedVariables; ++i) names += (i ? ", " : "") + changed[i];
    if (changed.size() > kNamedVariables) names += fmt::format(" and {} more", changed.size() - kNamedVariables);
    reasons.push_back(fmt::format("the environment changed ({})", names));
  }
  if (then.devices != now.devices) reasons.push_back("the device list changed");
  if (then.host_version != now.host_version)
    reasons.push_back(fmt::format("the host version changed ({} -> {})", then.host_version, now.host_version));
  std::string out;
  for (const std::string& r : reasons) out += (out.empty() ? "" : "; ") + r;
  return out;
}

}  // namespace ephost
