// What a layout transform costs on this machine, for the layout planner (compiler/layout_plan.h),
// measured with the kernels a compiled model runs, as TVM's graph tuner benchmarks its
// layout_transform ops:
//   NCHW[a]c -> NCHW[b]c  the conv's own data packing stage (ops/conv_common.h pack_data), which
//                         copies in contiguous runs of gcd(a, b) channels. A conv that pads packs
//                         its data even when a == b, so there a mismatch costs what the packing
//                         takes beyond the matched copy; a conv without padding reads matched data
//                         in place, so there it costs the whole packing.
//   NCHW[a]c -> NCHW      the unpack kernel (compiler/layout_programs.h unpack_program).
//   NCHW -> NCHW[b]c      the conv's packing from NCHW, beyond the matched copy.
// The kernels are built once per compile (one shared object) and timed on one thread for two
// tensor sizes (cache-resident and not) and each run length 1, 2, 4, 8, 16 lanes; a query is
// elements x the per-element time of its run length (the largest measured run that is at most
// gcd(a, b)), interpolated in log(elements) between the two sizes and clamped outside them.
// About 0.5 s on 2 cores. Nothing is cached between compiles.
#pragma once

#include <cstdint>
#include <vector>

#include "builder/target.h"
#include "common/status.h"

namespace kiln::compiler {

class TransformCosts {
 public:
  // Builds and times the transform kernels for `target` (which must be this machine's CPU).
  static Result<TransformCosts> measure(const Target& target);
  // Fixed per-element costs, for when measuring is not possible: what measure() found on the
  // development machine (AMD Zen 5, one thread), see the .cc file.
  static TransformCosts estimated();

  // Seconds to convert an NCHW-shaped tensor from NCHW[from]c to NCHW[to]c (0: NCHW); 0 when
  // from == to. `whole`: the packing is a copy of its own (the consumer would read matched data
  // in place), else only its extra over the matched copy counts. Unpacking is always whole.
  double seconds(const std::vector<int64_t>& shape, int64_t from, int64_t to,
                 bool whole = false) const;

  // Wall seconds the measurement took (building and timing).
  double measure_seconds() const { return measure_seconds_; }

 private:
  struct SizeClass {
    int64_t elements = 0;
    std::vector<double> repack_extra;  // per run-length class: seconds per element over a copy
    double from_nchw_extra = 0;        // NCHW -> NCHW[b]c, over a matched copy
    double unpack = 0;                 // NCHW[b]c -> NCHW
    double copy = 0;                   // the matched copy, NCHW[b]c -> NCHW[b]c
  };
  std::vector<SizeClass> sizes_;  // increasing elements
  double measure_seconds_ = 0;
};

}  // namespace kiln::compiler
