#include "discovery/elf_probe.h"

#include <fmt/format.h>

#include <boost/dll/runtime_symbol_info.hpp>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>

#if defined(__ELF__) || defined(__linux__)
#include <elf.h>
#define EPHOST_HAVE_ELF 1
#endif

namespace ephost {

#ifdef EPHOST_HAVE_ELF
namespace {

// The fields of an ELF header discovery cares about, decoded in the file's own byte order.
struct ElfIdentity {
  unsigned elf_class = ELFCLASSNONE;  // ELFCLASS32 / ELFCLASS64
  unsigned byte_order = ELFDATANONE;  // ELFDATA2LSB / ELFDATA2MSB
  unsigned type = ET_NONE;
  unsigned machine = EM_NONE;
};

// e_type and e_machine are the first two 16-bit fields after e_ident in both ELF classes.
constexpr size_t kTypeOffset = EI_NIDENT;
constexpr size_t kMachineOffset = EI_NIDENT + 2;
constexpr size_t kHeaderPrefix = EI_NIDENT + 4;

unsigned read_u16(const unsigned char* p, unsigned byte_order) {
  return byte_order == ELFDATA2MSB ? (unsigned(p[0]) << 8) | p[1] : (unsigned(p[1]) << 8) | p[0];
}

// Reads the header prefix of `path`; on failure returns the reason in `*why`.
bool read_identity(const std::string& path, ElfIdentity* out, std::string* why) {
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    *why = fmt::format("cannot open file: {}", std::strerror(errno));
    return false;
  }
  unsigned char header[kHeaderPrefix] = {};
  file.read(reinterpret_cast<char*>(header), sizeof header);
  std::streamsize got = file.gcount();
  if (got < static_cast<std::streamsize>(SELFMAG) || std::memcmp(header, ELFMAG, SELFMAG) != 0) {
    *why = "not a shared library: no ELF header";
    return false;
  }
  if (got < static_cast<std::streamsize>(kHeaderPrefix)) {
    *why = fmt::format("not a shared library: truncated ELF header ({} bytes)", got);
    return false;
  }
  out->elf_class = header[EI_CLASS];
  out->byte_order = header[EI_DATA];
  out->type = read_u16(header + kTypeOffset, out->byte_order);
  out->machine = read_u16(header + kMachineOffset, out->byte_order);
  return true;
}

const char* class_name(unsigned elf_class) {
  switch (elf_class) {
    case ELFCLASS32: return "ELFCLASS32";
    case ELFCLASS64: return "ELFCLASS64";
    default: return "ELFCLASSNONE";
  }
}

const char* byte_order_name(unsigned byte_order) {
  switch (byte_order) {
    case ELFDATA2LSB: return "little-endian";
    case ELFDATA2MSB: return "big-endian";
    default: return "unknown byte order";
  }
}

const char* type_name(unsigned type) {
  switch (type) {
    case ET_NONE: return "ET_NONE";
    case ET_REL: return "ET_REL";
    case ET_EXEC: return "ET_EXEC";
    case ET_DYN: return "ET_DYN";
    case ET_CORE: return "ET_CORE";
    default: return "unknown";
  }
}

unsigned host_class() { return sizeof(void*) == 8 ? ELFCLASS64 : ELFCLASS32; }

unsigned host_byte_order() {
  const uint16_t probe = 1;
  unsigned char first = 0;
  std::memcpy(&first, &probe, 1);
  return first == 1 ? ELFDATA2LSB : ELFDATA2MSB;
}

// The machine this process runs, read from its executable's header (/proc/self/exe on Linux): no
// per-architecture table to keep up to date. EM_NONE when it cannot be read, which disables the check.
unsigned host_machine() {
  static const unsigned machine = [] {
    try {
      ElfIdentity self;
      std::string why;
      if (read_identity(boost::dll::program_location().string(), &self, &why)) return self.machine;
    } catch (...) {
    }
    return static_cast<unsigned>(EM_NONE);
  }();
  return machine;
}

}  // namespace

std::string elf_machine_name(unsigned machine) {
  const char* name = nullptr;
  switch (machine) {
    case EM_386: name = "EM_386"; break;
    case EM_ARM: name = "EM_ARM"; break;
    case EM_X86_64: name = "EM_X86_64"; break;
    case EM_AARCH64: name = "EM_AARCH64"; break;
    case EM_PPC: name = "EM_PPC"; break;
    case EM_PPC64: name = "EM_PPC64"; break;
    case EM_S390: name = "EM_S390"; break;
    case EM_MIPS: name = "EM_MIPS"; break;
    case EM_SPARCV9: name = "EM_SPARCV9"; break;
    case EM_RISCV: name = "EM_RISCV"; break;
    case 258: name = "EM_LOONGARCH"; break;  // not in every <elf.h> yet
    default: return fmt::format("machine {}", machine);
  }
  return fmt::format("{} ({})", name, machine);
}

std::string elf_incompatibility(const std::string& path) {
  ElfIdentity lib;
  std::string why;
  if (!read_identity(path, &lib, &why)) return why;
  if (lib.elf_class != host_class())
    return fmt::format("wrong ELF class: {} library, host is {}-bit", class_name(lib.elf_class),
                       host_class() == ELFCLASS64 ? 64 : 32);
  if (lib.byte_order != host_byte_order())
    return fmt::format("wrong byte order: {} library, host is {}", byte_order_name(lib.byte_order),
                       byte_order_name(host_byte_order()));
  if (lib.type != ET_DYN)
    return fmt::format("not a shared library: ELF type {} ({}), expected ET_DYN", type_name(lib.type), lib.type);
  unsigned machine = host_machine();
  if (machine != EM_NONE && lib.machine != machine)
    return fmt::format("built for machine {}, host is {}", elf_machine_name(lib.machine),
                       elf_machine_name(machine));
  return {};
}

#else  // no ELF on this platform: dlopen/LoadLibrary reports incompatible files itself.

std::string elf_machine_name(unsigned machine) { return fmt::format("machine {}", machine); }
std::string elf_incompatibility(const std::string&) { return {}; }

#endif

}  // namespace ephost
