// The binary interface between kiln and the kernels it generates. Plain C so that the
// code generator (builder/) and the loader (runtime/) agree on it without sharing C++ types.
//
// An artifact is a shared object exporting one function per stage of a Program, each of type
// kiln_stage_fn. A stage receives every buffer of the program (arguments first, then
// workspace, in Program order) and the runtime's API table; it returns nothing and never fails.
#pragma once

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// Body of a parallel loop: runs iterations [begin, end) with the captured `closure`.
typedef void (*kiln_parallel_body)(int64_t begin, int64_t end, void* closure);

// The services generated code may call. Field order is ABI: the code generator loads
// fields by position. Append new fields at the end only.
typedef struct KilnRuntimeApi {
  // Runs body over [0, n) split into contiguous chunks that the pool's threads claim in turn
  // (the caller takes part) and returns when every chunk is done.
  void (*parallel_for)(void* pool, int64_t n, kiln_parallel_body body, void* closure);
  void* pool;
} KilnRuntimeApi;

typedef void (*kiln_stage_fn)(float* const* buffers, const KilnRuntimeApi* api);

// Beside each stage function `S`, the object exports `S` KILN_BUFFER_TABLE_SUFFIX: uint64_t
// values, the program's buffer count n, then n entries: the floats the stage may touch in that
// buffer (at least 1), or 0 for a buffer it never touches (which may be null). A loader checks a
// model's buffers against it before calling the stage.
#define KILN_BUFFER_TABLE_SUFFIX ".kiln_buffers"

#ifdef __cplusplus
}
#endif
