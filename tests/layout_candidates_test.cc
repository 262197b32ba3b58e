// The layout planner's candidates (compiler/layout_candidates.h) from a real record store: the
// fastest record per pair of activation blocks, not only the best, and the fallback only where
// nothing is recorded.
#include "compiler/layout_candidates.h"

#include <gtest/gtest.h>

#include <map>
#include <utility>

#include "ops/registry.h"
#include "store/open_store.h"
#include "tests/temp_dir.h"

namespace kiln::compiler {
namespace {

const char* kTarget = "llvm -mcpu=x86-64";

Target cpu_target(const char* cpu) {
  Target t;
  t.triple = "x86_64-pc-linux-gnu";
  t.cpu = cpu;
  return t;
}

store::Record record(const ops::Template& tmpl, const ops::Workload& w, int64_t ic_bn,
                     int64_t oc_bn, int64_t reg_n, double seconds) {
  ConfigSpace space = tmpl.space(w);
  int64_t c = w.at("C"), k = w.at("K");
  Result<ConfigEntity> config =
      space.make_config({{"tile_ic", SplitEntity{{c / ic_bn, ic_bn}}},
                         {"tile_oc", SplitEntity{{k / oc_bn, oc_bn}}},
                         {"tile_ow", SplitEntity{{w.at("W") / reg_n, reg_n}}},
                         {"unroll_kw", OtherOptionEntity{false}}});
  EXPECT_TRUE(config.ok()) << config.status().message();
  store::Record r;
  r.target = kTarget;
  r.task_name = std::string(tmpl.name());
  r.workload = w.to_string();
  r.config_index = config->index();
  r.entities = config->to_json()["entity"];
  r.costs = {seconds};
  r.timestamp = 1700000000;
  r.flop = tmpl.flop(w);
  r.source = "test";
  return r;
}

TEST(LayoutCandidates, FastestRecordPerPairOfBlocksAndTheFallbackOnlyWithoutRecords) {
  testing::TempDir dir;
  auto db = store::open_store(dir.path() + "/c.db");
  ASSERT_TRUE(db.ok()) << db.status().message();
  const ops::Template& tmpl = *ops::templates_for_op("conv2d").front();
  ops::Workload w = *tmpl.normalize(
      *ops::Workload::parse("conv2d:N=1,C=32,H=14,W=14,K=64,R=3,S=3,stride=1,pad=1"));
  ops::TargetInfo info;

  // Nothing recorded: the fallback alone, its time unknown.
  Result<std::vector<ConvCandidate>> none =
      conv_candidates(w, db->get(), cpu_target("x86-64"), info);
  ASSERT_TRUE(none.ok()) << none.status().message();
  ASSERT_EQ(none->size(), 1u);
  EXPECT_TRUE((*none)[0].fallback);
  EXPECT_FALSE((*none)[0].measured);

  ASSERT_TRUE((*db)
                  ->append({record(tmpl, w, 16, 16, 7, 3e-4), record(tmpl, w, 16, 16, 14, 2e-4),
                            record(tmpl, w, 8, 16, 7, 2.5e-4), record(tmpl, w, 8, 32, 7, 9e-4),
                            record(tmpl, w, 8, 32, 2, 5e-4)})
                  .ok());
  Result<std::vector<ConvCandidate>> got =
      conv_candidates(w, db->get(), cpu_target("x86-64"), info);
  ASSERT_TRUE(got.ok()) << got.status().message();
  std::map<std::pair<int64_t, int64_t>, double> by_blocks;
  for (const ConvCandidate& c : *got) {
    EXPECT_FALSE(c.fallback);
    EXPECT_TRUE(c.measured);
    EXPECT_EQ(c.tmpl, &tmpl);
    EXPECT_EQ(tmpl.activation_blocks(c.workload, c.config), c.blocks);
    EXPECT_TRUE(by_blocks.emplace(std::make_pair(c.blocks.in, c.blocks.out), c.seconds).second)
        << "two candidates of blocks " << c.blocks.in << ", " << c.blocks.out;
  }
  std::map<std::pair<int64_t, int64_t>, double> want = {
      {{16, 16}, 2e-4}, {{8, 16}, 2.5e-4}, {{8, 32}, 5e-4}};
  EXPECT_EQ(by_blocks, want);

  // Another target's records are not this one's.
  Result<std::vector<ConvCandidate>> other =
      conv_candidates(w, db->get(), cpu_target("znver4"), info);
  ASSERT_TRUE(other.ok());
  ASSERT_EQ(other->size(), 1u);
  EXPECT_TRUE((*other)[0].fallback);

  // With --records-from any-cpu, another AVX-512 CPU's records serve, and say whose they are;
  // an AVX2-only CPU never gets them, nor do records whose CPU name tells no ISA (the baseline
  // x86-64 names none).
  store::RecordChoice any_cpu{store::RecordsFrom::kAnyCpu, std::nullopt};
  Result<std::vector<ConvCandidate>> unknown_isa =
      conv_candidates(w, db->get(), cpu_target("znver4"), info, any_cpu);
  ASSERT_TRUE(unknown_isa.ok());
  EXPECT_TRUE((*unknown_isa)[0].fallback);
  store::Record zen5 = record(tmpl, w, 16, 16, 7, 3e-4);
  zen5.target = "llvm -mcpu=znver5";
  ASSERT_TRUE((*db)->append({zen5}).ok());
  Result<std::vector<ConvCandidate>> shared =
      conv_candidates(w, db->get(), cpu_target("znver4"), info, any_cpu);
  ASSERT_TRUE(shared.ok());
  ASSERT_EQ(shared->size(), 1u);
  EXPECT_FALSE((*shared)[0].fallback);
  EXPECT_TRUE((*shared)[0].origin.other_target);
  EXPECT_EQ((*shared)[0].origin.target, "llvm -mcpu=znver5");
  Result<std::vector<ConvCandidate>> exact =
      conv_candidates(w, db->get(), cpu_target("znver4"), info);
  ASSERT_TRUE(exact.ok());
  EXPECT_TRUE((*exact)[0].fallback);
  Result<std::vector<ConvCandidate>> avx2 =
      conv_candidates(w, db->get(), cpu_target("znver3"), info, any_cpu);
  ASSERT_TRUE(avx2.ok());
  ASSERT_EQ(avx2->size(), 1u);
  EXPECT_TRUE((*avx2)[0].fallback);
}

}  // namespace
}  // namespace kiln::compiler
