#include "model/inference_guards.h"

#include <fmt/format.h>
#include <onnx/defs/schema.h>
#include <onnx/defs/shape_inference.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "opsets/opsets.h"

namespace ephost {
namespace {

thread_local GuardFindings* t_findings = nullptr;

// The rank of input `i` when its shape is known, else -1.
int64_t input_rank(onnx::InferenceContext& ctx, size_t i) {
  if (i >= ctx.getNumInputs() || !onnx::hasInputShape(ctx, i)) return -1;
  return onnx::getInputShape(ctx, i).dim_size();
}

// The value of a one-element int32 or int64 constant (as onnx's inference reads it); nullopt otherwise.
std::optional<int64_t> scalar_integer(const onnx::TensorProto& t) {
  for (int64_t d : t.dims())
    if (d != 1) return std::nullopt;
  if (t.data_location() == onnx::TensorProto::EXTERNAL) return std::nullopt;
  if (t.data_type() == onnx::TensorProto::INT64) {
    if (t.int64_data_size() == 1) return t.int64_data(0);
    if (t.raw_data().size() == sizeof(int64_t)) {
      int64_t v;
      std::memcpy(&v, t.raw_data().data(), sizeof(v));
      return v;
    }
  } else if (t.data_type() == onnx::TensorProto::INT32) {
    if (t.int32_data_size() == 1) return t.int32_data(0);
    if (t.raw_data().size() == sizeof(int32_t)) {
      int32_t v;
      std::memcpy(&v, t.raw_data().data(), sizeof(v));
      return v;
    }
  }
  return std::nullopt;
}

const onnx::AttributeProto* int_attribute(onnx::InferenceContext& ctx, const char* name) {
  const onnx::AttributeProto* a = ctx.getAttribute(name);
  return a && a->type() == onnx::AttributeProto::INT ? a : nullptr;
}

// A guard finds what onnx's inference function would not survive; "" when the node is fine.
using Check = std::function<std::string(onnx::InferenceContext& ctx)>;

// When it returns true, onnx's inference function is not called for the node: its outputs keep the
// element type of input 0 and an unknown shape (for nodes that are valid but whose inference would read
// what is not there, such as the shape of an input whose shape is unknown).
using SkipWhen = std::function<bool(onnx::InferenceContext& ctx)>;

struct Guard {
  const char* op;
  Check check;
  SkipWhen skip = nullptr;
};

// `attribute` must lie in [lowest, highest] (both inclusive).
std::string out_of_range(const char* attribute, int64_t value, int64_t lowest, int64_t highest, const std::string& why) {
  if (value >= lowest && value <= highest) return {};
  return fmt::format("{} {} is out of range [{}, {}] ({})", attribute, value, lowest, highest, why);
}

// Conv-like operators: onnx's convPoolShapeInference (and convTransposeShapeInference) takes the kernel's
// spatial rank from the weights W when kernel_shape is absent, then indexes X's dimensions, strides,
// dilations and pads with it, unchecked: W of rank 4 beside X of rank 3 reads past X's shape.
Check weights_rank_matches_input(size_t w_index) {
  return [w_index](onnx::InferenceContext& ctx) -> std::string {
    const int64_t x = input_rank(ctx, 0), w = input_rank(ctx, w_index);
    if (x < 0 || w < 0 || x == w) return {};
    return fmt::format("the weights (input {}) have rank {} but the input X has rank {}: both must be "
                       "[N or M, C, spatial...] with the same number of spatial dimensions",
                       w_index, w, x);
  };
}

// Conv and pool operators: onnx's convPoolShapeInference divides by every stride, unchecked (fuzz_
// context_model: SIGFPE from a Conv with strides [2, 0]); a dilation below 1 is as meaningless.
Check positive_strides_and_dilations() {
  return [](onnx::InferenceContext& ctx) -> std::string {
    for (const char* name : {"strides", "dilations"}) {
      const onnx::AttributeProto* a = ctx.getAttribute(name);
      if (!a || a->type() != onnx::AttributeProto::INTS) continue;
      for (int i = 0; i < a->ints_size(); ++i)
        if (a->ints(i) < 1) return fmt::format("{}[{}] is {}: every one must be at least 1", name, i, a->ints(i));
    }
    return {};
  };
}

// Conv and pool operators with auto_pad SAME_UPPER or SAME_LOWER: onnx 1.12's convPoolShapeInference
// finds each spatial dimension's remainder modulo its stride by subtracting the stride until the rest
// is below it, one step per stride. A static dimension of 10^12 with stride 2 kept session creation
// busy for minutes (issue 26). The most steps any spatial axis of the node would take, 0 when onnx
// takes none (other padding, strides of 1, unknown dimensions).
int64_t same_padding_inference_steps(onnx::InferenceContext& ctx) {
  const onnx::AttributeProto* pad = ctx.getAttribute("auto_pad");
  if (!pad || pad->type() != onnx::AttributeProto::STRING || (pad->s() != "SAME_UPPER" && pad->s() != "SAME_LOWER"))
    return 0;
  const onnx::AttributeProto* strides = ctx.getAttribute("strides");
  if (!strides || strides->type() != onnx::AttributeProto::INTS || input_rank(ctx, 0) < 2) return 0;
  const auto& shape = onnx::getInputShape(ctx, 0);
  int64_t most = 0;
  for (int i = 0; i < strides->ints_size() && i + 2 < shape.dim_size(); ++i) {
    const auto& dim = shape.dim(i + 2);
    const int64_t stride = strides->ints(i);
    if (stride > 1 && dim.has_dim_value() && dim.dim_value() > 0) most = std::max(most, dim.dim_value() / stride);
  }
  return most;
}

// Beyond this many steps (about a millisecond) the node is left to the kernel, which sizes its output
// from the real input at run time: onnx's inference is skipped and the output's shape stays unknown.
constexpr int64_t kSamePaddingStepsInferred = int64_t{1} << 20;
// Beyond this many steps the node is refused: more than 2^31 positions along one axis of one plane is
// no tensor a model computes on, only a model built to stall the inference (minutes of it).
constexpr int64_t kSamePaddingStepsRefused = int64_t{1} << 31;

Check same_padding_within_reach() {
  return [](onnx::InferenceContext& ctx) -> std::string {
    const int64_t steps = same_padding_inference_steps(ctx);
    if (steps <= kSamePaddingStepsRefused) return {};
    const auto& shape = onnx::getInputShape(ctx, 0);
    std::string dims;
    for (int i = 0; i < shape.dim_size(); ++i)
      dims += (i ? "," : "") + (shape.dim(i).has_dim_value() ? std::to_string(shape.dim(i).dim_value()) : "?");
    return fmt::format("input X of shape [{}] with auto_pad {} spans {} strides along one axis: at most 2^31 are "
                       "accepted (no tensor of a real model is that long; a shape this large only stalls the model's "
                       "shape inference, which steps through it one stride at a time)",
                       dims, ctx.getAttribute("auto_pad")->s(), steps);
  };
}
bool same_padding_left_to_the_kernel(onnx::InferenceContext& ctx) {
  return same_padding_inference_steps(ctx) > kSamePaddingStepsInferred;
}

// The first problem any of `checks` finds.
Check all_of(std::vector<Check> checks) {
  return [checks = std::move(checks)](onnx::InferenceContext& ctx) -> std::string {
    for (const Check& check : checks) {
      std::string problem = check(ctx);
      if (!problem.empty()) return problem;
    }
    return {};
  };
}

const Guard kGuards[] = {
    {"Conv", all_of({positive_strides_and_dilations(), weights_rank_matches_input(1), same_padding_within_reach()}),
     same_padding_left_to_the_kernel},
    {"ConvInteger",
     all_of({positive_strides_and_dilations(), weights_rank_matches_input(1), same_padding_within_reach()}),
     same_padding_left_to_the_kernel},
    {"ConvTranspose", all_of({positive_strides_and_dilations(), weights_rank_matches_input(1)})},
    {"QLinearConv",
     all_of({positive_strides_and_dilations(), weights_rank_matches_input(3), same_padding_within_reach()}),
     same_padding_left_to_the_kernel},
    {"AveragePool", all_of({positive_strides_and_dilations(), same_padding_within_reach()}),
     same_padding_left_to_the_kernel},
    {"MaxPool", all_of({positive_strides_and_dilations(), same_padding_within_reach()}),
     same_padding_left_to_the_kernel},
    {"LpPool", all_of({positive_strides_and_dilations(), same_padding_within_reach()}),
     same_padding_left_to_the_kernel},
    // GatherND: onnx indexes the data shape with the last index dimension plus batch_dims, unchecked.
    {"GatherND",
     [](onnx::InferenceContext& ctx) -> std::string {
       const auto* a = int_attribute(ctx, "batch_dims");
       const int64_t batch_dims = a ? a->i() : 0;
       const int64_t data = input_rank(ctx, 0), indices = input_rank(ctx, 1);
       if (batch_dims < 0) return fmt::format("batch_dims {} is negative", batch_dims);
       if (data < 0 || indices < 0) return {};
       std::string r = out_of_range("batch_dims", batch_dims, 0, std::min(data, indices) - 1,
                                    fmt::format("data has rank {}, indices rank {}", data, indices));
       if (!r.empty()) return r;
       const auto& last = onnx::getInputShape(ctx, 1).dim(static_cast<int>(indices - 1));
       if (last.has_dim_value() && (last.dim_value() < 1 || last.dim_value() + batch_dims > data))
         return fmt::format("the last dimension of indices is {}: with batch_dims {} it must lie in [1, {}] for data "
                            "of rank {}",
                            last.dim_value(), batch_dims, data - batch_dims, data);
       return {};
     }},
    // LayerNormalization: onnx uses the axis (made non-negative by adding the rank once) as an index.
    {"LayerNormalization",
     [](onnx::InferenceContext& ctx) -> std::string {
       const auto* a = int_attribute(ctx, "axis");
       const int64_t axis = a ? a->i() : -1;
       const int64_t rank = input_rank(ctx, 0);
       if (rank < 0) return {};
       return out_of_range("axis", axis, -rank, rank - 1, fmt::format("input X has rank {}", rank));
     }},
    // MaxUnpool without output_shape: onnx takes the output's channels from dimension 1 of the indices I,
    // unchecked. I of rank 1 is a read past its shape (fuzz_model: SEGV in TensorShapeProto_Dimension's
    // MergeImpl); I of unknown shape is a valid model that onnx cannot infer, so it is left uninferred.
    {"MaxUnpool",
     [](onnx::InferenceContext& ctx) -> std::string {
       if (std::string problem = positive_strides_and_dilations()(ctx); !problem.empty()) return problem;
       if (ctx.getNumInputs() != 2) return {};
       const int64_t x = input_rank(ctx, 0), i = input_rank(ctx, 1);
       if (i < 0 || (x < 0 ? i >= 2 : i == x)) return {};
       return fmt::format("the indices I have rank {} but {}: I must have the shape of X, as MaxPool's Indices "
                          "output has",
                          i, x < 0 ? std::string("must have at least 2 dimensions") : fmt::format("X has rank {}", x));
     },
     [](onnx::InferenceContext& ctx) {
       return ctx.getNumInputs() == 2 && (ctx.getInputType(0) == nullptr || !onnx::hasInputShape(ctx, 1));
     }},
    // DepthToSpace: onnx divides the channels by blocksize * blocksize, which overflows to 0 for a
    // blocksize of 2^32 (an attribute sweep: SIGFPE). Below 1 onnx refuses it itself.
    {"DepthToSpace",
     [](onnx::InferenceContext& ctx) -> std::string {
       const auto* a = int_attribute(ctx, "blocksize");
       if (!a) return {};
       return out_of_range("blocksize", a->i(), 1, 3037000499, "its square must be an int64");
     }},
    // STFT: onnx reads the signal's dimensions 0 to 2 unchecked (an attribute sweep: SEGV for a signal
    // of rank 1). A constant frame_step below 1 is refused here too, as the kernel would refuse it.
    {"STFT",
     [](onnx::InferenceContext& ctx) -> std::string {
       const int64_t rank = input_rank(ctx, 0);
       if (rank >= 0 && rank != 3)
         return fmt::format("the signal has rank {}: it must be [batch_size, signal_length, 1 or 2]", rank);
       const onnx::TensorProto* step = ctx.getNumInputs() > 1 ? ctx.getInputData(1) : nullptr;
       if (const std::optional<int64_t> v = step ? scalar_integer(*step) : std::nullopt; v && *v < 1)
         return fmt::format("frame_step is {}: it must be at least 1", *v);
       return {};
     }},
};

void install() {
  for (const Guard& guard : kGuards) {
    std::set<const onnx::OpSchema*> wrapped;
    for (int version = 1; version <= 30; ++version) {
      const onnx::OpSchema* schema = onnx::OpSchemaRegistry::Schema(guard.op, version, "");
      if (!schema || !wrapped.insert(schema).second) continue;
      onnx::InferenceFunction original = schema->GetTypeAndShapeInferenceFunction();
      if (!original) continue;
      Check check = guard.check;
      SkipWhen skip = guard.skip;
      const std::string op = guard.op;
      // The registry's schemas are const to readers only: they are owned, mutable objects.
      const_cast<onnx::OpSchema*>(schema)->TypeAndShapeInferenceFunction(
          [original, check, skip, op](onnx::InferenceContext& ctx) {
            const std::string problem = check(ctx);
            if (!problem.empty()) {
              report_guard_problem(op, problem);
              fail_shape_inference(op, ": ", problem);
            }
            if (skip && skip(ctx)) {
              if (ctx.getNumOutputs() > 0 && ctx.getInputType(0) != nullptr) onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
              return;
            }
            original(ctx);
          });
    }
  }
}

}  // namespace

void install_inference_guards() {
  // The guards wrap every registered version of their operators, those of opsets above 17 included.
  opsets::register_schemas();
  static std::once_flag once;
  std::call_once(once, install);
}

GuardFindings::GuardFindings() : previous_(t_findings) { t_findings = this; }
GuardFindings::~GuardFindings() { t_findings = previous_; }

void report_guard_problem(const std::string& op_type, const std::string& problem) {
  if (t_findings) t_findings->problems_.push_back({op_type, problem});
}

}  // namespace ephost
