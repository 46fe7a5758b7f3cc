// ephost plugin SDK — versions as MAJOR.MINOR.PATCH, for the compatibility rules a provider applies to
// its own cached contexts (EPContext's ep_sdk_version, a plugin version kept in a blob's header): parse
// both sides strictly, then compare the parts the rule names. A version that does not parse is a reason
// to refuse the context, never a guess.
// Part of the plugin SDK, included on its own: "ephost/sdk/plugin.hpp" does not bring it.
//
// Added in ephost 0.1.0, alongside plugin ABI 3. Header-only; nothing here calls the host, so it works
// under every ABI version.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <tuple>

namespace ephost::sdk {

struct Semver {
  uint64_t major = 0, minor = 0, patch = 0;

  friend bool operator==(const Semver& a, const Semver& b) { return a.tuple() == b.tuple(); }
  friend bool operator!=(const Semver& a, const Semver& b) { return !(a == b); }
  friend bool operator<(const Semver& a, const Semver& b) { return a.tuple() < b.tuple(); }
  friend bool operator>(const Semver& a, const Semver& b) { return b < a; }
  std::string to_string() const {
    return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
  }

 private:
  std::tuple<uint64_t, uint64_t, uint64_t> tuple() const { return {major, minor, patch}; }
};

// "MAJOR.MINOR.PATCH": three decimal numbers of 1 to 9 digits, nothing before, between or after them
// (no sign, space, "v", pre-release or build suffix; those never name a context's builder). nullopt
// for anything else. Leading zeros are accepted ("1.02.0" is 1.2.0).
inline std::optional<Semver> parse_semver(const std::string& text) {
  uint64_t parts[3] = {0, 0, 0};
  size_t part = 0, digits = 0;
  for (char c : text) {
    if (c == '.') {
      if (digits == 0 || ++part == 3) return std::nullopt;
      digits = 0;
    } else if (c >= '0' && c <= '9' && digits < 9) {
      parts[part] = parts[part] * 10 + static_cast<uint64_t>(c - '0');
      ++digits;
    } else {
      return std::nullopt;
    }
  }
  if (part != 2 || digits == 0) return std::nullopt;
  return Semver{parts[0], parts[1], parts[2]};
}

}  // namespace ephost::sdk
