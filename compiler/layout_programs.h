// Small data-movement kernels the compiler inserts around tunable kernels, as loop-nest IR:
// operands of matrix products brought to the layouts the templates take, and copies.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "ir/ir.h"

namespace kiln::compiler {

// out[b, i, j] (shape [prod(batch), rows, cols]) from `in` of shape [..., r, c] (rank >= 2):
// in[bb, i, j], or in[bb, j, i] when `transpose`, where bb is b's position in `in`'s own batch
// dimensions under numpy broadcasting of `in`'s leading dimensions to `batch`.
// Buffers: in, out.
ir::Program matmul_operand_program(const std::vector<int64_t>& in_shape,
                                   const std::vector<int64_t>& batch, bool transpose,
                                   const std::string& name);

// out[idx] = value(idx) over `shape`, with buffers {in, out} (the caller may insert more inputs
// before `out`): the outermost dimension parallel, the innermost in SIMD bodies of `lanes`.
ir::Program pointwise_program(const std::vector<int64_t>& shape, int lanes, const ir::Buffer& in,
                              const ir::Buffer& out,
                              const std::function<ir::Expr(const std::vector<ir::Expr>&)>& value,
                              const std::string& name);

// `in` NCHW[b]c [n, c / b, h, w, b] -> `out` NCHW [n, c, h, w] (a conv's packed output for a
// reader that is not a conv). Buffers: in, out.
ir::Program unpack_program(const ir::Buffer& in, const ir::Buffer& out, int lanes,
                           const std::string& name);

// `in` NCHW[a]c [n, c / a, h, w, a] -> `out` NCHW[b]c [n, c / b, h, w, b], both blocks dividing
// c: a conv's packed output for a reader that takes another block (a fused epilogue writing
// NCHW[b]c). Copies in contiguous runs of gcd(a, b) channels, as a conv's data packing does.
// Buffers: in, out.
ir::Program repack_program(const ir::Buffer& in, const ir::Buffer& out, const std::string& name);

// out = in, `elements` floats. Buffers: in, out.
ir::Program copy_program(int64_t elements, const std::string& name);

}  // namespace kiln::compiler
