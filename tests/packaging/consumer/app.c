/* A minimal application built against the installed C API (tests/packaging/install_test.sh). */
#include <stdio.h>
#include "ephost/ephost_c_api.h"
int main(void) { const EphostApi* api = EphostGetApi(EPHOST_API_VERSION); printf("api %s %u\n", api ? "ok" : "null", api ? api->version : 0); return api == NULL; }
