/*
 * An ONNX Runtime plugin EP for ephost's tests, in C, against ephost's declarations of ONNX Runtime's
 * ABI (host/ort_ep/include/ort_ep/ort_abi.h), as a vendor's plugin is written against ONNX Runtime's
 * headers. It imports nothing from the host: it talks to it only through OrtApiBase.
 *
 * The compiling EP ("ortadd"): claims float Add, Mul and Relu, fused into chains (a node joins the
 * current group when every input a node produces comes from the group), compiles each group to a list
 * of steps and computes them on host memory. Add and Mul broadcast as numpy does.
 * Its OrtEp::Sync (API 25) appends "sync" to the file option "ep.ortadd.sync_log" names, and fails when
 * "ep.ortadd.fail_sync" is set (any value).
 * Option "ep.ortadd.skip_op" (read in CreateEp) names an op type it leaves alone; "ep.ortadd.fail_create"
 * (any value) makes CreateEp fail, as an EP whose device is gone does; "ep.ortadd.fault" and
 * "ep.ortadd.fault_while" crash, abort or hang it in CreateEp, GetCapability, Compile or Compute
 * (ort_injected_fault.h).
 *
 * Several libraries are built from this file (tests/plugins/ort_ep/CMakeLists.txt):
 *   ORT_TEST_CRASH_IN_CREATE   crashes in CreateEpFactories
 *   ORT_TEST_NULL_FACTORY      answers one factory, NULL
 *   ORT_TEST_ASK_API 31        asks GetApi for API 31 (ephost answers NULL) and then makes no factory
 *   ORT_TEST_PROVIDER_BRIDGE   also exports GetProvider, as ONNX Runtime's provider-bridge libraries do
 *   ORT_TEST_TWO_FACTORIES     CreateEpFactories answers two factories, "ortadd" and "ortadd2", the same EP under
 *                              two names (its option keys, EPContext source and name follow the factory's)
 *   ORT_TEST_SECOND_REFUSES_CPU  with two factories: the second supports no host device, and says why for the
 *                              CPU through GetHardwareDeviceIncompatibilityDetails (API 24)
 *   ORT_TEST_WRONG_ADD         adds one too many to every Add (the conformance kit's numerical section must
 *                              catch it)
 *   ORT_TEST_OWN_DEVICE        "ortdev": a device with memory of its own (ort_test_device.h): the factory's
 *                              allocator, data transfer and sync streams; Compute checks that every input and
 *                              output is in that memory, and that the run's stream is one of its streams
 *   ORT_TEST_VIRTUAL_DEVICE    "ortvirt": runs on a virtual GPU it describes itself (ort_test_virtual.h:
 *                              CreateHardwareDevice), passes over the CPU saying why, and asks the environment
 *                              (CreateEnv, GetHardwareDeviceEpIncompatibilityDetails) in CreateEp
 *   ORT_TEST_PROFILER          an EP profiler (ort_test_profiler.h: OrtEp::CreateProfiler, API 25) reporting a
 *                              KERNEL event per compute and a SESSION event at the end
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "broadcast.h"
#include "ort_ep/ort_abi.h"
#include "ort_injected_fault.h"

#ifndef ORT_TEST_ASK_API
#define ORT_TEST_ASK_API 30
#endif
#ifndef ORT_TEST_EP_NAME
#define ORT_TEST_EP_NAME "ortadd"
#endif

static const struct OrtApi* api;
static const struct OrtEpApi* ep_api;

#ifdef ORT_TEST_OWN_DEVICE
#include "ort_test_device.h"
#endif


#define EXPORT __attribute__((visibility("default")))

/* ---- helpers ---- */

static OrtStatus* error(const char* message) { return api->CreateStatus(ORT_EP_FAIL, message); }

#define RETURN_IF(status_expr)        \
  do {                                \
    OrtStatus* s_ = (status_expr);    \
    if (s_) return s_;                \
  } while (0)

#ifdef ORT_TEST_VIRTUAL_DEVICE
#include "ort_test_virtual.h"
#endif
#ifdef ORT_TEST_PROFILER
#include "ort_test_profiler.h"
#endif

enum { OP_ADD = 1, OP_MUL = 2, OP_RELU = 3 };

static int op_code(const char* op_type) {
  if (strcmp(op_type, "Add") == 0) return OP_ADD;
  if (strcmp(op_type, "Mul") == 0) return OP_MUL;
  if (strcmp(op_type, "Relu") == 0) return OP_RELU;
  return 0;
}

static char* copy_text(const char* s) {
  size_t n = strlen(s) + 1;
  char* c = (char*)malloc(n);
  if (c) memcpy(c, s, n);
  return c;
}

/* ---- the EP ---- */

typedef struct TestEp {
  OrtEp base;
  const char* name; /* the name of the factory that created it */
  char skip_op[32];
  char compile_log[512]; /* option compile_log: a file Compile appends "graph" or "context" to, per group */
  char target[32];       /* option target: what it compiles for, recorded in the compatibility info */
  char compatibility[96];
  char env_log[512]; /* option env_log (ORT_TEST_VIRTUAL_DEVICE): what the environment answered */
  char sync_log[512]; /* option sync_log: a file Sync appends "sync" to, per call */
  int weightless_support; /* option weightless_support: what GetWeightlessSupport answers (default 2, ALL) */
  char weightless_seen[64]; /* the weightless entries CreateEp saw, added to compile_log at each Compile when set */
  int fail_sync;      /* option fail_sync: Sync fails */
  const OrtLogger* logger;
  /* The EPContext configuration (experimental functions, API 28), extracted in CreateEp as ONNX Runtime
   * asks, released in ReleaseEp. */
  OrtEpContextConfig* context_config;
  OrtReleaseEpContextConfigFn release_context_config;
  OrtInjectedFault fault; /* options fault, fault_while */
} TestEp;

/* Whether `node` is an EPContext node this EP generated (source = its name): it loads those. */
static OrtStatus* is_own_context(const OrtNode* node, const char* name, int* out) {
  const char* op_type = NULL;
  const OrtOpAttr* attr = NULL;
  char source[64];
  size_t size = 0;
  OrtStatus* status;
  *out = 0;
  RETURN_IF(api->Node_GetOperatorType(node, &op_type));
  if (strcmp(op_type, "EPContext") != 0) return NULL;
  status = api->Node_GetAttributeByName(node, "source", &attr);
  if (status || !attr) {
    if (status) api->ReleaseStatus(status);
    return NULL;
  }
  status = api->ReadOpAttr(attr, ORT_OP_ATTR_STRING, source, sizeof source - 1, &size);
  if (status) { /* longer than any name of ours: not ours */
    api->ReleaseStatus(status);
    return NULL;
  }
  source[size < sizeof source ? size : sizeof source - 1] = '\0';
  *out = strcmp(source, name) == 0;
  return NULL;
}

static const char* ep_get_name(const OrtEp* ep) {
  return ((const TestEp*)ep)->name;
}

/* Whether `value` is a float tensor (by its type info). */
static OrtStatus* is_float(const OrtValueInfo* value, int* out) {
  const OrtTypeInfo* type = NULL;
  const OrtTensorTypeAndShapeInfo* tensor = NULL;
  enum ONNXType onnx_type;
  enum ONNXTensorElementDataType elem;
  *out = 0;
  if (!value) return NULL;
  RETURN_IF(api->GetValueInfoTypeInfo(value, &type));
  RETURN_IF(api->GetOnnxTypeFromTypeInfo(type, &onnx_type));
  if (onnx_type != ONNX_TYPE_TENSOR) return NULL;
  RETURN_IF(api->CastTypeInfoToTensorInfo(type, &tensor));
  RETURN_IF(api->GetTensorElementType(tensor, &elem));
  *out = elem == ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT;
  return NULL;
}

static OrtStatus* node_supported(TestEp* ep, const OrtNode* node, int* out) {
  const char* op_type = NULL;
  const char* domain = NULL;
  size_t n_in = 0, n_out = 0, i;
  const OrtValueInfo* values[4];
  *out = 0;
  RETURN_IF(api->Node_GetOperatorType(node, &op_type));
  RETURN_IF(api->Node_GetDomain(node, &domain));
  if (domain[0] != '\0' || !op_code(op_type) || strcmp(op_type, ep->skip_op) == 0) return NULL;
  RETURN_IF(api->Node_GetNumInputs(node, &n_in));
  RETURN_IF(api->Node_GetNumOutputs(node, &n_out));
  if (n_in < 1 || n_in > 2 || n_out != 1) return NULL;
  RETURN_IF(api->Node_GetInputs(node, values, n_in));
  RETURN_IF(api->Node_GetOutputs(node, values + n_in, n_out));
  for (i = 0; i < n_in + n_out; ++i) {
    int f = 0;
    RETURN_IF(is_float(values[i], &f));
    if (!f) return NULL;
  }
  *out = 1;
  return NULL;
}

/* Whether every input of `node` that a node produces is produced by a node of `group`. */
static OrtStatus* fed_by_group(const OrtNode* node, const OrtNode* const* group, size_t group_size, int* out) {
  size_t n_in = 0, i, j;
  const OrtValueInfo* inputs[2];
  *out = 1;
  RETURN_IF(api->Node_GetNumInputs(node, &n_in));
  RETURN_IF(api->Node_GetInputs(node, inputs, n_in));
  for (i = 0; i < n_in; ++i) {
    const OrtNode* producer = NULL;
    size_t index = 0;
    int found = 0;
    RETURN_IF(api->ValueInfo_GetValueProducer(inputs[i], &producer, &index));
    if (!producer) continue;
    for (j = 0; j < group_size; ++j) found |= group[j] == producer;
    if (!found) *out = 0;
  }
  return NULL;
}

static OrtStatus* ep_get_capability(OrtEp* this_ptr, const OrtGraph* graph, OrtEpGraphSupportInfo* info) {
  TestEp* ep = (TestEp*)this_ptr;
  size_t num_nodes = 0, i, group_size = 0;
  const OrtNode** nodes;
  const OrtNode** group;
  OrtStatus* status = NULL;
  OrtNodeFusionOptions fusion = {ORT_TEST_ASK_API, false};
  injected_fault_at(&ep->fault, "get_capability");
  RETURN_IF(api->Graph_GetNumNodes(graph, &num_nodes));
  if (num_nodes == 0) return NULL;
  nodes = (const OrtNode**)calloc(num_nodes, sizeof *nodes);
  group = (const OrtNode**)calloc(num_nodes, sizeof *group);
  if (!nodes || !group) {
    free(nodes), free(group);
    return error("out of memory");
  }
  status = api->Graph_GetNodes(graph, nodes, num_nodes);
  for (i = 0; !status && i < num_nodes; ++i) {
    int supported = 0, joins = 0, context = 0;
    status = is_own_context(nodes[i], ep->name, &context);
    if (!status && context) { /* a cached group: claimed alone, compiled from its ep_cache_context */
      status = ep_api->EpGraphSupportInfo_AddNodesToFuse(info, &nodes[i], 1, &fusion);
      continue;
    }
    if (!status) status = node_supported(ep, nodes[i], &supported);
    if (status || !supported) continue;
    if (group_size) status = fed_by_group(nodes[i], group, group_size, &joins);
    if (status) break;
    if (group_size && !joins) {
      status = ep_api->EpGraphSupportInfo_AddNodesToFuse(info, group, group_size, &fusion);
      group_size = 0;
      if (status) break;
    }
    group[group_size++] = nodes[i];
  }
  if (!status && group_size) status = ep_api->EpGraphSupportInfo_AddNodesToFuse(info, group, group_size, &fusion);
  free(nodes);
  free(group);
  return status;
}

/* ---- a compiled group: its steps over named values ---- */

typedef struct Buffer {
  float* data;
  size_t count;
  int64_t dims[8];
  size_t rank;
  int owned;
} Buffer;

typedef struct Step {
  int op;
  int in[2];  /* value slots; -1 when absent */
  int out;
} Step;

typedef struct Compiled {
  OrtNodeComputeInfo base;
  size_t num_values, num_inputs, num_outputs, num_steps;
  char** names;     /* value slot -> name */
  int* input_slot;  /* fused node input i -> slot */
  int* output_slot; /* fused node output i -> slot */
  Step* steps;
  /* Loaded from an EPContext node: the constant initializers it baked in (fused input i -> data, NULL for
   * a value the kernel context passes); the EPContext node's inputs are the others, in order. */
  struct Buffer* constants;
  const OrtInjectedFault* fault; /* the EP's (it outlives its compiled groups) */
} Compiled;

typedef struct State {
  char name[128];
  int runs;
} State;

static int slot_of(Compiled* c, const char* name) {
  size_t i;
  for (i = 0; i < c->num_values; ++i)
    if (strcmp(c->names[i], name) == 0) return (int)i;
  c->names[c->num_values] = copy_text(name);
  return (int)c->num_values++;
}

static OrtStatus* name_of(const OrtValueInfo* v, const char** name) { return api->GetValueInfoName(v, name); }

static OrtStatus* create_state(OrtNodeComputeInfo* this_ptr, OrtNodeComputeContext* context, void** state) {
  State* s = (State*)calloc(1, sizeof *s);
  (void)this_ptr;
  if (!s) return error("out of memory");
  snprintf(s->name, sizeof s->name, "%s", ep_api->NodeComputeContext_NodeName(context));
  *state = s;
  return NULL;
}

static void release_state(OrtNodeComputeInfo* this_ptr, void* state) {
  (void)this_ptr;
  free(state);
}

/* The shape `a` and `b` broadcast to (numpy's multidirectional broadcasting) into `out`; 0 when they do not. */
static int broadcast_shape(const Buffer* a, const Buffer* b, Buffer* out) {
  return broadcast_dims(a->dims, a->rank, b->dims, b->rank, out->dims, &out->rank, &out->count);
}

/* The element of `in` (broadcast to `out`'s shape) at `out`'s flat index `j`. */
static size_t broadcast_index(const Buffer* in, const Buffer* out, size_t j) {
  return broadcast_source_index(in->dims, in->rank, out->dims, out->rank, j);
}

static OrtStatus* compute(OrtNodeComputeInfo* this_ptr, void* state, OrtKernelContext* context) {
  Compiled* c = (Compiled*)this_ptr;
  Buffer* values = (Buffer*)calloc(c->num_values, sizeof *values);
  OrtStatus* status = NULL;
  size_t i, k, n_in = 0, n_out = 0, passed = c->num_inputs, next = 0;
  if (!values) return error("out of memory");
  if (c->fault) injected_fault_at(c->fault, "compute");
  ((State*)state)->runs++;
  for (i = 0; c->constants && i < c->num_inputs; ++i) passed -= c->constants[i].data != NULL;
  status = api->KernelContext_GetInputCount(context, &n_in);
  if (!status) status = api->KernelContext_GetOutputCount(context, &n_out);
  if (!status && (n_in != passed || n_out != c->num_outputs))
    status = error("the kernel context's input or output count differs from the fused node's");
  for (i = 0; !status && i < c->num_inputs; ++i) {
    const OrtValue* v = NULL;
    OrtTensorTypeAndShapeInfo* shape = NULL;
    Buffer* b = &values[c->input_slot[i]];
    const void* data = NULL;
    if (c->constants && c->constants[i].data) {
      *b = c->constants[i];
      b->owned = 0;
      continue;
    }
    status = api->KernelContext_GetInput(context, next++, &v);
    if (!status) status = api->GetTensorTypeAndShape(v, &shape);
    if (!status) status = api->GetDimensionsCount(shape, &b->rank);
    if (!status && b->rank > 8) status = error("rank above 8");
    if (!status) status = api->GetDimensions(shape, b->dims, b->rank);
    if (!status) status = api->GetTensorShapeElementCount(shape, &b->count);
    if (shape) api->ReleaseTensorTypeAndShapeInfo(shape);
    if (!status) status = api->GetTensorData(v, &data);
#ifdef ORT_TEST_OWN_DEVICE
    if (!status) status = device_check_value(v, "input");
#endif
    b->data = (float*)data;
  }
#ifdef ORT_TEST_OWN_DEVICE
  if (!status) status = device_check_stream(context);
#endif
  for (k = 0; !status && k < c->num_steps; ++k) {
    const Step* s = &c->steps[k];
    const Buffer* a = &values[s->in[0]];
    const Buffer* b = s->in[1] >= 0 ? &values[s->in[1]] : NULL;
    Buffer* out = &values[s->out];
    size_t j;
    if (!b) {
      *out = *a;
    } else if (!broadcast_shape(a, b, out)) {
      status = error("Add and Mul operands whose shapes do not broadcast");
      break;
    }
    out->data = (float*)malloc(out->count * sizeof(float) + 1);
    out->owned = 1;
    if (!out->data) {
      status = error("out of memory");
      break;
    }
    for (j = 0; j < out->count; ++j) {
      float x = a->data[broadcast_index(a, out, j)];
      float y = b ? b->data[broadcast_index(b, out, j)] : 0.0f;
      out->data[j] = s->op == OP_ADD ? x + y : s->op == OP_MUL ? x * y : (x > 0 ? x : 0);
#ifdef ORT_TEST_WRONG_ADD
      if (s->op == OP_ADD) out->data[j] += 1.0f;
#endif
    }
  }
  for (i = 0; !status && i < c->num_outputs; ++i) {
    const Buffer* b = &values[c->output_slot[i]];
    OrtValue* out = NULL;
    void* data = NULL;
    status = api->KernelContext_GetOutput(context, i, b->dims, b->rank, &out);
    if (!status) status = api->GetTensorMutableData(out, &data);
#ifdef ORT_TEST_OWN_DEVICE
    if (!status) status = device_check_value(out, "output");
#endif
    if (!status && b->count) memcpy(data, b->data, b->count * sizeof(float));
  }
  for (i = 0; i < c->num_values; ++i)
    if (values[i].owned) free(values[i].data);
  free(values);
  return status;
}

static void free_compiled(Compiled* c) {
  size_t i;
  if (!c) return;
  for (i = 0; i < c->num_values; ++i) free(c->names[i]);
  for (i = 0; c->constants && i < c->num_inputs; ++i) free(c->constants[i].data);
  free(c->constants);
  free(c->names), free(c->input_slot), free(c->output_slot), free(c->steps), free(c);
}

static OrtStatus* compile_one(const OrtGraph* graph, const OrtNode* fused, Compiled** out) {
  size_t num_nodes = 0, n_in = 0, n_out = 0, i, cap;
  const OrtNode** nodes = NULL;
  const OrtValueInfo** values = NULL;
  OrtStatus* status = NULL;
  Compiled* c;
  RETURN_IF(api->Graph_GetNumNodes(graph, &num_nodes));
  RETURN_IF(api->Node_GetNumInputs(fused, &n_in));
  RETURN_IF(api->Node_GetNumOutputs(fused, &n_out));
  cap = n_in + n_out + 3 * num_nodes;
  c = (Compiled*)calloc(1, sizeof *c);
  if (!c) return error("out of memory");
  c->base.ort_version_supported = ORT_TEST_ASK_API;
  c->base.CreateState = create_state;
  c->base.Compute = compute;
  c->base.ReleaseState = release_state;
  c->names = (char**)calloc(cap, sizeof(char*));
  c->input_slot = (int*)calloc(n_in + 1, sizeof(int));
  c->output_slot = (int*)calloc(n_out + 1, sizeof(int));
  c->steps = (Step*)calloc(num_nodes + 1, sizeof(Step));
  nodes = (const OrtNode**)calloc(num_nodes + 1, sizeof *nodes);
  values = (const OrtValueInfo**)calloc(cap, sizeof *values);
  if (!c->names || !c->input_slot || !c->output_slot || !c->steps || !nodes || !values) {
    status = error("out of memory");
    goto done;
  }
  c->num_inputs = n_in, c->num_outputs = n_out;
  status = api->Node_GetInputs(fused, values, n_in);
  for (i = 0; !status && i < n_in; ++i) {
    const char* name = NULL;
    status = name_of(values[i], &name);
    if (!status) c->input_slot[i] = slot_of(c, name);
  }
  if (!status) status = api->Node_GetOutputs(fused, values, n_out);
  for (i = 0; !status && i < n_out; ++i) {
    const char* name = NULL;
    status = name_of(values[i], &name);
    if (!status) c->output_slot[i] = slot_of(c, name);
  }
  if (!status) status = api->Graph_GetNodes(graph, nodes, num_nodes);
  for (i = 0; !status && i < num_nodes; ++i) {
    const char* op_type = NULL;
    const char* name = NULL;
    size_t node_in = 0, j;
    Step* s = &c->steps[c->num_steps++];
    status = api->Node_GetOperatorType(nodes[i], &op_type);
    if (!status) status = api->Node_GetNumInputs(nodes[i], &node_in);
    if (!status) status = api->Node_GetInputs(nodes[i], values, node_in);
    s->op = op_type ? op_code(op_type) : 0;
    s->in[0] = s->in[1] = -1;
    for (j = 0; !status && j < node_in && j < 2; ++j) {
      status = name_of(values[j], &name);
      if (!status) s->in[j] = slot_of(c, name);
    }
    if (!status) status = api->Node_GetOutputs(nodes[i], values, 1);
    if (!status) status = name_of(values[0], &name);
    if (!status) s->out = slot_of(c, name);
  }
done:
  free(nodes);
  free(values);
  if (status) {
    free_compiled(c);
    return status;
  }
  *out = c;
  return NULL;
}

/* ---- EPContext: a compiled group as text ("ortadd-ctx 1", counts, value names, slots, steps) ---- */

/* Fused input i's data when it is a constant initializer (the EPContext node does not pass those: the
 * context bakes them in), else b->data NULL. */
static OrtStatus* constant_input(const OrtValueInfo* input, Buffer* b) {
  bool constant = false;
  const OrtValue* value = NULL;
  OrtTensorTypeAndShapeInfo* shape = NULL;
  const void* data = NULL;
  OrtStatus* status;
  memset(b, 0, sizeof *b);
  RETURN_IF(api->ValueInfo_IsConstantInitializer(input, &constant));
  if (!constant) return NULL;
  RETURN_IF(api->ValueInfo_GetInitializerValue(input, &value));
  RETURN_IF(api->GetTensorTypeAndShape(value, &shape));
  status = api->GetDimensionsCount(shape, &b->rank);
  if (!status && b->rank > 8) status = error("rank above 8");
  if (!status) status = api->GetDimensions(shape, b->dims, b->rank);
  if (!status) status = api->GetTensorShapeElementCount(shape, &b->count);
  api->ReleaseTensorTypeAndShapeInfo(shape);
  if (!status) status = api->GetTensorData(value, &data);
  b->data = (float*)data;
  return status;
}

static OrtStatus* serialize(const Compiled* c, const OrtNode* fused, char** out) {
  size_t i, j, size = 64 + 48 * (c->num_inputs + c->num_outputs + c->num_steps);
  const OrtValueInfo** inputs = (const OrtValueInfo**)calloc(c->num_inputs + 1, sizeof *inputs);
  Buffer* constants = (Buffer*)calloc(c->num_inputs + 1, sizeof *constants);
  OrtStatus* status = NULL;
  char* text = NULL;
  char* at;
  if (!inputs || !constants) status = error("out of memory");
  if (!status) status = api->Node_GetInputs(fused, inputs, c->num_inputs);
  for (i = 0; !status && i < c->num_inputs; ++i) {
    status = constant_input(inputs[i], &constants[i]);
    size += 40 * (constants[i].count + constants[i].rank + 2);
  }
  for (i = 0; i < c->num_values; ++i) size += strlen(c->names[i]) + 1;
  if (!status) text = (char*)malloc(size);
  if (!status && !text) status = error("out of memory");
  if (!status) {
    at = text;
    at += sprintf(at, "ortadd-ctx 1\n%zu %zu %zu %zu\n", c->num_values, c->num_inputs, c->num_outputs, c->num_steps);
    for (i = 0; i < c->num_values; ++i) at += sprintf(at, "%s\n", c->names[i]);
    for (i = 0; i < c->num_inputs; ++i) {
      const Buffer* k = &constants[i];
      at += sprintf(at, "%d", c->input_slot[i]);
      if (k->data) { /* "<slot> const <rank> <dims> <count> <values>" */
        at += sprintf(at, " const %zu", k->rank);
        for (j = 0; j < k->rank; ++j) at += sprintf(at, " %lld", (long long)k->dims[j]);
        at += sprintf(at, " %zu", k->count);
        for (j = 0; j < k->count; ++j) at += sprintf(at, " %a", (double)k->data[j]);
      }
      at += sprintf(at, "\n");
    }
    for (i = 0; i < c->num_outputs; ++i) at += sprintf(at, "%d\n", c->output_slot[i]);
    for (i = 0; i < c->num_steps; ++i)
      at += sprintf(at, "%d %d %d %d\n", c->steps[i].op, c->steps[i].in[0], c->steps[i].in[1], c->steps[i].out);
  }
  free(inputs), free(constants);
  *out = text;
  return status;
}

/* Reads "const <rank> <dims> <count> <values>" after an input's slot into `b`; 0 when malformed. */
static int parse_constant(const char* text, Buffer* b) {
  char* end = NULL;
  size_t i;
  long long v;
  if (strncmp(text, " const ", 7) != 0) return 0;
  b->rank = (size_t)strtoull(text + 7, &end, 10);
  if (b->rank > 8) return 0;
  for (i = 0; i < b->rank; ++i) {
    v = strtoll(end, &end, 10);
    b->dims[i] = v;
  }
  b->count = (size_t)strtoull(end, &end, 10);
  if (b->count > 100000000) return 0;
  b->data = (float*)malloc(b->count * sizeof(float) + 1);
  if (!b->data) return 0;
  for (i = 0; i < b->count; ++i) {
    char* before = end;
    b->data[i] = (float)strtod(end, &end);
    if (end == before) return 0;
  }
  return 1;
}

static OrtStatus* deserialize(const char* text, size_t length, Compiled** out) {
  size_t nv = 0, ni = 0, no = 0, ns = 0, i;
  char* copy = (char*)malloc(length + 1);
  char* line;
  char* rest = NULL;
  Compiled* c = NULL;
  int ok;
  if (!copy) return error("out of memory");
  memcpy(copy, text, length);
  copy[length] = '\0';
  line = strtok_r(copy, "\n", &rest);
  ok = line && strcmp(line, "ortadd-ctx 1") == 0;
  line = ok ? strtok_r(NULL, "\n", &rest) : NULL;
  ok = line && sscanf(line, "%zu %zu %zu %zu", &nv, &ni, &no, &ns) == 4 && nv < 100000 && ns < 100000;
  if (ok) c = (Compiled*)calloc(1, sizeof *c);
  if (c) {
    c->names = (char**)calloc(nv + 1, sizeof(char*));
    c->input_slot = (int*)calloc(ni + 1, sizeof(int));
    c->output_slot = (int*)calloc(no + 1, sizeof(int));
    c->steps = (Step*)calloc(ns + 1, sizeof(Step));
    c->constants = (Buffer*)calloc(ni + 1, sizeof(Buffer));
    c->num_inputs = ni;
    ok = c->names && c->input_slot && c->output_slot && c->steps && c->constants;
  } else {
    ok = 0;
  }
  for (i = 0; ok && i < nv; ++i) {
    line = strtok_r(NULL, "\n", &rest);
    ok = line != NULL;
    if (ok) c->names[c->num_values++] = copy_text(line);
  }
  for (i = 0; ok && i < ni + no; ++i) {
    int slot = -1, used = 0;
    line = strtok_r(NULL, "\n", &rest);
    ok = line && sscanf(line, "%d%n", &slot, &used) == 1 && slot >= 0 && (size_t)slot < nv;
    if (ok && i < ni && line[used] != '\0') ok = parse_constant(line + used, &c->constants[i]);
    if (ok && i < ni) c->input_slot[i] = slot;
    else if (ok) c->output_slot[i - ni] = slot;
  }
  for (i = 0; ok && i < ns; ++i) {
    Step* st = &c->steps[i];
    line = strtok_r(NULL, "\n", &rest);
    ok = line && sscanf(line, "%d %d %d %d", &st->op, &st->in[0], &st->in[1], &st->out) == 4 && st->in[0] >= 0 &&
         (size_t)st->in[0] < nv && st->in[1] < (int)nv && st->out >= 0 && (size_t)st->out < nv;
  }
  free(copy);
  if (!ok) {
    free_compiled(c);
    return api->CreateStatus(ORT_INVALID_GRAPH, "ortadd: the EPContext node's ep_cache_context is not an ortadd context");
  }
  c->num_inputs = ni, c->num_outputs = no, c->num_steps = ns;
  c->base.ort_version_supported = ORT_TEST_ASK_API;
  c->base.CreateState = create_state;
  c->base.Compute = compute;
  c->base.ReleaseState = release_state;
  *out = c;
  return NULL;
}

/* The group's program from the EPContext node `node` (its ep_cache_context, embedded). */
static OrtStatus* load_context(const OrtNode* node, Compiled** out) {
  const OrtOpAttr* attr = NULL;
  size_t size = 0;
  char* text;
  OrtStatus* status;
  RETURN_IF(api->Node_GetAttributeByName(node, "ep_cache_context", &attr));
  if (!attr) return api->CreateStatus(ORT_INVALID_GRAPH, "ortadd: EPContext node without ep_cache_context");
  status = api->ReadOpAttr(attr, ORT_OP_ATTR_STRING, NULL, 0, &size);
  if (status) api->ReleaseStatus(status); /* asked for the size */
  text = (char*)malloc(size + 1);
  if (!text) return error("out of memory");
  status = api->ReadOpAttr(attr, ORT_OP_ATTR_STRING, text, size, &size);
  if (!status) status = deserialize(text, size, out);
  free(text);
  return status;
}

static OrtStatus* make_context_node(const Compiled* c, const OrtNode* fused, const char* source, OrtNode** out) {
  const OrtModelEditorApi* editor = api->GetModelEditorApi();
  OrtOpAttr* attrs[4] = {NULL, NULL, NULL, NULL};
  const char* name = NULL;
  int64_t one = 1;
  char* text = NULL;
  OrtStatus* status = serialize(c, fused, &text);
  if (!status) status = api->Node_GetName(fused, &name);
  if (!status) status = api->CreateOpAttr("ep_cache_context", text, (int)strlen(text), ORT_OP_ATTR_STRING, &attrs[0]);
  if (!status) status = api->CreateOpAttr("embed_mode", &one, 1, ORT_OP_ATTR_INT, &attrs[1]);
  if (!status) status = api->CreateOpAttr("main_context", &one, 1, ORT_OP_ATTR_INT, &attrs[2]);
  if (!status)
    status = api->CreateOpAttr("source", source, (int)strlen(source), ORT_OP_ATTR_STRING, &attrs[3]);
  if (!status) status = editor->CreateNode("EPContext", "com.microsoft", name, NULL, 0, NULL, 0, attrs, 4, out);
  free(text);
  return status;
}

static void log_compile(const TestEp* ep, const char* what) {
  FILE* f;
  if (!ep->compile_log[0]) return;
  f = fopen(ep->compile_log, "a");
  if (!f) return;
  fprintf(f, "%s\n", what);
  fclose(f);
}

static OrtStatus* ep_compile(OrtEp* this_ptr, const OrtGraph** graphs, const OrtNode** fused_nodes, size_t count,
                             OrtNodeComputeInfo** infos, OrtNode** ep_context_nodes) {
  TestEp* ep = (TestEp*)this_ptr;
  size_t i;
  injected_fault_at(&ep->fault, "compile");
  for (i = 0; i < count; ++i) {
    Compiled* c = NULL;
    const OrtNode* only = NULL;
    size_t num_nodes = 0;
    int context = 0;
    OrtStatus* status = api->Graph_GetNumNodes(graphs[i], &num_nodes);
    if (!status && num_nodes == 1) status = api->Graph_GetNodes(graphs[i], &only, 1);
    if (!status && only) status = is_own_context(only, ep->name, &context);
    if (!status) status = context ? load_context(only, &c) : compile_one(graphs[i], fused_nodes[i], &c);
    if (status) return status;
    log_compile(ep, context ? "context" : "graph");
    if (strcmp(ep->weightless_seen, "weightless mode=- enabled=-") != 0) log_compile(ep, ep->weightless_seen);
    c->fault = &ep->fault;
    infos[i] = &c->base;
    /* Contexts are asked for (ep_context_nodes given) when generating: one per compiled group. */
    if (ep_context_nodes && !context) {
      status = make_context_node(c, fused_nodes[i], ep->name, &ep_context_nodes[i]);
      if (status) return status;
    }
  }
  return NULL;
}

static OrtStatus* ep_weightless_support(const OrtEp* this_ptr, OrtWeightlessSupport* support) {
  const TestEp* ep = (const TestEp*)this_ptr;
  if (!support) return api->CreateStatus(ORT_INVALID_ARGUMENT, "GetWeightlessSupport: support is NULL");
  *support = (OrtWeightlessSupport)ep->weightless_support;
  return NULL;
}

/* Its work is done when Compute returns: Sync only records that it was asked (or fails, when told to). */
static OrtStatus* ep_sync(OrtEp* this_ptr) {
  TestEp* ep = (TestEp*)this_ptr;
  FILE* f;
  if (ep->sync_log[0] && (f = fopen(ep->sync_log, "a")) != NULL) {
    fprintf(f, "sync\n");
    fclose(f);
  }
  if (ep->fail_sync) return api->CreateStatus(ORT_EP_FAIL, "Sync: asked to fail (option fail_sync)");
  return NULL;
}

/* "ortadd;version=1.2.3;target=<target>": what ValidateCompiledModelCompatibilityInfo reads back. */
static const char* ep_compatibility_info(OrtEp* this_ptr, const OrtGraph* graph) {
  TestEp* ep = (TestEp*)this_ptr;
  (void)graph;
  snprintf(ep->compatibility, sizeof ep->compatibility, "ortadd;version=1.2.3;target=%s",
           ep->target[0] ? ep->target : "cpu");
  return ep->compatibility;
}

static void ep_release_infos(OrtEp* this_ptr, OrtNodeComputeInfo** infos, size_t n) {
  size_t i;
  (void)this_ptr;
  for (i = 0; i < n; ++i) free_compiled((Compiled*)infos[i]);
}

/* ---- the factory ---- */

/* A factory: ONNX Runtime's struct first, then its name. */
typedef struct TestFactory {
  OrtEpFactory base;
  const char* name;
} TestFactory;

static const char* factory_name(const OrtEpFactory* f) {
  return ((const TestFactory*)f)->name;
}

#ifdef ORT_TEST_TWO_FACTORIES
#define ORT_TEST_FACTORY_COUNT 2
#else
#define ORT_TEST_FACTORY_COUNT 1
#endif
static TestFactory factories_made[2];

#ifdef ORT_TEST_SECOND_REFUSES_CPU
/* Why a device is not supported (API 24): the host asks only about devices GetSupportedDevices passed over. */
static OrtStatus* factory_incompatibility(OrtEpFactory* f, const OrtHardwareDevice* hw,
                                          OrtDeviceEpIncompatibilityDetails* details) {
  char notes[128];
  if (f == &factories_made[0].base) return error("asked about a device the first factory supports");
  if (api->HardwareDevice_Type(hw) != OrtHardwareDeviceType_CPU) return NULL; /* silent: left "compatible" */
  snprintf(notes, sizeof notes, "%s needs the test accelerator, not a CPU", factory_name(f));
  return ep_api->DeviceEpIncompatibilityDetails_SetDetails(
      details, OrtDeviceEpIncompatibility_DEVICE_INCOMPATIBLE | OrtDeviceEpIncompatibility_MISSING_DEPENDENCY, 7,
      notes);
}
#endif
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
  return "1.2.3";
}

static OrtStatus* factory_supported_devices(OrtEpFactory* f, const OrtHardwareDevice* const* devices, size_t n,
                                            OrtEpDevice** ep_devices, size_t max, size_t* num) {
  size_t i;
  *num = 0;
#ifdef ORT_TEST_VIRTUAL_DEVICE
  /* The host's devices are not its own: it offers the virtual GPU it describes itself, only. */
  RETURN_IF(virtual_make_device());
  devices = (const OrtHardwareDevice* const*)&virtual_device;
  n = 1;
#endif
  for (i = 0; i < n && *num < max; ++i) {
    OrtKeyValuePairs* metadata = NULL;
    OrtKeyValuePairs* options = NULL;
    OrtMemoryInfo* memory = NULL;
    OrtEpDevice* d = NULL;
    OrtStatus* status;
#ifndef ORT_TEST_VIRTUAL_DEVICE
    if (api->HardwareDevice_Type(devices[i]) != OrtHardwareDeviceType_CPU) continue;
#endif
#ifdef ORT_TEST_SECOND_REFUSES_CPU
    if (f != &factories_made[0].base) continue; /* the second factory wants a device no host has */
#endif
    api->CreateKeyValuePairs(&metadata);
    api->CreateKeyValuePairs(&options);
    api->AddKeyValuePair(metadata, "version", "1.2.3");
    /* Weightless EPContext (API 29): what GetWeightlessSupport answers unless option weightless_support says
     * otherwise. */
    api->AddKeyValuePair(metadata, "weightless_support", "all");
    api->AddKeyValuePair(options, "skip_op", "");
    status = ep_api->CreateEpDevice(f, devices[i], metadata, options, &d);
    api->ReleaseKeyValuePairs(metadata);
    api->ReleaseKeyValuePairs(options);
    if (status) return status;
#ifdef ORT_TEST_OWN_DEVICE
    /* Its kernels use memory of its own: that allocator info (ort_test_device.h). */
    (void)memory;
    status = ep_api->EpDevice_AddAllocatorInfo(d, device_memory_info());
#else
    /* Its kernels use host memory: the CPU allocator info, as ONNX Runtime's CPU-side plugins add it. */
    status = api->CreateMemoryInfo_V2("Cpu", OrtMemoryInfoDeviceType_CPU, 0, 0, OrtDeviceMemoryType_DEFAULT, 0,
                                      OrtDeviceAllocator, &memory);
    if (!status) status = ep_api->EpDevice_AddAllocatorInfo(d, memory);
    if (memory) api->ReleaseMemoryInfo(memory);
#endif
    if (status) return status;
    ep_devices[(*num)++] = d;
  }
  return NULL;
}

/* As real plugins do in CreateEp: the EPContext configuration and its data callbacks, looked up by name.
 * ephost registers no callbacks, so both must come back NULL (the EP writes its contexts itself). */
static OrtStatus* extract_context_config(TestEp* ep, const OrtSessionOptions* options) {
  OrtGetEpContextConfigFn get_config =
      (OrtGetEpContextConfigFn)api->GetExperimentalFunction(ORT_EXPERIMENTAL_GET_EP_CONTEXT_CONFIG);
  OrtGetEpContextReadFuncFn get_read =
      (OrtGetEpContextReadFuncFn)api->GetExperimentalFunction(ORT_EXPERIMENTAL_GET_EP_CONTEXT_READ_FUNC);
  OrtGetEpContextWriteFuncFn get_write =
      (OrtGetEpContextWriteFuncFn)api->GetExperimentalFunction(ORT_EXPERIMENTAL_GET_EP_CONTEXT_WRITE_FUNC);
  OrtReadNamedBufferFunc read = NULL;
  OrtWriteNamedBufferFunc write = NULL;
  void* read_state = NULL;
  void* write_state = NULL;
  ep->release_context_config =
      (OrtReleaseEpContextConfigFn)api->GetExperimentalFunction(ORT_EXPERIMENTAL_RELEASE_EP_CONTEXT_CONFIG);
  if (!get_config || !get_read || !get_write || !ep->release_context_config)
    return error("GetExperimentalFunction answers none of the EPContext configuration functions");
  RETURN_IF(get_config(options, &ep->context_config));
  RETURN_IF(get_read(ep->context_config, &read, &read_state));
  RETURN_IF(get_write(ep->context_config, &write, &write_state));
  if (read || write || read_state || write_state) return error("EPContext data callbacks the host never registered");
  return NULL;
}

static OrtStatus* factory_create_ep(OrtEpFactory* f, const OrtHardwareDevice* const* devices,
                                    const OrtKeyValuePairs* const* metadata, size_t n,
                                    const OrtSessionOptions* options, const OrtLogger* logger, OrtEp** out) {
  TestEp* ep;
  char value[32];
  char key[96];
  size_t size = sizeof value;
  int has = 0;
  (void)metadata;
#ifdef ORT_TEST_VIRTUAL_DEVICE
  if (n != 1 || devices[0] != virtual_device)
    return api->CreateStatus(ORT_INVALID_ARGUMENT, "CreateEp: its virtual GPU expected");
#else
  if (n != 1 || api->HardwareDevice_Type(devices[0]) != OrtHardwareDeviceType_CPU)
    return api->CreateStatus(ORT_INVALID_ARGUMENT, "CreateEp: one CPU device expected");
#endif
  ep = (TestEp*)calloc(1, sizeof *ep);
  if (!ep) return error("out of memory");
  ep->base.ort_version_supported = ORT_TEST_ASK_API;
  ep->base.GetName = ep_get_name;
  ep->base.GetCapability = ep_get_capability;
  ep->base.Compile = ep_compile;
  ep->base.ReleaseNodeComputeInfos = ep_release_infos;
  ep->base.GetCompiledModelCompatibilityInfo = ep_compatibility_info;
  ep->base.Sync = ep_sync;
  ep->base.GetWeightlessSupport = ep_weightless_support;
#ifdef ORT_TEST_PROFILER
  ep->base.CreateProfiler = ep_create_profiler;
#endif
  ep->logger = logger;
  ep->name = factory_name(f);
  /* Options reach CreateEp as "ep.<EP name>.<key>" session config entries. */
  snprintf(key, sizeof key, "ep.%s.skip_op", ep->name);
  RETURN_IF(api->HasSessionConfigEntry(options, key, &has));
  if (has) {
    RETURN_IF(api->GetSessionConfigEntry(options, key, value, &size));
    snprintf(ep->skip_op, sizeof ep->skip_op, "%s", value);
  }
  snprintf(key, sizeof key, "ep.%s.target", ep->name);
  RETURN_IF(api->HasSessionConfigEntry(options, key, &has));
  if (has) {
    size = sizeof ep->target;
    RETURN_IF(api->GetSessionConfigEntry(options, key, ep->target, &size));
  }
  snprintf(key, sizeof key, "ep.%s.compile_log", ep->name);
  RETURN_IF(api->HasSessionConfigEntry(options, key, &has));
  if (has) {
    size = sizeof ep->compile_log;
    RETURN_IF(api->GetSessionConfigEntry(options, key, ep->compile_log, &size));
  }
  snprintf(key, sizeof key, "ep.%s.sync_log", ep->name);
  RETURN_IF(api->HasSessionConfigEntry(options, key, &has));
  if (has) {
    size = sizeof ep->sync_log;
    RETURN_IF(api->GetSessionConfigEntry(options, key, ep->sync_log, &size));
  }
  snprintf(key, sizeof key, "ep.%s.fail_sync", ep->name);
  RETURN_IF(api->HasSessionConfigEntry(options, key, &has));
  ep->fail_sync = has;
  ep->weightless_support = OrtWeightlessSupport_ALL;
  snprintf(key, sizeof key, "ep.%s.weightless_support", ep->name);
  RETURN_IF(api->HasSessionConfigEntry(options, key, &has));
  if (has) {
    size = sizeof value;
    RETURN_IF(api->GetSessionConfigEntry(options, key, value, &size));
    ep->weightless_support = atoi(value);
  }
  {
    /* What ONNX Runtime hands an EP of a session that wants a weightless mode: the mode, and the deprecated
     * switch for EPs that know only it. */
    char mode[8] = "-", enabled[8] = "-";
    size = sizeof mode;
    RETURN_IF(api->HasSessionConfigEntry(options, "ep.enable_weightless_mode", &has));
    if (has) RETURN_IF(api->GetSessionConfigEntry(options, "ep.enable_weightless_mode", mode, &size));
    size = sizeof enabled;
    RETURN_IF(api->HasSessionConfigEntry(options, "ep.enable_weightless", &has));
    if (has) RETURN_IF(api->GetSessionConfigEntry(options, "ep.enable_weightless", enabled, &size));
    snprintf(ep->weightless_seen, sizeof ep->weightless_seen, "weightless mode=%s enabled=%s", mode, enabled);
  }
  snprintf(key, sizeof key, "ep.%s.fail_create", ep->name);
  RETURN_IF(api->HasSessionConfigEntry(options, key, &has));
  if (has) {
    free(ep);
    return api->CreateStatus(ORT_EP_FAIL, "CreateEp: asked to fail (option fail_create)");
  }
#ifdef ORT_TEST_VIRTUAL_DEVICE
  snprintf(key, sizeof key, "ep.%s.env_log", ep->name);
  RETURN_IF(api->HasSessionConfigEntry(options, key, &has));
  if (has) {
    size = sizeof ep->env_log;
    RETURN_IF(api->GetSessionConfigEntry(options, key, ep->env_log, &size));
  }
  RETURN_IF(virtual_check_env(ep->name, options, ep->env_log));
#endif
  RETURN_IF(read_injected_fault(api, options, ep->name, &ep->fault));
  injected_fault_at(&ep->fault, "create_ep");
  RETURN_IF(extract_context_config(ep, options));
  RETURN_IF(api->Logger_LogMessage(logger, ORT_LOGGING_LEVEL_INFO, "ortadd EP created", __FILE__, __LINE__,
                                   __func__));
  *out = &ep->base;
  return NULL;
}

/* Contexts compiled for target "cpu" run optimally; "cpu-old" ones run but had better be compiled again;
 * any other target, or info not ortadd's, cannot run here. */
static OrtStatus* factory_validate(OrtEpFactory* f, const OrtHardwareDevice* const* devices, size_t n,
                                   const char* info, OrtCompiledModelCompatibility* out) {
  static const char prefix[] = "ortadd;version=1.2.3;target=";
  (void)f, (void)devices, (void)n;
  if (!info || !out) return api->CreateStatus(ORT_INVALID_ARGUMENT, "ValidateCompiledModelCompatibilityInfo: NULL");
  if (strncmp(info, prefix, sizeof prefix - 1) != 0) *out = OrtCompiledModelCompatibility_EP_UNSUPPORTED;
  else if (strcmp(info + sizeof prefix - 1, "cpu") == 0) *out = OrtCompiledModelCompatibility_EP_SUPPORTED_OPTIMAL;
  else if (strcmp(info + sizeof prefix - 1, "cpu-old") == 0)
    *out = OrtCompiledModelCompatibility_EP_SUPPORTED_PREFER_RECOMPILATION;
  else *out = OrtCompiledModelCompatibility_EP_UNSUPPORTED;
  return NULL;
}

static void factory_release_ep(OrtEpFactory* f, OrtEp* ep) {
  TestEp* own = (TestEp*)ep;
  (void)f;
  if (own && own->context_config) own->release_context_config(own->context_config);
  free(ep);
}

static const char* const factory_names[2] = {ORT_TEST_EP_NAME, ORT_TEST_EP_NAME "2"};

static void fill_factory(TestFactory* t, const char* name) {
  OrtEpFactory* factory = &t->base;
  t->name = name;
  factory->ort_version_supported = ORT_TEST_ASK_API;
  factory->GetName = factory_name;
  factory->GetVendor = factory_vendor;
  factory->GetSupportedDevices = factory_supported_devices;
  factory->CreateEp = factory_create_ep;
  factory->ReleaseEp = factory_release_ep;
  factory->GetVendorId = factory_vendor_id;
  factory->GetVersion = factory_version;
  factory->ValidateCompiledModelCompatibilityInfo = factory_validate;
#ifdef ORT_TEST_SECOND_REFUSES_CPU
  factory->GetHardwareDeviceIncompatibilityDetails = factory_incompatibility;
#endif
#ifdef ORT_TEST_VIRTUAL_DEVICE
  factory->GetHardwareDeviceIncompatibilityDetails = virtual_incompatibility;
#endif
#ifdef ORT_TEST_OWN_DEVICE
  factory->CreateAllocator = device_create_allocator;
  factory->ReleaseAllocator = device_release_allocator;
  factory->CreateDataTransfer = device_create_data_transfer;
  factory->IsStreamAware = device_is_stream_aware;
  factory->CreateSyncStreamForDevice = device_create_stream;
#endif
}

EXPORT OrtStatus* CreateEpFactories(const char* registered_name, const OrtApiBase* base, const OrtLogger* logger,
                                    OrtEpFactory** factories, size_t max_factories, size_t* num_factories) {
  size_t i;
  (void)registered_name;
  (void)logger;
#ifdef ORT_TEST_CRASH_IN_CREATE
  raise(SIGSEGV);
#endif
  api = base->GetApi(ORT_TEST_ASK_API);
  if (!api) {
    /* No table, so no way to make a status: say nothing and make no factory. */
    *num_factories = 0;
    return NULL;
  }
  ep_api = api->GetEpApi();
#ifdef ORT_TEST_OWN_DEVICE
  if (!device_memory_info()) return api->CreateStatus(ORT_EP_FAIL, "ortdev: CreateMemoryInfo_V2 failed");
#endif
  if (max_factories < ORT_TEST_FACTORY_COUNT) return api->CreateStatus(ORT_INVALID_ARGUMENT, "room for too few factories");
  for (i = 0; i < ORT_TEST_FACTORY_COUNT; ++i) {
    fill_factory(&factories_made[i], factory_names[i]);
    factories[i] = &factories_made[i].base;
  }
#ifdef ORT_TEST_NULL_FACTORY
  factories[0] = NULL;
#endif
  *num_factories = ORT_TEST_FACTORY_COUNT;
  return NULL;
}

EXPORT OrtStatus* ReleaseEpFactory(OrtEpFactory* f) {
  (void)f;
#ifdef ORT_TEST_VIRTUAL_DEVICE
  virtual_release_device();
#endif
  return NULL;
}

#ifdef ORT_TEST_PROVIDER_BRIDGE
EXPORT void* GetProvider(void) { return NULL; }
#endif
