/*
 * A kernel-registry ONNX Runtime plugin EP for ephost's tests ("ortkern"), in C, against ephost's
 * declarations of ONNX Runtime's ABI (host/ort_ep/include/ort_ep/ort_abi.h). Unlike "ortadd"
 * (ort_test_ep.c), it compiles nothing: CreateEp builds a kernel registry (API 24) and GetCapability
 * claims nodes one by one (EpGraphSupportInfo_AddSingleNode); the host creates each node's kernel through
 * the registered create function and runs it.
 *
 * Its registry, all for domain ai.onnx and EP "ortkern":
 *   Add        since-versions 7..14, T in {float}
 *   Mul        since-versions 7..14, T in {float, int32}
 *   Relu       since-versions 13..14, T in {float}
 *   LeakyRelu  since-versions 6..16, T in {float} (reads its attribute alpha when created)
 *   Identity   since-version 13, T in {float}, output 0 an alias of input 0 (KernelDefBuilder_Add-
 *              InputOutputAliases): its Compute asks for the output and writes nothing, relying on the
 *              host to give the output the input's buffer or bytes
 *   MatMul     since-versions 1..13, T in {float}, claimed only when B (input 1) is a constant 2-D
 *              initializer: the kernel pre-packs B transposed (OrtKernelImpl::PrePackWeight) and computes
 *              from its packed copy, sharing it through the host's cache when offered one
 *              (SharedPrePackedWeightCache_StoreWeightData, then SetSharedPrePackedWeight)
 * Add and Mul broadcast as numpy does. Relu and LeakyRelu declare output 0 a mutable alias of input 0
 * (KernelDefBuilder_AddInputOutputMutableAliases, ONNX Runtime's MayInplace): they compute element by
 * element, so writing over their input is safe.
 *
 * Options (session config "ep.ortkern.<key>", read in CreateEp):
 *   claim     "lookup" (default): claims a node when EpGraphSupportInfo_LookUpKernel finds it a kernel;
 *             "all": claims every Add, Mul, Relu, LeakyRelu and Sub node, leaving the matching to the host
 *   info_log  a file each kernel create function appends one line to: what the OrtKernelInfo getters
 *             answered for its node (tests compare it with the model)
 *   registry  "none": GetKernelRegistry answers NULL, so the EP (with no Compile either) can run nothing
 *   fault, fault_while  crash, abort or hang it in CreateEp, GetCapability or a kernel's Compute
 *             (ort_injected_fault.h)
 *   compute_log  a file Relu, LeakyRelu and Identity append "compute node=<name> in=<address>
 *             out=<address>" to at each Compute (the buffers of input 0 and output 0)
 *   prepack_log  a file PrePackWeight appends "prepack node=<name> input=<i> cache=<0|1>" to, and
 *             SetSharedPrePackedWeight "shared node=<name> input=<i> buffer=<address>"
 *
 *   schema_log  a file GetCapability appends one line to for each node it claims: the node's ONNX schema as
 *             the host's OrtEpApi::GetOpSchema answers it ("schema node=<name> op=<type> since=<n>
 *             inputs=<names> outputs=<names>" then " <param>{<allowed types>}in[<indices>]out[<indices>]" for
 *             each type constraint, and "fixed=<formal inputs with no constraint>")
 *   cf_log    a file the Loop and Scan helpers append each call to ("concat node=<name> parts=<n>
 *             bytes=<size>", "transpose node=<name> perm=<p0,p1,...> dims=<input dims>")
 *
 * Several libraries are built from this file (tests/plugins/ort_ep/CMakeLists.txt):
 *   ORT_TEST_KERNEL_CREATE_FAILS   the create function of Relu fails with a status of its own
 *   ORT_TEST_CONTROL_FLOW          ("ortkern" too, library kernels_cf) the registry also has If (since-versions
 *             1..25, cond in CPU memory), Loop (1..25, M and cond in CPU memory) and Scan (9..25), V in {float},
 *             whose create functions ask the host for its kernel (OrtEpApi::CreateIfKernel, CreateLoopKernel,
 *             CreateScanKernel), handing Loop an OrtLoopKernelHelper (ConcatOutput: the per-iteration outputs
 *             copied one after another) and Scan an OrtScanKernelHelper (Transpose: any permutation)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "broadcast.h"
#include "ort_ep/ort_abi.h"
#include "ort_injected_fault.h"

#define EP_NAME "ortkern"
#define API_VERSION 30

#define EXPORT __attribute__((visibility("default")))

static const struct OrtApi* api;
static const struct OrtEpApi* ep_api;

static OrtStatus* error(const char* message) { return api->CreateStatus(ORT_EP_FAIL, message); }

#define RETURN_IF(status_expr)     \
  do {                             \
    OrtStatus* s_ = (status_expr); \
    if (s_) return s_;             \
  } while (0)

enum { OP_ADD = 1, OP_MUL, OP_RELU, OP_LEAKY_RELU, OP_MATMUL, OP_IDENTITY, OP_IF, OP_LOOP, OP_SCAN, NUM_OPS = OP_SCAN };

/* ---- the EP ---- */

struct KernelEp;
/* What each registered create function is handed: its operator and the EP (one per EP and kernel). */
typedef struct KernelState {
  int op;
  struct KernelEp* ep;
} KernelState;

typedef struct KernelEp {
  OrtEp base;
  OrtKernelRegistry* registry;
  KernelState states[NUM_OPS]; /* by operator */
  int claim_all;
  int no_registry;
  char info_log[512];
  OrtInjectedFault fault; /* options fault, fault_while */
  char prepack_log[512];
  char compute_log[512];
  char schema_log[512];
  char cf_log[512];
} KernelEp;

static const char* ep_get_name(const OrtEp* ep) {
  (void)ep;
  return EP_NAME;
}

/* Whether MatMul node `node`'s B (input 1) is a constant 2-D initializer: what its kernel pre-packs. */
static OrtStatus* matmul_b_is_constant_2d(const OrtNode* node, int* yes) {
  const OrtValueInfo* inputs[2] = {NULL, NULL};
  const OrtTypeInfo* type = NULL;
  const OrtTensorTypeAndShapeInfo* tensor = NULL;
  size_t count = 0, rank = 0;
  bool constant = false;
  *yes = 0;
  RETURN_IF(api->Node_GetNumInputs(node, &count));
  if (count != 2) return NULL;
  RETURN_IF(api->Node_GetInputs(node, inputs, 2));
  RETURN_IF(api->ValueInfo_IsConstantInitializer(inputs[1], &constant));
  if (!constant) return NULL;
  RETURN_IF(api->GetValueInfoTypeInfo(inputs[1], &type));
  RETURN_IF(api->CastTypeInfoToTensorInfo(type, &tensor));
  RETURN_IF(api->GetDimensionsCount(tensor, &rank));
  *yes = rank == 2;
  return NULL;
}

static int claimable_by_type(const char* op_type) {
  return strcmp(op_type, "Add") == 0 || strcmp(op_type, "Mul") == 0 || strcmp(op_type, "Relu") == 0 ||
         strcmp(op_type, "LeakyRelu") == 0 || strcmp(op_type, "Sub") == 0;
}

/* Appends `text` to `line` (of `size` bytes), cutting it short rather than overflowing. */
static void append(char* line, size_t size, const char* text) {
  size_t used = strlen(line);
  if (used + 1 < size) snprintf(line + used, size - used, "%s", text);
}

/* " <first>,<second>,..." of `count` indices. */
static void append_indices(char* line, size_t size, const size_t* indices, size_t count) {
  char piece[32];
  size_t i;
  for (i = 0; i < count; ++i) {
    snprintf(piece, sizeof piece, "%s%zu", i ? "," : "", indices[i]);
    append(line, size, piece);
  }
}

/* The formal inputs' or outputs' names of `schema`, comma-separated. */
static OrtStatus* append_formals(const OrtOpSchema* schema, int inputs, char* line, size_t size) {
  size_t count = 0, i;
  RETURN_IF(inputs ? ep_api->OpSchema_GetNumInputs(schema, &count) : ep_api->OpSchema_GetNumOutputs(schema, &count));
  for (i = 0; i < count; ++i) {
    const char* name = NULL;
    RETURN_IF(inputs ? ep_api->OpSchema_GetInputName(schema, i, &name) : ep_api->OpSchema_GetOutputName(schema, i, &name));
    if (i) append(line, size, ",");
    append(line, size, name);
  }
  return NULL;
}

/* Each type constraint: " T{tensor(float),...}in[0,1]out[0]"; a constraint must be the one its formals name. */
static OrtStatus* append_constraints(const OrtOpSchema* schema, char* line, size_t size) {
  size_t count = 0, i, j;
  RETURN_IF(ep_api->OpSchema_GetTypeConstraintCount(schema, &count));
  for (i = 0; i < count; ++i) {
    const OrtOpSchemaTypeConstraint* c = NULL;
    const char* param = NULL;
    const char* const* types = NULL;
    const size_t* in = NULL;
    const size_t* out = NULL;
    size_t num_types = 0, num_in = 0, num_out = 0;
    RETURN_IF(ep_api->OpSchema_GetTypeConstraint(schema, i, &c));
    RETURN_IF(ep_api->OpSchemaTypeConstraint_GetTypeParamName(c, &param));
    RETURN_IF(ep_api->OpSchemaTypeConstraint_GetAllowedTypes(c, &types, &num_types));
    RETURN_IF(ep_api->OpSchemaTypeConstraint_GetInputIndices(c, &in, &num_in));
    RETURN_IF(ep_api->OpSchemaTypeConstraint_GetOutputIndices(c, &out, &num_out));
    for (j = 0; j < num_in; ++j) {
      const OrtOpSchemaTypeConstraint* back = NULL;
      RETURN_IF(ep_api->OpSchema_GetInputTypeConstraint(schema, in[j], &back));
      if (back != c) return error("OpSchema_GetInputTypeConstraint disagrees with the constraint's input indices");
    }
    for (j = 0; j < num_out; ++j) {
      const OrtOpSchemaTypeConstraint* back = NULL;
      RETURN_IF(ep_api->OpSchema_GetOutputTypeConstraint(schema, out[j], &back));
      if (back != c) return error("OpSchema_GetOutputTypeConstraint disagrees with the constraint's output indices");
    }
    append(line, size, " ");
    append(line, size, param);
    append(line, size, "{");
    for (j = 0; j < num_types; ++j) {
      if (j) append(line, size, ",");
      append(line, size, types[j]);
    }
    append(line, size, "}in[");
    append_indices(line, size, in, num_in);
    append(line, size, "]out[");
    append_indices(line, size, out, num_out);
    append(line, size, "]");
  }
  return NULL;
}

/* The formal inputs bound to no type constraint (a fixed type): " fixed=<i>,<j>". */
static OrtStatus* append_fixed_inputs(const OrtOpSchema* schema, char* line, size_t size) {
  size_t count = 0, i, fixed = 0;
  char piece[32];
  RETURN_IF(ep_api->OpSchema_GetNumInputs(schema, &count));
  append(line, size, " fixed=");
  for (i = 0; i < count; ++i) {
    const OrtOpSchemaTypeConstraint* c = NULL;
    RETURN_IF(ep_api->OpSchema_GetInputTypeConstraint(schema, i, &c));
    if (c) continue;
    snprintf(piece, sizeof piece, "%s%zu", fixed++ ? "," : "", i);
    append(line, size, piece);
  }
  return NULL;
}

/* One line for `node` in the schema log: its schema as GetOpSchema answers it for the node's opset. */
static OrtStatus* log_schema(const KernelEp* ep, const OrtNode* node) {
  const char* name = NULL;
  const char* op_type = NULL;
  const char* domain = NULL;
  int since = 0, schema_since = 0;
  OrtOpSchema* schema = NULL;
  OrtStatus* status;
  char line[8192], piece[512];
  FILE* f;
  RETURN_IF(api->Node_GetName(node, &name));
  RETURN_IF(api->Node_GetOperatorType(node, &op_type));
  RETURN_IF(api->Node_GetDomain(node, &domain));
  RETURN_IF(api->Node_GetSinceVersion(node, &since));
  RETURN_IF(ep_api->GetOpSchema(op_type, since, domain, &schema));
  if (!schema) return error("GetOpSchema found no schema for a node the host runs");
  status = ep_api->OpSchema_GetSinceVersion(schema, &schema_since);
  if (!status) {
    snprintf(piece, sizeof piece, "schema node=%s op=%s since=%d inputs=", name, op_type, schema_since);
    line[0] = '\0';
    append(line, sizeof line, piece);
    status = append_formals(schema, 1, line, sizeof line);
  }
  if (!status) {
    append(line, sizeof line, " outputs=");
    status = append_formals(schema, 0, line, sizeof line);
  }
  if (!status) status = append_constraints(schema, line, sizeof line);
  if (!status) status = append_fixed_inputs(schema, line, sizeof line);
  ep_api->ReleaseOpSchema(schema);
  if (status) return status;
  f = fopen(ep->schema_log, "a");
  if (!f) return error("cannot open the schema log");
  fprintf(f, "%s\n", line);
  fclose(f);
  return NULL;
}

static OrtStatus* ep_get_capability(OrtEp* this_ptr, const OrtGraph* graph, OrtEpGraphSupportInfo* info) {
  KernelEp* ep = (KernelEp*)this_ptr;
  size_t num_nodes = 0, i;
  const OrtNode** nodes;
  OrtStatus* status = NULL;
  injected_fault_at(&ep->fault, "get_capability");
  RETURN_IF(api->Graph_GetNumNodes(graph, &num_nodes));
  if (num_nodes == 0) return NULL;
  nodes = (const OrtNode**)calloc(num_nodes, sizeof *nodes);
  if (!nodes) return error("out of memory");
  status = api->Graph_GetNodes(graph, nodes, num_nodes);
  for (i = 0; !status && i < num_nodes; ++i) {
    const char* op_type = NULL;
    const OrtKernelDef* def = NULL;
    status = api->Node_GetOperatorType(nodes[i], &op_type);
    if (status) break;
    if (ep->claim_all) {
      if (claimable_by_type(op_type)) status = ep_api->EpGraphSupportInfo_AddSingleNode(info, nodes[i]);
      continue;
    }
    if (strcmp(op_type, "MatMul") == 0) {
      int b_constant_2d = 0;
      status = matmul_b_is_constant_2d(nodes[i], &b_constant_2d);
      if (status) break;
      if (!b_constant_2d) continue;
    }
    status = ep_api->EpGraphSupportInfo_LookUpKernel(info, nodes[i], &def);
    if (status || !def) continue;
    /* The definition found is one of ours, for this operator. */
    if (strcmp(ep_api->KernelDef_GetOperatorType(def), op_type) != 0 ||
        strcmp(ep_api->KernelDef_GetExecutionProvider(def), EP_NAME) != 0) {
      status = error("EpGraphSupportInfo_LookUpKernel answered a kernel definition for another operator or EP");
      break;
    }
    if (ep->schema_log[0]) status = log_schema(ep, nodes[i]);
    if (!status) status = ep_api->EpGraphSupportInfo_AddSingleNode(info, nodes[i]);
  }
  free(nodes);
  return status;
}

/* ---- kernels ---- */

typedef struct TestKernel {
  OrtKernelImpl base;
  int op;
  float alpha; /* LeakyRelu */
  const OrtInjectedFault* fault; /* the EP's (it outlives its kernels) */
  /* MatMul: B packed transposed (N rows of K), or NULL when not packed (then Compute reads input 1).
   * Owned (freed with packed_allocator) unless shared: the host's cache owns shared buffers. */
  const float* packed_b;
  int64_t k, n;
  OrtAllocator* packed_allocator;
  int owns_packed;
  char node[128];
  const char* prepack_log;
  const char* compute_log;
} TestKernel;

typedef struct Shape {
  int64_t dims[8];
  size_t rank;
  size_t count;
  enum ONNXTensorElementDataType elem;
} Shape;

static OrtStatus* shape_of(const OrtValue* v, Shape* s) {
  OrtTensorTypeAndShapeInfo* info = NULL;
  OrtStatus* status;
  size_t i;
  RETURN_IF(api->GetTensorTypeAndShape(v, &info));
  status = api->GetDimensionsCount(info, &s->rank);
  if (!status && s->rank > 8) status = error("more than 8 dimensions");
  if (!status) status = api->GetDimensions(info, s->dims, s->rank);
  if (!status) status = api->GetTensorElementType(info, &s->elem);
  api->ReleaseTensorTypeAndShapeInfo(info);
  s->count = 1;
  for (i = 0; i < s->rank; ++i) s->count *= (size_t)s->dims[i];
  return status;
}

/* The shape `a` and `b` broadcast to (numpy's rule) in `out`; 0 when they do not broadcast. */
static int broadcast(const Shape* a, const Shape* b, Shape* out) {
  out->elem = a->elem;
  return broadcast_dims(a->dims, a->rank, b->dims, b->rank, out->dims, &out->rank, &out->count);
}

/* Where `out`'s flat element `j` reads `in` (broadcast to `out`'s shape). */
static size_t source_index(const Shape* in, const Shape* out, size_t j) {
  return broadcast_source_index(in->dims, in->rank, out->dims, out->rank, j);
}

static OrtStatus* compute_binary(const TestKernel* k, OrtKernelContext* context) {
  const OrtValue* a = NULL;
  const OrtValue* b = NULL;
  OrtValue* y = NULL;
  const void* pa = NULL;
  const void* pb = NULL;
  void* py = NULL;
  Shape sa, sb, sy;
  size_t j;
  RETURN_IF(api->KernelContext_GetInput(context, 0, &a));
  RETURN_IF(api->KernelContext_GetInput(context, 1, &b));
  if (!a || !b) return error("a binary kernel is missing an input");
  RETURN_IF(shape_of(a, &sa));
  RETURN_IF(shape_of(b, &sb));
  if (sa.elem != sb.elem) return error("inputs of different element types");
  if (!broadcast(&sa, &sb, &sy)) return error("inputs that do not broadcast");
  RETURN_IF(api->KernelContext_GetOutput(context, 0, sy.dims, sy.rank, &y));
  RETURN_IF(api->GetTensorData(a, &pa));
  RETURN_IF(api->GetTensorData(b, &pb));
  RETURN_IF(api->GetTensorMutableData(y, &py));
  if (sy.elem == ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT) {
    const float* fa = (const float*)pa;
    const float* fb = (const float*)pb;
    float* fy = (float*)py;
    for (j = 0; j < sy.count; ++j) {
      float x1 = fa[source_index(&sa, &sy, j)], x2 = fb[source_index(&sb, &sy, j)];
      fy[j] = k->op == OP_ADD ? x1 + x2 : x1 * x2;
    }
  } else if (sy.elem == ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32 && k->op == OP_MUL) {
    const int32_t* ia = (const int32_t*)pa;
    const int32_t* ib = (const int32_t*)pb;
    int32_t* iy = (int32_t*)py;
    for (j = 0; j < sy.count; ++j) iy[j] = ia[source_index(&sa, &sy, j)] * ib[source_index(&sb, &sy, j)];
  } else {
    return error("an element type the kernel was not registered for reached Compute");
  }
  return NULL;
}

static void log_buffers(const TestKernel* k, const void* in, const void* out) {
  FILE* f;
  if (!k->compute_log || !k->compute_log[0]) return;
  f = fopen(k->compute_log, "a");
  if (!f) return;
  fprintf(f, "compute node=%s in=%p out=%p\n", k->node, in, out);
  fclose(f);
}

/* Identity, an alias: the output is the input's buffer or already holds its bytes; nothing to write. */
static OrtStatus* compute_identity(const TestKernel* k, OrtKernelContext* context) {
  const OrtValue* x = NULL;
  OrtValue* y = NULL;
  const void* px = NULL;
  void* py = NULL;
  Shape s;
  RETURN_IF(api->KernelContext_GetInput(context, 0, &x));
  if (!x) return error("Identity is missing its input");
  RETURN_IF(shape_of(x, &s));
  RETURN_IF(api->KernelContext_GetOutput(context, 0, s.dims, s.rank, &y));
  RETURN_IF(api->GetTensorData(x, &px));
  RETURN_IF(api->GetTensorMutableData(y, &py));
  log_buffers(k, px, py);
  return NULL;
}

static OrtStatus* compute_unary(const TestKernel* k, OrtKernelContext* context) {
  const OrtValue* x = NULL;
  OrtValue* y = NULL;
  const void* px = NULL;
  void* py = NULL;
  Shape s;
  size_t j;
  RETURN_IF(api->KernelContext_GetInput(context, 0, &x));
  if (!x) return error("a unary kernel is missing its input");
  RETURN_IF(shape_of(x, &s));
  if (s.elem != ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT) return error("Relu / LeakyRelu registered for float only");
  RETURN_IF(api->KernelContext_GetOutput(context, 0, s.dims, s.rank, &y));
  RETURN_IF(api->GetTensorData(x, &px));
  RETURN_IF(api->GetTensorMutableData(y, &py));
  log_buffers(k, px, py);
  for (j = 0; j < s.count; ++j) {
    float v = ((const float*)px)[j];
    ((float*)py)[j] = v >= 0.0f ? v : (k->op == OP_RELU ? 0.0f : k->alpha * v);
  }
  return NULL;
}

/* MatMul of A [..., K] and B [K, N]: from the packed copy of B when pre-packed (input 1 unread, as ONNX
 * Runtime requires of a packed weight), else from input 1. */
static OrtStatus* compute_matmul(const TestKernel* k, OrtKernelContext* context) {
  const OrtValue* a = NULL;
  const OrtValue* b = NULL;
  OrtValue* y = NULL;
  const float* pa = NULL;
  const float* pb = NULL;
  float* py = NULL;
  Shape sa, sb, sy;
  int64_t kk = k->k, n = k->n, row, col, i;
  size_t rows;
  RETURN_IF(api->KernelContext_GetInput(context, 0, &a));
  if (!a) return error("MatMul is missing A");
  RETURN_IF(shape_of(a, &sa));
  if (!k->packed_b) {
    RETURN_IF(api->KernelContext_GetInput(context, 1, &b));
    if (!b) return error("MatMul is missing B");
    RETURN_IF(shape_of(b, &sb));
    if (sb.rank != 2) return error("MatMul's B must be 2-D");
    kk = sb.dims[0];
    n = sb.dims[1];
    RETURN_IF(api->GetTensorData(b, (const void**)&pb));
  }
  if (sa.rank < 1 || sa.dims[sa.rank - 1] != kk) return error("MatMul's A does not end in B's K");
  sy = sa;
  sy.dims[sy.rank - 1] = n;
  rows = sa.count / (size_t)kk;
  RETURN_IF(api->KernelContext_GetOutput(context, 0, sy.dims, sy.rank, &y));
  RETURN_IF(api->GetTensorData(a, (const void**)&pa));
  RETURN_IF(api->GetTensorMutableData(y, (void**)&py));
  for (row = 0; row < (int64_t)rows; ++row)
    for (col = 0; col < n; ++col) {
      float sum = 0.0f;
      for (i = 0; i < kk; ++i)
        sum += pa[row * kk + i] * (k->packed_b ? k->packed_b[col * kk + i] : pb[i * n + col]);
      py[row * n + col] = sum;
    }
  return NULL;
}

static OrtStatus* kernel_compute(OrtKernelImpl* this_ptr, OrtKernelContext* context) {
  const TestKernel* k = (const TestKernel*)this_ptr;
  size_t inputs = 0, outputs = 0;
  injected_fault_at(k->fault, "compute");
  RETURN_IF(api->KernelContext_GetInputCount(context, &inputs));
  RETURN_IF(api->KernelContext_GetOutputCount(context, &outputs));
  if (outputs != 1) return error("one output expected");
  if (k->op == OP_MATMUL) {
    if (inputs != 2) return error("two inputs expected");
    return compute_matmul(k, context);
  }
  if (k->op == OP_ADD || k->op == OP_MUL) {
    if (inputs != 2) return error("two inputs expected");
    return compute_binary(k, context);
  }
  if (inputs != 1) return error("one input expected");
  return k->op == OP_IDENTITY ? compute_identity(k, context) : compute_unary(k, context);
}

static void kernel_release(OrtKernelImpl* this_ptr) {
  TestKernel* k = (TestKernel*)this_ptr;
  if (k->owns_packed && k->packed_b) k->packed_allocator->Free(k->packed_allocator, (void*)k->packed_b);
  free(k);
}

static void log_prepack(const TestKernel* k, const char* line) {
  FILE* f;
  if (!k->prepack_log || !k->prepack_log[0]) return;
  f = fopen(k->prepack_log, "a");
  if (!f) return;
  fprintf(f, "%s\n", line);
  fclose(f);
}

/* Packs MatMul's constant B [K, N] transposed into a buffer of `allocator`; with a cache, stores it there
 * to share (the host then owns it and hands it back with SetSharedPrePackedWeight), else keeps it. */
static OrtStatus* kernel_prepack(OrtKernelImpl* this_ptr, const OrtValue* tensor, int input_index,
                                 OrtAllocator* allocator, OrtSharedPrePackedWeightCache* cache, bool* is_packed) {
  TestKernel* k = (TestKernel*)this_ptr;
  Shape s;
  const float* b = NULL;
  float* packed = NULL;
  size_t bytes;
  int64_t i, j;
  char line[256];
  *is_packed = false;
  snprintf(line, sizeof line, "prepack node=%s input=%d cache=%d", k->node, input_index, cache ? 1 : 0);
  log_prepack(k, line);
  if (k->op != OP_MATMUL || input_index != 1) return NULL; /* nothing else is packed */
  RETURN_IF(shape_of(tensor, &s));
  if (s.rank != 2 || s.elem != ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT) return NULL;
  RETURN_IF(api->GetTensorData(tensor, (const void**)&b));
  bytes = s.count * sizeof(float);
  RETURN_IF(api->AllocatorAlloc(allocator, bytes, (void**)&packed));
  for (i = 0; i < s.dims[0]; ++i)
    for (j = 0; j < s.dims[1]; ++j) packed[j * s.dims[0] + i] = b[i * s.dims[1] + j];
  k->k = s.dims[0];
  k->n = s.dims[1];
  if (cache) {
    void* buffers[1] = {packed};
    size_t sizes[1] = {bytes};
    OrtStatus* status = ep_api->SharedPrePackedWeightCache_StoreWeightData(cache, buffers, sizes, 1);
    if (status) {
      allocator->Free(allocator, packed);
      return status;
    }
    k->packed_b = NULL; /* the shared copy arrives in SetSharedPrePackedWeight */
  } else {
    k->packed_b = packed;
    k->packed_allocator = allocator;
    k->owns_packed = 1;
  }
  *is_packed = true;
  return NULL;
}

static OrtStatus* kernel_set_shared(OrtKernelImpl* this_ptr, const void* const* buffers, const size_t* sizes,
                                    size_t num_buffers, int input_index) {
  TestKernel* k = (TestKernel*)this_ptr;
  char line[256];
  if (k->op != OP_MATMUL || input_index != 1 || num_buffers != 1 ||
      sizes[0] != (size_t)(k->k * k->n) * sizeof(float))
    return error("SetSharedPrePackedWeight with buffers this kernel did not store");
  k->packed_b = (const float*)buffers[0];
  snprintf(line, sizeof line, "shared node=%s input=%d buffer=%p", k->node, input_index, buffers[0]);
  log_prepack(k, line);
  return NULL;
}

/* ---- what the kernel info says, logged for the tests ---- */

/* Reads a text getter the way ONNX Runtime's C++ wrapper does: the size first, then the text. */
typedef OrtStatus* (*TextGetter)(const OrtKernelInfo* info, char* out, size_t* size);
static OrtStatus* read_text(TextGetter get, const OrtKernelInfo* info, char* out, size_t room) {
  size_t size = 0;
  RETURN_IF(get(info, NULL, &size));
  if (size > room) return error("a kernel info text longer than the test plugin's buffer");
  return get(info, out, &size);
}

static OrtStatus* elem_type_of(OrtTypeInfo* type, int* elem) {
  const OrtTensorTypeAndShapeInfo* tensor = NULL;
  enum ONNXTensorElementDataType e = ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
  OrtStatus* status = api->CastTypeInfoToTensorInfo(type, &tensor);
  if (!status) status = api->GetTensorElementType(tensor, &e);
  api->ReleaseTypeInfo(type);
  *elem = (int)e;
  return status;
}

/* One side's values: " in0=<name>:<elem type>[:const]" for each input (or out0=... for outputs). */
static OrtStatus* describe_values(const OrtKernelInfo* info, int inputs, char* line, size_t size) {
  size_t count = 0, i;
  char name[128], piece[192];
  RETURN_IF(inputs ? api->KernelInfo_GetInputCount(info, &count) : api->KernelInfo_GetOutputCount(info, &count));
  for (i = 0; i < count; ++i) {
    OrtTypeInfo* type = NULL;
    size_t name_size = sizeof name;
    int elem = 0, is_constant = 0;
    const OrtValue* constant = NULL;
    RETURN_IF(inputs ? api->KernelInfo_GetInputName(info, i, name, &name_size)
                     : api->KernelInfo_GetOutputName(info, i, name, &name_size));
    RETURN_IF(inputs ? api->KernelInfo_GetInputTypeInfo(info, i, &type) : api->KernelInfo_GetOutputTypeInfo(info, i, &type));
    RETURN_IF(elem_type_of(type, &elem));
    if (inputs) RETURN_IF(api->KernelInfoGetConstantInput_tensor(info, i, &is_constant, &constant));
    if (is_constant && !constant) return error("a constant input without its value");
    snprintf(piece, sizeof piece, " %s%zu=%s:%d%s", inputs ? "in" : "out", i, name, elem, is_constant ? ":const" : "");
    append(line, size, piece);
  }
  return NULL;
}

static OrtStatus* log_kernel_info(const KernelEp* ep, const TestKernel* k, const OrtKernelInfo* info) {
  char line[1024] = "", node[128], op_type[64], domain[64], piece[512];
  int since = 0;
  const OrtEp* owner = NULL;
  OrtKeyValuePairs* config = NULL;
  const char* claim = NULL;
  FILE* f;
  RETURN_IF(read_text(api->KernelInfo_GetNodeName, info, node, sizeof node));
  RETURN_IF(read_text(api->KernelInfo_GetOperatorType, info, op_type, sizeof op_type));
  RETURN_IF(read_text(api->KernelInfo_GetOperatorDomain, info, domain, sizeof domain));
  RETURN_IF(api->KernelInfo_GetOperatorSinceVersion(info, &since));
  RETURN_IF(ep_api->KernelInfo_GetEp(info, &owner));
  RETURN_IF(api->KernelInfo_GetConfigEntries(info, &config));
  claim = api->GetKeyValue(config, "ep." EP_NAME ".claim");
  snprintf(piece, sizeof piece, "node=%s op=%s domain=%s since=%d ep=%s claim=%s", node, op_type, domain, since,
           owner == &ep->base ? "self" : "other", claim ? claim : "-");
  api->ReleaseKeyValuePairs(config);
  append(line, sizeof line, piece);
  RETURN_IF(describe_values(info, 1, line, sizeof line));
  RETURN_IF(describe_values(info, 0, line, sizeof line));
  if (k->op == OP_LEAKY_RELU) {
    snprintf(piece, sizeof piece, " alpha=%g", (double)k->alpha);
    append(line, sizeof line, piece);
  }
  f = fopen(ep->info_log, "a");
  if (!f) return error("cannot open the info log");
  fprintf(f, "%s\n", line);
  fclose(f);
  return NULL;
}

/* ---- control flow: kernels the host makes, helpers the EP gives them ---- */

static void log_line(const char* path, const char* line) {
  FILE* f;
  if (!path || !path[0]) return;
  f = fopen(path, "a");
  if (!f) return;
  fprintf(f, "%s\n", line);
  fclose(f);
}

/* What ConcatOutput and Transpose need of the node and the EP: its name and the log. */
typedef struct FlowHelper {
  union {
    OrtLoopKernelHelper loop;
    OrtScanKernelHelper scan;
  } base;
  char node[128];
  const char* cf_log;
} FlowHelper;

static void helper_release_loop(OrtLoopKernelHelper* this_ptr) { free(this_ptr); }
static void helper_release_scan(OrtScanKernelHelper* this_ptr) { free(this_ptr); }

static size_t element_size(enum ONNXTensorElementDataType e) {
  switch (e) {
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE:
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64:
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT64: return 8;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT:
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32:
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT32: return 4;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16:
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16:
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT16:
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT16: return 2;
    default: return 1;
  }
}

/* The Loop's scan outputs of every iteration, one after another, into the host's output buffer (the EP's
 * memory is the host's here: a plain copy). */
static OrtStatus* helper_concat(OrtLoopKernelHelper* this_ptr, void* stream_handle, const OrtValue* const* parts,
                                size_t num_parts, void* output, size_t output_size) {
  const FlowHelper* h = (const FlowHelper*)this_ptr;
  size_t offset = 0, i;
  char line[256];
  (void)stream_handle;
  for (i = 0; i < num_parts; ++i) {
    Shape s;
    const void* data = NULL;
    size_t bytes;
    RETURN_IF(shape_of(parts[i], &s));
    RETURN_IF(api->GetTensorData(parts[i], &data));
    bytes = s.count * element_size(s.elem);
    if (offset + bytes > output_size) return error("ConcatOutput: the parts do not fit the output");
    memcpy((char*)output + offset, data, bytes);
    offset += bytes;
  }
  if (offset != output_size) return error("ConcatOutput: the parts do not fill the output");
  snprintf(line, sizeof line, "concat node=%s parts=%zu bytes=%zu", h->node, num_parts, output_size);
  log_line(h->cf_log, line);
  return NULL;
}

/* output = input with its axes permuted (output axis i is input axis permutation[i]). */
static OrtStatus* helper_transpose(OrtScanKernelHelper* this_ptr, const size_t* permutation, size_t rank,
                                   const OrtValue* input, OrtSyncStream* stream, OrtValue* output) {
  const FlowHelper* h = (const FlowHelper*)this_ptr;
  Shape in, out;
  const char* src = NULL;
  char* dst = NULL;
  size_t in_strides[8], j, a, esize;
  char line[256], piece[32];
  (void)stream;
  RETURN_IF(shape_of(input, &in));
  RETURN_IF(shape_of(output, &out));
  if (in.rank != rank || out.rank != rank || in.count != out.count || in.elem != out.elem)
    return error("Transpose: input and output do not fit the permutation");
  for (a = 0; a < rank; ++a)
    if (permutation[a] >= rank || out.dims[a] != in.dims[permutation[a]])
      return error("Transpose: the output's shape is not the permuted input's");
  RETURN_IF(api->GetTensorData(input, (const void**)&src));
  RETURN_IF(api->GetTensorMutableData(output, (void**)&dst));
  esize = element_size(in.elem);
  for (a = rank; a-- > 0;) in_strides[a] = a + 1 == rank ? 1 : in_strides[a + 1] * (size_t)in.dims[a + 1];
  for (j = 0; j < out.count; ++j) {
    size_t rest = j, from = 0;
    for (a = rank; a-- > 0;) {
      size_t d = (size_t)out.dims[a];
      from += (rest % d) * in_strides[permutation[a]];
      rest /= d;
    }
    memcpy(dst + j * esize, src + from * esize, esize);
  }
  snprintf(line, sizeof line, "transpose node=%s perm=", h->node);
  for (a = 0; a < rank; ++a) {
    snprintf(piece, sizeof piece, "%s%zu", a ? "," : "", permutation[a]);
    append(line, sizeof line, piece);
  }
  append(line, sizeof line, " dims=");
  for (a = 0; a < rank; ++a) {
    snprintf(piece, sizeof piece, "%s%lld", a ? "," : "", (long long)in.dims[a]);
    append(line, sizeof line, piece);
  }
  log_line(h->cf_log, line);
  return NULL;
}

/* If, Loop and Scan: the host makes the kernel; Loop and Scan get a helper, which the host owns once the
 * kernel is made (and releases with it). */
static OrtStatus* create_control_flow_kernel(const KernelState* s, const OrtKernelInfo* info, OrtKernelImpl** out) {
  FlowHelper* h;
  OrtStatus* status;
  if (s->op == OP_IF) return ep_api->CreateIfKernel(info, out);
  h = (FlowHelper*)calloc(1, sizeof *h);
  if (!h) return error("out of memory");
  h->cf_log = s->ep->cf_log;
  status = read_text(api->KernelInfo_GetNodeName, info, h->node, sizeof h->node);
  if (!status && s->op == OP_LOOP) {
    h->base.loop.ort_version_supported = API_VERSION;
    h->base.loop.Release = helper_release_loop;
    h->base.loop.ConcatOutput = helper_concat;
    status = ep_api->CreateLoopKernel(info, &h->base.loop, out);
  } else if (!status) {
    h->base.scan.ort_version_supported = API_VERSION;
    h->base.scan.Release = helper_release_scan;
    h->base.scan.Transpose = helper_transpose;
    status = ep_api->CreateScanKernel(info, &h->base.scan, out);
  }
  if (status) free(h); /* not taken: still ours */
  return status;
}

static OrtStatus* create_kernel(void* state, const OrtKernelInfo* info, OrtKernelImpl** out) {
  const KernelState* s = (const KernelState*)state;
  TestKernel* k;
  OrtStatus* status = NULL;
  if (s->op == OP_IF || s->op == OP_LOOP || s->op == OP_SCAN) return create_control_flow_kernel(s, info, out);
#ifdef ORT_TEST_KERNEL_CREATE_FAILS
  if (s->op == OP_RELU) return api->CreateStatus(ORT_EP_FAIL, "ortkern refuses to create its Relu kernel (a broken variant)");
#endif
  k = (TestKernel*)calloc(1, sizeof *k);
  if (!k) return error("out of memory");
  k->base.ort_version_supported = API_VERSION;
  k->base.Compute = kernel_compute;
  k->base.Release = kernel_release;
  k->base.PrePackWeight = kernel_prepack;
  k->base.SetSharedPrePackedWeight = kernel_set_shared;
  k->op = s->op;
  k->fault = &s->ep->fault;
  k->prepack_log = s->ep->prepack_log;
  k->compute_log = s->ep->compute_log;
  status = read_text(api->KernelInfo_GetNodeName, info, k->node, sizeof k->node);
  if (status) {
    free(k);
    return status;
  }
  if (s->op == OP_LEAKY_RELU) {
    /* alpha is optional in the model (0.01): ONNX Runtime's getter fails when it is absent. */
    status = api->KernelInfoGetAttribute_float(info, "alpha", &k->alpha);
    if (status) {
      api->ReleaseStatus(status);
      status = NULL;
      k->alpha = 0.01f;
    }
  }
  if (s->ep->info_log[0]) status = log_kernel_info(s->ep, k, info);
  if (status) {
    free(k);
    return status;
  }
  *out = &k->base;
  return NULL;
}

/* ---- the registry ---- */

/* How output 0 relates to input 0 in a kernel definition. */
enum Aliasing { NO_ALIAS, ALIAS, MAY_INPLACE };

#ifdef ORT_TEST_CONTROL_FLOW
/* A control-flow kernel definition: V (the values) in `floats`, and for If / Loop the condition B in {bool} and
 * Loop's trip count I in {int64}, those inputs in CPU memory (as ONNX Runtime requires). */
static OrtStatus* add_control_flow_kernel(KernelEp* ep, const char* op_type, int op, int since_start, int since_end) {
  OrtKernelDefBuilder* builder = NULL;
  OrtKernelDef* def = NULL;
  const OrtDataType* f = NULL;
  const OrtDataType* b = NULL;
  const OrtDataType* i64 = NULL;
  OrtStatus* status;
  KernelState* state = &ep->states[op - 1];
  state->op = op;
  state->ep = ep;
  RETURN_IF(ep_api->GetTensorDataType(ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, &f));
  RETURN_IF(ep_api->GetTensorDataType(ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL, &b));
  RETURN_IF(ep_api->GetTensorDataType(ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64, &i64));
  RETURN_IF(ep_api->CreateKernelDefBuilder(&builder));
  status = ep_api->KernelDefBuilder_SetOperatorType(builder, op_type);
  if (!status) status = ep_api->KernelDefBuilder_SetDomain(builder, "");
  if (!status) status = ep_api->KernelDefBuilder_SetSinceVersion(builder, since_start, since_end);
  if (!status) status = ep_api->KernelDefBuilder_SetExecutionProvider(builder, EP_NAME);
  if (!status) status = ep_api->KernelDefBuilder_AddTypeConstraint(builder, "V", &f, 1);
  if (!status && op != OP_SCAN) {
    status = ep_api->KernelDefBuilder_AddTypeConstraint(builder, "B", &b, 1);
    if (!status) status = ep_api->KernelDefBuilder_SetInputMemType(builder, op == OP_IF ? 0 : 1, OrtMemTypeCPUInput);
  }
  if (!status && op == OP_LOOP) {
    status = ep_api->KernelDefBuilder_AddTypeConstraint(builder, "I", &i64, 1);
    if (!status) status = ep_api->KernelDefBuilder_SetInputMemType(builder, 0, OrtMemTypeCPUInput);
  }
  if (!status) status = ep_api->KernelDefBuilder_Build(builder, &def);
  ep_api->ReleaseKernelDefBuilder(builder);
  if (!status) status = ep_api->KernelRegistry_AddKernel(ep->registry, def, create_kernel, state);
  if (def) ep_api->ReleaseKernelDef(def);
  return status;
}
#endif

static OrtStatus* add_kernel(KernelEp* ep, const char* op_type, int op, int since_start, int since_end,
                             const enum ONNXTensorElementDataType* types, size_t num_types, enum Aliasing aliasing) {
  static const int zero[1] = {0};
  OrtKernelDefBuilder* builder = NULL;
  OrtKernelDef* def = NULL;
  const OrtDataType* data_types[4];
  OrtStatus* status;
  size_t i;
  KernelState* state = &ep->states[op - 1];
  state->op = op;
  state->ep = ep;
  for (i = 0; i < num_types; ++i) RETURN_IF(ep_api->GetTensorDataType(types[i], &data_types[i]));
  RETURN_IF(ep_api->CreateKernelDefBuilder(&builder));
  status = ep_api->KernelDefBuilder_SetOperatorType(builder, op_type);
  if (!status) status = ep_api->KernelDefBuilder_SetDomain(builder, "");
  if (!status) status = ep_api->KernelDefBuilder_SetSinceVersion(builder, since_start, since_end);
  if (!status) status = ep_api->KernelDefBuilder_SetExecutionProvider(builder, EP_NAME);
  if (!status) status = ep_api->KernelDefBuilder_SetInputMemType(builder, 0, OrtMemTypeDefault);
  if (!status) status = ep_api->KernelDefBuilder_SetOutputMemType(builder, 0, OrtMemTypeDefault);
  if (!status) status = ep_api->KernelDefBuilder_AddTypeConstraint(builder, "T", data_types, num_types);
  if (!status && aliasing == ALIAS) status = ep_api->KernelDefBuilder_AddInputOutputAliases(builder, zero, zero, 1);
  if (!status && aliasing == MAY_INPLACE)
    status = ep_api->KernelDefBuilder_AddInputOutputMutableAliases(builder, zero, zero, 1);
  if (!status) status = ep_api->KernelDefBuilder_Build(builder, &def);
  ep_api->ReleaseKernelDefBuilder(builder);
  if (!status) status = ep_api->KernelRegistry_AddKernel(ep->registry, def, create_kernel, state);
  if (def) ep_api->ReleaseKernelDef(def); /* the registry keeps its own copy */
  return status;
}

static OrtStatus* build_registry(KernelEp* ep) {
  static const enum ONNXTensorElementDataType floats[] = {ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT};
  static const enum ONNXTensorElementDataType float_int32[] = {ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT,
                                                                ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32};
  RETURN_IF(ep_api->CreateKernelRegistry(&ep->registry));
  RETURN_IF(add_kernel(ep, "Add", OP_ADD, 7, 14, floats, 1, NO_ALIAS));
  RETURN_IF(add_kernel(ep, "Mul", OP_MUL, 7, 14, float_int32, 2, NO_ALIAS));
  RETURN_IF(add_kernel(ep, "Relu", OP_RELU, 13, 14, floats, 1, MAY_INPLACE));
  RETURN_IF(add_kernel(ep, "LeakyRelu", OP_LEAKY_RELU, 6, 16, floats, 1, MAY_INPLACE));
  RETURN_IF(add_kernel(ep, "MatMul", OP_MATMUL, 1, 13, floats, 1, NO_ALIAS));
  RETURN_IF(add_kernel(ep, "Identity", OP_IDENTITY, 13, 13, floats, 1, ALIAS));
#ifdef ORT_TEST_CONTROL_FLOW
  RETURN_IF(add_control_flow_kernel(ep, "If", OP_IF, 1, 25));
  RETURN_IF(add_control_flow_kernel(ep, "Loop", OP_LOOP, 1, 25));
  RETURN_IF(add_control_flow_kernel(ep, "Scan", OP_SCAN, 9, 25));
#endif
  return NULL;
}

static OrtStatus* ep_get_kernel_registry(OrtEp* this_ptr, const OrtKernelRegistry** out) {
  const KernelEp* ep = (const KernelEp*)this_ptr;
  *out = ep->no_registry ? NULL : ep->registry;
  return NULL;
}

/* ---- the factory ---- */

static const char* factory_name(const OrtEpFactory* f) {
  (void)f;
  return EP_NAME;
}
static const char* factory_vendor(const OrtEpFactory* f) {
  (void)f;
  return "ephost tests";
}
static uint32_t factory_vendor_id(const OrtEpFactory* f) {
  (void)f;
  return 0;
}
static const char* factory_version(const OrtEpFactory* f) {
  (void)f;
  return "0.2.4";
}

static OrtStatus* factory_supported_devices(OrtEpFactory* f, const OrtHardwareDevice* const* devices, size_t n,
                                            OrtEpDevice** ep_devices, size_t max, size_t* num) {
  size_t i;
  *num = 0;
  for (i = 0; i < n && *num < max; ++i) {
    OrtEpDevice* d = NULL;
    OrtMemoryInfo* memory = NULL;
    OrtStatus* status;
    if (api->HardwareDevice_Type(devices[i]) != OrtHardwareDeviceType_CPU) continue;
    RETURN_IF(ep_api->CreateEpDevice(f, devices[i], NULL, NULL, &d));
    status = api->CreateMemoryInfo_V2("Cpu", OrtMemoryInfoDeviceType_CPU, 0, 0, OrtDeviceMemoryType_DEFAULT, 0,
                                      OrtDeviceAllocator, &memory);
    if (!status) status = ep_api->EpDevice_AddAllocatorInfo(d, memory);
    if (memory) api->ReleaseMemoryInfo(memory);
    if (status) {
      ep_api->ReleaseEpDevice(d);
      return status;
    }
    ep_devices[(*num)++] = d;
  }
  return NULL;
}

/* The option `key` ("ep.ortkern.<key>") into `out`, "" when absent. */
static OrtStatus* read_option(const OrtSessionOptions* options, const char* key, char* out, size_t room) {
  char full[96];
  int has = 0;
  size_t size = room;
  out[0] = '\0';
  snprintf(full, sizeof full, "ep." EP_NAME ".%s", key);
  RETURN_IF(api->HasSessionConfigEntry(options, full, &has));
  if (has) RETURN_IF(api->GetSessionConfigEntry(options, full, out, &size));
  return NULL;
}

static void factory_release_ep(OrtEpFactory* f, OrtEp* ep) {
  KernelEp* own = (KernelEp*)ep;
  (void)f;
  if (!own) return;
  if (own->registry) ep_api->ReleaseKernelRegistry(own->registry);
  free(own);
}

static OrtStatus* factory_create_ep(OrtEpFactory* f, const OrtHardwareDevice* const* devices,
                                    const OrtKeyValuePairs* const* metadata, size_t n,
                                    const OrtSessionOptions* options, const OrtLogger* logger, OrtEp** out) {
  KernelEp* ep;
  char claim[16], registry[16];
  OrtStatus* status;
  (void)metadata, (void)logger;
  if (n != 1 || api->HardwareDevice_Type(devices[0]) != OrtHardwareDeviceType_CPU)
    return api->CreateStatus(ORT_INVALID_ARGUMENT, "CreateEp: one CPU device expected");
  ep = (KernelEp*)calloc(1, sizeof *ep);
  if (!ep) return error("out of memory");
  ep->base.ort_version_supported = API_VERSION;
  ep->base.GetName = ep_get_name;
  ep->base.GetCapability = ep_get_capability;
  ep->base.GetKernelRegistry = ep_get_kernel_registry; /* no Compile: a kernel-registry EP */
  status = read_option(options, "claim", claim, sizeof claim);
  if (!status) status = read_option(options, "info_log", ep->info_log, sizeof ep->info_log);
  if (!status) status = read_option(options, "registry", registry, sizeof registry);
  if (!status) status = read_option(options, "prepack_log", ep->prepack_log, sizeof ep->prepack_log);
  if (!status) status = read_option(options, "compute_log", ep->compute_log, sizeof ep->compute_log);
  if (!status) status = read_option(options, "schema_log", ep->schema_log, sizeof ep->schema_log);
  if (!status) status = read_option(options, "cf_log", ep->cf_log, sizeof ep->cf_log);
  if (!status) status = read_injected_fault(api, options, EP_NAME, &ep->fault);
  if (!status) injected_fault_at(&ep->fault, "create_ep");
  if (!status) {
    ep->claim_all = strcmp(claim, "all") == 0;
    ep->no_registry = strcmp(registry, "none") == 0;
    status = build_registry(ep);
  }
  if (status) {
    factory_release_ep(f, &ep->base);
    return status;
  }
  *out = &ep->base;
  return NULL;
}

static OrtEpFactory factory;

EXPORT OrtStatus* CreateEpFactories(const char* registered_name, const OrtApiBase* base, const OrtLogger* logger,
                                    OrtEpFactory** factories, size_t max_factories, size_t* num_factories) {
  (void)registered_name, (void)logger;
  api = base->GetApi(API_VERSION);
  if (!api) {
    *num_factories = 0;
    return NULL;
  }
  ep_api = api->GetEpApi();
  if (max_factories < 1) return api->CreateStatus(ORT_INVALID_ARGUMENT, "room for no factory");
  factory.ort_version_supported = API_VERSION;
  factory.GetName = factory_name;
  factory.GetVendor = factory_vendor;
  factory.GetSupportedDevices = factory_supported_devices;
  factory.CreateEp = factory_create_ep;
  factory.ReleaseEp = factory_release_ep;
  factory.GetVendorId = factory_vendor_id;
  factory.GetVersion = factory_version;
  factories[0] = &factory;
  *num_factories = 1;
  return NULL;
}

EXPORT OrtStatus* ReleaseEpFactory(OrtEpFactory* f) {
  (void)f;
  return NULL;
}
