// Tests for place_concat_inputs (compiler/concat_in_place.h): which Concats become views of their
// output and where each input's storage lands; the model-level check (a DenseNet-style block
// compiled without Concat kernels, against a reference) is in packed_elementwise_test.cc.
#include "compiler/concat_in_place.h"

#include <gtest/gtest.h>

#include <vector>

namespace kiln::compiler {
namespace {

using K = ModelValueKind;

ModelValue value(int64_t elements, K kind = K::kIntermediate) {
  ModelValue v;
  v.name = "v";
  v.shape = {elements};
  v.kind = kind;
  return v;
}

// DenseNet's pattern: cat1 = Concat(x, f1), cat2 = Concat(x, f1, f2). The first places x and
// f1 in cat1; the second places cat1 (x's and f1's storage by then) and f2 in cat2.
TEST(ConcatInPlaceTest, ADenseBlockSharesOneStorage) {
  std::vector<ModelValue> v = {value(64), value(32), value(96), value(32), value(128)};
  const int x = 0, f1 = 1, cat1 = 2, f2 = 3, cat2 = 4;
  ASSERT_TRUE(place_concat_inputs(v, {x, f1}, cat1));
  EXPECT_EQ(v[x].kind, K::kView);
  EXPECT_EQ(v[x].view_of, cat1);
  EXPECT_EQ(v[x].view_offset, 0);
  EXPECT_EQ(v[f1].view_of, cat1);
  EXPECT_EQ(v[f1].view_offset, 64);
  ASSERT_TRUE(place_concat_inputs(v, {x, f1, f2}, cat2));
  EXPECT_EQ(v[cat1].kind, K::kView);
  EXPECT_EQ(v[cat1].view_of, cat2);
  EXPECT_EQ(v[cat1].view_offset, 0);
  EXPECT_EQ(v[f2].view_of, cat2);
  EXPECT_EQ(v[f2].view_offset, 96);
  EXPECT_EQ(resolve_view(v, f1).value, cat2);
  EXPECT_EQ(resolve_view(v, f1).offset, 64);
  EXPECT_EQ(v[cat2].kind, K::kIntermediate);
}

// Each refusal leaves every value as it was.
TEST(ConcatInPlaceTest, RefusesWhatCannotShareTheOutput) {
  struct Case {
    const char* name;
    std::vector<ModelValue> values;
    std::vector<int> inputs;
    int output;
  };
  std::vector<ModelValue> reshaped = {value(32), value(32), value(64)};
  reshaped[1].kind = K::kView;  // input 1 is input 0 under another shape
  reshaped[1].view_of = 0;
  std::vector<ModelValue> longer = {value(64), value(32), value(32), value(64)};
  longer[1].kind = K::kView;  // the first half of a storage twice as long as its share
  longer[1].view_of = 0;
  const Case cases[] = {
      {"the same input twice", {value(32), value(64)}, {0, 0}, 1},
      {"one storage in two places", reshaped, {0, 1}, 2},
      {"a storage wider than its share", longer, {1, 2}, 3},
      {"a constant input", {value(32, K::kConstant), value(32), value(64)}, {0, 1}, 2},
      {"a graph input", {value(32, K::kInput), value(32), value(64)}, {0, 1}, 2},
      {"an output that is a graph output",
       {value(32), value(32), value(64, K::kOutput)},
       {0, 1},
       2},
      {"a share not 64-byte aligned", {value(8), value(24), value(32)}, {0, 1}, 2},
      {"inputs short of the output", {value(32), value(32), value(80)}, {0, 1}, 2},
      {"inputs beyond the output", {value(32), value(32), value(48)}, {0, 1}, 2},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    std::vector<ModelValue> v = c.values;
    EXPECT_FALSE(place_concat_inputs(v, c.inputs, c.output));
    for (size_t i = 0; i < v.size(); ++i) {
      EXPECT_EQ(v[i].kind, c.values[i].kind) << i;
      EXPECT_EQ(v[i].view_of, c.values[i].view_of) << i;
      EXPECT_EQ(v[i].view_offset, c.values[i].view_offset) << i;
    }
  }
}

}  // namespace
}  // namespace kiln::compiler
