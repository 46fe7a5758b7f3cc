/* numpy's broadcasting over shapes held as (dims, rank): shared by the ORT-ABI test plugins built from
 * this folder (ort_test_ep.c, ort_kernel_ep.c), which keep their shapes in structs of their own. */
#ifndef EPHOST_TEST_ORT_EP_BROADCAST_H
#define EPHOST_TEST_ORT_EP_BROADCAST_H

#include <stddef.h>
#include <stdint.h>

/* The shape `a` and `b` broadcast to, in `out` (room for the larger rank) with its rank and element
 * count; 0 when they do not broadcast. */
static int broadcast_dims(const int64_t* a, size_t a_rank, const int64_t* b, size_t b_rank, int64_t* out,
                          size_t* out_rank, size_t* out_count) {
  size_t i, rank = a_rank > b_rank ? a_rank : b_rank, count = 1;
  for (i = 0; i < rank; ++i) {
    int64_t da = i < rank - a_rank ? 1 : a[i - (rank - a_rank)];
    int64_t db = i < rank - b_rank ? 1 : b[i - (rank - b_rank)];
    if (da != db && da != 1 && db != 1) return 0;
    out[i] = da == 1 ? db : da;
    count *= (size_t)out[i];
  }
  *out_rank = rank;
  *out_count = count;
  return 1;
}

/* Where the flat element `j` of the broadcast shape `out` reads the input of shape `in`. */
static size_t broadcast_source_index(const int64_t* in, size_t in_rank, const int64_t* out, size_t out_rank,
                                     size_t j) {
  size_t index = 0, stride = 1, i;
  for (i = 0; i < in_rank; ++i) {
    size_t axis = in_rank - 1 - i;
    size_t out_dim = (size_t)out[out_rank - 1 - i];
    size_t coordinate = j % out_dim;
    j /= out_dim;
    if (in[axis] != 1) index += coordinate * stride;
    stride *= (size_t)in[axis];
  }
  return index;
}

#endif
