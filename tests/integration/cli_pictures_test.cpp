// `ephost run --dot` and `--memory-svg`: the partition and the recorded memory pattern drawn from the
// report, on a model split between the fakedev device plugin and the CPU plugin.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <sstream>

#include "test_support.h"
#include "test_paths.h"

namespace {

using ephost_test::TempDir;

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// x -> [add -> mul -> relu] on fakedev (one fused group) -> sub -> sigmoid on the CPU plugin: two
// copies per run (x up, r down) and two constants uploaded once.
ephost_test::CommandResult run_split(const TempDir& dir, const std::string& extra) {
  const std::string model = ephost_test::chain_model(4, 8).save(dir);
  return ephost_test::run_command("'" + std::string(EPHOST_CLI_PATH) + "' --plugin '" +
                                  ephost_test::test_plugin("ephost_test_fakedev") + "' run '" + model +
                                  "' --providers fakedev,cpu --option ep.fakedev.mode=fused "
                                  "--option ep.fakedev.claim=Add,Mul,Relu --values 0 " +
                                  extra + " 2>&1");
}

bool have_graphviz() { return std::system("command -v dot > /dev/null 2>&1") == 0; }

TEST(CliPictures, DotShowsProvidersFusedGroupsAndEachCopy) {
  TempDir dir;
  const std::string dot_path = dir.file("partition.dot");
  const auto r = run_split(dir, "--dot '" + dot_path + "'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("partition picture written to " + dot_path), std::string::npos) << r.output;
  const std::string dot = read_file(dot_path);
  ASSERT_EQ(dot.rfind("digraph partition {", 0), 0u) << dot;
  EXPECT_EQ(count(dot, "{"), count(dot, "}")) << dot;
  // The legend: both providers with their node counts, the copies.
  EXPECT_NE(dot.find("fakedev (fakedev:0)\\n3 nodes"), std::string::npos) << dot;
  EXPECT_NE(dot.find("cpu\\n2 nodes"), std::string::npos) << dot;
  EXPECT_NE(dot.find("2 copies per run (red)\\n2 constants uploaded once"), std::string::npos) << dot;
  // The fused group is a box of its own, holding its three nodes.
  const std::regex group(R"re(subgraph cluster_g0_f0 \{\s*label="([^"]*)\(fakedev\)")re");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(dot, m, group)) << dot;
  const size_t box = dot.find("subgraph cluster_g0_f0"), box_end = dot.find("\n  }", box);
  for (const char* node : {"add\\nAdd", "mul\\nMul", "relu\\nRelu"}) {
    const size_t at = dot.find(std::string("label=\"") + node);
    EXPECT_TRUE(at > box && at < box_end) << node << " inside the fused group's box\n" << dot;
  }
  // Exactly the two per-run copies are red, each saying from where to where.
  EXPECT_EQ(count(dot, "penwidth=2.2, fontcolor"), 2u) << dot;
  EXPECT_NE(dot.find("\"g0_in_x\" -> \"g0_n0\" [color=\"#d62728\", penwidth=2.2, fontcolor=\"#d62728\", "
                     "label=\"copy x\\nhost \xe2\x86\x92 fakedev:0\"]"),
            std::string::npos)
      << dot;
  EXPECT_NE(dot.find("label=\"copy r\\nfakedev:0 \xe2\x86\x92 host\""), std::string::npos) << dot;
  // An edge inside the group carries its value's name, and is not a copy.
  EXPECT_NE(dot.find("\"g0_n0\" -> \"g0_n1\" [label=\"a\"]"), std::string::npos) << dot;

  if (have_graphviz()) {  // the DOT is valid: graphviz reads it
    const auto check = ephost_test::run_command("dot -Tsvg -o /dev/null '" + dot_path + "' 2>&1");
    EXPECT_EQ(check.exit_code, 0) << check.output;
  }
}

TEST(CliPictures, SvgIsRenderedWithGraphvizOrTheErrorSaysHowToGetIt) {
  TempDir dir;
  const std::string svg_path = dir.file("partition.svg");
  const auto r = run_split(dir, "--dot '" + svg_path + "'");
  if (have_graphviz()) {
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(read_file(svg_path).find("<svg"), std::string::npos);
    EXPECT_FALSE(ephost_test::fs::exists(svg_path + ".dot")) << "the intermediate DOT file is removed";
    // --png renders whatever the name.
    const auto png = run_split(dir, "--png '" + dir.file("picture.out") + "'");
    ASSERT_EQ(png.exit_code, 0) << png.output;
    EXPECT_EQ(read_file(dir.file("picture.out")).substr(0, 4), "\x89PNG");
  } else {
    EXPECT_NE(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("apt-get install graphviz"), std::string::npos) << r.output;
    EXPECT_NE(read_file(svg_path + ".dot").find("digraph partition"), std::string::npos)
        << "the description is kept for rendering elsewhere";
  }
}

TEST(CliPictures, MemorySvgDrawsEachBlockAndEveryValueInIt) {
  TempDir dir;
  const std::string svg_path = dir.file("memory.svg");
  const auto r = run_split(dir, "--memory-svg '" + svg_path + "'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string svg = read_file(svg_path);
  ASSERT_EQ(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0), 0u) << svg;
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
  // One panel per block: host memory and the fake GPU's.
  EXPECT_NE(svg.find("block on host: "), std::string::npos) << svg;
  EXPECT_NE(svg.find("block on fakedev:0: "), std::string::npos) << svg;
  // The intermediate values, each a rectangle naming itself: r on the device, its copy and s on host.
  for (const char* value : {"<title>r: ", "<title>r@host: ", "<title>s: ", "<title>x@fakedev:0: "})
    EXPECT_EQ(count(svg, value), 1u) << value << "\n" << svg;
  EXPECT_EQ(count(svg, "stroke-dasharray"), 2u) << "each block's lower bound";

  // Without memory patterns there is nothing to draw, and the error says why.
  const auto off = run_split(dir, "--option session.enable_mem_pattern=0 --memory-svg '" + dir.file("none.svg") + "'");
  EXPECT_NE(off.exit_code, 0) << off.output;
  EXPECT_NE(off.output.find("no memory pattern was recorded"), std::string::npos) << off.output;
}

}  // namespace
