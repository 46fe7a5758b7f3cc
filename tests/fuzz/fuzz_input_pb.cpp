// Fuzz harness: the value files `ephost run --inputs` and `ephost test` read (tools/cli: TensorProto,
// SequenceProto, OptionalProto, external data). The file lies in a case folder that also holds a data
// file it may name; a canary file lies outside the folder, and a value that contains its bytes means
// the reader followed a path out of the folder: that is a finding (abort), like a crash.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "ephost/ephost_cxx_api.h"
#include "fuzz_support.h"
#include "host_value.h"
#include "tensor_io.h"

namespace {

constexpr char kCanary[] = "EPHOST-FUZZ-CANARY-OUTSIDE-THE-FOLDER";

struct Folders {
  std::filesystem::path case_dir, value_file;
  Folders() {
    const auto& root = ephost_fuzz::scratch_folder();
    case_dir = root / "case";
    value_file = case_dir / "input_0.pb";
    ephost_fuzz::write_file(root / "canary.bin", kCanary, sizeof(kCanary) - 1);
    std::string data(256, '\0');
    for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>(i);
    ephost_fuzz::write_file(case_dir / "data.bin", data.data(), data.size());
  }
};

// A plain loop, not memcmp: libFuzzer learns the operands of memcmp calls and would soon write the
// canary into its inputs itself.
bool contains_canary(const void* data, size_t size) {
  const auto* p = static_cast<const char*>(data);
  const size_t n = sizeof(kCanary) - 1;
  for (size_t i = 0; i + n <= size; ++i) {
    size_t k = 0;
    while (k < n && p[i + k] == kCanary[k]) ++k;
    if (k == n) return true;
  }
  return false;
}

void check(const ephost_cli::HostTensor& t) {
  if (t.elem_type() == EPHOST_ELEMENT_STRING) {
    for (const std::string& s : t.strings())
      if (contains_canary(s.data(), s.size())) std::abort();
  } else if (contains_canary(t.data(), t.byte_size())) {
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const Folders folders;
  // An input that holds the canary itself proves nothing when a value holds it too (found by fuzzing).
  if (contains_canary(data, size)) return 0;
  ephost_fuzz::write_file(folders.value_file, data, size);
  const std::string path = folders.value_file.string();
  for (int32_t kind : {EPHOST_VALUE_TENSOR, EPHOST_VALUE_SEQUENCE, EPHOST_VALUE_OPTIONAL}) {
    try {
      ephost_cli::DeclaredKind declared;
      declared.kind = kind;
      declared.optional_kind = EPHOST_VALUE_TENSOR;
      declared.tensor_elem_type = EPHOST_ELEMENT_FLOAT;
      ephost_cli::LoadedHostValue v = ephost_cli::load_declared_value(path, declared);
      if (!v.value) continue;
      if (v.value->kind() == ephost_cli::HostValue::Kind::kTensor) check(v.value->tensor());
      if (v.value->kind() == ephost_cli::HostValue::Kind::kSequence)
        for (const auto& e : v.value->elements()) check(e);
    } catch (const Ephost::Exception&) {
    }
  }
  return 0;
}
