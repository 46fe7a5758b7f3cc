// The session configuration keys the host owns (plugin_api/include/ephost/ephost_session_options_keys.h
// documents each one), and how an unknown key is told apart from a provider option.
#pragma once

#include <string>
#include <vector>

namespace ephost {

enum class OptionKind { kFlag, kInteger, kString, kPath };

struct OptionKey {
  const char* key;
  OptionKind kind;
};

// Every key the host understands, in the header's order.
const std::vector<OptionKey>& known_option_keys();

// True for keys in a namespace the host owns: session.*, ep.context_*, ep.share_*, ep.stop_share_*.
bool is_host_option_namespace(const std::string& key);

// Throws INVALID_ARGUMENT for a key in a host namespace that is not a known key, naming the closest
// known key ("did you mean ...?"). Provider options (ep.<provider>.<key>) and known keys pass.
void check_option_key(const std::string& key);

// The known key closest to `key` by edit distance ("" when none is reasonably close).
std::string closest_option_key(const std::string& key);

}  // namespace ephost
