// What isolation mode auto remembers from the fault journal (isolation/fault_memory.h): a crash, a hang,
// and not a hang whose call returned after all (a slow compile on a loaded machine is no hang).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "isolation/fault_memory.h"

namespace ephost {
namespace {

namespace fs = std::filesystem;

class FaultMemory : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("ephost-fault-memory-" + std::to_string(getpid()));
    fs::create_directories(dir_);
    library_ = (dir_ / "libplugin.so").string();
    std::ofstream(library_) << "not really a library";
    library_ = fs::canonical(library_).string();
    journal_ = (dir_ / "registry.json.faults").string();
  }
  void TearDown() override { fs::remove_all(dir_); }
  // Journal lines after the library's modification time (a fault older than the file is forgotten).
  void journal(std::initializer_list<std::pair<const char*, const char*>> lines) {
    std::ofstream out(journal_);
    const long long at = static_cast<long long>(time(nullptr)) + 10;
    for (const auto& [kind, call] : lines)
      out << kind << '\t' << at << '\t' << "1234 ms" << '\t' << library_ << '\t' << call << '\n';
  }
  fs::path dir_;
  std::string library_, journal_;
};

TEST_F(FaultMemory, ACrashAndAHangAreRemembered) {
  journal({{"crashed", "compute"}});
  ASSERT_TRUE(remembered_fault(journal_, library_).has_value());
  EXPECT_EQ(remembered_fault(journal_, library_)->kind, "crashed");
  journal({{"hung", "compile"}});
  ASSERT_TRUE(remembered_fault(journal_, library_).has_value());
  EXPECT_EQ(remembered_fault(journal_, library_)->call, "compile");
  EXPECT_FALSE(remembered_fault(journal_, library_ + ".other").has_value());
}

TEST_F(FaultMemory, AHangWhoseCallReturnedIsForgotten) {
  journal({{"hung", "compile"}, {"returned", "compile"}});
  EXPECT_FALSE(remembered_fault(journal_, library_).has_value());
  // Another call's return does not cancel it, nor does a return cancel a crash.
  journal({{"hung", "compile"}, {"returned", "compute"}});
  EXPECT_TRUE(remembered_fault(journal_, library_).has_value());
  journal({{"crashed", "compile"}, {"returned", "compile"}});
  EXPECT_TRUE(remembered_fault(journal_, library_).has_value());
  // A later hang is remembered again.
  journal({{"hung", "compile"}, {"returned", "compile"}, {"hung", "compile"}});
  EXPECT_TRUE(remembered_fault(journal_, library_).has_value());
}

// The journal only grows; past its bound it keeps its newest lines, and what they say is still known.
TEST_F(FaultMemory, ALongJournalKeepsItsNewestLines) {
  {
    std::ofstream out(journal_);
    const long long at = static_cast<long long>(time(nullptr)) + 10;
    for (int i = 0; i < 2000; ++i)
      out << "hung" << '\t' << at << '\t' << i << " ms" << '\t' << library_ << '\t' << "compute" << '\n';
    out << "crashed" << '\t' << at << '\t' << "SIGSEGV" << '\t' << library_ << '\t' << "compile" << '\n';
  }
  ASSERT_GT(fs::file_size(journal_), 8192u);
  trim_fault_journal(journal_, 8192);
  EXPECT_LE(fs::file_size(journal_), 8192u / 2 + 1);
  std::ifstream in(journal_);
  std::string first, line, last;
  std::getline(in, first);
  EXPECT_EQ(first.rfind("hung\t", 0), 0u) << "starts at a whole line: " << first;
  for (last = first; std::getline(in, line);) last = line;
  EXPECT_EQ(last.rfind("crashed\t", 0), 0u) << last;
  ASSERT_TRUE(remembered_fault(journal_, library_).has_value());
  EXPECT_EQ(remembered_fault(journal_, library_)->call, "compile");
  // A short journal is left alone.
  const auto size = fs::file_size(journal_);
  trim_fault_journal(journal_, 8192);
  EXPECT_EQ(fs::file_size(journal_), size);
}

// Lines name the plugin whose call faulted (a provider, or the library's file for calls of the whole
// library): a provider is marked by its own faults and its library's, not by a sibling factory's.
TEST_F(FaultMemory, FaultsArePerPluginOfTheLibrary) {
  const long long at = static_cast<long long>(time(nullptr)) + 10;
  {
    std::ofstream out(journal_);
    out << "crashed\t" << at << "\tSIGSEGV\t" << library_ << "\tcompute\tortadd2\n";
  }
  EXPECT_TRUE(remembered_fault(journal_, library_, {"ortadd2", "libplugin.so"}).has_value());
  EXPECT_FALSE(remembered_fault(journal_, library_, {"ortadd", "libplugin.so"}).has_value());
  EXPECT_TRUE(remembered_fault(journal_, library_).has_value()) << "no plugin named: any fault of the library";
  {
    std::ofstream out(journal_, std::ios::app);
    out << "crashed\t" << at << "\tSIGSEGV\t" << library_ << "\tCreateEpFactories\tlibplugin.so\n";
  }
  ASSERT_TRUE(remembered_fault(journal_, library_, {"ortadd", "libplugin.so"}).has_value());
  EXPECT_EQ(remembered_fault(journal_, library_, {"ortadd", "libplugin.so"})->call, "CreateEpFactories");
  // A five-field line (a journal older than the plugin field) counts for every provider of the library.
  journal({{"crashed", "compile"}});
  EXPECT_TRUE(remembered_fault(journal_, library_, {"ortadd", "libplugin.so"}).has_value());
}

}  // namespace
}  // namespace ephost
