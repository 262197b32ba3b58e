// common/python_compat: the Python behaviours TVM's files depend on, against values printed by
// CPython 3.11.
#include "common/python_compat.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace kiln {
namespace {

TEST(PythonCompat, SetUnionIteratesInCPythonOrder) {
  // list(set([1, 2, 4, 7, 8, 14, 16, 28, 56, 112]) | set([1, 2, 4, 8, 16, 32, 64]))
  EXPECT_EQ(py_set_union_order({1, 2, 4, 7, 8, 14, 16, 28, 56, 112}, {1, 2, 4, 8, 16, 32, 64}),
            (std::vector<int64_t>{32, 1, 2, 64, 4, 7, 8, 14, 16, 112, 56, 28}));
  // 9 and 1 collide in slot 1 of the 8-slot table, so 1 probes on to slot 2, then 17 to slot 3.
  EXPECT_EQ(py_set_union_order({9, 1}, {17}), (std::vector<int64_t>{9, 1, 17}));
  EXPECT_EQ(py_set_union_order({}, {3, 3, 3}), (std::vector<int64_t>{3}));
}

TEST(PythonCompat, ReprAndStrOfJsonValues) {
  using nlohmann::json;
  EXPECT_EQ(py_repr(json(nullptr)), "None");
  EXPECT_EQ(py_repr(json(false)), "False");
  EXPECT_EQ(py_repr(json(-12)), "-12");
  EXPECT_EQ(py_repr(json(0.5)), "0.5");
  EXPECT_EQ(py_repr(json(2e-5)), "2e-05");
  EXPECT_EQ(py_repr(json(1e16)), "1e+16");
  EXPECT_EQ(py_repr(json(1234567890123456.0)), "1234567890123456.0");
  EXPECT_EQ(py_repr(json(std::numeric_limits<double>::quiet_NaN())), "nan");
  EXPECT_EQ(py_repr(json("vec")), "'vec'");
  EXPECT_EQ(py_str(json("vec")), "vec");
  EXPECT_EQ(py_repr(json::array({-1, 8})), "[-1, 8]");
  EXPECT_EQ(py_str(json::array({"none", "vec"})), "['none', 'vec']");  // nested strings quoted
  EXPECT_EQ(py_repr(json::array({true, json::array({1.0, nullptr})})), "[True, [1.0, None]]");
}

}  // namespace
}  // namespace kiln
