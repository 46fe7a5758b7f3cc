// model/initializer_release.h on its own: when an initializer's bytes may go (every step reading it
// done, every provider it was handed to done, a model file to read it back from), and that reading
// back gives the same bytes or a clear error, never other bytes.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cstring>
#include <filesystem>
#include <memory>

#include "core/error.h"
#include "model/initializer_release.h"
#include "model/tensor_proto.h"
#include "model_builders.h"

namespace {

using namespace ephost;
using namespace ephost_test;

// Y = Add(X, W), W a float [2,3] initializer with values starting at `first`.
std::string model_with_weight(float first) {
  auto m = make_model();
  auto* g = m.mutable_graph();
  add_input(g, "X");
  add_initializer(g, float_tensor("W", {2, 3}, {first, 2, 3, 4, 5, 6}));
  add_node(g, "Add", {"X", "W"}, {"Y"}, "add");
  add_output(g, "Y");
  return serialize(m);
}

struct Fixture {
  TempDir dir;
  std::string path = dir.write("w.onnx", model_with_weight(1));
  std::shared_ptr<InitializerRelease> release = std::make_shared<InitializerRelease>(path, LoadOptions{});
  std::shared_ptr<Tensor> w = std::make_shared<Tensor>(tensor_from_proto(float_tensor("W", {2, 3}, {1, 2, 3, 4, 5, 6})));
  int provider = 0, other_provider = 0, step = 0, other_step = 0;
  Fixture() { release->add_from_file("W", w); }
};

TEST(InitializerRelease, FreedOnlyWhenEveryStepReadingItIsDone) {
  Fixture f;
  const InitializerReader reader{&f.provider, &f.step}, other{&f.provider, &f.other_step};
  f.release->note_handout(f.w.get(), reader);  // its compile read the data
  EXPECT_EQ(f.release->release_if_done(f.w.get(), {reader}), 0u) << "nobody said done";
  EXPECT_TRUE(f.release->note_done(f.w.get(), reader));
  EXPECT_EQ(f.release->release_if_done(f.w.get(), {reader, other}), 0u) << "another step of that provider reads it";
  EXPECT_EQ(f.release->release_if_done(f.w.get(), {reader, {}}), 0u) << "a reader that cannot say";
  EXPECT_NE(f.w->data(), nullptr);
  EXPECT_EQ(f.release->release_if_done(f.w.get(), {reader}), 6 * sizeof(float));
  EXPECT_TRUE(f.w->data_released());
  EXPECT_EQ(f.w->data(), nullptr);
  EXPECT_EQ(f.release->released_count(), 1u);
  EXPECT_EQ(f.release->released_bytes(), 6 * sizeof(float));
}

TEST(InitializerRelease, DoneWithBytesNeverAskedForKeepsThem) {
  Fixture f;
  const InitializerReader reader{&f.provider, &f.step};
  // Its step reads the value as an input at run time, if at all: "done" with a view it never had
  // cannot cover that.
  EXPECT_TRUE(f.release->note_done(f.w.get(), reader));
  EXPECT_EQ(f.release->release_if_done(f.w.get(), {reader}), 0u);
  EXPECT_FALSE(f.w->data_released());
  f.release->note_handout(f.w.get(), reader);
  f.release->note_done(f.w.get(), reader);
  EXPECT_EQ(f.release->release_if_done(f.w.get(), {reader}), 6 * sizeof(float)) << "handed, then done";
}

TEST(InitializerRelease, ACopyMadeUnderTheLockIsEmptyOnlyWhileFreed) {
  Fixture f;
  const InitializerReader reader{&f.provider, &f.step};
  Tensor held = f.release->copy_if_held(*f.w);
  ASSERT_FALSE(held.empty());
  EXPECT_EQ(held.data(), f.w->data());
  f.release->note_handout(f.w.get(), reader);
  f.release->note_done(f.w.get(), reader);
  ASSERT_GT(f.release->release_if_done(f.w.get(), {reader}), 0u);
  EXPECT_TRUE(f.release->copy_if_held(*f.w).empty());
  const float want[] = {1, 2, 3, 4, 5, 6};
  EXPECT_EQ(std::memcmp(held.data(), want, sizeof(want)), 0) << "a copy made before keeps its bytes";
  f.w->ensure_data();
  EXPECT_FALSE(f.release->copy_if_held(*f.w).empty());
}

TEST(InitializerRelease, KeptWhileAProviderThatWasHandedItIsNotDone) {
  Fixture f;
  const InitializerReader reader{&f.provider, &f.step};
  f.release->note_handout(f.w.get(), reader);
  f.release->note_handout(f.w.get(), {&f.other_provider, nullptr});  // read it in get_capability, say
  f.release->note_done(f.w.get(), reader);
  EXPECT_EQ(f.release->release_if_done(f.w.get(), {reader}), 0u);
  f.release->note_handout(f.w.get(), {nullptr, nullptr});  // a reader the host cannot name
  f.release->note_done(f.w.get(), {&f.other_provider, nullptr});
  EXPECT_EQ(f.release->release_if_done(f.w.get(), {reader}), 0u) << "an unnamed reader keeps it for good";
}

TEST(InitializerRelease, AskingAgainAfterDoneUndoesTheDone) {
  Fixture f;
  const InitializerReader reader{&f.provider, &f.step};
  f.release->note_done(f.w.get(), reader);
  f.release->note_handout(f.w.get(), {&f.provider, nullptr});  // a run asked for the data again
  EXPECT_EQ(f.release->release_if_done(f.w.get(), {reader}), 0u);
}

TEST(InitializerRelease, ReadBackFromTheFileWithTheSameBytes) {
  Fixture f;
  const InitializerReader reader{&f.provider, &f.step};
  f.release->note_handout(f.w.get(), reader);
  f.release->note_done(f.w.get(), reader);
  ASSERT_GT(f.release->release_if_done(f.w.get(), {reader}), 0u);
  f.w->ensure_data();
  ASSERT_NE(f.w->data(), nullptr);
  EXPECT_FALSE(f.w->data_released());
  const float want[] = {1, 2, 3, 4, 5, 6};
  EXPECT_EQ(std::memcmp(f.w->data(), want, sizeof(want)), 0);
  EXPECT_EQ(f.release->restores(), 1u);
  EXPECT_EQ(f.release->released_count(), 0u);
  f.w->ensure_data();
  EXPECT_EQ(f.release->restores(), 1u) << "nothing freed, nothing read";
}

TEST(InitializerRelease, AFileThatChangedIsAClearErrorAndTheBytesStayFreed) {
  Fixture f;
  const InitializerReader reader{&f.provider, &f.step};
  f.release->note_handout(f.w.get(), reader);
  f.release->note_done(f.w.get(), reader);
  ASSERT_GT(f.release->release_if_done(f.w.get(), {reader}), 0u);
  f.dir.write("w.onnx", model_with_weight(7));
  try {
    f.w->ensure_data();
    ADD_FAILURE() << "other bytes were read back";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), EPHOST_FAIL);
    EXPECT_NE(std::string(e.what()).find("initializer 'W'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("no longer holds the same bytes"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(f.w->data_released());
  EXPECT_EQ(f.w->data(), nullptr);
}

TEST(InitializerRelease, ARelativeModelPathIsReadBackAfterTheWorkingFolderChanged) {
  TempDir dir, elsewhere;
  dir.write("w.onnx", model_with_weight(1));
  const std::filesystem::path before = std::filesystem::current_path();
  std::filesystem::current_path(dir.path());
  auto release = std::make_shared<InitializerRelease>("w.onnx", LoadOptions{});
  std::filesystem::current_path(elsewhere.path());  // the application moved on
  auto w = std::make_shared<Tensor>(tensor_from_proto(float_tensor("W", {2, 3}, {1, 2, 3, 4, 5, 6})));
  release->add_from_file("W", w);
  int provider = 0, step = 0;
  release->note_handout(w.get(), {&provider, &step});
  release->note_done(w.get(), {&provider, &step});
  ASSERT_GT(release->release_if_done(w.get(), {{&provider, &step}}), 0u);
  try {
    w->ensure_data();
  } catch (const std::exception& e) {
    ADD_FAILURE() << e.what();
  }
  std::filesystem::current_path(before);
  ASSERT_NE(w->data(), nullptr);
  const float want[] = {1, 2, 3, 4, 5, 6};
  EXPECT_EQ(std::memcmp(w->data(), want, sizeof(want)), 0);
}

TEST(InitializerRelease, AModelFromABufferFreesNothing) {
  auto release = std::make_shared<InitializerRelease>("", LoadOptions{});
  auto w = std::make_shared<Tensor>(tensor_from_proto(float_tensor("W", {2, 3}, {1, 2, 3, 4, 5, 6})));
  release->add_from_file("W", w);
  int provider = 0;
  EXPECT_FALSE(release->note_done(w.get(), {&provider, nullptr}));
  EXPECT_EQ(release->release_if_done(w.get(), {{&provider, nullptr}}), 0u);
}

}  // namespace
