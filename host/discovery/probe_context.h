// What a plugin's probe verdict may depend on besides the library file: the environment the host passes
// to plugins (the scanner's child gets the whole environ), the host's version and the accelerator device
// nodes present. The registry cache (registry_cache.h) records this context with every usable
// verdict, refusal and timeout, so that such a verdict is probed again once its cause may have gone: a
// plugin that refused because a variable was unset (the conformance kit's observer without
// EPHOST_CTS_TARGET), a GPU plugin probed before its driver created its device nodes, or an OpenCL
// plugin that listed no device under another OCL_ICD_VENDORS.
//
// No secret ever reaches the cache: each variable is kept as its name and a hash of its value (FNV-1a
// 64, 16 lowercase hex digits), enough to tell that it changed and to name it, never the value. (A
// hash is a change detector, not encryption: a short, guessable value can be found from it.)
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace ephost {

struct ProbeContext {
  // Variable name -> fnv1a64_hex(value), for every variable of the environment except the volatile
  // ones (is_volatile_variable).
  std::map<std::string, std::string> environment;
  std::string host_version;  // the ephost version (EPHOST_VERSION)
  // fnv1a64_hex of the sorted accelerator device node paths, one per line (accelerator_device_nodes).
  std::string devices;

  bool operator==(const ProbeContext& o) const {
    return environment == o.environment && host_version == o.host_version && devices == o.devices;
  }
  bool operator!=(const ProbeContext& o) const { return !(*this == o); }
};

// FNV-1a 64 of `bytes` as 16 lowercase hex digits.
std::string fnv1a64_hex(std::string_view bytes);
// True for exactly what fnv1a64_hex writes (16 lowercase hex digits).
bool is_fnv1a64_hex(const std::string& text);

// Variables left out of the fingerprint: shell and terminal session noise that changes from one shell,
// window or login to the next and says nothing about a plugin's verdict:
//   exactly _  PWD  OLDPWD  SHLVL  TERM  COLORTERM  COLUMNS  LINES  PS1-PS4  PROMPT_COMMAND  HISTFILE
//           HISTSIZE  HISTFILESIZE  HISTCONTROL  LS_COLORS  LESSOPEN  LESSCLOSE  MAIL  STY  WINDOW
//           WINDOWID  VTE_VERSION  GPG_TTY  INVOCATION_ID  JOURNAL_STREAM  DBUS_SESSION_BUS_ADDRESS
//           XDG_SESSION_ID  XDG_VTNR  MAKEFLAGS  MAKELEVEL  MFLAGS  EPHOST_PLUGIN_REGISTRY (which
//           cache file holds the verdict, not an input of the verdict)
//   prefixes SSH_  TMUX  TERM_  KONSOLE_  GNOME_TERMINAL_  ITERM_  WT_
bool is_volatile_variable(const std::string& name);

// The accelerator device nodes present now: /dev/dri/*, /dev/nvidia*, /dev/kfd, /dev/accel/*,
// /dev/dxg (paths, sorted). Missing folders are no error.
std::vector<std::string> accelerator_device_nodes();

// The context of a probe run now: this process's environment (the scanner child inherits it), the host
// version and the device nodes.
ProbeContext capture_probe_context();

// Why a verdict recorded under `then` may no longer hold under `now`, or "" when nothing changed:
// "the environment changed (EPHOST_CTS_TARGET)" (the variables set, unset or changed, sorted, the
// first 5 named), "the device list changed", "the host version changed (0.1.0 -> 0.2.0)"; several are
// joined with "; ".
std::string describe_context_change(const ProbeContext& then, const ProbeContext& now);

}  // namespace ephost
