// The NCHWc convolutions' packed-output path (ops/conv_common.h compute()): the accumulators of a
// tile are stored straight into the NCHW{oc_bn}c output, with no row buffer. A tile that overhangs
// the output (tile_ow[-1] not dividing the output width, tile_oh not dividing its height) must
// store only the elements inside it. For explicit configs with such tails, channel counts that are
// not multiples of the vector width, stride 2 and padding, the measured program built as LLVM
// code writes every output element with the reference's value and nothing past the output (a
// guard region after it keeps its sentinel), and holds no row buffer.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "builder/build.h"
#include "builder/target.h"
#include "ops/measured_layout.h"
#include "ops/registry.h"
#include "runtime/artifact.h"
#include "runtime/thread_pool.h"
#include "tests/ops_test_util.h"

namespace kiln::ops {
namespace {

constexpr float kSentinel = 12345.0f;
constexpr int64_t kGuardFloats = 256;  // more than one tile row of the widest config below

struct PackedCase {
  std::string template_name;
  std::string workload;
  std::vector<std::pair<std::string, Entity>> config;
};
void PrintTo(const PackedCase& c, std::ostream* os) { *os << c.template_name << " " << c.workload; }

// True when any statement of `stage` allocates a buffer named `name`.
bool allocates(const ir::Stmt& stage, const std::string& name) {
  bool found = false;
  walk(stage, [&](const ir::Stmt& s) {
    if (s->kind == ir::StmtKind::kAllocate && s->buffer->name == name) found = true;
  });
  return found;
}

class ConvPackedStore : public ::testing::TestWithParam<PackedCase> {};

TEST_P(ConvPackedStore, TailTilesStoreOnlyInsideTheOutput) {
  const PackedCase& c = GetParam();
  const Template* t = find_template(c.template_name);
  ASSERT_NE(t, nullptr) << c.template_name;
  Workload w = normalized(*t, c.workload);
  Result<ConfigEntity> config = t->space(w).make_config(c.config);
  ASSERT_TRUE(config.ok()) << config.status().message();
  Target target = builder::host_target();
  Result<ir::Program> program = instantiate_measured(*t, w, *config, {target.simd_lanes()});
  ASSERT_TRUE(program.ok()) << program.status().message();

  // The timed stage keeps no row buffer, local or workspace.
  for (const ir::Stage& stage : program->stages) {
    EXPECT_FALSE(allocates(stage.body, "row")) << stage.name;
  }
  for (const ir::Buffer& b : program->buffers) EXPECT_NE(b->name, "conv_rows");

  // Inputs in the user's layout, converted to the arguments'; every other buffer starts as NaN,
  // and the output is followed by a guard region of sentinels.
  std::vector<TensorSpec> inputs = t->inputs(w), outputs = t->outputs(w);
  ASSERT_EQ(program->num_inputs, static_cast<int>(inputs.size()));
  ASSERT_EQ(program->num_outputs, 1);
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<std::vector<float>> user_inputs;
  std::vector<std::vector<float>> bufs;
  for (const ir::Buffer& b : program->buffers) {
    bufs.emplace_back(b->num_elements(), std::numeric_limits<float>::quiet_NaN());
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    std::vector<float> v(inputs[i].num_elements());
    for (float& x : v) x = dist(rng);
    Result<std::vector<float>> arg =
        to_argument_layout(v, inputs[i].shape, program->buffers[i]->shape);
    ASSERT_TRUE(arg.ok()) << arg.status().message();
    bufs[i] = *arg;
    user_inputs.push_back(std::move(v));
  }
  const size_t out = inputs.size();
  const size_t out_elements = bufs[out].size();
  bufs[out].resize(out_elements + kGuardFloats, kSentinel);

  std::vector<float> expected(outputs[0].num_elements());
  std::vector<const float*> in_ptrs;
  for (const auto& v : user_inputs) in_ptrs.push_back(v.data());
  t->reference(w, in_ptrs, {expected.data()});

  auto built = builder::build_program(*program, target);
  ASSERT_TRUE(built.ok()) << built.status().message();
  auto artifact = Artifact::load_from_bytes(built->shared_object, program->name);
  ASSERT_TRUE(artifact.ok()) << artifact.status().message();
  ThreadPool pool(2);
  std::vector<float*> ptrs;
  for (auto& b : bufs) ptrs.push_back(b.data());
  for (const ir::Stage& st : program->stages) {
    auto fn = (*artifact)->stage(st.name);
    ASSERT_TRUE(fn.ok()) << st.name;
    (*fn)(ptrs.data(), pool.api());
  }

  for (int64_t i = 0; i < kGuardFloats; ++i) {
    ASSERT_EQ(bufs[out][out_elements + i], kSentinel) << "written past the output at +" << i;
  }
  Result<std::vector<float>> got =
      from_argument_layout(bufs[out].data(), program->buffers[out]->shape, outputs[0].shape);
  ASSERT_TRUE(got.ok()) << got.status().message();
  for (size_t i = 0; i < expected.size(); ++i) {
    ASSERT_FALSE(std::isnan((*got)[i])) << "output element " << i << " never written";
    ASSERT_NEAR((*got)[i], expected[i], 1e-4 * (1 + std::abs(expected[i]))) << "element " << i;
  }
}

SplitEntity split(int64_t inner) { return SplitEntity{{-1, inner}}; }

INSTANTIATE_TEST_SUITE_P(
    ConvPackedStore, ConvPackedStore,
    ::testing::Values(
        // 1x1, stride 2: output 5x6; tile_ow 4 overhangs the width, tile_oh 2 the height.
        PackedCase{"conv2d_NCHWc.x86",
                   "conv2d:N=2,C=12,H=9,W=11,K=24,R=1,S=1,stride=2",
                   {{"tile_ic", split(4)},
                    {"tile_oc", split(24)},
                    {"tile_ow", split(4)},
                    {"tile_oh", OtherOptionEntity{2}}}},
        // 1x1, output 7x7: tile_ow 4 and tile_oh 2 both overhang; 8 lanes per block.
        PackedCase{"conv2d_NCHWc.x86",
                   "conv2d:N=1,C=6,H=7,W=7,K=40,R=1,S=1",
                   {{"tile_ic", split(3)},
                    {"tile_oc", split(8)},
                    {"tile_ow", split(4)},
                    {"tile_oh", OtherOptionEntity{2}}}},
        // 3x3, stride 2, padding 1: output 4x5, tile_ow 4 overhangs; a block of 20 lanes.
        PackedCase{"conv2d_NCHWc.x86",
                   "conv2d:N=1,C=6,H=7,W=10,K=20,R=3,S=3,stride=2,pad=1",
                   {{"tile_ic", split(3)},
                    {"tile_oc", split(20)},
                    {"tile_ow", split(4)},
                    {"unroll_kw", OtherOptionEntity{true}}}},
        // Depthwise, stride 2, padding 1: output 5x7 (tile_ow divides it: policy "factors").
        PackedCase{"depthwise_conv2d_NCHWc.x86",
                   "depthwise_conv2d:N=1,C=24,H=9,W=13,R=3,S=3,stride=2,pad=1",
                   {{"tile_ic", split(12)},
                    {"tile_oc", split(24)},
                    {"tile_ow", split(7)},
                    {"unroll_kw", OtherOptionEntity{false}}}}));

}  // namespace
}  // namespace kiln::ops
