// ContextStore (host/epcontext/context_store.h) on hand-made EPContext nodes: where a node's context
// bytes come from (its payload, or a binary resolved inside the model's folder), what is refused
// (escaping paths, missing, truncated and corrupted binaries) and in which words, how main_context=0
// nodes find their graph, raw payloads, and weight sharing through a ContextShareRegistry.
#include <gtest/gtest.h>

#include "core/error.h"
#include "epcontext/context_store.h"
#include "epcontext_fixture.h"

namespace {

using namespace epctx_test;
using ephost::Bytes;
using ephost::ContextShareRegistry;
using ephost::ContextStore;
using ephost_test::expect_error;

class EpContextStore : public ::testing::Test {
 protected:
  // A store for a model in dir_ (not from a buffer).
  ContextStore store(bool share = false) { return ContextStore(dir_.path().string(), false, share, registry_); }
  std::string canonical(const std::string& rel) const {
    return fs::weakly_canonical(dir_.path() / rel).string();
  }

  TempDir dir_;
  ContextShareRegistry registry_;
  const Bytes header1_ = bytes_of(48, 1), header2_ = bytes_of(64, 2), weight_ = bytes_of(3000, 3);
};

TEST_F(EpContextStore, EmbedModeOneTakesTheGraphOfThePartitionFromTheNodesPayload) {
  BuiltModel m = build(context_model(
      {{"ctx1", "EXAMPLE", 1, 1, container({{"p1", {header1_, weight_}}, {"p2", {header2_, weight_}}}), "p2"}}));
  ContextStore s = store();
  EXPECT_EQ(s.fetch(m.node("ctx1"), m.contexts()), concat({header2_, weight_}));
}

TEST_F(EpContextStore, GraphNamesMustMatchEvenWhenTheContainerHoldsOneGraph) {
  // Without partition_name the node's own name is looked up; a container of one graph of another name
  // is another model's context (a replaced .bin), never a guess.
  BuiltModel m = build(context_model({{"ctx1", "EXAMPLE", 1, 1, container({{"renamed", {header1_, weight_}}})}}));
  ContextStore s = store();
  expect_error([&] { s.fetch(m.node("ctx1"), m.contexts()); }, EPHOST_INVALID_GRAPH,
               {"EPContext node 'ctx1'", "holds no graph 'ctx1' (it holds 'renamed')"});
  BuiltModel named = build(context_model({{"ctx1", "EXAMPLE", 1, 1, container({{"ctx1", {header1_, weight_}}})}}));
  EXPECT_EQ(s.fetch(named.node("ctx1"), named.contexts()), concat({header1_, weight_}));
}

TEST_F(EpContextStore, DuplicateContextNodeNamesAreRefused) {
  onnx::ModelProto proto = context_model({{"ctx", "EXAMPLE", 1, 1, container({{"ctx", {header1_}}})},
                                           {"ctx2", "EXAMPLE", 1, 1, container({{"ctx", {header2_}}})}});
  proto.mutable_graph()->mutable_node(1)->set_name("ctx");
  BuiltModel m = build(proto);
  expect_error([&] { check_context_node_names(m.contexts()); }, EPHOST_INVALID_GRAPH, {"both named 'ctx'"});
}

TEST_F(EpContextStore, EmbedModeOneMustHaveAPayloadAndEmbedModeMustBeZeroOrOne) {
  BuiltModel empty = build(context_model({{"ctx1", "EXAMPLE", 1, 1, ""}}));
  ContextStore s = store();
  expect_error([&] { s.fetch(empty.node("ctx1"), empty.contexts()); }, EPHOST_INVALID_GRAPH,
               {"EPContext node 'ctx1'", "embed_mode 1 but an empty payload"});
  BuiltModel two = build(context_model({{"ctx1", "EXAMPLE", 1, 2, "model_example.bin"}}));
  expect_error([&] { s.fetch(two.node("ctx1"), two.contexts()); }, EPHOST_INVALID_GRAPH,
               {"EPContext node 'ctx1'", "embed_mode 2", "must be 0 or 1"});
  BuiltModel no_file = build(context_model({{"ctx1", "EXAMPLE", 1, 0, ""}}));
  expect_error([&] { s.fetch(no_file.node("ctx1"), no_file.contexts()); }, EPHOST_INVALID_GRAPH,
               {"EPContext node 'ctx1'", "embed_mode 0 but no file in ep_cache_context"});
}

TEST_F(EpContextStore, EmbedModeZeroReadsTheBinaryRelativeToTheModelsFolder) {
  dir_.write("sub/model_example.bin", container({{"p1", {header1_, weight_}}, {"p2", {header2_}}}));
  BuiltModel m = build(context_model({{"ctx1", "EXAMPLE", 1, 0, "sub/model_example.bin", "p1"}}));
  ContextStore s = store();
  EXPECT_EQ(s.fetch(m.node("ctx1"), m.contexts()), concat({header1_, weight_}));
  EXPECT_EQ(s.file_of("ctx1", "sub/model_example.bin"), canonical("sub/model_example.bin"));
  // A model written on Windows separates folders with '\'.
  EXPECT_EQ(s.file_of("ctx1", "sub\\model_example.bin"), canonical("sub/model_example.bin"));
  // The partition the node names must be in the binary.
  BuiltModel absent = build(context_model({{"ctx9", "EXAMPLE", 1, 0, "sub/model_example.bin", "p9"}}));
  expect_error([&] { s.fetch(absent.node("ctx9"), absent.contexts()); }, EPHOST_INVALID_GRAPH,
               {"EPContext node 'ctx9'", "holds no graph 'p9'"});
}

TEST_F(EpContextStore, TheBinaryIsReadOncePerStore) {
  dir_.write("model_example.bin", container({{"p1", {header1_}}, {"p2", {header2_}}}));
  BuiltModel m = build(context_model({{"a", "EXAMPLE", 1, 0, "model_example.bin", "p1"},
                                      {"b", "EXAMPLE", 1, 0, "model_example.bin", "p2"}}));
  ContextStore s = store();
  EXPECT_EQ(s.fetch(m.node("a"), m.contexts()), header1_);
  fs::remove(dir_.file("model_example.bin"));
  EXPECT_EQ(s.fetch(m.node("b"), m.contexts()), header2_);  // from the copy read for node a
  ContextStore fresh = store();
  expect_error([&] { fresh.fetch(m.node("b"), m.contexts()); }, EPHOST_INVALID_GRAPH, {"model_example.bin"});
}

TEST_F(EpContextStore, AnAbsolutePathIsRefusedNamingTheNodeAndThePath) {
  const std::string outside = dir_.write("elsewhere.bin", container({{"p1", {header1_}}}));
  BuiltModel m = build(context_model({{"ctx1", "EXAMPLE", 1, 0, outside, "p1"}}));
  ContextStore s = store();
  expect_error([&] { s.fetch(m.node("ctx1"), m.contexts()); }, EPHOST_INVALID_GRAPH,
               {"EPContext node 'ctx1' ep_cache_context", "'" + outside + "'", "is an absolute path"});
}

TEST_F(EpContextStore, ADotDotPathIsRefusedEvenWhenItComesBackInside) {
  TempDir outside;
  outside.write("model_example.bin", container({{"p1", {header1_}}}));
  dir_.write("model_example.bin", container({{"p1", {header1_}}}));
  ContextStore s = store();
  const std::vector<std::string> bad_paths{"../" + outside.path().filename().string() + "/model_example.bin",
                                           "sub/../model_example.bin", "..\\model_example.bin"};
  for (const std::string& bad : bad_paths) {
    SCOPED_TRACE(bad);
    BuiltModel m = build(context_model({{"ctx1", "EXAMPLE", 1, 0, bad, "p1"}}));
    expect_error([&] { s.fetch(m.node("ctx1"), m.contexts()); }, EPHOST_INVALID_GRAPH,
                 {"EPContext node 'ctx1' ep_cache_context", "'" + bad + "'", "leaves the model's folder"});
  }
}

TEST_F(EpContextStore, ASymlinkLeadingOutOfTheModelsFolderIsRefused) {
  TempDir outside;
  const std::string secret = outside.write("secret.bin", container({{"p1", {header1_}}}));
  fs::create_symlink(secret, dir_.path() / "model_example.bin");
  fs::create_directory_symlink(outside.path(), dir_.path() / "linked");
  ContextStore s = store();
  for (const std::string link : {"model_example.bin", "linked/secret.bin"}) {
    SCOPED_TRACE(link);
    BuiltModel m = build(context_model({{"ctx1", "EXAMPLE", 1, 0, link, "p1"}}));
    expect_error([&] { s.fetch(m.node("ctx1"), m.contexts()); }, EPHOST_INVALID_GRAPH,
                 {"EPContext node 'ctx1' ep_cache_context", "'" + link + "'", "outside the model's folder"});
  }
  // A symlink that stays inside is fine.
  dir_.write("real/model_example.bin", container({{"p1", {header1_}}}));
  fs::create_symlink(dir_.path() / "real" / "model_example.bin", dir_.path() / "inside.bin");
  BuiltModel m = build(context_model({{"ctx1", "EXAMPLE", 1, 0, "inside.bin", "p1"}}));
  EXPECT_EQ(s.fetch(m.node("ctx1"), m.contexts()), header1_);
}

TEST_F(EpContextStore, AMissingBinaryIsInvalidGraphNamingThePath) {
  BuiltModel m = build(context_model({{"ctx1", "EXAMPLE", 1, 0, "model_example.bin", "p1"}}));
  ContextStore s = store();
  expect_error([&] { s.fetch(m.node("ctx1"), m.contexts()); }, EPHOST_INVALID_GRAPH,
               {canonical("model_example.bin"), "does not exist"});
}

TEST_F(EpContextStore, ATruncatedBinaryIsRefused) {
  const std::string good = container({{"p1", {header1_, weight_}}});
  dir_.write("model_example.bin", good.substr(0, good.size() / 2));
  BuiltModel m = build(context_model({{"ctx1", "EXAMPLE", 1, 0, "model_example.bin", "p1"}}));
  ContextStore s = store();
  expect_error([&] { s.fetch(m.node("ctx1"), m.contexts()); }, EPHOST_INVALID_GRAPH,
               {"context binary '" + canonical("model_example.bin") + "'", "truncated"});
}

TEST_F(EpContextStore, ACorruptedBinaryIsRefused) {
  std::string bad = container({{"p1", {header1_, weight_}}});
  bad[bad.size() - 10] ^= 0x04;  // inside the weight
  dir_.write("model_example.bin", bad);
  BuiltModel m = build(context_model({{"ctx1", "EXAMPLE", 1, 0, "model_example.bin", "p1"}}));
  ContextStore s = store();
  expect_error([&] { s.fetch(m.node("ctx1"), m.contexts()); }, EPHOST_INVALID_GRAPH,
               {"context binary '" + canonical("model_example.bin") + "'", "checksum"});
  // The same damage in an embedded payload.
  BuiltModel embedded = build(context_model({{"ctx2", "EXAMPLE", 1, 1, bad, "p1"}}));
  expect_error([&] { s.fetch(embedded.node("ctx2"), embedded.contexts()); }, EPHOST_INVALID_GRAPH,
               {"the context embedded in EPContext node 'ctx2'", "checksum"});
}

TEST_F(EpContextStore, MainContextZeroFindsItsGraphInAMainContextOfTheSameSource) {
  dir_.write("model_example.bin", container({{"p1", {header1_, weight_}}, {"p2", {header2_, weight_}}}));
  dir_.write("model_other.bin", container({{"p2", {bytes_of(9, 9)}}, {"p3", {bytes_of(7, 7)}}}));
  // Node order matters not: the main context of another source comes first and holds a "p2" too.
  BuiltModel m = build(context_model({{"other_main", "OTHER", 1, 0, "model_other.bin", "p3"},
                                      {"second", "EXAMPLE", 0, 0, "", "p2"},
                                      {"main", "EXAMPLE", 1, 0, "model_example.bin", "p1"}}));
  ContextStore s = store();
  EXPECT_EQ(s.fetch(m.node("second"), m.contexts()), concat({header2_, weight_}));
  EXPECT_EQ(s.fetch(m.node("main"), m.contexts()), concat({header1_, weight_}));
}

TEST_F(EpContextStore, MainContextZeroWithoutItsGraphOrPartitionNameIsRefused) {
  dir_.write("model_example.bin", container({{"p1", {header1_}}}));
  ContextStore s = store();
  // A graph the main context does not hold: no single-graph shortcut for a main_context=0 node.
  BuiltModel absent = build(context_model({{"main", "EXAMPLE", 1, 0, "model_example.bin", "p1"},
                                           {"second", "EXAMPLE", 0, 0, "", "p2"}}));
  expect_error([&] { s.fetch(absent.node("second"), absent.contexts()); }, EPHOST_INVALID_GRAPH,
               {"EPContext node 'second' (main_context=0)", "graph 'p2'", "source 'EXAMPLE'"});
  // The only main context has another source.
  BuiltModel other = build(context_model({{"main", "OTHER", 1, 0, "model_example.bin", "p1"},
                                          {"second", "EXAMPLE", 0, 0, "", "p1"}}));
  expect_error([&] { s.fetch(other.node("second"), other.contexts()); }, EPHOST_INVALID_GRAPH,
               {"EPContext node 'second' (main_context=0)", "no main context with source 'EXAMPLE'"});
  BuiltModel unnamed = build(context_model({{"main", "EXAMPLE", 1, 0, "model_example.bin", "p1"},
                                            {"second", "EXAMPLE", 0, 0, ""}}));
  expect_error([&] { s.fetch(unnamed.node("second"), unnamed.contexts()); }, EPHOST_INVALID_GRAPH,
               {"EPContext node 'second'", "main_context=0 but no partition_name"});
}

TEST_F(EpContextStore, ARawPayloadIsPassedWhole) {
  // Bytes in a plugin's own format (no container magic), embedded or in a file.
  const std::string raw = "PLUGIN-OWN-FORMAT" + std::string(200, '\x7f');
  BuiltModel embedded = build(context_model({{"ctx1", "EXAMPLE", 1, 1, raw, "p1"}}));
  ContextStore s = store();
  EXPECT_EQ(as_string(s.fetch(embedded.node("ctx1"), embedded.contexts())), raw);
  dir_.write("raw.bin", raw);
  BuiltModel file = build(context_model({{"ctx2", "EXAMPLE", 1, 0, "raw.bin", "whatever"}}));
  EXPECT_EQ(as_string(s.fetch(file.node("ctx2"), file.contexts())), raw);
}

TEST_F(EpContextStore, AModelFromABufferNeedsContextFilePathForItsBinary) {
  ContextStore s("", true, false, registry_);
  BuiltModel m = build(context_model({{"ctx1", "EXAMPLE", 1, 0, "model_example.bin", "p1"}}));
  expect_error([&] { s.fetch(m.node("ctx1"), m.contexts()); }, EPHOST_INVALID_GRAPH,
               {"EPContext node 'ctx1'", "'model_example.bin'", "came from a buffer", "set ep.context_file_path"});
  // An embedded context needs no folder.
  BuiltModel embedded = build(context_model({{"ctx2", "EXAMPLE", 1, 1, container({{"p1", {header1_}}}), "p1"}}));
  EXPECT_EQ(s.fetch(embedded.node("ctx2"), embedded.contexts()), header1_);
}

TEST_F(EpContextStore, SharingLeavesUntakenGraphsForTheNextStoreWhichNeedsNoFile) {
  dir_.write("m1_example.bin", container({{"m1_p", {header1_, weight_}}, {"m2_p", {header2_, weight_}},
                                          {"m3_p", {bytes_of(5, 5), weight_}}}));
  const std::string path = canonical("m1_example.bin");
  BuiltModel m1 = build(context_model({{"c1", "EXAMPLE", 1, 0, "m1_example.bin", "m1_p"}}));
  BuiltModel m2 = build(context_model({{"c2", "EXAMPLE", 1, 0, "m1_example.bin", "m2_p"}}));
  {
    ContextStore first = store(true);
    EXPECT_EQ(first.fetch(m1.node("c1"), m1.contexts()), concat({header1_, weight_}));
    {
      auto lock = registry_.lock();
      EXPECT_EQ(registry_.waiting_graphs(path), 0u);  // nothing is published before publish_leftovers
    }
    first.publish_leftovers();
  }
  {
    auto lock = registry_.lock();
    EXPECT_EQ(registry_.waiting_graphs(path), 2u);  // m2_p and m3_p; m1_p was taken
  }
  fs::remove(dir_.file("m1_example.bin"));
  ContextStore second = store(true);
  EXPECT_EQ(second.fetch(m2.node("c2"), m2.contexts()), concat({header2_, weight_}));
  second.publish_leftovers();  // it read no file: nothing to add
  auto lock = registry_.lock();
  EXPECT_EQ(registry_.waiting_graphs(path), 1u);
  EXPECT_FALSE(registry_.take(path, "m1_p"));
  EXPECT_FALSE(registry_.take(path, "m2_p"));  // taken by the second store
  auto m3 = registry_.take(path, "m3_p");
  ASSERT_TRUE(m3);
  EXPECT_EQ(*m3, concat({bytes_of(5, 5), weight_}));
}

TEST_F(EpContextStore, WithoutSharingNothingIsPublishedAndNothingIsTaken) {
  dir_.write("m1_example.bin", container({{"m1_p", {header1_}}, {"m2_p", {header2_}}}));
  const std::string path = canonical("m1_example.bin");
  {
    auto lock = registry_.lock();
    registry_.put(path, "m1_p", bytes_of(3, 3));  // would be wrong bytes, were it taken
  }
  BuiltModel m = build(context_model({{"c1", "EXAMPLE", 1, 0, "m1_example.bin", "m1_p"}}));
  ContextStore s = store(false);
  EXPECT_EQ(s.fetch(m.node("c1"), m.contexts()), header1_);
  s.publish_leftovers();
  auto lock = registry_.lock();
  EXPECT_EQ(registry_.waiting_graphs(path), 1u);  // only what the test put there
}

TEST_F(EpContextStore, ARawBinaryIsNotPublishedForSharing) {
  dir_.write("raw.bin", "PLUGIN-OWN-FORMAT");
  BuiltModel m = build(context_model({{"c1", "EXAMPLE", 1, 0, "raw.bin", "p"}}));
  ContextStore s = store(true);
  EXPECT_EQ(as_string(s.fetch(m.node("c1"), m.contexts())), "PLUGIN-OWN-FORMAT");
  s.publish_leftovers();
  auto lock = registry_.lock();
  EXPECT_EQ(registry_.waiting_graphs(canonical("raw.bin")), 0u);
}

}  // namespace
