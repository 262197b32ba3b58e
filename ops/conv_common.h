// Pieces shared by the NCHWc convolution templates (conv2d_NCHWc.x86, depthwise_conv2d_NCHWc.x86)
// and their operators: workload keys and geometry, ONNX Conv nodes, kernel argument binding, the
// reference implementation, TVM argument serialization and reading, config
// access that reports bad configs instead of aborting, and the loop nests of the schedule:
//
//   pack_data   (untimed)  data NCHW -> zero-padded NCHW{ic_bn}c workspace
//   compute     (timed)    parallel over (batch, oc_chunk, oh_outer):
//                            for each ow chunk: acc[oh_factor][reg_n][oc_bn] = bias
//                                               reduction (the template's; acc += ...)
//                                               acc -> row buffer (NCHW{oc_bn}c rows)
//                            row buffer -> NCHW output (drops tail rows and columns)
//                          with a packed (NCHW{oc_bn}c) output, acc -> output directly: each
//                          output vector is written once, tail columns and rows skipped
//
// The packed data is padded far enough that tail tiles (reg_n not dividing the output width,
// oh_factor not dividing its height) read in-bounds zeros; only the stores to the output look at
// P and Q. Data read in place (no pack_data stage) is either read within its bounds (a conv
// without padding whose tiles fit) or through a zero-padded copy of each border tile's window
// (DirectConv::tile_inputs).
//
// Every config of the space builds: an accumulator over the stack cap is computed sub-tile by
// sub-tile, and an unrolled nest over kMaxUnrolledVectorOps keeps its outer loops serial
// (schedule_util.h); neither changes the order in which an output sums its terms.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "ir/ir.h"
#include "ops/config_space.h"
#include "ops/limits.h"
#include "ops/node_view.h"
#include "ops/operator.h"
#include "ops/schedule_util.h"
#include "ops/template.h"
#include "ops/workload.h"

namespace kiln::ops::conv {

// ---------------------------------------------------------------------------------------------
// Workloads.

// A 2-D convolution in NCHW: data [n, c, h, w]; output [n, k, p, q]. Depthwise: k == c.
struct Geometry {
  int64_t n = 1, c = 1, h = 1, w = 1, k = 1, r = 1, s = 1;
  int64_t stride_h = 1, stride_w = 1, pad_h = 0, pad_w = 0, dilation = 1;
  int64_t p = 1, q = 1;  // output height and width
  int64_t groups = 1;    // grouped convolution: C/groups inputs to K/groups outputs each
};

// Normalizes a convolution workload. `specs` lists the template's own keys; the stride and padding
// keys are added here: `stride` (default 1) and `pad` (default 0) apply to both dimensions and
// `stride_h`, `stride_w`, `pad_h`, `pad_w` override one. The result is canonical: `stride`/`pad`
// when both dimensions agree, the _h/_w pair otherwise. Also checks that the output is at least
// 1x1 (errors name the keys involved).
Result<Workload> normalize(const Workload& w, std::string_view template_name,
                           std::vector<ParamSpec> specs);

// The geometry of a normalized workload. Depthwise workloads have no K key: k = c; workloads
// without a groups key have groups = 1 (depthwise ones too: `depthwise` says so where it counts).
Geometry geometry(const Workload& w);

// TVM's conv2d_NCHWc / depthwise_conv2d_NCHWc task arguments for NCHW data and an OIHW kernel of
// `kernel_shape`: [data, kernel, [sh, sw], [pt, pl, pb, pr], [d, d], "NCHW", "NCHW", "float32"].
nlohmann::json tvm_args(const Geometry& g, const std::vector<int64_t>& kernel_shape);

// An ONNX Conv node with 4-D data, as the conv operators read it: the workload parameters both
// conv2d and depthwise_conv2d take (N, C, H, W, R, S, stride_h/_w, pad_h/_w, dilation; op not
// set), with the node's group count, channels C and filters K. An error for what kiln's conv
// workloads cannot express: data that is not 4-D, different dilations per axis, asymmetric padding
// that changes the output size.
struct ConvNode {
  Workload workload;
  int64_t groups = 1, c = 1, k = 1;
};
Result<ConvNode> read_conv_node(const NodeView& node);

// What the conv operators (conv2d, depthwise_conv2d) share: they map ONNX Conv nodes (each claims
// its groups, from read_conv_node), chain packed activations, read TVM args as tvm_args writes
// them, and bind data (as the kernel's layout reads it), weight, and the node's bias or zeros.
class ConvOperator : public Operator {
 public:
  std::vector<std::string> onnx_ops() const override { return {"Conv"}; }
  bool packed_activations() const override { return true; }
  Result<Workload> from_tvm_args(const nlohmann::json& args) const override;
  Result<Binding> bind(const NodeView& node, const Workload& w,
                       ArgumentBinder& binder) const override;

 protected:
  // Whether the workload has conv2d's K (depthwise workloads have none: K = C).
  virtual bool has_k() const = 0;
};

// Direct convolution in double: out = conv(data, weight) + bias. `depthwise` reads input channel
// k for output channel k and a weight of shape [k, 1, r, s]; otherwise output channel k reads
// its group's C/groups input channels and a weight of shape [k, c/groups, r, s].
void reference(const Geometry& g, bool depthwise, const float* data, const float* weight,
               const float* bias, float* out);

// ---------------------------------------------------------------------------------------------
// Config access. A config that lacks a knob or holds a value the template cannot use is an
// InstantiationError naming the knob, never an abort.

// size[-1] of split `knob`; must be >= 1 and, when `must_divide` > 0, divide it.
Result<int64_t> split_inner(const ConfigEntity& config, std::string_view knob, int64_t must_divide);
// The blocks of an NCHWc config: tile_ic[-1] (must divide g.c) in, tile_oc[-1] (must divide g.k)
// out; the error names the knob.
Result<ActivationBlocks> channel_blocks(const Geometry& g, const ConfigEntity& config);
// The same, nullopt when either is missing or does not divide.
std::optional<ActivationBlocks> nchwc_blocks(const Geometry& g, const ConfigEntity& config);
// TVM's fallback blocks: out (oc_bn) the largest divisor of g.k at most the SIMD width, in
// (ic_bn) the largest divisor of g.c at most oc_bn.
ActivationBlocks fallback_blocks(const Geometry& g, const TargetInfo& target);

// kiln's default register tile of an NCHWc direct convolution (ops/default_config.h): channel
// blocks of kDefaultBlockVectors whole vectors (one where a block's weights would exceed the L2
// cache), chosen by channel count alone so that consecutive convs chain their blocks, and the
// output columns (reg_n, among `reg_factors`, the tile_ow knob's inner factors over `ow`
// columns) and rows (oh_factor, among `oh_factors` over `oh` rows) whose accumulators fit the
// target's vector registers with the best modelled FMA throughput. Depthwise convolutions load
// a data vector per output (no broadcast) and take in == out.
inline constexpr int64_t kDefaultBlockVectors = 2;
struct DefaultTile {
  ActivationBlocks blocks;
  int64_t reg_n = 1;
  int64_t oh_factor = 1;
  double efficiency = 0;     // the chosen tile's modelled share of the FMA peak (tile_efficiency)
  int64_t accumulators = 0;  // the vector accumulators one step of the tile keeps
};
DefaultTile default_tile(const Geometry& g, bool depthwise, int64_t ow,
                         const std::vector<int64_t>& reg_factors, int64_t oh,
                         const std::vector<int64_t>& oh_factors, const TargetInfo& target);
// The register tile default_tile chooses for given blocks; blocks.out may be ragged (not
// dividing g.k), its padding lanes counted as wasted.
DefaultTile register_tile(const Geometry& g, bool depthwise, const ActivationBlocks& blocks,
                          int64_t ow, const std::vector<int64_t>& reg_factors, int64_t oh,
                          const std::vector<int64_t>& oh_factors, const TargetInfo& target);
// The share of a depthwise conv's time its FMAs take when its border tiles (those whose input
// window crosses the padding) first copy their window, padded (window_reduction), as the
// default tile models it: a tile of reg_n x oh_factor outputs does R * S FMAs per output per lane
// vector, two a cycle, and copying its window costs a cycle per window element. A depthwise conv
// has no channel reduction to spread the copy over, so wide tiles lose: MnasNet's 72-channel 3x3
// on 56x56 ran 1.7x slower in tiles of 14 columns (half of them padding a window) than of 4.
// Direct convolutions are not discounted (their copy is a small share of their FMAs).
double border_window_share(const Geometry& g, int64_t reg_n, int64_t oh_factor);
// Bytes of the weights one block of oc_bn output channels reads.
int64_t block_weight_bytes(const Geometry& g, bool depthwise, int64_t oc_bn);

// ---------------------------------------------------------------------------------------------
// Schedule.

// The variables of a fused loop over dims (outermost first), e.g. f -> (f / (b*c), f / c % b,
// f % c); dimensions of extent 1 are the constant 0.
std::vector<ir::Expr> unfuse(const ir::Expr& f, const std::vector<int64_t>& dims);

// vector_loop splits longer loops into SIMD bodies of at most this many lanes.
inline constexpr int64_t kMaxSimdLanes = 64;  // widest SIMD body the code generator makes

// The register tile of an NCHWc convolution: accumulators for oh_factor x reg_n outputs of oc_bn
// channels.
struct Tiling {
  int64_t oc_bn = 1;      // output channels per block (the vector lanes)
  int64_t reg_n = 1;      // output columns per tile
  int64_t oh_factor = 1;  // output rows per tile (1x1 kernels only)
  // Lanes of the block a tile accumulates at a time (0: all oc_bn), a divisor of oc_bn. Only for
  // reductions whose lanes share no operand (depthwise): computing the block's vectors one
  // group after another costs no extra load, and keeps a wide tile within the registers.
  int64_t lane_block = 0;
};

// The lane_block of a depthwise tiling: all of oc_bn when its accumulators, weight vectors and
// a data vector fit the target's vector registers, else the most whole vectors of the block
// (dividing it) that fit, at least one vector. oc_bn when it is not a whole number of vectors.
int64_t depthwise_lane_block(const Tiling& t, const TargetInfo& target);

// Sizes derived from a geometry and tiling.
struct TiledShape {
  int64_t ow_chunks = 0, oh_chunks = 0;  // tiles per row / rows of tiles
  int64_t q_pad = 0, p_pad = 0;          // padded output width and height (multiples of the tile)
  int64_t h_pad = 0, w_pad = 0;          // height and width of the padded packed data
};
TiledShape tiled_shape(const Geometry& g, const Tiling& t);

// The packed, zero-padded input: [n, c / ic_bn, h_pad, w_pad, ic_bn].
ir::Buffer packed_data_buffer(const Geometry& g, const TiledShape& ts, int64_t ic_bn);
// Stage body filling packed_data_buffer from `data`: NCHW, or NCHW{b}c when data is 5-D (a
// producer's packed output, copied in contiguous runs of gcd(b, ic_bn) channels).
ir::Stmt pack_data(const Geometry& g, int64_t ic_bn, const ir::Buffer& data,
                   const ir::Buffer& packed);

// What a reduction sees of the tile it accumulates into.
struct Tile {
  ir::Expr n, oc_chunk;  // batch index and output-channel chunk
  ir::Expr oh0, ow0;     // first output row and column of the tile
  ir::Expr lane0;        // first lane of the tile within the oc_bn block (0 unless blocked)
  ir::Buffer acc;        // [oh_factor * reg_n * oc_bn] of `tiling`, local
  Tiling tiling;         // the config's tiling, or a sub-tile of it that fits the stack
};

// A product term of the reduction for output row oh0 + ohi, column ow0 + j, lane v of the oc_bn
// block (v already includes lane0).
using TermFn = std::function<ir::Expr(const ir::Expr& ohi, const ir::Expr& j, const ir::Expr& v)>;

// acc[ohi][j][v] += term(ohi, j, v): ohi and j unrolled, v vectorized (the innermost statement of
// every reduction).
ir::Stmt accumulate(const Tile& tile, const TermFn& term);

// A loop over v in [0, extent) as SIMD bodies of at most kMaxSimdLanes lanes: one vectorized loop
// when it fits, otherwise unrolled full chunks and a vectorized tail.
ir::Stmt vector_loop(const std::string& name, int64_t extent,
                     const std::function<ir::Stmt(const ir::Expr& v)>& body);

// The timed stage described at the top of this file. `rows` is an optional workspace for the
// row buffer ([n * oc_chunks * oh_chunks * oh_factor * q_pad * oc_bn]) used when a row does not
// fit on the stack; undefined means a local row buffer.
// With `packed_output` the output buffer is NCHW{oc_bn}c ([n, k / oc_bn, p, q, oc_bn]) and each
// tile's accumulators are stored straight into it (no row buffer; `rows` must be undefined), the
// columns and rows of a tail tile past the output skipped.
// The parallel loop runs over (batch, oc_chunk, rows of tiles), TVM's order, or with `rows_outer`
// over (batch, rows of tiles, oc_chunk): a row's tiles of every chunk in turn.
ir::Stmt compute(const Geometry& g, const Tiling& t, const TargetInfo& target,
                 const ir::Buffer& bias, const ir::Buffer& output, const ir::Buffer& rows,
                 const std::function<ir::Stmt(const Tile&)>& reduction, bool packed_output = false,
                 bool rows_outer = false);

// How a reduction reads its data: the element at (n, chunk, h, x, lane) of the zero-padded
// NCHW{ic_bn}c input, h and x counted from the first row and column of the padding.
using DataLoad = std::function<ir::Expr(const ir::Expr& n, const ir::Expr& chunk, const ir::Expr& h,
                                        const ir::Expr& x, const ir::Expr& lane)>;

// Floats in a 64-byte cache line (x86-64; most aarch64 cores).
inline constexpr int64_t kCacheLineFloats = 16;

// Whether data in NCHW{data_block}c is read as NCHW{ic_bn}c chunks where it lies: in its own
// block, or in a block of several chunks (each chunk then contiguous inside one block) where each
// line is loaded about once:
//  - chunks of whole cache lines (ic_bn a multiple of kCacheLineFloats), for any reader;
//  - any chunk for a reader of its own chunks (`own_chunks`: a group or depthwise conv, TileInputs
//    kOwnGroup / kOwnLanes), whose compute runs its tiles row by row across the output chunks
//    (compute's rows_outer), so a line's other chunks are read while its rows are still cached.
// A reader of every chunk (a 1x1 conv) reads its next chunk of a pixel only after more data than
// L1 holds, so a smaller chunk's line is loaded once per chunk. Measured (Zen 5, one thread): a
// 1152 -> 320 1x1 conv reading chunks of 8 from blocks of 32 took 0.38 ms in MnasNet, 0.20 ms
// from its own block after a copy; RegNetY's first group conv, chunks of 8 from blocks of 48, took
// 0.45 ms with its tiles chunk by chunk and 0.33 ms row by row, against 0.24 ms and a 0.10 ms
// copy (its second, 0.22 ms row by row against 0.13 and 0.12). 0 is NCHW: never.
bool reads_chunks_in_place(int64_t data_block, int64_t ic_bn, bool own_chunks);

// Channel c0 + lane of `data` at (n, h, x): data NCHW (4-D) or NCHW{b}c (5-D), where c0 and
// c0 + lane lie in one block (a run of channels, contiguous there).
ir::Expr load_channel(const ir::Buffer& data, const ir::Expr& n, const ir::Expr& c0,
                      const ir::Expr& h, const ir::Expr& x, const ir::Expr& lane);

// Chunk `chunk`, lane `lane` of NCHW{ic_bn}c from `data`: channel chunk * ic_bn + lane, at (h, x)
// of `data`, NCHW or NCHW{b}c with b a multiple of ic_bn (reads_chunks_in_place).
DataLoad chunk_load(const ir::Buffer& data, int64_t ic_bn);

// Which input channels the reduction of one tile reads. A description lets direct_conv_program
// read data in place where the conv pads: the tiles on the border read a zero-padded copy of
// their window (those channels, the rows and columns the tile reads) on the stack.
enum class TileInputs {
  kUndescribed,  // not described: data to pad is always packed
  kAll,          // every input channel (conv2d of one group)
  kOwnGroup,     // every input channel of the tile's group (group convs: oc_bn divides K/groups
                 // and ic_bn C/groups, so a tile's outputs lie in one group)
  kOwnLanes,     // input channel c for output channel c: depthwise, with ic_bn a multiple of
                 // oc_bn (a tile's lanes lie in one input chunk)
};

// The largest window a border tile copies, in floats: 16 KiB, half an L1 data cache. A conv
// whose windows are larger packs its data.
inline constexpr int64_t kMaxWindowFloats = 4096;

// A direct NCHWc convolution (conv2d_NCHWc.x86, depthwise_conv2d_NCHWc.x86): what differs
// between the templates, for direct_conv_program.
struct DirectConv {
  std::string name;                       // the program's, e.g. "conv2d_NCHWc"
  std::vector<int64_t> weight_shape;      // the OIHW weight argument's
  std::vector<int64_t> kernel_vec_shape;  // the packed weight workspace's
  int64_t ic_bn = 1;                      // tile_ic[-1]: the packed data's block
  Tiling tiling;
  std::function<ir::Stmt(const ir::Buffer& weight, const ir::Buffer& kernel_vec)> pack_weight;
  std::function<ir::Stmt(const Tile& tile, const DataLoad& data, const ir::Buffer& kernel_vec)>
      reduction;
  // Which input channels the reduction of one tile reads (TileInputs).
  TileInputs tile_inputs = TileInputs::kUndescribed;
};

// Whether a conv program packs its data (a <name>_pack_data stage) or reads it in place.
bool packs_data(const ir::Program& program);

// The program of a direct NCHWc convolution: arguments data, weight, bias, output (under
// `layout`), workspaces data_vec (none when the compute stage reads the data in place: see the
// rule in the function), kernel_vec, the row
// workspace when compute() needs one and, for a ragged block, bias_vec (the bias padded with zeros,
// filled by the weight packing); the stages <name>_pack_data (unless in place) and
// <name>_pack_weight (untimed: tuning takes both pre-packed, as AutoTVM does), then the timed
// <name>_compute. A ragged block with a packed output is an InstantiationError.
Result<ir::Program> direct_conv_program(const Geometry& g, const DirectConv& conv,
                                        const TargetInfo& target, const ActivationLayout& layout);

// The data and output argument buffers of a conv kernel under `layout` (NCHW by default, else
// NCHW{block}c); an InstantiationError when a block does not divide the channels.
Result<ir::Buffer> data_buffer(const Geometry& g, const ActivationLayout& layout);
ir::Buffer output_buffer(const Geometry& g, int64_t oc_bn, const ActivationLayout& layout);

// Output-channel chunks of a tiling: ceil(K / oc_bn). A ragged block (oc_bn not dividing K,
// conv2d_NCHWc_ragged.x86) pads the last chunk with lanes that are computed and never stored:
// its weights and bias are packed with zeros there, and its output is NCHW only
// (direct_conv_program refuses a packed one).
int64_t oc_chunks(const Geometry& g, const Tiling& t);
bool ragged(const Geometry& g, const Tiling& t);

// The row workspace compute() needs for this tiling, or an undefined buffer when the row fits
// on the stack or the output is packed (no row buffer then).
ir::Buffer row_workspace(const Geometry& g, const Tiling& t, bool packed_output);

}  // namespace kiln::ops::conv
