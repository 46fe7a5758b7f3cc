// Function tables handed out at the version a caller negotiated or asked for (ephost_plugin.h's
// EphostHostApi, ephost_c_api.h's EphostApi): the newest table, cut to that version's size.
#pragma once

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace ephost {

// `table`, filled with the newest version's functions, cut to `version_size` bytes (the public
// header's EphostHostApiSize / EphostApiSize of the caller's version, 0 for a version it does not know):
// struct_size says so, and every member past it is NULL. A caller that reads past struct_size then
// finds nothing to call, instead of functions of a version it never agreed to.
template <typename Table>
Table cut_to_version_size(Table table, uint32_t version_size, const char* what) {
  static_assert(std::is_trivially_copyable_v<Table>, "function tables are plain C structs");
  if (version_size == 0 || version_size > sizeof(Table))
    throw std::logic_error(std::string(what) + ": no table of that version in this build");
  unsigned char* bytes = reinterpret_cast<unsigned char*>(&table);
  std::memset(bytes + version_size, 0, sizeof(Table) - version_size);
  table.struct_size = version_size;
  return table;
}

}  // namespace ephost
