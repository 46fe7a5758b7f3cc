/* The public headers compile as C (C99): an application or plugin written in C includes them as they
 * are. public_helpers_test.cpp calls this file's function to see the header-only helpers work in C. */
#include "ephost/ephost_c_api.h"
#include "ephost/ephost_half.h"
#include "ephost/ephost_narrow.h"
#include "ephost/ephost_plugin.h"
#include "ephost/ephost_types.h"

/* 1 when the helpers give, in C, what their documentation says. */
int ephost_test_public_helpers_in_c(void) {
  return EphostElementSize(EPHOST_ELEMENT_BFLOAT16) == 2 && EphostElementSize(EPHOST_ELEMENT_STRING) == sizeof(char*) &&
         EphostFloatToFloat16(1.0f) == 0x3c00u && EphostFloat16ToFloat(0xc000u) == -2.0f &&
         EphostFloatToBfloat16(1.0f) == 0x3f80u && EphostBfloat16ToFloat(0x4040u) == 3.0f &&
         EphostElementBits(EPHOST_ELEMENT_INT4) == 4 && EphostTensorDataSize(EPHOST_ELEMENT_INT4, 3) == 2 &&
         EphostTensorDataSize(EPHOST_ELEMENT_FLOAT8E5M2, 3) == 3 &&
         EphostNarrowCodeToDouble(EPHOST_ELEMENT_FLOAT8E4M3FN, 0x7E) == 448.0 &&
         EphostNarrowCodeToDouble(EPHOST_ELEMENT_INT4, 0x8) == -8.0;
}
