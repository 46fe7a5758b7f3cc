// Looks at a candidate library's file header before dlopen, so that a library built for another
// architecture is skipped with a reason a user can act on ("wrong ELF class: ELFCLASS32 library, host is
// 64-bit") rather than dlopen's terse error. Same idea as Vulkan's loader (WRONG_BIT_TYPE).
#pragma once

#include <string>

namespace ephost {

// "" when `path` looks loadable by this process: an ELF shared object of the host's class, byte order
// and machine. Otherwise the reason it is not. On platforms without ELF the check always passes and
// dlopen's own error is reported instead.
std::string elf_incompatibility(const std::string& path);

// "EM_X86_64 (62)", "EM_AARCH64 (183)", "machine 4242" for unknown values.
std::string elf_machine_name(unsigned machine);

}  // namespace ephost
