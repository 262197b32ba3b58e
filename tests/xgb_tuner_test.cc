// The XGBoost tuner end to end on a real template: real feature extraction, real XGBoost fits,
// SA planning; throughputs come from a synthetic function of the config so that the test knows
// the optimum and runs in seconds.
#include "tuner/xgb_tuner.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "ops/registry.h"
#include "tuner/make_tuner.h"
#include "tuner/space_walk.h"

namespace kiln {
namespace {

struct DenseTask {
  const ops::Template* tmpl = ops::find_template("dense_pack.x86");
  ops::Workload workload;
  ConfigSpace space;
  explicit DenseTask(const char* text)
      : workload(*tmpl->normalize(*ops::Workload::parse(text))), space(tmpl->space(workload)) {}
};

// Wide inner x tiles and a moderate y tile are fast; in GFLOP/s.
double synthetic_flops(const ConfigEntity& c) {
  const auto& x = c.split("tile_x").size;
  const auto& y = c.split("tile_y").size;
  return 1e9 * (std::log2(static_cast<double>(x.back())) * 10 + 5 -
                std::abs(std::log2(static_cast<double>(y.back())) - 2));
}

std::vector<int64_t> run(tuner::Tuner& t, const ConfigSpace& space, int trials,
                         double* best = nullptr) {
  std::vector<int64_t> seq;
  while (static_cast<int>(seq.size()) < trials && t.has_next()) {
    std::vector<int64_t> b = t.next_batch(8);
    std::vector<double> flops;
    for (int64_t i : b) {
      flops.push_back(synthetic_flops(space.get(i)));
      if (best) *best = std::max(*best, flops.back());
    }
    t.update(b, flops);
    seq.insert(seq.end(), b.begin(), b.end());
  }
  return seq;
}

TEST(XgbTuner, LearnsASyntheticOptimumAndIsDeterministic) {
  DenseTask task("dense:M=64,N=256,K=64");
  auto make = [&](uint64_t seed) {
    return tuner::make_tuner("xgb", {*task.tmpl, task.workload, task.space, {}}, seed).value();
  };
  auto a = make(1), b = make(1);
  double best_model = 0;
  std::vector<int64_t> seq = run(*a, task.space, 192, &best_model);
  EXPECT_EQ(seq, run(*b, task.space, 192));
  EXPECT_EQ(std::set<int64_t>(seq.begin(), seq.end()).size(), seq.size());
  // After two fits the plan is much better than the random first plan.
  double first_plan = 0, third_plan = 0;
  for (int i = 0; i < 64; ++i) first_plan += synthetic_flops(task.space.get(seq[i]));
  for (int i = 128; i < 192; ++i) third_plan += synthetic_flops(task.space.get(seq[i]));
  EXPECT_GT(third_plan, first_plan * 1.3);
}

TEST(XgbTuner, EveryConfigFailingOrNanTimingsNeitherCrashNorStall) {
  DenseTask task("dense:M=32,N=64,K=32");
  for (double bad : {0.0, std::nan(""), HUGE_VAL}) {
    auto t = tuner::make_tuner("xgb", {*task.tmpl, task.workload, task.space, {}}, 3).value();
    std::set<int64_t> seen;
    for (int round = 0; round < 40 && t->has_next(); ++round) {
      std::vector<int64_t> b = t->next_batch(8);
      ASSERT_FALSE(b.empty());
      for (int64_t i : b) EXPECT_TRUE(seen.insert(i).second);
      t->update(b, std::vector<double>(b.size(), bad));
    }
    EXPECT_EQ(seen.size(), std::min<size_t>(320, task.space.size()));
  }
}

// A resumed task's records arrive in one update (tune_loop.h replays the store): one fit covers
// them, and the next comes a plan of new measurements later, as in a run that measured them all
// itself; not a refit after every batch until a per-call count catches up.
TEST(XgbTuner, ResumedRecordsInOneUpdateFitOnceThenEveryPlan) {
  DenseTask task("dense:M=64,N=256,K=64");
  auto made = tuner::make_tuner("xgb", {*task.tmpl, task.workload, task.space, {}}, 5).value();
  auto* t = dynamic_cast<tuner::XgbTuner*>(made.get());
  ASSERT_NE(t, nullptr);
  const int plan = t->plan_size();
  ASSERT_EQ(plan % 8, 0);  // run() measures batches of 8
  std::vector<int64_t> resumed;
  std::vector<double> flops;
  for (int64_t i = 0; i < 20 * plan; ++i) {
    resumed.push_back(i);
    flops.push_back(synthetic_flops(task.space.get(i)));
  }
  t->update(resumed, flops);
  EXPECT_EQ(t->times().fits, 1);
  run(*t, task.space, plan - 8);  // no fit before 21 plans
  EXPECT_EQ(t->times().fits, 1);
  run(*t, task.space, 8);
  EXPECT_EQ(t->times().fits, 2);
  run(*t, task.space, plan);
  EXPECT_EQ(t->times().fits, 3);
}

TEST(XgbTuner, TransferNeedsEnoughRecordsThenPlansTheFirstTrials) {
  DenseTask source("dense:M=64,N=512,K=64"), target("dense:M=64,N=256,K=64");
  std::vector<store::Record> records;
  std::mt19937_64 rng(9);
  for (int64_t i : tuner::sample_ints(source.space, 600, rng)) {
    ConfigEntity c = source.space.get(i);
    store::Record r;
    r.task_name = "dense_pack.x86";
    r.workload = source.workload.to_string();
    r.entities = c.to_json()["entity"];
    r.flop = 2.0 * 64 * 512 * 64;
    r.costs = {r.flop / synthetic_flops(c)};
    records.push_back(r);
  }
  tuner::XgbTuner few(*target.tmpl, target.workload, target.space, {},
                      costmodel::FeatureType::kItervar, costmodel::LossType::kRank, 5);
  auto none = few.transfer_from(std::vector<store::Record>(records.begin(), records.begin() + 100));
  ASSERT_TRUE(none.ok()) << none.status().message();
  EXPECT_FALSE(none->used);
  EXPECT_EQ(none->usable, 100);

  tuner::XgbTuner warm(*target.tmpl, target.workload, target.space, {},
                       costmodel::FeatureType::kItervar, costmodel::LossType::kRank, 5);
  auto used = warm.transfer_from(records);
  ASSERT_TRUE(used.ok()) << used.status().message();
  EXPECT_TRUE(used->used);
  EXPECT_TRUE(warm.model().has_base_model());
  // The first plan comes from the base model: far better than the cold tuner's random start.
  double cold = 0, transferred = 0;
  for (int64_t i : few.next_batch(32)) cold += synthetic_flops(target.space.get(i));
  for (int64_t i : warm.next_batch(32)) transferred += synthetic_flops(target.space.get(i));
  EXPECT_GT(transferred, cold * 1.3);
}

}  // namespace
}  // namespace kiln
