// The search algorithms of the model-based tuner (SA optimizer, ModelBasedTuner, GA), pinned
// to AutoTVM's definitions (reference/autotvm.md §6) with an analytic score function standing
// in for a trained model: the properties tested here hold for any model.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "tuner/ga_tuner.h"
#include "tuner/model_based_tuner.h"
#include "tuner/sa_optimizer.h"
#include "tuner/space_walk.h"

namespace kiln {
namespace {

// A space of 3 knobs: 1024 has 11 factors, 360 has 24, plus a 4-way option: 1056 configs.
ConfigSpace test_space() {
  ConfigSpace s;
  s.define_split("tile_x", 1024);
  s.define_split("tile_y", 360);
  s.define_knob("opt", {0, 1, 2, 3});
  return s;
}

// Scores a config by how close its knob digits are to a fixed optimum; counts predictions.
class AnalyticModel : public costmodel::TrainableModel {
 public:
  explicit AnalyticModel(const ConfigSpace& space) : space_(space) {}
  std::vector<float> predict(const std::vector<int64_t>& indices) override {
    std::vector<float> out;
    for (int64_t i : indices) {
      std::vector<int64_t> k = space_.point2knob(i);
      out.push_back(
          static_cast<float>(100 - std::abs(k[0] - 7) - std::abs(k[1] - 13) - std::abs(k[2] - 2)));
      ++predicted;
    }
    return out;
  }
  Status fit(const std::vector<int64_t>& indices, const std::vector<double>&, int) override {
    fitted_on.push_back(indices.size());
    return Status::Ok();
  }
  std::vector<size_t> fitted_on;
  int64_t predicted = 0;

 private:
  const ConfigSpace& space_;
};

TEST(SimulatedAnnealing, NeverProposesVisitedConfigsAndReturnsAtMostNumDistinct) {
  ConfigSpace space = test_space();
  AnalyticModel model(space);
  tuner::SimulatedAnnealingOptimizer sa(space, {}, /*seed=*/3);
  std::unordered_set<int64_t> visited;
  std::mt19937_64 rng(1);
  for (int64_t i : tuner::sample_ints(space, 400, rng)) visited.insert(i);
  for (int round = 0; round < 3; ++round) {
    std::vector<int64_t> plan = sa.find_maximums(model, 64, visited);
    EXPECT_LE(plan.size(), 64u);
    EXPECT_GT(plan.size(), 0u);
    std::set<int64_t> distinct(plan.begin(), plan.end());
    EXPECT_EQ(distinct.size(), plan.size());
    std::vector<float> scores = model.predict(plan);
    for (size_t i = 0; i < plan.size(); ++i) {
      EXPECT_FALSE(visited.count(plan[i])) << plan[i];
      EXPECT_TRUE(space.is_index_valid(plan[i]));
      if (i > 0) {
        EXPECT_GE(scores[i - 1], scores[i]);  // best first
      }
    }
    for (int64_t p : plan) visited.insert(p);
  }
}

TEST(SimulatedAnnealing, FindsTheOptimumOfASmoothModel) {
  ConfigSpace space = test_space();
  AnalyticModel model(space);
  tuner::SimulatedAnnealingOptimizer sa(space, {}, /*seed=*/5);
  std::vector<int64_t> plan = sa.find_maximums(model, 8, {});
  ASSERT_FALSE(plan.empty());
  EXPECT_EQ(space.point2knob(plan[0]), (std::vector<int64_t>{7, 13, 2}));
  EXPECT_LE(sa.last_iterations(), 500);
}

TEST(SimulatedAnnealing, DropsNegativeScoresAndHandlesTinySpaces) {
  ConfigSpace tiny;
  tiny.define_knob("opt", {0, 1, 2});
  class Negative : public costmodel::CostModel {
   public:
    std::vector<float> predict(const std::vector<int64_t>& i) override {
      std::vector<float> out;
      for (int64_t x : i) out.push_back(x == 1 ? 0.5f : -1.0f);
      return out;
    }
  } model;
  tuner::SimulatedAnnealingOptimizer sa(tiny, {}, 1);
  EXPECT_EQ(sa.find_maximums(model, 64, {}), std::vector<int64_t>{1});
  EXPECT_TRUE(sa.find_maximums(model, 64, {0, 1, 2}).empty());
}

TEST(SimulatedAnnealing, NanScoresNeitherCrashNorWin) {
  ConfigSpace space = test_space();
  class NanModel : public costmodel::CostModel {
   public:
    std::vector<float> predict(const std::vector<int64_t>& i) override {
      return std::vector<float>(i.size(), std::nanf(""));
    }
  } model;
  tuner::SimulatedAnnealingOptimizer sa(space, {}, 1);
  EXPECT_TRUE(sa.find_maximums(model, 16, {}).empty());
}

// Measures with the model's scores as throughputs; `sharpen` turns them into 2^(score - 80),
// so that differences of a few points matter (as real throughputs differ by factors).
std::vector<int64_t> run_trials(tuner::Tuner& tuner, AnalyticModel& model, int n_trials, int batch,
                                bool sharpen = false) {
  std::vector<int64_t> sequence;
  while (static_cast<int>(sequence.size()) < n_trials && tuner.has_next()) {
    std::vector<int64_t> b = tuner.next_batch(batch);
    if (b.empty()) break;
    std::vector<float> s = model.predict(b);
    std::vector<double> flops(s.begin(), s.end());
    if (sharpen) {
      for (double& f : flops) f = std::exp2(f - 80);
    }
    tuner.update(b, flops);
    sequence.insert(sequence.end(), b.begin(), b.end());
  }
  return sequence;
}

// The tuning loop's pipelining: the next batch is asked for before the pending one is reported
// whenever the tuner allows it. Returns the trial sequence; `ahead` counts early proposals.
std::vector<int64_t> run_trials_pipelined(tuner::Tuner& tuner, AnalyticModel& model, int n_trials,
                                          int batch, bool sharpen, int* ahead) {
  std::vector<int64_t> sequence;
  auto report = [&](const std::vector<int64_t>& b) {
    std::vector<float> s = model.predict(b);
    std::vector<double> flops(s.begin(), s.end());
    if (sharpen) {
      for (double& f : flops) f = std::exp2(f - 80);
    }
    tuner.update(b, flops);
  };
  std::vector<int64_t> b = tuner.next_batch(batch);
  while (!b.empty()) {
    sequence.insert(sequence.end(), b.begin(), b.end());
    bool early = tuner.can_propose_ahead(static_cast<int64_t>(b.size()));
    std::vector<int64_t> next;
    if (early && static_cast<int>(sequence.size()) < n_trials) {
      next = tuner.next_batch(batch);
      ++*ahead;
    }
    report(b);
    if (!early && static_cast<int>(sequence.size()) < n_trials) next = tuner.next_batch(batch);
    b = next;
  }
  return sequence;
}

TEST(ModelBasedTuner, ProposingAheadWhereAllowedChangesNothing) {
  ConfigSpace space = test_space();
  AnalyticModel m1(space), m2(space);
  tuner::ModelTunerOptions options;
  options.plan_size = 32;
  tuner::ModelBasedTuner a(space, m1, options, 9), b(space, m2, options, 9);
  int ahead = 0;
  std::vector<int64_t> pipelined = run_trials_pipelined(a, m1, 200, 6, false, &ahead);
  EXPECT_EQ(pipelined, run_trials(b, m2, 200, 6));
  EXPECT_GT(ahead, 20);  // most batches, all but those that complete a plan
  EXPECT_EQ(m1.fitted_on, m2.fitted_on);

  ConfigSpace big = test_space();
  big.define_split("tile_z", 720);
  AnalyticModel m3(big), m4(big);
  tuner::GaTuner ga1(big, {}, 5), ga2(big, {}, 5);
  ahead = 0;
  EXPECT_EQ(run_trials_pipelined(ga1, m3, 400, 6, true, &ahead), run_trials(ga2, m4, 400, 6, true));
  EXPECT_GT(ahead, 40);
}

TEST(ModelBasedTuner, FirstPlanIsRandomThenFollowsTheModelWithARandomShare) {
  ConfigSpace space = test_space();
  AnalyticModel model(space);
  tuner::ModelTunerOptions options;  // plan_size 64: 3 random picks at each plan's end
  tuner::ModelBasedTuner mbt(space, model, options, /*seed=*/11);
  // Until the first fit, picks are uniformly random: the same as a RandomTuner-style draw
  // from the same seed.
  std::vector<int64_t> first = mbt.next_batch(64);
  ASSERT_EQ(first.size(), 64u);
  EXPECT_EQ(model.predicted, 0);  // no model involved
  std::mt19937_64 rng(11);
  std::unordered_set<int64_t> seen;
  for (int64_t index : first) {
    EXPECT_EQ(index, tuner::random_index(space, rng, seen));
    seen.insert(index);
  }
  std::vector<float> s = model.predict(first);
  mbt.update(first, std::vector<double>(s.begin(), s.end()));
  ASSERT_EQ(model.fitted_on, std::vector<size_t>{64});
  // The next plan: 61 configs from SA (best first, so non-increasing model scores) and then
  // int(0.05 * 64) = 3 random ones.
  std::vector<int64_t> second = mbt.next_batch(64);
  ASSERT_EQ(second.size(), 64u);
  std::vector<float> scores = model.predict(second);
  for (size_t i = 1; i < 61; ++i) EXPECT_GE(scores[i - 1], scores[i]) << i;
  // The optimum, unless the random first plan already measured it.
  int64_t optimum = space.knob2point({7, 13, 2});
  bool optimum_seen = std::count(first.begin(), first.end(), optimum) > 0;
  EXPECT_EQ(scores[0], optimum_seen ? 99.0f : 100.0f);
  float worst_planned = scores[60];
  int below = 0;
  for (size_t i = 61; i < 64; ++i) below += scores[i] < worst_planned ? 1 : 0;
  EXPECT_GE(below, 2);  // random picks are (almost surely) worse than the plan
  std::set<int64_t> all(first.begin(), first.end());
  all.insert(second.begin(), second.end());
  EXPECT_EQ(all.size(), 128u);  // nothing proposed twice
}

TEST(ModelBasedTuner, SameSeedSameTrialSequence) {
  ConfigSpace space = test_space();
  AnalyticModel m1(space), m2(space), m3(space);
  tuner::ModelBasedTuner a(space, m1, {}, 7), b(space, m2, {}, 7), c(space, m3, {}, 8);
  std::vector<int64_t> sa = run_trials(a, m1, 300, 2);
  EXPECT_EQ(sa, run_trials(b, m2, 300, 2));
  EXPECT_NE(sa, run_trials(c, m3, 300, 2));
  EXPECT_EQ(m1.fitted_on, (std::vector<size_t>{64, 128, 192, 256}));
}

TEST(ModelBasedTuner, NoFitBeforeASuccessAndASpaceSmallerThanThePlan) {
  ConfigSpace tiny;
  tiny.define_knob("opt", {0, 1, 2, 3, 4});
  AnalyticModel model(tiny);
  tuner::ModelBasedTuner mbt(tiny, model, {}, 1);
  std::vector<int64_t> all = mbt.next_batch(64);
  EXPECT_EQ(all.size(), 5u);
  EXPECT_FALSE(mbt.has_next());
  mbt.update(all, std::vector<double>(5, 0.0));  // every config failed
  EXPECT_TRUE(model.fitted_on.empty());
  EXPECT_TRUE(mbt.next_batch(4).empty());
}

TEST(ModelBasedTuner, DiversityFilterPicksDistinctKnobValuesFirst) {
  // Candidates as knob vectors: the second repeats the first's values; the third is new.
  std::vector<std::vector<int64_t>> knobs = {{0, 0}, {0, 0}, {1, 1}, {0, 1}};
  EXPECT_EQ(tuner::diversity_pick(knobs, 2), (std::vector<size_t>{0, 2}));
  EXPECT_EQ(tuner::diversity_pick(knobs, 10).size(), 4u);
  ConfigSpace space = test_space();
  AnalyticModel model(space);
  tuner::ModelTunerOptions options;
  options.diversity_filter_ratio = 2;
  tuner::ModelBasedTuner mbt(space, model, options, 4);
  std::vector<int64_t> seq = run_trials(mbt, model, 192, 8);
  EXPECT_EQ(std::set<int64_t>(seq.begin(), seq.end()).size(), seq.size());
}

TEST(GaTuner, GenerationsAreBredFromMeasuredOnesWithoutRepeats) {
  // A knob the score ignores makes the space large enough that breeding, not exhaustion of the
  // good region, decides what later generations hold.
  ConfigSpace space = test_space();
  space.define_split("tile_z", 720);
  AnalyticModel model(space);
  tuner::GaTuner ga(space, {}, 5);
  std::vector<int64_t> seq = run_trials(ga, model, 600, 2, /*sharpen=*/true);
  EXPECT_EQ(seq.size(), 600u);
  EXPECT_EQ(std::set<int64_t>(seq.begin(), seq.end()).size(), seq.size());
  // Selection pressure: the later generations score better on average than the first.
  auto mean_score = [&](size_t from, size_t to) {
    std::vector<int64_t> part(seq.begin() + from, seq.begin() + to);
    std::vector<float> s = model.predict(part);
    double total = 0;
    for (float x : s) total += x;
    return total / s.size();
  };
  EXPECT_GT(mean_score(400, 500), mean_score(0, 100) + 3);
  tuner::GaTuner again(space, {}, 5);
  AnalyticModel m2(space);
  EXPECT_EQ(run_trials(again, m2, 600, 2, true), seq);
}

TEST(GaTuner, ExhaustsASmallSpaceExactlyOnce) {
  ConfigSpace space;
  space.define_split("tile_x", 64);  // 7 configs
  space.define_knob("opt", {0, 1, 2});
  tuner::GaTuner ga(space, {.pop_size = 8}, 2);
  std::vector<int64_t> seq;
  while (ga.has_next()) {
    std::vector<int64_t> b = ga.next_batch(3);
    if (b.empty()) break;
    ga.update(b, std::vector<double>(b.size(), 0.0));  // even with every trial failing
    seq.insert(seq.end(), b.begin(), b.end());
  }
  EXPECT_EQ(static_cast<int64_t>(seq.size()), space.size());
  EXPECT_EQ(std::set<int64_t>(seq.begin(), seq.end()).size(), seq.size());
}

}  // namespace
}  // namespace kiln
