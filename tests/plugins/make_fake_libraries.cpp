// Writes the files that look like plugins by name but are not loadable, into the directory given as
// argv[1]: a text file (libnot_a_plugin.so), a 32-bit ELF shared object header (libephost_elf32.so) and
// a 64-bit ELF shared object header for another machine (libephost_wrong_machine.so). Headers only:
// discovery must reject them from their ELF header, before dlopen. Crafted rather than compiled so that
// no cross or multilib toolchain is needed.
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

namespace {

constexpr uint16_t kEtDyn = 3;
constexpr uint16_t kEm386 = 3;
constexpr uint16_t kEmX86_64 = 62;
constexpr uint16_t kEmAarch64 = 183;

// A machine that is not the one this tool (and so the host) is built for.
#if defined(__aarch64__)
constexpr uint16_t kForeignMachine = kEmX86_64;
#else
constexpr uint16_t kForeignMachine = kEmAarch64;
#endif

void put16(std::vector<unsigned char>& b, size_t at, uint16_t v) {
  b[at] = v & 0xff;
  b[at + 1] = v >> 8;
}

// A little-endian ELF header of a shared object with no program or section headers.
std::vector<unsigned char> elf_header(bool elf64, uint16_t machine) {
  size_t header_size = elf64 ? 64 : 52;
  std::vector<unsigned char> b(header_size, 0);
  b[0] = 0x7f, b[1] = 'E', b[2] = 'L', b[3] = 'F';
  b[4] = elf64 ? 2 : 1;  // EI_CLASS
  b[5] = 1;              // EI_DATA: little-endian
  b[6] = 1;              // EI_VERSION
  put16(b, 16, kEtDyn);
  put16(b, 18, machine);
  b[20] = 1;  // e_version
  size_t ehsize_at = elf64 ? 52 : 40;
  put16(b, ehsize_at, static_cast<uint16_t>(header_size));
  put16(b, ehsize_at + 2, elf64 ? 56 : 32);  // e_phentsize
  put16(b, ehsize_at + 6, elf64 ? 64 : 40);  // e_shentsize
  return b;
}

bool write(const std::string& path, const std::vector<unsigned char>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  if (!out) std::fprintf(stderr, "make_fake_libraries: cannot write %s\n", path.c_str());
  return static_cast<bool>(out);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_fake_libraries <output directory>\n");
    return 2;
  }
  std::string dir = argv[1];
  std::string text = "This is not a shared library, only a text file named like one.\n";
  bool ok = write(dir + "/libnot_a_plugin.so", std::vector<unsigned char>(text.begin(), text.end()));
  ok = write(dir + "/libephost_elf32.so", elf_header(false, kEm386)) && ok;
  ok = write(dir + "/libephost_wrong_machine.so", elf_header(true, kForeignMachine)) && ok;
  return ok ? 0 : 1;
}
