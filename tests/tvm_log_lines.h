// TVM autotvm v0.2 log lines shared by the log-format and import/export tests, and a helper that
// derives variants of them.
#pragma once

#include <gtest/gtest.h>

#include <string>

namespace kiln::store {

// The constructed dense example of autotvm.md §3, as TVM 0.16 writes it.
inline const std::string kDenseLine =
    R"({"input": ["llvm -keys=cpu ", "dense_nopack.x86", [["TENSOR", [1, 512], "float32"], ["TENSOR", [1000, 512], "float32"], null, "float32"], {}], "config": {"index": 68, "code_hash": null, "entity": [["tile_y", "sp", [-1, 1]], ["tile_x", "sp", [-1, 8]], ["tile_k", "sp", [-1, 16]]]}, "result": [[2.1e-05], 0, 0.84, 1700000000.0], "version": 0.2, "tvm_version": "0.16.0"})";

// `text` with the first occurrence of `from` replaced by `to`; a missing `from` fails the test.
inline std::string replaced(std::string text, const std::string& from, const std::string& to) {
  size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

}  // namespace kiln::store
