// Small helpers shared by the parts of the code generator (codegen.cpp, codegen_anchors.cpp).
#pragma once

#include <string>
#include <vector>

#include "program.h"

namespace ephost_opencl {

// Source text, one statement per line, indented.
class SourceWriter {
 public:
  void line(const std::string& text) { out_ += std::string(indent_ * 2, ' ') + text + "\n"; }
  void open(const std::string& text) {
    line(text + " {");
    ++indent_;
  }
  void close(const std::string& tail = "") {
    --indent_;
    line("}" + tail);
  }
  void raw(const std::string& text) { out_ += text; }
  const std::string& text() const { return out_; }

 private:
  std::string out_;
  int indent_ = 0;
};

// A float as an OpenCL C literal that reads back exactly.
std::string float_literal(float v);

// What the anchor body of a kernel knows about its parameters.
struct AnchorContext {
  const Program& program;
  const KernelPlan& plan;
  std::vector<std::string> main;       // parameter names of the anchor's device inputs, in input order
  std::string store_macro;             // STORE(V, O, C0, C1, C2, C3)
  std::vector<uint64_t> weight_offset; // per weight, in floats
};

// Emits the body of kernel `plan` (after the pointer offsets and grid dimensions GN, GC, GH, GW are set).
void emit_anchor(const AnchorContext& ctx, SourceWriter& out);

// Declares c0..c3, the 4-D grid coordinates of linear index `index` (with GN..GW in scope).
void emit_grid_coordinates(SourceWriter& out, const std::string& index);

}  // namespace ephost_opencl
