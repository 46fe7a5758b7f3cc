/* A plain-C application of libephost: discovers plugins, loads a model, feeds every input with ones,
 * runs, and prints each output's shape (and, for float outputs, the sum and the first values). Shows the
 * application ABI without any C++.
 *
 *   ephost_c_run MODEL [DIM_FOR_SYMBOLIC_DIMS]
 */
#include <stdio.h>
#include <stdlib.h>

#include "ephost/ephost_c_api.h"

static const EphostApi* api;

static int check(EphostStatus* status) {
  if (!status) return 0;
  fprintf(stderr, "error: %s: %s\n", api->GetErrorCodeName(api->GetErrorCode(status)), api->GetErrorMessage(status));
  api->ReleaseStatus(status);
  return 1;
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s MODEL [DIM_FOR_SYMBOLIC_DIMS]\n", argv[0]);
    return 2;
  }
  api = EphostGetApi(EPHOST_API_VERSION);
  if (!api) {
    fprintf(stderr, "libephost %s does not provide API version %u\n", EphostGetVersionString(), EPHOST_API_VERSION);
    return 1;
  }
  int64_t symbolic = argc > 2 ? atoll(argv[2]) : 1;
  EphostEnv* env = NULL;
  EphostSession* session = NULL;
  if (check(api->CreateEnv(EPHOST_LOG_WARNING, &env))) return 1;
  if (check(api->CreateSession(env, argv[1], NULL, &session))) {
    api->ReleaseEnv(env);
    return 1;
  }
  size_t n_in = api->SessionGetInputCount(session), n_out = api->SessionGetOutputCount(session);
  const char** in_names = calloc(n_in, sizeof(char*));
  const char** out_names = calloc(n_out, sizeof(char*));
  EphostTensor** inputs = calloc(n_in, sizeof(EphostTensor*));
  EphostTensor** outputs = calloc(n_out, sizeof(EphostTensor*));
  int rc = 0;
  for (size_t i = 0; i < n_in && !rc; ++i) {
    int32_t type = 0;
    int64_t rank = 0;
    const int64_t* dims = NULL;
    rc = check(api->SessionGetInputName(session, i, &in_names[i])) ||
         check(api->SessionGetInputType(session, i, &type, &rank, &dims));
    if (rc) break;
    int64_t shape[16];
    for (int64_t d = 0; d < rank && d < 16; ++d) shape[d] = dims[d] >= 0 ? dims[d] : symbolic;
    rc = check(api->CreateTensor((EphostElementType)type, shape, (size_t)rank, &inputs[i]));
    if (!rc && type == EPHOST_ELEMENT_FLOAT) {
      float* data = api->TensorGetData(inputs[i]);
      for (size_t k = 0; k < api->TensorGetElementCount(inputs[i]); ++k) data[k] = 1.0f;
    }
  }
  for (size_t i = 0; i < n_out && !rc; ++i) rc = check(api->SessionGetOutputName(session, i, &out_names[i]));
  if (!rc) rc = check(api->Run(session, in_names, (const EphostTensor* const*)inputs, n_in, out_names, n_out, outputs));
  for (size_t i = 0; i < n_out && !rc; ++i) {
    const int64_t* shape = NULL;
    size_t rank = 0;
    api->TensorGetShape(outputs[i], &shape, &rank);
    printf("%s: [", out_names[i]);
    for (size_t d = 0; d < rank; ++d) printf(d ? ",%lld" : "%lld", (long long)shape[d]);
    printf("]");
    if (api->TensorGetElementType(outputs[i]) == EPHOST_ELEMENT_FLOAT) {
      /* The sum and the first values: enough to compare two runs of the same model. */
      const float* data = api->TensorGetData(outputs[i]);
      size_t count = api->TensorGetElementCount(outputs[i]);
      double sum = 0.0;
      for (size_t k = 0; k < count; ++k) sum += data[k];
      printf(" sum=%.9g first=", sum);
      for (size_t k = 0; k < count && k < 4; ++k) printf(k ? ",%.9g" : "%.9g", data[k]);
    }
    printf("\n");
  }
  for (size_t i = 0; i < n_in; ++i) api->ReleaseTensor(inputs[i]);
  for (size_t i = 0; i < n_out; ++i) api->ReleaseTensor(outputs[i]);
  free(in_names);
  free(out_names);
  free(inputs);
  free(outputs);
  api->ReleaseSession(session);
  api->ReleaseEnv(env);
  return rc;
}
