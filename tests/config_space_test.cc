// Tests of ops/config_space: AutoTVM's config-space semantics (reference/autotvm.md §1, §3, §10).
// Expected values marked "CPython" or "TVM" were produced by running the Python originals
// (CPython 3.11 sets; a port of TVM v0.16 SplitSpace/ReorderSpace) and are pinned here.
#include "ops/config_space.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <string>
#include <unordered_set>
#include <vector>

#include "tuner/space_walk.h"

namespace kiln {
namespace {

using Sizes = std::vector<std::vector<int64_t>>;

Sizes SplitSizes(const ConfigSpace& space, const std::string& knob) {
  Sizes out;
  for (const Entity& e : space.find_knob(knob)->entities)
    out.push_back(std::get<SplitEntity>(e).size);
  return out;
}

std::vector<std::vector<std::string>> Anns(const ConfigSpace& space, const std::string& knob) {
  std::vector<std::vector<std::string>> out;
  for (const Entity& e : space.find_knob(knob)->entities) {
    out.push_back(std::get<AnnotateEntity>(e).anns);
  }
  return out;
}

std::vector<std::vector<int>> Perms(const ConfigSpace& space, const std::string& knob) {
  std::vector<std::vector<int>> out;
  for (const Entity& e : space.find_knob(knob)->entities) {
    out.push_back(std::get<ReorderEntity>(e).perm);
  }
  return out;
}

// conv2d_NCHWc.x86 for data (1,3,224,224), kernel (64,3,7,7), stride 2, pad 3 (autotvm.md §3).
ConfigSpace Conv2dSpace() {
  ConfigSpace s;
  s.define_split("tile_ic", 3);
  s.define_split("tile_oc", 64);
  s.define_split("tile_ow", 112, {.policy = "verbose", .filter = [](const SplitEntity& e) {
                                    return e.size.back() <= 64;
                                  }});
  s.define_knob("unroll_kw", {true, false});
  return s;
}

// dense_nopack.x86 for (1,512) x (1000,512).
ConfigSpace DenseSpace() {
  ConfigSpace s;
  s.define_split("tile_y", 1);
  s.define_split("tile_x", 1000);
  s.define_split("tile_k", 512);
  return s;
}

// Two candidate splits and a cross-knob filter, as in TVM's multi_filter docstring, plus a knob.
ConfigSpace FilteredSpace() {
  ConfigSpace s;
  const Sizes cands = {{16, 64}, {32, 32}, {64, 16}, {8, 128}};
  s.define_split("tile_x", 1024, {.policy = "candidate", .candidate = cands});
  s.define_split("tile_y", 1024, {.policy = "candidate", .candidate = cands});
  s.define_knob("k", {0, 1, 2});
  s.multi_filter([](const ConfigEntity& e) {
    return e.split("tile_x").size[0] + e.split("tile_y").size[0] <= 48;
  });
  return s;
}

// ---------------------------------------------------------------------------------------------
// Index mapping.

TEST(ConfigSpaceTest, FirstKnobIsLeastSignificantDigit) {
  ConfigSpace s;
  s.define_knob("a", {10, 11, 12});
  s.define_knob("b", {"x", "y"});
  EXPECT_EQ(s.dims(), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(s.range_length(), 6);
  EXPECT_EQ(s.size(), 6);
  EXPECT_EQ(s.get(1).other("a").val, 11);
  EXPECT_EQ(s.get(1).other("b").val, "x");
  EXPECT_EQ(s.get(3).other("a").val, 10);
  EXPECT_EQ(s.get(3).other("b").val, "y");
  EXPECT_EQ(s.point2knob(5), (std::vector<int64_t>{2, 1}));
  for (int64_t i = 0; i < s.range_length(); ++i) {
    EXPECT_EQ(s.knob2point(s.point2knob(i)), i);
    EXPECT_EQ(s.get(i).index(), i);
  }
}

TEST(ConfigSpaceTest, EmptySpaceHasOnePoint) {
  ConfigSpace s;
  EXPECT_EQ(s.range_length(), 1);
  EXPECT_EQ(s.size(), 1);
  EXPECT_TRUE(s.get(0).entities().empty());
}

// ---------------------------------------------------------------------------------------------
// Split enumeration.

TEST(ConfigSpaceSplitTest, ThreeWayDfsOrder) {
  ConfigSpace s;
  s.define_split("t", 8, {.num_outputs = 3});
  EXPECT_EQ(SplitSizes(s, "t"), (Sizes{{-1, 1, 1},
                                       {-1, 2, 1},
                                       {-1, 4, 1},
                                       {-1, 8, 1},
                                       {-1, 1, 2},
                                       {-1, 2, 2},
                                       {-1, 4, 2},
                                       {-1, 1, 4},
                                       {-1, 2, 4},
                                       {-1, 1, 8}}));
  EXPECT_EQ(s.find_knob("t")->product, 8);
  EXPECT_EQ(s.find_knob("t")->tag, "sp");
}

TEST(ConfigSpaceSplitTest, FactorCounts) {
  ConfigSpace s;
  s.define_split("a", 1000);
  s.define_split("b", 512);
  s.define_split("c", 512, {.num_outputs = 3});
  s.define_split("d", 1000, {.num_outputs = 3});
  EXPECT_EQ(s.dims(), (std::vector<int64_t>{16, 10, 55, 100}));
  EXPECT_EQ(SplitSizes(s, "b").back(), (std::vector<int64_t>{-1, 512}));
}

TEST(ConfigSpaceSplitTest, TailsAndNoTail) {
  ConfigSpace s;
  s.define_split("p2", 12, {.policy = "power2"});  // tails allowed by default
  s.define_split("p2_exact", 12, {.policy = "power2", .no_tail = true});
  s.define_split("f_tails", 12, {.num_outputs = 3, .no_tail = false});
  s.define_split("v3", 12, {.policy = "verbose", .num_outputs = 3});
  s.define_split("v_max", 20, {.policy = "verbose", .max_factor = 8});
  EXPECT_EQ(SplitSizes(s, "p2"), (Sizes{{-1, 1}, {-1, 2}, {-1, 4}, {-1, 8}}));
  EXPECT_EQ(SplitSizes(s, "p2_exact"), (Sizes{{-1, 1}, {-1, 2}, {-1, 4}}));
  // TVM: products 8 (= 4*2 / 2*4) etc. are kept as tails; prod > 12 is never kept.
  EXPECT_EQ(SplitSizes(s, "f_tails"),
            (Sizes{{-1, 1, 1}, {-1, 2, 1}, {-1, 3, 1}, {-1, 4, 1}, {-1, 6, 1}, {-1, 12, 1},
                   {-1, 1, 2}, {-1, 2, 2}, {-1, 3, 2}, {-1, 4, 2}, {-1, 6, 2}, {-1, 1, 3},
                   {-1, 2, 3}, {-1, 3, 3}, {-1, 4, 3}, {-1, 1, 4}, {-1, 2, 4}, {-1, 3, 4},
                   {-1, 1, 6}, {-1, 2, 6}, {-1, 1, 12}}));
  EXPECT_EQ(SplitSizes(s, "v3"),
            (Sizes{{-1, 1, 1},  {-1, 2, 1}, {-1, 3, 1}, {-1, 4, 1}, {-1, 6, 1}, {-1, 8, 1},
                   {-1, 12, 1}, {-1, 1, 2}, {-1, 2, 2}, {-1, 3, 2}, {-1, 4, 2}, {-1, 6, 2},
                   {-1, 1, 3},  {-1, 2, 3}, {-1, 3, 3}, {-1, 4, 3}, {-1, 1, 4}, {-1, 2, 4},
                   {-1, 3, 4},  {-1, 1, 6}, {-1, 2, 6}, {-1, 1, 8}, {-1, 1, 12}}));
  EXPECT_EQ(SplitSizes(s, "v_max"), (Sizes{{-1, 1}, {-1, 2}, {-1, 4}, {-1, 5}, {-1, 8}}));
}

TEST(ConfigSpaceSplitTest, MoreCountsFromTvm) {
  ConfigSpace s;
  s.define_split("v", 112, {.policy = "verbose", .num_outputs = 3});
  s.define_split("p", 1000, {.policy = "power2", .num_outputs = 4});
  EXPECT_EQ(s.dims(), (std::vector<int64_t>{61, 220}));
}

TEST(ConfigSpaceSplitTest, FilterRunsAfterEnumerationAndCandidates) {
  ConfigSpace s;
  s.define_split("f", 64, {.max_factor = 8});
  s.define_split("g", 64, {.filter = [](const SplitEntity& e) { return e.size[1] % 2 == 0; }});
  s.define_split("c", 100,
                 {.policy = "candidate",
                  .num_outputs = 3,
                  .filter = [](const SplitEntity& e) { return e.size[0] != 1; },
                  .candidate = {{1, 10, 10}, {5, 4, 5}, {-1, 2, 50}}});
  EXPECT_EQ(SplitSizes(s, "f"), (Sizes{{-1, 1}, {-1, 2}, {-1, 4}, {-1, 8}}));
  EXPECT_EQ(SplitSizes(s, "g"), (Sizes{{-1, 2}, {-1, 4}, {-1, 8}, {-1, 16}, {-1, 32}, {-1, 64}}));
  EXPECT_EQ(SplitSizes(s, "c"), (Sizes{{5, 4, 5}, {-1, 2, 50}}));
}

TEST(ConfigSpaceSplitTest, FilterMayEmptyTheSpace) {
  ConfigSpace s;
  s.define_split("t", 16, {.filter = [](const SplitEntity&) { return false; }});
  s.define_knob("k", {1, 2});
  EXPECT_EQ(s.range_length(), 0);
  EXPECT_EQ(s.size(), 0);
  std::mt19937_64 rng(1);
  EXPECT_EQ(tuner::random_index(s, rng), -1);
  EXPECT_TRUE(tuner::sample_ints(s, 5, rng).empty());
  EXPECT_FALSE(s.checked_get(0).ok());
  EXPECT_FALSE(s.make_config({}).ok());
}

// ---------------------------------------------------------------------------------------------
// Factor lists.

TEST(ConfigSpaceFactorsTest, VerboseFollowsCPythonSetOrder) {
  // All values below were produced by CPython 3.11: list(set(get_factors(n)) | set(get_pow2s(n))).
  EXPECT_EQ(split_factors(112, "verbose"),
            (std::vector<int64_t>{32, 1, 2, 64, 4, 7, 8, 14, 16, 112, 56, 28}));
  EXPECT_EQ(split_factors(224, "verbose"),
            (std::vector<int64_t>{64, 1, 2, 128, 4, 7, 8, 14, 16, 28, 32, 224, 112, 56}));
  EXPECT_EQ(split_factors(7, "verbose"), (std::vector<int64_t>{1, 2, 4, 7}));
  EXPECT_EQ(split_factors(48, "verbose"),
            (std::vector<int64_t>{32, 1, 2, 3, 4, 6, 8, 12, 16, 48, 24}));
  EXPECT_EQ(split_factors(100, "verbose"),
            (std::vector<int64_t>{32, 1, 2, 64, 4, 5, 100, 8, 10, 16, 50, 20, 25}));
  EXPECT_EQ(split_factors(1000, "verbose"),
            (std::vector<int64_t>{64, 1,  2,  128, 4,   5,  256,  512, 8,   200, 10,
                                  16, 20, 25, 32,  100, 40, 1000, 50,  500, 250, 125}));
  EXPECT_EQ(split_factors(4096, "verbose"),
            (std::vector<int64_t>{64, 1, 2, 128, 4, 256, 512, 1024, 8, 2048, 4096, 16, 32}));
  EXPECT_EQ(
      split_factors(3000, "verbose"),
      (std::vector<int64_t>{128, 1,   2,   3,    4,   5,    6,    256, 8,   512, 10,   12, 15, 16,
                            20,  150, 24,  25,   30,  32,   1024, 40,  300, 50,  3000, 60, 64, 2048,
                            200, 75,  600, 1500, 100, 1000, 750,  500, 375, 120, 250,  125}));
  // Large tables exercise resizes past the small table (720720 has 240 divisors).
  const auto v = split_factors(720720, "verbose");
  ASSERT_EQ(v.size(), 240u + 15u);  // 240 divisors and 2^5 .. 2^19, which do not divide it
  EXPECT_EQ(std::vector<int64_t>(v.begin(), v.begin() + 8),
            (std::vector<int64_t>{512, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(std::vector<int64_t>(v.end() - 6, v.end()),
            (std::vector<int64_t>{65520, 45045, 504, 16380, 8190, 4095}));
}

TEST(ConfigSpaceFactorsTest, FactorsAndPow2s) {
  EXPECT_EQ(get_factors(1), (std::vector<int64_t>{1}));
  EXPECT_EQ(get_factors(36), (std::vector<int64_t>{1, 2, 3, 4, 6, 9, 12, 18, 36}));
  EXPECT_EQ(get_factors(97), (std::vector<int64_t>{1, 97}));
  EXPECT_EQ(get_pow2s(1), (std::vector<int64_t>{1}));
  EXPECT_EQ(get_pow2s(12), (std::vector<int64_t>{1, 2, 4, 8}));
  EXPECT_EQ(get_pow2s(16), (std::vector<int64_t>{1, 2, 4, 8, 16}));
  // Python's math.log2(2**53 - 1) rounds to 53.0, so 2**53 is included.
  EXPECT_EQ(get_pow2s((int64_t{1} << 53) - 1).back(), int64_t{1} << 53);
  EXPECT_EQ(split_factors(12, "factors"), get_factors(12));
  EXPECT_EQ(split_factors(12, "power2"), get_pow2s(12));
}

TEST(ConfigSpaceFactorsTest, FallbackSplit) {
  EXPECT_EQ(fallback_split(128, {-1, 8, 4}).size, (std::vector<int64_t>{4, 8, 4}));
  EXPECT_EQ(fallback_split(49, {-1, 8, 4}).size, (std::vector<int64_t>{7, 7, 1}));
  EXPECT_EQ(fallback_split(1000, {-1, 16}).size, (std::vector<int64_t>{100, 10}));
  EXPECT_EQ(fallback_split(112, {-1, 31}).size, (std::vector<int64_t>{4, 28}));
  // An explicit outer constraint need not cover the whole length (as in TVM).
  EXPECT_EQ(fallback_split(128, {2, 2, 2}).size, (std::vector<int64_t>{2, 2, 2}));
}

// ---------------------------------------------------------------------------------------------
// The pinned TVM examples.

TEST(ConfigSpaceTest, Conv2dExampleFromTvmLog) {
  const ConfigSpace s = Conv2dSpace();
  EXPECT_EQ(s.dims(), (std::vector<int64_t>{2, 7, 11, 2}));
  EXPECT_EQ(s.size(), 308);

  const ConfigEntity c172 = s.get(172);
  EXPECT_EQ(s.point2knob(172), (std::vector<int64_t>{0, 2, 1, 1}));
  EXPECT_EQ(c172.split("tile_ic").size, (std::vector<int64_t>{-1, 1}));
  EXPECT_EQ(c172.split("tile_oc").size, (std::vector<int64_t>{-1, 4}));
  EXPECT_EQ(c172.split("tile_ow").size, (std::vector<int64_t>{-1, 1}));
  EXPECT_EQ(c172.other("unroll_kw").val, false);
  EXPECT_EQ(c172.to_json().dump(),
            R"({"index":172,"code_hash":null,"entity":[["tile_ic","sp",[-1,1]],)"
            R"(["tile_oc","sp",[-1,4]],["tile_ow","sp",[-1,1]],["unroll_kw","ot",false]]})");
  EXPECT_EQ(c172.entity_string(),
            "[('tile_ic', [-1, 1]), ('tile_oc', [-1, 4]), ('tile_ow', [-1, 1]), "
            "('unroll_kw', False)]");

  const ConfigEntity c47 = s.get(47);
  EXPECT_EQ(s.point2knob(47), (std::vector<int64_t>{1, 2, 3, 0}));
  EXPECT_EQ(c47.split("tile_ic").size, (std::vector<int64_t>{-1, 3}));
  EXPECT_EQ(c47.split("tile_oc").size, (std::vector<int64_t>{-1, 4}));
  EXPECT_EQ(c47.split("tile_ow").size, (std::vector<int64_t>{-1, 64}));
  EXPECT_EQ(c47.other("unroll_kw").val, true);
}

TEST(ConfigSpaceTest, DenseExample) {
  const ConfigSpace s = DenseSpace();
  EXPECT_EQ(s.size(), 160);
  const ConfigEntity c = s.get(68);
  EXPECT_EQ(c.split("tile_y").size, (std::vector<int64_t>{-1, 1}));
  EXPECT_EQ(c.split("tile_x").size, (std::vector<int64_t>{-1, 8}));
  EXPECT_EQ(c.split("tile_k").size, (std::vector<int64_t>{-1, 16}));
}

TEST(ConfigSpaceTest, JsonRoundTripFromTvmLogLine) {
  const ConfigSpace s = Conv2dSpace();
  const auto line = nlohmann::json::parse(
      R"({"index": 47, "code_hash": null, "entity": [["tile_ic", "sp", [-1, 3]],
          ["tile_oc", "sp", [-1, 4]], ["tile_ow", "sp", [-1, 64]], ["unroll_kw", "ot", true]]})");
  Result<ConfigEntity> c = s.from_json_entities(line["entity"]);
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->index(), 47);
  EXPECT_EQ(*c, s.get(47));
  EXPECT_EQ(nlohmann::json(c->to_json()), line);
  // Every config survives to_json -> from_json_entities.
  for (int64_t i = 0; i < s.range_length(); ++i) {
    Result<ConfigEntity> r = s.from_json_entities(s.get(i).to_json()["entity"]);
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_EQ(r->index(), i);
  }
  // Order of entries does not matter; the knobs do.
  nlohmann::json shuffled = line["entity"];
  std::swap(shuffled[0], shuffled[3]);
  c = s.from_json_entities(shuffled);
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->index(), 47);
}

// ---------------------------------------------------------------------------------------------
// Annotate and reorder.

TEST(ConfigSpaceAnnotateTest, Policies) {
  ConfigSpace s;
  s.define_annotate("u", {4, 8}, "try_unroll");
  s.define_annotate("uv", {4, 8}, "try_unroll_vec");
  s.define_annotate("v3", {2, 4, 8}, "try_vec");
  s.define_annotate("vec2", {4, 8}, "vec");
  s.define_annotate("unroll", {4, 8}, "unroll");
  s.define_annotate("gpu", {2, 3, 4, 5, 6}, "bind_gpu");
  using A = std::vector<std::vector<std::string>>;
  EXPECT_EQ(Anns(s, "u"),
            (A{{"none", "none"}, {"none", "unroll"}, {"unroll", "none"}, {"unroll", "unroll"}}));
  // First axis slowest; at most one "vec".
  EXPECT_EQ(Anns(s, "uv"), (A{{"none", "none"},
                              {"none", "unroll"},
                              {"none", "vec"},
                              {"unroll", "none"},
                              {"unroll", "unroll"},
                              {"unroll", "vec"},
                              {"vec", "none"},
                              {"vec", "unroll"}}));
  EXPECT_EQ(Anns(s, "v3"), (A{{"none", "none", "none"},
                              {"none", "none", "vec"},
                              {"none", "vec", "none"},
                              {"vec", "none", "none"}}));
  EXPECT_TRUE(Anns(s, "vec2").empty());  // two axes, both "vec": rejected
  EXPECT_EQ(Anns(s, "unroll"), (A{{"unroll", "unroll"}}));
  EXPECT_EQ(Anns(s, "gpu"),
            (A{{"fuse", "blockIdx.y", "blockIdx.x", "threadIdx.y", "threadIdx.x"}}));
  EXPECT_EQ(s.find_knob("uv")->tag, "an");
}

TEST(ConfigSpaceReorderTest, Policies) {
  ConfigSpace s;
  s.define_reorder("id", 3, "identity");
  s.define_reorder("all", 3, "all");
  s.define_reorder("iv", 4, "interval_all", {.interval = {1, 3}});
  s.define_reorder("cand", 3, "candidate", {.candidate = {{2, 1, 0}, {0, 2, 1}}});
  s.define_reorder("il", 8, "interleave", {.spatial = {{0, 1, 2}, {3, 4, 5}}, .reduce = {{6, 7}}});
  s.define_reorder("ilc", 8, "interleave_cuda",
                   {.spatial = {{0, 1, 2}, {3, 4, 5}}, .reduce = {{6, 7}}});
  s.define_reorder("il2", 9, "interleave",
                   {.spatial = {{0, 1}, {2, 3, 4, 5}}, .reduce = {{6}, {7, 8}}});
  using P = std::vector<std::vector<int>>;
  EXPECT_EQ(Perms(s, "id"), (P{{0, 1, 2}}));
  EXPECT_EQ(Perms(s, "all"), (P{{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}}));
  EXPECT_EQ(Perms(s, "iv"), (P{{0, 1, 2, 3}, {0, 2, 1, 3}}));
  EXPECT_EQ(Perms(s, "cand"), (P{{2, 1, 0}, {0, 2, 1}}));
  // TVM (its _merge_dfs follows numpy.argmax, so each merge yields one order).
  EXPECT_EQ(Perms(s, "il"), (P{{0, 3, 1, 4, 6, 2, 5, 7}}));
  EXPECT_EQ(Perms(s, "ilc"), (P{{0, 3, 1, 4, 6, 7, 2, 5}}));
  EXPECT_EQ(Perms(s, "il2"), (P{{2, 3, 0, 4, 7, 1, 5, 6, 8}}));
  EXPECT_EQ(s.get(5).reorder("all").perm, (std::vector<int>{2, 1, 0}));
  EXPECT_EQ(s.get(5).to_json()["entity"][1].dump(), R"(["all","re",[2,1,0]])");
}

TEST(ConfigEntityTest, ReprOfEveryKind) {
  ConfigSpace s;
  s.define_reorder("r", 2, "all");
  s.define_annotate("a", {4, 4}, "try_vec");
  s.define_knob("o", {"auto", 512, nullptr});
  const ConfigEntity c = s.get(1 + 2 * 1 + 2 * 3 * 1);
  EXPECT_EQ(c.entity_string(), "[('r', [1, 0]), ('a', ['none', 'vec']), ('o', 512)]");
  EXPECT_EQ(s.get(0).entity_string(), "[('r', [0, 1]), ('a', ['none', 'none']), ('o', auto)]");
  EXPECT_EQ(s.get(12).entity_string(), "[('r', [0, 1]), ('a', ['none', 'none']), ('o', None)]");
  EXPECT_NE(c.find("a"), nullptr);
  EXPECT_EQ(c.find("zz"), nullptr);
  EXPECT_EQ(s.debug_string(),
            "ConfigSpace (len=18, range_length=18, space_map=\n"
            "   0 r: Reorder(policy=all) len=2\n"
            "   1 a: Annotate(policy=try_vec) len=3\n"
            "   2 o: OtherOption([auto, 512, None]) len=3\n"
            ")");
}

// ---------------------------------------------------------------------------------------------
// Errors.

TEST(ConfigSpaceTest, CheckedGetRejectsOutOfRange) {
  const ConfigSpace s = Conv2dSpace();
  EXPECT_TRUE(s.checked_get(307).ok());
  for (int64_t bad : {int64_t{-1}, int64_t{308}, int64_t{1} << 40}) {
    Result<ConfigEntity> r = s.checked_get(bad);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find(std::to_string(bad)), std::string::npos);
    EXPECT_NE(r.status().message().find("308"), std::string::npos);
  }
  EXPECT_FALSE(s.is_index_valid(-1));
  EXPECT_FALSE(s.is_index_valid(308));
}

TEST(ConfigSpaceTest, FromJsonRejectsEntitiesNotInTheSpace) {
  const ConfigSpace s = Conv2dSpace();
  const nlohmann::json good = nlohmann::json::parse(
      R"([["tile_ic", "sp", [-1, 1]], ["tile_oc", "sp", [-1, 4]], ["tile_ow", "sp", [-1, 1]],
          ["unroll_kw", "ot", false]])");
  ASSERT_TRUE(s.from_json_entities(good).ok());
  auto expect_error = [&](nlohmann::json list, std::vector<std::string> words) {
    Result<ConfigEntity> r = s.from_json_entities(list);
    ASSERT_FALSE(r.ok()) << list.dump();
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    for (const auto& w : words) {
      EXPECT_NE(r.status().message().find(w), std::string::npos)
          << "'" << w << "' not in: " << r.status().message();
    }
  };
  nlohmann::json j = good;
  j[2][0] = "tile_oh";
  expect_error(j, {"tile_oh", "tile_ow"});  // unknown knob; the message lists the real ones
  j = good;
  j[3][1] = "sp";
  expect_error(j, {"unroll_kw", "'sp'", "'ot'"});  // wrong tag
  j = good;
  j[2][2] = {-1, 112};  // filtered out by size[-1] <= 64
  expect_error(j, {"tile_ow", "[-1,112]", "not one of its entities"});
  j = good;
  j[1][2] = {-1, 3};  // 3 does not divide 64
  expect_error(j, {"tile_oc"});
  j = good;
  j[3][2] = 1;  // true/false, not integers
  expect_error(j, {"unroll_kw"});
  j = good;
  j[0][2] = "oops";
  expect_error(j, {"tile_ic", "a list"});
  j = good;
  j[0][2] = {-1, "1"};
  expect_error(j, {"tile_ic", "integers"});
  j = good;
  j.erase(1);
  expect_error(j, {"tile_oc", "missing"});
  j = good;
  j.push_back(good[0]);
  expect_error(j, {"tile_ic", "repeats"});
  j = good;
  j[0] = {"tile_ic", "sp"};
  expect_error(j, {"entry 0", "triple"});
  expect_error(nlohmann::json::object(), {"list"});
}

// ---------------------------------------------------------------------------------------------
// make_config and fallback.

TEST(ConfigSpaceTest, MakeConfigFromFallbackEntities) {
  ConfigSpace s;
  s.define_split("tile_x", 128, {.num_outputs = 3});
  s.define_split("tile_k", 49);
  s.define_knob("unroll", {true, false});
  Result<ConfigEntity> c = s.make_config(
      {{"tile_x", fallback_split(128, {-1, 8, 4})}, {"unroll", OtherOptionEntity{false}}});
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->split("tile_x").size, (std::vector<int64_t>{-1, 8, 4}));  // canonical form
  EXPECT_EQ(c->split("tile_k").size, (std::vector<int64_t>{-1, 1}));     // unmentioned: entity 0
  EXPECT_EQ(c->other("unroll").val, false);
  EXPECT_EQ(*c, s.get(c->index()));
  EXPECT_EQ(s.point2knob(c->index())[1], 0);

  // The canonical form itself is accepted too.
  Result<ConfigEntity> c2 = s.make_config({{"tile_x", SplitEntity{{-1, 8, 4}}}});
  ASSERT_TRUE(c2.ok());
  EXPECT_EQ(c2->split("tile_x"), c->split("tile_x"));

  EXPECT_FALSE(s.make_config({{"tile_x", SplitEntity{{3, 8, 4}}}}).ok());  // 3*8*4 != 128
  EXPECT_FALSE(s.make_config({{"tile_k", SplitEntity{{-1, 5}}}}).ok());    // 5 does not divide 49
  EXPECT_FALSE(s.make_config({{"nope", SplitEntity{{-1, 1}}}}).ok());
  EXPECT_FALSE(s.make_config({{"unroll", SplitEntity{{-1, 1}}}}).ok());  // wrong kind
  EXPECT_FALSE(s.make_config({{"unroll", OtherOptionEntity{1}}}).ok());  // not a candidate
  EXPECT_FALSE(
      s.make_config({{"unroll", OtherOptionEntity{true}}, {"unroll", OtherOptionEntity{false}}})
          .ok());
}

// ---------------------------------------------------------------------------------------------
// multi_filter and the random helpers.

TEST(ConfigSpaceMultiFilterTest, TvmDocstringExample) {
  ConfigSpace s;
  const Sizes cands = {{16, 64}, {32, 32}, {64, 16}};
  auto fil = [](const SplitEntity& e) { return e.size[0] != 16; };
  s.define_split("tile_x", 1024, {.policy = "candidate", .filter = fil, .candidate = cands});
  s.define_split("tile_y", 1024, {.policy = "candidate", .filter = fil, .candidate = cands});
  EXPECT_EQ(s.size(), 4);
  s.multi_filter([](const ConfigEntity& e) {
    return e.split("tile_x").size[0] + e.split("tile_y").size[0] <= 64;
  });
  EXPECT_EQ(s.range_length(), 4);
  EXPECT_EQ(s.size(), 1);
  EXPECT_TRUE(s.is_index_valid(0));
  EXPECT_FALSE(s.is_index_valid(1));
  EXPECT_EQ(s.get(0).entity_string(), "[('tile_x', [32, 32]), ('tile_y', [32, 32])]");
  std::mt19937_64 rng(3);
  EXPECT_EQ(tuner::random_index(s, rng), 0);
  EXPECT_EQ(tuner::random_walk(s, 0, rng), 0);  // no other valid point: AutoTVM would spin forever
  EXPECT_EQ(tuner::random_walk(s, 3, rng),
            0);  // from an invalid point it still reaches the valid one
  EXPECT_EQ(tuner::sample_ints(s, 10, rng), (std::vector<int64_t>{0}));
  EXPECT_EQ(tuner::random_index(s, rng, {0}), -1);
}

TEST(ConfigSpaceMultiFilterTest, CountsGetAndValidity) {
  const ConfigSpace s = FilteredSpace();
  EXPECT_EQ(s.range_length(), 48);
  // Valid (x0, y0) pairs with x0 + y0 <= 48: (16,16) (16,32) (32,16) (16,8) (8,16) (32,8) (8,32)
  // (8,8): 8 pairs, times 3 values of k.
  EXPECT_EQ(s.size(), 24);
  int64_t valid = 0;
  for (int64_t i = 0; i < s.range_length(); ++i) {
    const ConfigEntity c = s.get(i);  // raw indices decode, valid or not
    const bool ok = c.split("tile_x").size[0] + c.split("tile_y").size[0] <= 48;
    EXPECT_EQ(s.is_index_valid(i), ok) << i;
    EXPECT_EQ(s.checked_get(i).ok(), ok) << i;
    valid += ok;
  }
  EXPECT_EQ(valid, 24);
  Result<ConfigEntity> r = s.checked_get(2);  // tile_x [64,16]: excluded
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("multi_filter"), std::string::npos);
  EXPECT_EQ(s.subrange_length(0, 48), 24);
  EXPECT_EQ(s.subrange_length(0, 4), 3);  // x0 = 16, 32, 8 with y0 = 16; not 64
  EXPECT_EQ(s.get_next_index(0), 1);
  EXPECT_EQ(s.get_next_index(1, -1), 0);
  EXPECT_EQ(s.get_next_index(0, -1), -1);
  EXPECT_EQ(s.get_next_index(0, 2), 3);  // skips 2 (x0 = 64)
  EXPECT_EQ(s.get_next_index(47, 1), -1);
  // A copy keeps the filter; JSON entity lists of excluded configs are rejected.
  const ConfigSpace copy = s;
  EXPECT_EQ(copy.size(), 24);
  Result<ConfigEntity> j = s.from_json_entities(s.get(2).to_json()["entity"]);
  ASSERT_FALSE(j.ok());
  EXPECT_NE(j.status().message().find("multi_filter"), std::string::npos);
  // make_config does not check the filter (fallback configs are the template's business).
  EXPECT_TRUE(s.make_config({{"tile_x", SplitEntity{{64, 16}}}}).ok());
}

TEST(ConfigSpaceMultiFilterTest, RandomHelpersReturnOnlyValidIndices) {
  const ConfigSpace s = FilteredSpace();
  std::mt19937_64 rng(42);
  std::set<int64_t> seen;
  for (int i = 0; i < 2000; ++i) {
    const int64_t r = tuner::random_index(s, rng);
    ASSERT_TRUE(s.is_index_valid(r)) << r;
    seen.insert(r);
  }
  EXPECT_EQ(seen.size(), 24u);  // uniform over the valid ones: all of them show up
  for (int i = 0; i < 2000; ++i) {
    const int64_t from = static_cast<int64_t>(rng() % s.range_length());
    const int64_t to = tuner::random_walk(s, from, rng);
    ASSERT_TRUE(s.is_index_valid(to));
    ASSERT_NE(to, from);
  }
  for (int64_t m : {0, 1, 5, 13, 24, 100}) {
    const std::vector<int64_t> v = tuner::sample_ints(s, m, rng);
    EXPECT_EQ(static_cast<int64_t>(v.size()), std::min<int64_t>(m, 24));
    EXPECT_EQ(std::set<int64_t>(v.begin(), v.end()).size(), v.size());
    for (int64_t x : v) EXPECT_TRUE(s.is_index_valid(x));
  }
  // Excluding all but one valid index leaves exactly that one.
  std::unordered_set<int64_t> exclude;
  for (int64_t i = 0; i < s.range_length(); ++i) exclude.insert(i);
  const int64_t keep = s.get_next_index(-1, 7);
  exclude.erase(keep);
  for (int i = 0; i < 20; ++i) EXPECT_EQ(tuner::random_index(s, rng, exclude), keep);
  exclude.insert(keep);
  EXPECT_EQ(tuner::random_index(s, rng, exclude), -1);
}

TEST(ConfigSpaceMultiFilterTest, FilterWithNoValidConfigDoesNotHang) {
  ConfigSpace s = DenseSpace();
  s.multi_filter([](const ConfigEntity&) { return false; });
  EXPECT_EQ(s.range_length(), 160);
  EXPECT_EQ(s.size(), 0);
  std::mt19937_64 rng(7);
  EXPECT_EQ(tuner::random_index(s, rng), -1);
  EXPECT_EQ(tuner::random_index(s, rng, {1, 2}), -1);
  EXPECT_EQ(tuner::random_walk(s, 5, rng), -1);
  EXPECT_TRUE(tuner::sample_ints(s, 3, rng).empty());
  EXPECT_EQ(s.get_next_index(0), -1);
  EXPECT_EQ(s.get(68).split("tile_x").size, (std::vector<int64_t>{-1, 8}));
}

TEST(ConfigSpaceMultiFilterTest, NthValidIndexSkipsFilteredIndices) {
  ConfigSpace s = DenseSpace();
  EXPECT_EQ(s.nth_valid_index(0), 0);  // no filter: the k-th index is k
  EXPECT_EQ(s.nth_valid_index(159), 159);
  s.multi_filter([](const ConfigEntity& e) { return e.index() % 3 == 1; });
  ASSERT_EQ(s.size(), 53);  // 1, 4, ..., 157
  for (int64_t k = 0; k < s.size(); ++k) EXPECT_EQ(s.nth_valid_index(k), 3 * k + 1) << k;
}

TEST(ConfigSpaceMultiFilterTest, DefiningAKnobAfterTheFilterRecomputesValidity) {
  ConfigSpace s;
  s.define_knob("a", {1, 2, 3});
  s.multi_filter([](const ConfigEntity& e) {
    const Entity* b = e.find("b");
    return e.other("a").val != 2 && (b == nullptr || std::get<OtherOptionEntity>(*b).val != 0);
  });
  EXPECT_EQ(s.size(), 2);
  s.define_knob("b", {0, 1});
  EXPECT_EQ(s.size(), 2);  // a in {1, 3}, b == 1
  EXPECT_TRUE(s.is_index_valid(3));
  EXPECT_FALSE(s.is_index_valid(0));
  s.multi_filter(nullptr);  // replaces, here by "no filter"
  EXPECT_EQ(s.size(), 6);
}

TEST(ConfigSpaceRandomTest, WalkChangesExactlyOneKnobWithoutFilter) {
  const ConfigSpace s = Conv2dSpace();
  std::mt19937_64 rng(1);
  for (int i = 0; i < 1000; ++i) {
    const int64_t from = tuner::random_index(s, rng);
    const int64_t to = tuner::random_walk(s, from, rng);
    const auto a = s.point2knob(from), b = s.point2knob(to);
    int diff = 0;
    for (size_t k = 0; k < a.size(); ++k) diff += a[k] != b[k];
    EXPECT_EQ(diff, 1);
  }
  ConfigSpace one;
  one.define_knob("only", {1});
  EXPECT_EQ(tuner::random_walk(one, 0, rng), 0);
}

TEST(ConfigSpaceRandomTest, DeterministicPerSeed) {
  const ConfigSpace s = Conv2dSpace();
  std::mt19937_64 a(123), b(123);
  EXPECT_EQ(tuner::sample_ints(s, 50, a), tuner::sample_ints(s, 50, b));
  EXPECT_EQ(tuner::sample_ints(s, 300, a), tuner::sample_ints(s, 300, b));  // the shuffle path
  for (int i = 0; i < 100; ++i) {
    EXPECT_EQ(tuner::random_index(s, a), tuner::random_index(s, b));
    EXPECT_EQ(tuner::random_walk(s, 17, a), tuner::random_walk(s, 17, b));
  }
  // Pinned: the sequence depends only on mt19937_64, not on the standard library.
  std::mt19937_64 c(2024);
  const std::vector<int64_t> first = tuner::sample_ints(s, 5, c);
  std::mt19937_64 d(2024);
  EXPECT_EQ(first, tuner::sample_ints(s, 5, d));
  EXPECT_EQ(tuner::sample_ints(s, 308, d).size(), 308u);
}

TEST(ConfigSpaceRandomTest, LargeSpaceIsNotMaterialized) {
  // 7290 * 60 * 20 * 7290, about 6.4e10 raw points: nothing may touch them all.
  ConfigSpace s;
  s.define_split("a", 720720, {.num_outputs = 3});
  s.define_split("b", 5040, {.num_outputs = 2});
  s.define_annotate("c", {4, 4, 4}, "try_unroll_vec");
  s.define_split("d", 720720, {.num_outputs = 3});
  EXPECT_EQ(s.dims(), (std::vector<int64_t>{7290, 60, 20, 7290}));
  ASSERT_GT(s.range_length(), int64_t{1} << 31);
  std::mt19937_64 rng(5);
  const auto v = tuner::sample_ints(s, 1000, rng);
  EXPECT_EQ(std::set<int64_t>(v.begin(), v.end()).size(), 1000u);
  const int64_t last = s.range_length() - 1;
  EXPECT_EQ(s.knob2point(s.point2knob(last)), last);
  EXPECT_TRUE(s.checked_get(last).ok());
  EXPECT_NE(tuner::random_walk(s, last, rng), last);

  // A filter over a range above the cache limit is evaluated per query.
  s.multi_filter([](const ConfigEntity& e) { return e.split("b").size[1] != 1; });
  for (int i = 0; i < 100; ++i) {
    const int64_t r = tuner::random_index(s, rng);
    ASSERT_TRUE(s.is_index_valid(r));
    EXPECT_NE(s.get(r).split("b").size[1], 1);
    EXPECT_TRUE(s.is_index_valid(tuner::random_walk(s, r, rng)));
  }
  EXPECT_FALSE(s.is_index_valid(0));  // entity 0 of b is [-1, 1]
}

}  // namespace
}  // namespace kiln
