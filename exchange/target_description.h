// What kiln knows about a target machine, as data: its vector register files, the float32 lanes
// of its widest vector, its FMA throughput, its cache sizes (the host's own when the target is
// the host's CPU, else the CPU's nominal ones) and the CPU names whose features are implied when
// a target gives none. One table (target_description.cc) for every consumer: the code generator's
// target hooks (builder/codegen_target.h), the templates' TargetInfo and their fallback configs,
// and Target::simd_lanes / has_feature. Nothing here calls LLVM.
//
// A contributor adding a target (an ISA level or an architecture) adds its row here and, when
// its code needs different LLVM attributes, a code generator in builder/ (codegen_target.h).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "exchange/target.h"
#include "ops/template.h"

namespace kiln {

// One architectural register file, e.g. AVX-512's 32 zmm registers of 512 bits.
struct RegisterFile {
  std::string_view name;  // "zmm", "ymm", "xmm", "v" (NEON's q view)
  int count = 0;
  int bits = 0;
};

// Per-core data cache sizes, for heuristics only (default configs, blocking).
struct CacheSizes {
  int64_t line_bytes = 64;
  int64_t l1d_bytes = 0;
  int64_t l2_bytes = 0;
};

enum class TargetArch { kX86, kAarch64, kOther };  // kX86: x86-64 and i?86

// The architecture a target triple names ("x86_64-...", "i686-...", "aarch64-...", "arm64-...").
TargetArch arch_of_triple(std::string_view triple);

struct TargetDescription {
  TargetArch arch = TargetArch::kOther;
  std::string_view isa;  // the vector extension used: "avx512", "avx2", "sse", "neon", "generic"
  // Vector register files of the ISA, widest first. The widest sets simd_lanes; code generators
  // choose among them (AVX-512 code also has the 16 ymm/xmm views, NEON a single file).
  std::vector<RegisterFile> vector_files;
  CacheSizes caches;
  int fma_units = 2;    // FMAs of the widest vector issued per cycle (Zen 4: 1 zmm, Zen 5: 2)
  int fma_latency = 4;  // cycles from an FMA to the next one that reads its result
  // The registers the code generator's unrolling budget counts (builder/lower.h): a serial loop
  // over a local buffer of at most register_floats() floats is unrolled so that the buffer stays
  // in registers. The widest file's count, except on x86, where every ISA level counts AVX-512's
  // 32 as the emitter always has (16 on AVX2 would change the code AVX2 and SSE targets get; a
  // change that must come with its measurements, not with a refactor).
  int unroll_registers = 32;

  const RegisterFile& widest() const { return vector_files.front(); }
  // float32 lanes of the widest vector: 16 AVX-512, 8 AVX2, 4 SSE, NEON and the generic row.
  int simd_lanes() const { return widest().bits / 32; }
  // Floats in unroll_registers registers of the widest file (4 lanes at least).
  int64_t register_floats() const {
    return int64_t{unroll_registers} * (simd_lanes() > 4 ? simd_lanes() : 4);
  }
  // What templates are told about the target (ops/template.h).
  ops::TargetInfo template_info() const;
};

// The description of `target`: by its triple's architecture, then (x86-64) the widest of
// AVX-512 (avx512f), AVX2 (avx2) and SSE its features or CPU name imply. An architecture kiln
// has no row for gets the generic one (128-bit vectors), as LLVM's generic code generation.
// Caches and FMA throughput come from the CPU's row in a table (the ISA row's nominal values for
// a CPU not in it); when the target's CPU is the host's (host_target_without_llvm), the caches
// are the host's own, from /sys/devices/system/cpu/cpu0/cache (read once per process).
TargetDescription describe(const Target& target);

// The caches sysfs describes under `dir` (/sys/devices/system/cpu/cpu0/cache: index*/level,
// type, size, coherency_line_size); the fields it does not give keep `fallback`'s values.
CacheSizes read_sysfs_caches(const std::string& dir, CacheSizes fallback);

// The vector extension a CPU name implies when a target carries no feature string, e.g.
// "znver4" -> "avx512", "haswell" -> "avx2"; "" for a CPU not in the table.
std::string_view isa_of_cpu(std::string_view cpu);

}  // namespace kiln
