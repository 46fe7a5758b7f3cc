// Sequence and optional values end to end through the C API (ephost_c_api.h version 2): feeding and
// receiving sequences and empty optionals, sequence ops, Loop carrying a sequence and reading an
// outer-scope value, Scan with reversed and strided scan inputs, and the errors a caller can make.
// Also `ephost test` on a case whose data files are SequenceProto and OptionalProto.
#include <gtest/gtest.h>
#include <onnx/onnx-data_pb.h>
#include <sys/wait.h>

#include <cstdio>
#include <fstream>

#include "ephost/ephost_cxx_api.h"
#include "test_support.h"
#include "test_paths.h"

namespace {

using ephost_test::ModelBuilder;

// Declares `vi` a sequence of `elem` tensors.
void set_sequence_type(onnx::ValueInfoProto* vi, const std::string& name, int32_t elem) {
  vi->set_name(name);
  vi->mutable_type()->mutable_sequence_type()->mutable_elem_type()->mutable_tensor_type()->set_elem_type(elem);
}

// Declares `vi` an optional `elem` tensor of rank `rank` (dims unknown).
void set_optional_tensor_type(onnx::ValueInfoProto* vi, const std::string& name, int32_t elem) {
  vi->set_name(name);
  vi->mutable_type()->mutable_optional_type()->mutable_elem_type()->mutable_tensor_type()->set_elem_type(elem);
}

void set_int(onnx::NodeProto& node, const std::string& attr, int64_t v) {
  auto* a = node.add_attribute();
  a->set_name(attr);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}

void set_ints(onnx::NodeProto& node, const std::string& attr, const std::vector<int64_t>& v) {
  auto* a = node.add_attribute();
  a->set_name(attr);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}

onnx::NodeProto& add_node(onnx::GraphProto& g, const std::string& op, const std::vector<std::string>& in,
                          const std::vector<std::string>& out) {
  auto* n = g.add_node();
  n->set_op_type(op);
  n->set_name(out.front() + "_" + op);
  for (const auto& i : in) n->add_input(i);
  for (const auto& o : out) n->add_output(o);
  return *n;
}

void add_int64_initializer(onnx::GraphProto& g, const std::string& name, const std::vector<int64_t>& dims,
                           const std::vector<int64_t>& values) {
  auto* t = g.add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::INT64);
  for (int64_t d : dims) t->add_dims(d);
  for (int64_t v : values) t->add_int64_data(v);
}

Ephost::Env& env() {
  static Ephost::Env e(EPHOST_LOG_ERROR, std::vector<std::string>{});
  return e;
}

Ephost::Tensor floats(std::vector<float>& v, const std::vector<int64_t>& shape) {
  return Ephost::Tensor::wrap(EPHOST_ELEMENT_FLOAT, shape, v.data(), v.size());
}

std::vector<std::vector<float>> elements_of(const Ephost::Tensor& seq) {
  std::vector<std::vector<float>> out;
  for (const auto& e : seq.elements()) out.push_back(e.to_vector<float>());
  return out;
}

// seq, t, pos -> s1 = SequenceInsert(seq, t); n = SequenceLength(s1); at = SequenceAt(s1, pos);
// s2 = SequenceErase(s1) (the last); cat = ConcatFromSequence(s2, axis 0); parts = SplitToSequence(cat, 3)
std::string sequence_ops_model() {
  ModelBuilder m(17);
  auto& g = *m.proto().mutable_graph();
  set_sequence_type(g.add_input(), "seq", onnx::TensorProto::FLOAT);
  m.input("t", onnx::TensorProto::FLOAT, {2}).input("pos", onnx::TensorProto::INT64, {});
  add_int64_initializer(g, "three", {}, {3});
  m.node("SequenceInsert", {"seq", "t"}, {"s1"}, "insert");
  m.node("SequenceLength", {"s1"}, {"n"}, "length");
  m.node("SequenceAt", {"s1", "pos"}, {"at"}, "at");
  m.node("SequenceErase", {"s1"}, {"s2"}, "erase");
  set_int(m.node("ConcatFromSequence", {"s2"}, {"cat"}, "concat"), "axis", 0);
  m.node("SplitToSequence", {"cat", "three"}, {"parts"}, "split");
  set_sequence_type(g.add_output(), "s1", onnx::TensorProto::FLOAT);
  m.output("n", onnx::TensorProto::INT64, {}).output("at", onnx::TensorProto::FLOAT, {2});
  m.output("cat", onnx::TensorProto::FLOAT, {-1});
  set_sequence_type(g.add_output(), "parts", onnx::TensorProto::FLOAT);
  return m.bytes();
}

TEST(SequenceValues, SequenceOpsThroughTheCApi) {
  const std::string bytes = sequence_ops_model();
  Ephost::Session s(env(), bytes.data(), bytes.size());
  EXPECT_EQ(s.input_type(0).kind, EPHOST_VALUE_SEQUENCE);
  EXPECT_EQ(s.input_type(0).elem_type, EPHOST_ELEMENT_FLOAT);
  EXPECT_EQ(s.input_type(1).kind, EPHOST_VALUE_TENSOR);
  EXPECT_EQ(s.output_type(0).kind, EPHOST_VALUE_SEQUENCE);

  std::vector<float> a{1, 2}, b{3, 4}, t{5, 6};
  int64_t pos = -1;
  Ephost::Tensor seq = Ephost::Tensor::sequence(EPHOST_ELEMENT_FLOAT, {floats(a, {2}), floats(b, {2})});
  a = {100, 200};  // the sequence holds copies: changing the caller's buffer afterwards changes nothing
  auto out = s.run({"seq", "t", "pos"}, {seq, floats(t, {2}), Ephost::Tensor::wrap(EPHOST_ELEMENT_INT64, {}, &pos, 1)},
                   {"s1", "n", "at", "cat", "parts"});
  ASSERT_EQ(out[0].kind(), EPHOST_VALUE_SEQUENCE);
  EXPECT_EQ(out[0].sequence_type(), EPHOST_ELEMENT_FLOAT);
  EXPECT_EQ(elements_of(out[0]), (std::vector<std::vector<float>>{{1, 2}, {3, 4}, {5, 6}}));
  EXPECT_EQ(out[1].to_vector<int64_t>(), std::vector<int64_t>{3});
  EXPECT_EQ(out[2].kind(), EPHOST_VALUE_TENSOR);
  EXPECT_EQ(out[2].to_vector<float>(), (std::vector<float>{5, 6}));
  EXPECT_EQ(out[3].to_vector<float>(), (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ(elements_of(out[4]), (std::vector<std::vector<float>>{{1, 2, 3}, {4}}));
  // Tensor accessors on a sequence say "not a tensor" instead of crashing.
  EXPECT_EQ(out[0].type(), EPHOST_ELEMENT_UNDEFINED);
  EXPECT_EQ(out[0].size(), 0u);
  EXPECT_EQ(out[0].data<float>(), nullptr);
}

TEST(SequenceValues, CallerMistakesAreClearErrors) {
  const std::string bytes = sequence_ops_model();
  Ephost::Session s(env(), bytes.data(), bytes.size());
  std::vector<float> a{1, 2}, t{5, 6};
  int64_t pos = 7;
  auto p = Ephost::Tensor::wrap(EPHOST_ELEMENT_INT64, {}, &pos, 1);
  try {  // a tensor where the model declares a sequence
    s.run({"seq", "t", "pos"}, {floats(a, {2}), floats(t, {2}), p}, {"n"});
    FAIL() << "a tensor was accepted for a sequence input";
  } catch (const Ephost::Exception& e) {
    EXPECT_EQ(e.code(), EPHOST_INVALID_ARGUMENT);
    EXPECT_NE(e.message().find("'seq' is declared a sequence of float tensors"), std::string::npos) << e.message();
  }
  Ephost::Tensor seq = Ephost::Tensor::sequence(EPHOST_ELEMENT_FLOAT, {floats(a, {2})});
  try {  // SequenceAt position 7 of a sequence of 2
    s.run({"seq", "t", "pos"}, {seq, floats(t, {2}), p}, {"at"});
    FAIL() << "an out-of-range position was accepted";
  } catch (const Ephost::Exception& e) {
    EXPECT_EQ(e.code(), EPHOST_INVALID_ARGUMENT);
    EXPECT_NE(e.message().find("position 7 is out of range [-2, 1]"), std::string::npos) << e.message();
  }
  int32_t wrong = 1;
  try {  // elements must have the sequence's element type
    Ephost::Tensor::sequence(EPHOST_ELEMENT_FLOAT, {Ephost::Tensor::wrap(EPHOST_ELEMENT_INT32, {1}, &wrong, 1)});
    FAIL() << "an int32 element went into a float sequence";
  } catch (const Ephost::Exception& e) {
    EXPECT_EQ(e.code(), EPHOST_INVALID_ARGUMENT);
  }
  try {
    Ephost::Tensor::sequence(EPHOST_ELEMENT_FLOAT, {}).element(0);
    FAIL() << "element 0 of an empty sequence";
  } catch (const Ephost::Exception& e) {
    EXPECT_EQ(e.code(), EPHOST_INVALID_ARGUMENT);
  }
}

// x (optional float tensor) -> has = OptionalHasElement(x); y = Identity(x); e = Optional() (empty).
TEST(SequenceValues, OptionalsCanBeEmpty) {
  ModelBuilder m(16);
  auto& g = *m.proto().mutable_graph();
  set_optional_tensor_type(g.add_input(), "x", onnx::TensorProto::FLOAT);
  m.node("OptionalHasElement", {"x"}, {"has"}, "has");
  m.node("Identity", {"x"}, {"y"}, "identity");
  auto& empty = m.node("Optional", {}, {"e"}, "empty");
  auto* type = empty.add_attribute();
  type->set_name("type");
  type->set_type(onnx::AttributeProto::TYPE_PROTO);
  type->mutable_tp()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  m.output("has", onnx::TensorProto::BOOL, {});
  set_optional_tensor_type(g.add_output(), "y", onnx::TensorProto::FLOAT);
  set_optional_tensor_type(g.add_output(), "e", onnx::TensorProto::FLOAT);
  const std::string bytes = m.bytes();
  Ephost::Session s(env(), bytes.data(), bytes.size());
  EXPECT_EQ(s.input_type(0).kind, EPHOST_VALUE_OPTIONAL);
  EXPECT_EQ(s.input_type(0).optional_kind, EPHOST_VALUE_TENSOR);

  std::vector<float> x{1, 2, 3};
  auto full = s.run({"x"}, {floats(x, {3})}, {"has", "y", "e"});
  EXPECT_EQ(full[0].to_vector<uint8_t>(), std::vector<uint8_t>{1});
  ASSERT_EQ(full[1].kind(), EPHOST_VALUE_TENSOR);
  EXPECT_EQ(full[1].to_vector<float>(), x);
  EXPECT_EQ(full[2].kind(), EPHOST_VALUE_NONE);

  auto none = s.run({"x"}, {Ephost::Tensor::none()}, {"has", "y"});
  EXPECT_EQ(none[0].to_vector<uint8_t>(), std::vector<uint8_t>{0});
  EXPECT_EQ(none[1].kind(), EPHOST_VALUE_NONE);
}

// Loop(M, cond, acc = x, seq = SequenceEmpty): acc += c (c read from the outer scope), seq gets acc
// appended, the scan output stacks acc, and the body stops the loop after iteration 2.
std::string loop_model() {
  ModelBuilder m(16);
  auto& g = *m.proto().mutable_graph();
  m.input("M", onnx::TensorProto::INT64, {}).input("cond", onnx::TensorProto::BOOL, {});
  m.input("x", onnx::TensorProto::FLOAT, {2});
  m.initializer("c", {2}, {1, 10});
  add_node(g, "SequenceEmpty", {}, {"empty"});
  onnx::GraphProto body;
  body.set_name("body");
  ModelBuilder::set_type(body.add_input(), "i", onnx::TensorProto::INT64, {});
  ModelBuilder::set_type(body.add_input(), "cond_in", onnx::TensorProto::BOOL, {});
  ModelBuilder::set_type(body.add_input(), "acc_in", onnx::TensorProto::FLOAT, {2});
  set_sequence_type(body.add_input(), "seq_in", onnx::TensorProto::FLOAT);
  add_int64_initializer(body, "two", {}, {2});
  add_node(body, "Add", {"acc_in", "c"}, {"acc_out"});
  add_node(body, "SequenceInsert", {"seq_in", "acc_out"}, {"seq_out"});
  add_node(body, "Less", {"i", "two"}, {"cond_out"});
  add_node(body, "Identity", {"acc_out"}, {"scan_out"});
  ModelBuilder::set_type(body.add_output(), "cond_out", onnx::TensorProto::BOOL, {});
  ModelBuilder::set_type(body.add_output(), "acc_out", onnx::TensorProto::FLOAT, {2});
  set_sequence_type(body.add_output(), "seq_out", onnx::TensorProto::FLOAT);
  ModelBuilder::set_type(body.add_output(), "scan_out", onnx::TensorProto::FLOAT, {2});
  auto& loop = m.node("Loop", {"M", "cond", "x", "empty"}, {"acc", "seq", "scan"}, "loop");
  ephost_test::set_graph_attribute(loop, "body", body);
  m.output("acc", onnx::TensorProto::FLOAT, {2});
  set_sequence_type(g.add_output(), "seq", onnx::TensorProto::FLOAT);
  m.output("scan", onnx::TensorProto::FLOAT, {-1, 2});
  return m.bytes();
}

TEST(SequenceValues, LoopCarriesASequenceAndStacksScanOutputs) {
  const std::string bytes = loop_model();
  Ephost::Session s(env(), bytes.data(), bytes.size());
  auto run = [&](int64_t trips, bool cond) {
    std::vector<float> x{0.5f, 0.25f};
    bool c = cond;
    return s.run({"M", "cond", "x"},
                 {Ephost::Tensor::wrap(EPHOST_ELEMENT_INT64, {}, &trips, 1), Ephost::Tensor::wrap(EPHOST_ELEMENT_BOOL, {}, &c, 1),
                  floats(x, {2})},
                 {"acc", "seq", "scan"});
  };
  auto out = run(5, true);  // the body's condition ends it after 3 iterations
  EXPECT_EQ(out[0].to_vector<float>(), (std::vector<float>{3.5f, 30.25f}));
  EXPECT_EQ(elements_of(out[1]), (std::vector<std::vector<float>>{{1.5f, 10.25f}, {2.5f, 20.25f}, {3.5f, 30.25f}}));
  EXPECT_EQ(out[2].shape(), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(out[2].to_vector<float>(), (std::vector<float>{1.5f, 10.25f, 2.5f, 20.25f, 3.5f, 30.25f}));

  out = run(2, true);  // the trip count ends it first
  EXPECT_EQ(out[1].sequence_length(), 2u);
  EXPECT_EQ(out[2].shape(), (std::vector<int64_t>{2, 2}));

  out = run(5, false);  // no iteration: the initial values, an empty sequence, an empty scan output
  EXPECT_EQ(out[0].to_vector<float>(), (std::vector<float>{0.5f, 0.25f}));
  EXPECT_EQ(out[1].kind(), EPHOST_VALUE_SEQUENCE);
  EXPECT_EQ(out[1].sequence_length(), 0u);
  EXPECT_EQ(out[2].shape(), (std::vector<int64_t>{0, 2}));
}

// Scan (opset 11): running sums of x's columns (scan input axis 1), once forward and once from the
// last column back, the second stacked in reverse.
TEST(SequenceValues, ScanWithAxesAndDirections) {
  ModelBuilder m(11);
  m.input("init", onnx::TensorProto::FLOAT, {2}).input("x", onnx::TensorProto::FLOAT, {2, 3});
  onnx::GraphProto body;
  body.set_name("body");
  ModelBuilder::set_type(body.add_input(), "fwd_in", onnx::TensorProto::FLOAT, {2});
  ModelBuilder::set_type(body.add_input(), "rev_in", onnx::TensorProto::FLOAT, {2});
  ModelBuilder::set_type(body.add_input(), "col", onnx::TensorProto::FLOAT, {2});
  ModelBuilder::set_type(body.add_input(), "col_rev", onnx::TensorProto::FLOAT, {2});
  add_node(body, "Add", {"fwd_in", "col"}, {"fwd_out"});
  add_node(body, "Add", {"rev_in", "col_rev"}, {"rev_out"});
  add_node(body, "Identity", {"fwd_out"}, {"fwd_scan"});
  add_node(body, "Identity", {"rev_out"}, {"rev_scan"});
  for (const char* o : {"fwd_out", "rev_out", "fwd_scan", "rev_scan"})
    ModelBuilder::set_type(body.add_output(), o, onnx::TensorProto::FLOAT, {2});
  auto& scan = m.node("Scan", {"init", "init", "x", "x"}, {"fwd", "rev", "fwd_all", "rev_all"}, "scan");
  ephost_test::set_graph_attribute(scan, "body", body);
  set_int(scan, "num_scan_inputs", 2);
  set_ints(scan, "scan_input_axes", {1, 1});
  set_ints(scan, "scan_input_directions", {0, 1});
  set_ints(scan, "scan_output_axes", {1, 0});
  set_ints(scan, "scan_output_directions", {0, 1});
  m.output("fwd", onnx::TensorProto::FLOAT, {2}).output("rev", onnx::TensorProto::FLOAT, {2});
  m.output("fwd_all", onnx::TensorProto::FLOAT, {2, 3}).output("rev_all", onnx::TensorProto::FLOAT, {3, 2});
  const std::string bytes = m.bytes();
  Ephost::Session s(env(), bytes.data(), bytes.size());
  std::vector<float> init{0, 100}, x{1, 2, 3, 4, 5, 6};
  auto out = s.run({"init", "x"}, {floats(init, {2}), floats(x, {2, 3})}, {"fwd", "rev", "fwd_all", "rev_all"});
  EXPECT_EQ(out[0].to_vector<float>(), (std::vector<float>{6, 115}));
  EXPECT_EQ(out[1].to_vector<float>(), (std::vector<float>{6, 115}));
  // Forward sums per column, stacked along axis 1: row 0 = 1, 3, 6; row 1 = 104, 109, 115.
  EXPECT_EQ(out[2].to_vector<float>(), (std::vector<float>{1, 3, 6, 104, 109, 115}));
  // Sums from the last column back (3, 5, 6 and 106, 111, 115), stacked in reverse along axis 0:
  // iteration 0 (column 2) lands last.
  EXPECT_EQ(out[3].shape(), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(out[3].to_vector<float>(), (std::vector<float>{6, 115, 5, 111, 3, 106}));
}

// ---- `ephost test` with sequence and optional data files ----

using CliResult = ephost_test::CommandResult;

CliResult ephost_cli(const std::string& args) {
  const std::string cmd = "'" + std::string(EPHOST_CLI_PATH) + "' " + args + " 2>&1";
  return ephost_test::run_command(cmd);
}

void fill_tensor(onnx::TensorProto* t, const std::vector<float>& values) {
  t->set_data_type(onnx::TensorProto::FLOAT);
  t->add_dims(static_cast<int64_t>(values.size()));
  for (float v : values) t->add_float_data(v);
}

// A case: seq (sequence) -> SequenceInsert(seq, t) -> out (sequence); has = OptionalHasElement(opt).
// `last` is the last element output_0.pb claims.
void make_sequence_case(const ephost_test::TempDir& root, const std::string& name, const std::vector<float>& last) {
  const std::string dir = root.file(name + "/test_data_set_0");
  ephost_test::fs::create_directories(dir);
  ModelBuilder m(16);
  auto& g = *m.proto().mutable_graph();
  set_sequence_type(g.add_input(), "seq", onnx::TensorProto::FLOAT);
  m.input("t", onnx::TensorProto::FLOAT, {2});
  set_optional_tensor_type(g.add_input(), "opt", onnx::TensorProto::FLOAT);
  m.node("SequenceInsert", {"seq", "t"}, {"out"}, "insert");
  m.node("OptionalHasElement", {"opt"}, {"has"}, "has");
  set_sequence_type(g.add_output(), "out", onnx::TensorProto::FLOAT);
  m.output("has", onnx::TensorProto::BOOL, {});
  std::ofstream(root.file(name + "/model.onnx"), std::ios::binary) << m.bytes();

  onnx::SequenceProto seq;
  seq.set_name("seq");
  seq.set_elem_type(onnx::SequenceProto::TENSOR);
  fill_tensor(seq.add_tensor_values(), {1, 2});
  std::ofstream(dir + "/input_0.pb", std::ios::binary) << seq.SerializeAsString();
  onnx::TensorProto t;
  t.set_name("t");
  fill_tensor(&t, {3, 4});
  std::ofstream(dir + "/input_1.pb", std::ios::binary) << t.SerializeAsString();
  onnx::OptionalProto none;
  none.set_name("opt");
  none.set_elem_type(onnx::OptionalProto::UNDEFINED);
  std::ofstream(dir + "/input_2.pb", std::ios::binary) << none.SerializeAsString();

  onnx::SequenceProto out;
  out.set_name("out");
  out.set_elem_type(onnx::SequenceProto::TENSOR);
  fill_tensor(out.add_tensor_values(), {1, 2});
  fill_tensor(out.add_tensor_values(), last);
  std::ofstream(dir + "/output_0.pb", std::ios::binary) << out.SerializeAsString();
  onnx::TensorProto has;
  has.set_name("has");
  has.set_data_type(onnx::TensorProto::BOOL);
  has.add_int32_data(0);
  std::ofstream(dir + "/output_1.pb", std::ios::binary) << has.SerializeAsString();
}

TEST(SequenceValues, CliTestReadsSequenceAndOptionalFiles) {
  ephost_test::TempDir root;
  make_sequence_case(root, "test_seq_good", {3, 4});
  make_sequence_case(root, "test_seq_bad", {3, 5});
  CliResult r = ephost_cli("test '" + root.path() + "'");
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("1 passed, 1 failed"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("FAIL test_seq_bad: output 0 'out': element 1:"), std::string::npos) << r.output;

  // `ephost run --inputs` takes the same files and prints the sequence it gets back.
  CliResult run = ephost_cli("run '" + root.file("test_seq_good/model.onnx") + "' --inputs '" +
                             root.file("test_seq_good/test_data_set_0") + "'");
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("out: sequence of 2 float tensors"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("opt: none (empty optional)"), std::string::npos) << run.output;
}

}  // namespace
