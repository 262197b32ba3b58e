// A small compiled model assembled by hand, for the executor and `kiln run`/`kiln bench` tests:
// real stage code built by the builder from hand-written IR, without the model compiler.
//
// The graph, on vectors of kN floats (x an input, c a constant):
//   t1 = x + c         step 0 "add"
//   t2 = 2 * t1        step 1 "scale2"
//   t3 = t2 + 1        step 2 "addone"
//   t4 = 2 * t3        step 3 "scale2"
//   t5 = 4 * t4        step 4 "times4", using the intermediate `ws` as its workspace
//   out = view(t5) + x step 5 "add", reading t5 through a view of shape {16, kN/16}
// so out = 4 * (2 * (2 * (x + c) + 1)) + x = 17x + 16c + 8. With `second_output`, the view of
// t5 is a graph output too (an intermediate that must outlive every later step).
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "builder/build.h"
#include "builder/target.h"
#include "ir/ir.h"
#include "runtime/model_artifact.h"

namespace kiln::testing {

inline constexpr int64_t kN = 1024;
// Floats of padding before the constant in the blob, so that its offset is not 0.
inline constexpr int64_t kConstantOffset = 16;

// The shared object: stages over three generic buffers b0, b1, b2 of kN floats, with parallel
// and vectorized loops so that thread counts matter. A stage touches only the positions it
// names, so one object serves steps of two and of three buffers.
inline const std::string& hand_model_shared_object() {
  static const std::string so = [] {
    using namespace ir;
    Buffer b0("b0", {kN}, BufferScope::kArgument), b1("b1", {kN}, BufferScope::kArgument),
        b2("b2", {kN}, BufferScope::kArgument);
    Expr o = var("o"), j = var("j");
    // Loops over i = 16 * o + j: o parallel, j vectorized.
    auto loop = [&](Stmt body) {
      return LoopNest({{o, kN / 16, LoopKind::kParallel}, {j, 16, LoopKind::kVectorized}}, body);
    };
    Expr i = o * 16 + j;
    Program p;
    p.name = "hand_model";
    p.buffers = {b0, b1, b2};
    p.num_inputs = 2;
    p.num_outputs = 1;
    p.stages = {
        {"add", loop(StoreFlat(b2, i, b0.load_flat(i) + b1.load_flat(i))), true},
        {"scale2", loop(StoreFlat(b1, i, b0.load_flat(i) * f32(2))), true},
        {"addone", loop(StoreFlat(b1, i, b0.load_flat(i) + f32(1))), true},
        // b1 is scratch: written, then read back by the same stage.
        {"times4",
         Seq({loop(StoreFlat(b1, i, b0.load_flat(i) * f32(3))),
              loop(StoreFlat(b2, i, b1.load_flat(i) + b0.load_flat(i)))}),
         true},
    };
    auto built = builder::build_program(p, builder::host_target());
    EXPECT_TRUE(built.ok()) << built.status().message();
    return built.ok() ? built->shared_object : std::string();
  }();
  return so;
}

inline ModelArtifact hand_model(bool second_output = false) {
  using K = ModelValueKind;
  ModelArtifact m;
  m.kiln_version = "test";
  m.target = builder::host_target().to_string();
  m.values = {
      {"x", {kN}, K::kInput},                      // 0
      {"c", {kN}, K::kConstant, kConstantOffset},  // 1
      {"t1", {kN}, K::kIntermediate},              // 2
      {"t2", {kN}, K::kIntermediate},              // 3
      {"t3", {kN}, K::kIntermediate},              // 4
      {"t4", {kN}, K::kIntermediate},              // 5
      {"ws", {kN}, K::kIntermediate},              // 6
      {"t5", {kN}, K::kIntermediate},              // 7
      {"t5v", {16, kN / 16}, K::kView, 0, 7},      // 8
      {"out", {kN}, K::kOutput},                   // 9
  };
  m.inputs = {0};
  m.outputs = {9};
  if (second_output) m.outputs.push_back(8);
  m.steps = {
      {"add", {0, 1, 2}, "t1 = x + c", ""},   {"scale2", {2, 3}, "t2 = 2 t1", ""},
      {"addone", {3, 4}, "t3 = t2 + 1", ""},  {"scale2", {4, 5}, "t4 = 2 t3", ""},
      {"times4", {5, 6, 7}, "t5 = 4 t4", ""}, {"add", {8, 0, 9}, "out = t5 + x", ""},
  };
  m.shared_object = hand_model_shared_object();
  m.constants.assign(kConstantOffset + kN, -1e30f);  // the padding must never be read
  for (int64_t k = 0; k < kN; ++k) m.constants[kConstantOffset + k] = 0.25f * (k % 7) - 0.5f;
  return m;
}

// A deterministic input for x.
inline std::vector<float> hand_model_input() {
  std::vector<float> x(kN);
  for (int64_t k = 0; k < kN; ++k) x[k] = 0.125f * (k % 13) - 0.75f;
  return x;
}

// out = 17x + 16c + 8 and t5 = 16x + 16c + 8, computed here in float as the kernels do
// (every step is exact in float for these small multiples of 1/8).
inline std::vector<float> hand_model_expected_out(const std::vector<float>& x) {
  std::vector<float> out(kN);
  for (int64_t k = 0; k < kN; ++k) {
    const float c = 0.25f * (k % 7) - 0.5f;
    out[k] = 4 * (2 * (2 * (x[k] + c) + 1)) + x[k];
  }
  return out;
}

inline std::vector<float> hand_model_expected_t5(const std::vector<float>& x) {
  std::vector<float> t5(kN);
  for (int64_t k = 0; k < kN; ++k) {
    const float c = 0.25f * (k % 7) - 0.5f;
    t5[k] = 4 * (2 * (2 * (x[k] + c) + 1));
  }
  return t5;
}

}  // namespace kiln::testing
