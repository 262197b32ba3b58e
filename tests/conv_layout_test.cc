// ActivationLayout of Template::instantiate: conv2d_NCHWc.x86, depthwise_conv2d_NCHWc.x86,
// conv2d_NCHWc_winograd.x86 and conv2d_NCHWc_flat.x86 read
// their data as NCHW{b}c ([n, c/b, h, w, b]) for any block b dividing C and write their output as
// NCHW{oc_bn}c ([n, k/oc_bn, p, q, oc_bn], oc_bn = tile_oc[-1]) on request. For awkward
// workloads and configs of each space, every combination of data block (NCHW, tile_ic[-1], another
// divisor of C) and output layout computes the reference's answer, in the interpreter and as LLVM
// code, and the very sums of the default layout (only the buffers' layouts change). A block that
// does not divide C, and any layout on a template that is not an NCHWc convolution, is an
// InstantiationError.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "builder/build.h"
#include "ir/interpreter.h"
#include "ops/conv_common.h"
#include "ops/registry.h"
#include "runtime/artifact.h"
#include "runtime/thread_pool.h"
#include "tests/ops_test_util.h"
#include "tuner/space_walk.h"

namespace kiln::ops {
namespace {

using Floats = std::vector<float>;

const TargetInfo kAvx512{16};
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

const Template& conv() { return conv2d_nchwc_template(); }
const Template& depthwise() { return depthwise_conv2d_nchwc_template(); }

// ---------------------------------------------------------------------------------------------
// Layout conversions, written from the definition: NCHW element (n, c, h, w) is NCHW{b}c element
// [n][c / b][h][w][c % b].

Floats to_nchwc(const Floats& nchw, const std::vector<int64_t>& shape, int64_t b) {
  const int64_t N = shape[0], C = shape[1], H = shape[2], W = shape[3];
  Floats out(nchw.size(), kNaN);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t w = 0; w < W; ++w) {
          out[(((n * (C / b) + c / b) * H + h) * W + w) * b + c % b] =
              nchw[((n * C + c) * H + h) * W + w];
        }
  return out;
}

Floats from_nchwc(const Floats& packed, const std::vector<int64_t>& shape, int64_t b) {
  const int64_t N = shape[0], C = shape[1], H = shape[2], W = shape[3];
  Floats out(packed.size(), kNaN);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t w = 0; w < W; ++w) {
          out[((n * C + c) * H + h) * W + w] =
              packed[(((n * (C / b) + c / b) * H + h) * W + w) * b + c % b];
        }
  return out;
}

TEST(ConvLayoutHelpers, PackingFollowsTheDefinition) {
  // [1, 4, 1, 2] as NCHW2c: [1, 2, 1, 2, 2].
  Floats nchw = {0, 1, 10, 11, 20, 21, 30, 31};  // (c, w) -> 10c + w
  Floats packed = to_nchwc(nchw, {1, 4, 1, 2}, 2);
  EXPECT_EQ(packed, (Floats{0, 10, 1, 11, 20, 30, 21, 31}));
  EXPECT_EQ(from_nchwc(packed, {1, 4, 1, 2}, 2), nchw);
  EXPECT_EQ(to_nchwc(nchw, {1, 4, 1, 2}, 1), nchw);
}

// max |got - want| / max |want|; infinite when `got` holds a NaN (an element never written).
double relative_error(const Floats& got, const Floats& want) {
  EXPECT_EQ(got.size(), want.size());
  if (got.size() != want.size()) return std::numeric_limits<double>::infinity();
  double max_ref = 0, max_err = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    max_ref = std::max(max_ref, std::abs(static_cast<double>(want[i])));
    double err = std::abs(static_cast<double>(got[i]) - want[i]);
    if (std::isnan(err)) return std::numeric_limits<double>::infinity();
    max_err = std::max(max_err, err);
  }
  return max_err / std::max(max_ref, 1e-30);
}

// ---------------------------------------------------------------------------------------------
// Running a program under a layout.

// Random NCHW inputs of a workload and the reference's NCHW output for them.
struct Problem {
  std::vector<TensorSpec> inputs, outputs;
  std::vector<Floats> input_data;
  Floats expected;
};

Problem make_problem(const Template& t, const Workload& w, uint64_t seed) {
  Problem pr{t.inputs(w), t.outputs(w), {}, {}};
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> dist(-1, 1);
  for (const TensorSpec& s : pr.inputs) {
    Floats v(s.num_elements());
    for (float& x : v) x = dist(rng);
    pr.input_data.push_back(std::move(v));
  }
  pr.expected.assign(pr.outputs[0].num_elements(), kNaN);
  std::vector<const float*> in;
  for (const Floats& v : pr.input_data) in.push_back(v.data());
  std::vector<float*> out = {pr.expected.data()};
  t.reference(w, in, out);
  return pr;
}

enum class Backend { kInterpreter, kLlvm };

// The NCHW output of `program`, instantiated with `layout`, on the problem's inputs (the data
// packed as the layout says, the output unpacked), after running all stages and after running
// the timed stages alone again on the workspace the first run left (outputs reset to NaN first).
// Errors fail the test and give empty results.
struct Outputs {
  Floats all_stages, timed_only;
};

Outputs run(const ir::Program& program, const Problem& pr, const ActivationLayout& layout,
            int64_t oc_bn, Backend backend) {
  const std::vector<int64_t>& data_shape = pr.inputs[0].shape;
  const std::vector<int64_t>& out_shape = pr.outputs[0].shape;
  // The argument buffers are the template's tensors, but for the data and output layouts.
  std::vector<std::vector<int64_t>> want_shapes;
  for (const TensorSpec& s : pr.inputs) want_shapes.push_back(s.shape);
  want_shapes.push_back(out_shape);
  if (layout.data_block > 0) {
    const int64_t b = layout.data_block;
    want_shapes[0] = {data_shape[0], data_shape[1] / b, data_shape[2], data_shape[3], b};
  }
  if (layout.packed_output) {
    want_shapes.back() = {out_shape[0], out_shape[1] / oc_bn, out_shape[2], out_shape[3], oc_bn};
  }
  EXPECT_EQ(program.num_inputs, static_cast<int>(pr.inputs.size()));
  EXPECT_EQ(program.num_outputs, 1);
  if (program.num_inputs != static_cast<int>(pr.inputs.size()) || program.num_outputs != 1) {
    return {};
  }
  for (size_t i = 0; i < want_shapes.size(); ++i) {
    EXPECT_EQ(program.buffers[i]->shape, want_shapes[i]) << program.buffers[i]->name;
    if (program.buffers[i]->shape != want_shapes[i]) return {};
  }

  std::vector<Floats> bufs;
  for (const ir::Buffer& b : program.buffers) bufs.emplace_back(b->num_elements(), kNaN);
  for (size_t i = 0; i < pr.inputs.size(); ++i) bufs[i] = pr.input_data[i];
  if (layout.data_block > 0) bufs[0] = to_nchwc(pr.input_data[0], data_shape, layout.data_block);
  const size_t out_index = pr.inputs.size();
  std::vector<float*> ptrs;
  for (Floats& b : bufs) ptrs.push_back(b.data());

  auto output = [&] {
    const Floats& out = bufs[out_index];
    return layout.packed_output ? from_nchwc(out, out_shape, oc_bn) : out;
  };
  auto reset_output = [&] { std::fill(bufs[out_index].begin(), bufs[out_index].end(), kNaN); };

  Outputs result;
  if (backend == Backend::kInterpreter) {
    Status s = ir::interpret(program, ptrs);
    EXPECT_TRUE(s.ok()) << s.message();
    if (!s.ok()) return {};
    result.all_stages = output();
    reset_output();
    ir::Program timed = program;
    std::erase_if(timed.stages, [](const ir::Stage& st) { return !st.timed; });
    s = ir::interpret(timed, ptrs);
    EXPECT_TRUE(s.ok()) << s.message();
    if (!s.ok()) return {};
    result.timed_only = output();
    return result;
  }

  auto built = builder::build_program(program, builder::host_target());
  EXPECT_TRUE(built.ok()) << built.status().message();
  if (!built.ok()) return {};
  auto artifact = Artifact::load_from_bytes(built->shared_object, program.name);
  EXPECT_TRUE(artifact.ok()) << artifact.status().message();
  if (!artifact.ok()) return {};
  ThreadPool pool(3);
  for (bool timed_only : {false, true}) {
    for (const ir::Stage& st : program.stages) {
      if (timed_only && !st.timed) continue;
      auto fn = (*artifact)->stage(st.name);
      EXPECT_TRUE(fn.ok()) << st.name;
      if (!fn.ok()) return {};
      (*fn)(ptrs.data(), pool.api());
    }
    (timed_only ? result.timed_only : result.all_stages) = output();
    reset_output();
  }
  return result;
}

// The data blocks to try for a config: NCHW, tile_ic[-1], and another divisor of C, taken
// smaller than tile_ic[-1] when `prefer_smaller` (and one exists), larger otherwise (the same).
std::vector<int64_t> data_blocks(int64_t c, int64_t ic_bn, bool prefer_smaller,
                                 std::mt19937_64& rng) {
  std::vector<int64_t> smaller, larger;
  for (int64_t d = 1; d <= c; ++d) {
    if (c % d != 0 || d == ic_bn) continue;
    (d < ic_bn ? smaller : larger).push_back(d);
  }
  std::vector<int64_t>* side = prefer_smaller ? &smaller : &larger;
  if (side->empty()) side = prefer_smaller ? &larger : &smaller;
  std::vector<int64_t> blocks = {0, ic_bn};
  if (!side->empty()) blocks.push_back((*side)[rng() % side->size()]);
  return blocks;
}

// The fallback and `random` seeded random indices of the workload's space.
std::vector<int64_t> configs(const Template& t, const Workload& w, int64_t random) {
  ConfigSpace space = t.space(w);
  std::mt19937_64 rng(11);
  std::vector<int64_t> indices = tuner::sample_ints(space, random, rng);
  indices.insert(indices.begin(), t.fallback(w, space, kAvx512).index());
  return indices;
}

// For each config and each layout combination: the reference's answer with all stages and with
// the timed stages alone, and bit for bit the output of the config's default-layout program.
void check_layouts(const Case& c, int64_t random_configs, Backend backend) {
  const Template* found = find_template(c.template_name);
  ASSERT_NE(found, nullptr) << c.template_name;
  const Template& t = *found;
  Workload w = normalized(t, c.workload);
  ConfigSpace space = t.space(w);
  Problem pr = make_problem(t, w, 5);
  const int64_t channels = pr.inputs[0].shape[1];
  std::mt19937_64 rng(3);
  std::vector<int64_t> indices = configs(t, w, random_configs);
  for (size_t ci = 0; ci < indices.size(); ++ci) {
    ConfigEntity config = space.get(indices[ci]);
    SCOPED_TRACE(config.entity_string());
    const int64_t ic_bn = inner(config, "tile_ic"), oc_bn = inner(config, "tile_oc");

    auto plain = t.instantiate(w, config, kAvx512);
    ASSERT_TRUE(plain.ok()) << plain.status().message();
    Outputs baseline = run(*plain, pr, {}, oc_bn, backend);
    EXPECT_LE(relative_error(baseline.all_stages, pr.expected), 1e-4);

    std::vector<int64_t> blocks = data_blocks(channels, ic_bn, ci % 2 == 0, rng);
    EXPECT_EQ(blocks.size(), 3u) << "C=" << channels << " has no divisor besides " << ic_bn;
    for (int64_t block : blocks) {
      for (bool packed_output : {false, true}) {
        ActivationLayout layout{block, packed_output};
        SCOPED_TRACE("data_block=" + std::to_string(block) +
                     " packed_output=" + std::to_string(packed_output));
        auto program = t.instantiate(w, config, kAvx512, layout);
        ASSERT_TRUE(program.ok()) << program.status().message();
        Outputs got = run(*program, pr, layout, oc_bn, backend);
        EXPECT_LE(relative_error(got.all_stages, pr.expected), 1e-4);
        EXPECT_LE(relative_error(got.timed_only, pr.expected), 1e-4);
        // Only the buffers' layouts change: the same sums in the same order.
        EXPECT_TRUE(got.all_stages == baseline.all_stages) << "differs from the NCHW program";
        EXPECT_TRUE(got.timed_only == baseline.all_stages) << "timed stages differ from NCHW";
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Correctness.

// Odd sizes: padding, stride 2, 1x1 and 3x3 (and 5x5), batch 2, channel counts (24, 12, 18, 6)
// whose blocks are not 16 and whose divisors give crossing blocks (e.g. 6 and 8, or 4 and 6).
class ConvLayoutInterpreter : public ::testing::TestWithParam<Case> {};

TEST_P(ConvLayoutInterpreter, EveryLayoutComputesTheReference) {
  check_layouts(GetParam(), /*random_configs=*/4, Backend::kInterpreter);
}

INSTANTIATE_TEST_SUITE_P(
    ConvLayout, ConvLayoutInterpreter,
    ::testing::Values(
        Case{"conv2d_NCHWc.x86", "conv2d:N=1,C=24,H=7,W=9,K=12,R=3,S=3,pad=1"},
        Case{"conv2d_NCHWc.x86", "conv2d:N=2,C=12,H=9,W=8,K=24,R=1,S=1,stride=2"},
        Case{"conv2d_NCHWc.x86", "conv2d:N=1,C=6,H=11,W=13,K=10,R=3,S=3,stride=2,pad=1"},
        Case{"conv2d_NCHWc.x86", "conv2d:N=1,C=24,H=5,W=7,K=36,R=1,S=1"},
        Case{"conv2d_NCHWc.x86",
             "conv2d:N=1,C=18,H=8,W=13,K=12,R=3,S=5,stride_w=2,pad_h=1,pad_w=2"},
        Case{"depthwise_conv2d_NCHWc.x86", "depthwise_conv2d:N=1,C=24,H=9,W=9,R=3,S=3,pad=1"},
        Case{"depthwise_conv2d_NCHWc.x86",
             "depthwise_conv2d:N=2,C=12,H=10,W=11,R=3,S=3,stride=2,pad=1"},
        Case{"depthwise_conv2d_NCHWc.x86", "depthwise_conv2d:N=1,C=18,H=7,W=6,R=1,S=1"},
        Case{"depthwise_conv2d_NCHWc.x86",
             "depthwise_conv2d:N=1,C=24,H=11,W=7,R=5,S=5,stride=2,pad=2"},
        // Winograd: partial 4x4 tiles in both dimensions, padding 0, 1 and uneven, batch 2.
        Case{"conv2d_NCHWc_winograd.x86", "conv2d:N=1,C=24,H=7,W=9,K=12,R=3,S=3,pad=1"},
        Case{"conv2d_NCHWc_winograd.x86", "conv2d:N=2,C=6,H=11,W=10,K=10,R=3,S=3"},
        Case{"conv2d_NCHWc_winograd.x86", "conv2d:N=1,C=18,H=8,W=13,K=12,R=3,S=3,pad_h=1,pad_w=2"},
        // Flat pixel tiles: a last tile of fewer pixels, rows crossed, stride 2, batch 2.
        Case{"conv2d_NCHWc_flat.x86", "conv2d:N=2,C=12,H=9,W=8,K=24,R=1,S=1,stride=2"},
        Case{"conv2d_NCHWc_flat.x86", "conv2d:N=1,C=24,H=5,W=7,K=36,R=1,S=1"}));

// The same as LLVM code, on 3 threads: a few configs per template.
class ConvLayoutLlvm : public ::testing::TestWithParam<Case> {};

TEST_P(ConvLayoutLlvm, EveryLayoutComputesTheReference) {
  check_layouts(GetParam(), /*random_configs=*/2, Backend::kLlvm);
}

INSTANTIATE_TEST_SUITE_P(
    ConvLayout, ConvLayoutLlvm,
    ::testing::Values(Case{"conv2d_NCHWc.x86", "conv2d:N=1,C=24,H=7,W=9,K=12,R=3,S=3,pad=1"},
                      Case{"conv2d_NCHWc.x86", "conv2d:N=2,C=12,H=9,W=8,K=24,R=1,S=1,stride=2"},
                      Case{"depthwise_conv2d_NCHWc.x86",
                           "depthwise_conv2d:N=2,C=12,H=10,W=11,R=3,S=3,stride=2,pad=1"},
                      Case{"conv2d_NCHWc_winograd.x86",
                           "conv2d:N=2,C=12,H=9,W=7,K=20,R=3,S=3,pad=1"},
                      Case{"conv2d_NCHWc_flat.x86", "conv2d:N=1,C=24,H=7,W=7,K=36,R=1,S=1"}));

// Data that arrives in the kernel's own block is read in place: no pack_data stage, no data_vec
// workspace, the same sums. With nothing to pad (1x1, pad 0, the tiles inside the input) it is
// read where it is; where the conv pads, the tiles on the border read a zero-padded copy of their
// window: interior and border tiles, tail tiles past the output, stride 2, 5x5 and 7x7 windows,
// batch 2, a depthwise block that is a multiple of the output block, group convs. Under a packed
// layout NCHW data is read in place by a conv that reads whole chunks (a CNN's stem).
TEST(ConvLayoutInPlace, DataInTheKernelsBlockIsReadInPlace) {
  struct InPlaceCase {
    const Template* t;
    const char* workload;
    bool nchw_data;  // NCHW data under a packed output, else data in block tile_ic[-1] times
                     // chunks_per_block
    const char* config = nullptr;  // the default config unless given
    int64_t chunks_per_block = 1;
  };
  for (const InPlaceCase& c :
       {InPlaceCase{&conv(), "conv2d:N=2,C=24,H=6,W=8,K=12,R=1,S=1", false},
        InPlaceCase{&conv(), "conv2d:N=1,C=12,H=8,W=8,K=24,R=1,S=1,stride=2", false},
        InPlaceCase{&conv(), "conv2d:N=1,C=24,H=7,W=9,K=12,R=3,S=3,pad=1", false},
        InPlaceCase{&conv(), "conv2d:N=2,C=8,H=13,W=11,K=16,R=3,S=5,stride=2,pad_h=1,pad_w=2",
                    false},
        InPlaceCase{&conv(), "conv2d:N=1,C=3,H=23,W=21,K=16,R=7,S=7,stride=2,pad=3", true},
        InPlaceCase{&depthwise(), "depthwise_conv2d:N=1,C=24,H=8,W=8,R=3,S=3", false},
        InPlaceCase{&depthwise(), "depthwise_conv2d:N=2,C=32,H=19,W=37,R=3,S=3,pad=1", false},
        InPlaceCase{&depthwise(), "depthwise_conv2d:N=1,C=16,H=23,W=29,R=5,S=5,stride=2,pad=2",
                    false},
        InPlaceCase{&depthwise(), "depthwise_conv2d:N=1,C=16,H=3,W=3,R=3,S=3,pad=1", false},
        InPlaceCase{&depthwise(), "depthwise_conv2d:N=1,C=48,H=9,W=10,R=3,S=3,pad=1", false,
                    R"([["tile_ic","sp",[-1,24]],["tile_oc","sp",[-1,8]],)"
                    R"(["tile_ow","sp",[-1,5]],["unroll_kw","ot",true]])"},
        // Group convs: a tile reads its own group's chunks, one or two of them per group.
        InPlaceCase{&group_conv2d_template(),
                    "group_conv2d:N=1,C=16,H=9,W=9,K=16,R=3,S=3,pad=1,groups=2", false,
                    R"([["tile_ic","sp",[-1,8]],["tile_oc","sp",[-1,8]],)"
                    R"(["tile_ow","sp",[-1,3]],["unroll_kw","ot",true]])"},
        InPlaceCase{&group_conv2d_template(),
                    "group_conv2d:N=2,C=24,H=11,W=15,K=12,R=3,S=3,stride=2,pad=1,groups=3", false,
                    R"([["tile_ic","sp",[-1,4]],["tile_oc","sp",[-1,2]],)"
                    R"(["tile_ow","sp",[-1,4]],["unroll_kw","ot",false]])"},
        InPlaceCase{&group_conv2d_template(),
                    "group_conv2d:N=1,C=12,H=10,W=9,K=24,R=3,S=3,pad=1,groups=3", true,
                    R"([["tile_ic","sp",[-1,2]],["tile_oc","sp",[-1,4]],)"
                    R"(["tile_ow","sp",[-1,9]],["unroll_kw","ot",true]])"},
        // Data in a block of several chunks (a producer's wider block) is read where it lies:
        // by group and depthwise convs, which read their own chunks, of any size (groups of one
        // and two chunks, in blocks of one, four and six groups; tiles row by row across the
        // chunks); by a 1x1 conv (direct and flat), chunks of whole cache lines.
        InPlaceCase{&group_conv2d_template(),
                    "group_conv2d:N=1,C=64,H=9,W=9,K=64,R=3,S=3,pad=1,groups=2", false,
                    R"([["tile_ic","sp",[-1,16]],["tile_oc","sp",[-1,16]],)"
                    R"(["tile_ow","sp",[-1,3]],["unroll_kw","ot",true]])",
                    2},
        InPlaceCase{&group_conv2d_template(),
                    "group_conv2d:N=2,C=64,H=8,W=8,K=32,R=3,S=3,stride=2,pad=1,groups=4", false,
                    R"([["tile_ic","sp",[-1,16]],["tile_oc","sp",[-1,8]],)"
                    R"(["tile_ow","sp",[-1,4]],["unroll_kw","ot",false]])",
                    4},
        InPlaceCase{&group_conv2d_template(),
                    "group_conv2d:N=1,C=48,H=9,W=10,K=48,R=3,S=3,stride=2,pad=1,groups=6", false,
                    R"([["tile_ic","sp",[-1,8]],["tile_oc","sp",[-1,8]],)"
                    R"(["tile_ow","sp",[-1,5]],["unroll_kw","ot",true]])",
                    6},
        InPlaceCase{&depthwise(), "depthwise_conv2d:N=2,C=32,H=9,W=10,R=3,S=3,pad=1", false,
                    R"([["tile_ic","sp",[-1,8]],["tile_oc","sp",[-1,4]],)"
                    R"(["tile_ow","sp",[-1,5]],["unroll_kw","ot",false]])",
                    4},
        InPlaceCase{&conv(), "conv2d:N=1,C=48,H=6,W=8,K=12,R=1,S=1", false,
                    R"([["tile_ic","sp",[-1,16]],["tile_oc","sp",[-1,4]],)"
                    R"(["tile_ow","sp",[-1,4]],["tile_oh","ot",2]])",
                    3},
        InPlaceCase{&depthwise(), "depthwise_conv2d:N=1,C=64,H=9,W=10,R=3,S=3,pad=1", false,
                    R"([["tile_ic","sp",[-1,16]],["tile_oc","sp",[-1,16]],)"
                    R"(["tile_ow","sp",[-1,5]],["unroll_kw","ot",true]])",
                    4},
        InPlaceCase{&conv2d_flat_template(), "conv2d:N=1,C=48,H=5,W=7,K=36,R=1,S=1", false,
                    R"([["tile_ic","sp",[-1,16]],["tile_oc","sp",[-1,12]],["tile_px","ot",5]])",
                    3}}) {
    const Template& t = *c.t;
    Workload w = normalized(t, c.workload);
    ConfigSpace space = t.space(w);
    ConfigEntity config = t.default_config(w, space, kAvx512);
    if (c.config) {
      auto parsed = space.from_json_entities(nlohmann::json::parse(c.config));
      ASSERT_TRUE(parsed.ok()) << parsed.status().message();
      config = *parsed;
    }
    SCOPED_TRACE(std::string(c.workload) + " " + config.entity_string());
    const int64_t ic_bn = inner(config, "tile_ic"), oc_bn = inner(config, "tile_oc");
    Problem pr = make_problem(t, w, 9);
    auto plain = t.instantiate(w, config, kAvx512);
    ASSERT_TRUE(plain.ok()) << plain.status().message();
    EXPECT_TRUE(conv::packs_data(*plain)) << "the default layout is AutoTVM's program";
    // Per backend: LLVM contracts multiply-adds the interpreter rounds twice.
    const Outputs baseline[] = {run(*plain, pr, {}, oc_bn, Backend::kInterpreter),
                                run(*plain, pr, {}, oc_bn, Backend::kLlvm)};
    for (bool packed_output : {false, true}) {
      if (c.nchw_data && !packed_output) continue;  // the default layout
      const ActivationLayout layout{c.nchw_data ? 0 : ic_bn * c.chunks_per_block, packed_output};
      auto program = t.instantiate(w, config, kAvx512, layout);
      ASSERT_TRUE(program.ok()) << program.status().message();
      EXPECT_FALSE(conv::packs_data(*program));
      for (const ir::Buffer& b : program->buffers) EXPECT_NE(b->name, "data_vec");
      for (int b = 0; b < 2; ++b) {
        Outputs got =
            run(*program, pr, layout, oc_bn, b == 0 ? Backend::kInterpreter : Backend::kLlvm);
        EXPECT_LE(relative_error(got.all_stages, pr.expected), 1e-4);
        EXPECT_TRUE(got.all_stages == baseline[b].all_stages) << "differs from the NCHW program";
        EXPECT_TRUE(got.timed_only == baseline[b].all_stages) << "timed stages differ from NCHW";
      }
    }
  }
}

// Where a tile's window is larger than kMaxWindowFloats, the inputs of a tile are not described
// (a depthwise output block spanning input chunks) or the data comes in another block (one that
// is not a multiple of the kernel's, or a multiple of chunks that are not whole cache lines), the
// data is packed as before.
TEST(ConvLayoutInPlace, OtherwiseTheDataIsPacked) {
  struct PackedCase {
    const Template* t;
    const char* workload;
    const char* config;
  };
  for (const PackedCase& c :
       {PackedCase{&conv(), "conv2d:N=1,C=512,H=7,W=7,K=16,R=3,S=3,pad=1",
                   R"([["tile_ic","sp",[-1,16]],["tile_oc","sp",[-1,16]],)"
                   R"(["tile_ow","sp",[-1,7]],["unroll_kw","ot",true]])"},
        PackedCase{&depthwise(), "depthwise_conv2d:N=1,C=48,H=9,W=10,R=3,S=3,pad=1",
                   R"([["tile_ic","sp",[-1,8]],["tile_oc","sp",[-1,24]],)"
                   R"(["tile_ow","sp",[-1,5]],["unroll_kw","ot",true]])"}}) {
    const Template& t = *c.t;
    Workload w = normalized(t, c.workload);
    auto config = t.space(w).from_json_entities(nlohmann::json::parse(c.config));
    ASSERT_TRUE(config.ok()) << c.workload << ": " << config.status().message();
    const int64_t ic_bn = t.activation_blocks(w, *config)->in;
    auto program = t.instantiate(w, *config, kAvx512, {ic_bn, false});
    ASSERT_TRUE(program.ok()) << program.status().message();
    EXPECT_TRUE(conv::packs_data(*program)) << c.workload;
  }
  // Another block: packed (and converted) on the way.
  Workload w = normalized(conv(), "conv2d:N=1,C=24,H=7,W=9,K=12,R=3,S=3,pad=1");
  ConfigEntity config = conv().default_config(w, conv().space(w), kAvx512);
  const int64_t other = inner(config, "tile_ic") == 8 ? 4 : 8;
  auto program = conv().instantiate(w, config, kAvx512, {other, true});
  ASSERT_TRUE(program.ok()) << program.status().message();
  EXPECT_TRUE(conv::packs_data(*program));
  // Chunks of 8 in blocks of 24 and of 12 in blocks of 24, read by a conv of every chunk:
  // multiples, but of chunks that are not whole cache lines.
  for (int64_t ic_bn : {8, 12}) {
    auto narrow = conv().space(w).from_json_entities(nlohmann::json::parse(
        R"([["tile_ic","sp",[-1,)" + std::to_string(ic_bn) +
        R"(]],["tile_oc","sp",[-1,4]],["tile_ow","sp",[-1,3]],["unroll_kw","ot",true]])"));
    ASSERT_TRUE(narrow.ok()) << narrow.status().message();
    program = conv().instantiate(w, *narrow, kAvx512, {24, true});
    ASSERT_TRUE(program.ok()) << program.status().message();
    EXPECT_TRUE(conv::packs_data(*program)) << ic_bn;
  }
}

// ---------------------------------------------------------------------------------------------
// Errors.

TEST(ConvLayoutErrors, ABlockThatDoesNotDivideTheChannelsIsAnInstantiationError) {
  for (const auto& [t, text] :
       {std::pair{&conv(), "conv2d:N=1,C=24,H=7,W=9,K=12,R=3,S=3,pad=1"},
        std::pair{&depthwise(), "depthwise_conv2d:N=1,C=24,H=9,W=9,R=3,S=3,pad=1"}}) {
    Workload w = normalized(*t, text);
    ConfigSpace space = t->space(w);
    for (int64_t index : configs(*t, w, 2)) {
      ConfigEntity config = space.get(index);
      for (int64_t block : {5, 7, 9, 16, 48, -8}) {
        for (bool packed_output : {false, true}) {
          SCOPED_TRACE(std::string(t->name()) + " " + config.entity_string() + " data_block=" +
                       std::to_string(block) + " packed_output=" + std::to_string(packed_output));
          auto program = t->instantiate(w, config, kAvx512, {block, packed_output});
          ASSERT_FALSE(program.ok()) << "accepted";
          EXPECT_EQ(program.status().code(), StatusCode::kInstantiation);
          const std::string& m = program.status().message();
          EXPECT_NE(m.find("block"), std::string::npos) << m;
          EXPECT_NE(m.find(std::to_string(block)), std::string::npos) << m;
        }
      }
    }
  }
}

TEST(ConvLayoutErrors, OtherTemplatesRejectNonDefaultLayouts) {
  for (const auto& [t, text] :
       {std::pair{&dense_nopack_template(), "dense:M=4,N=16,K=8"},
        std::pair{&dense_pack_template(), "dense:M=4,N=16,K=8"},
        std::pair{&batch_matmul_template(), "batch_matmul:B=2,M=4,N=16,K=8"}}) {
    Workload w = normalized(*t, text);
    ConfigSpace space = t->space(w);
    ConfigEntity config = t->fallback(w, space, kAvx512);
    SCOPED_TRACE(std::string(t->name()));
    auto plain = t->instantiate(w, config, kAvx512, ActivationLayout{});
    EXPECT_TRUE(plain.ok()) << plain.status().message();
    for (ActivationLayout layout : {ActivationLayout{4, false}, ActivationLayout{0, true},
                                    ActivationLayout{8, true}, ActivationLayout{1, false}}) {
      auto program = t->instantiate(w, config, kAvx512, layout);
      ASSERT_FALSE(program.ok()) << "data_block=" << layout.data_block
                                 << " packed_output=" << layout.packed_output << " accepted";
      EXPECT_EQ(program.status().code(), StatusCode::kInstantiation);
      EXPECT_NE(program.status().message().find(t->name()), std::string::npos)
          << program.status().message();
    }
  }
}

}  // namespace
}  // namespace kiln::ops
