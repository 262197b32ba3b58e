// AutoTVM's touch-pattern analysis of a loop nest (src/autotvm/touch_extractor.{h,cc} and
// feature_visitor.cc at TVM v0.16; reference/autotvm.md §4), on kiln's IR, and the two
// program-level feature vectors built from it: 'itervar' and 'curve'.
//
// The analysis visits statements as TVM's FeatureVisitor does:
//  - every For loop is an itervar (kiln has no thread_extent / virtual_thread attributes, so
//    the Block*/Thread*/VirtualThread annotations never occur; they keep their one-hot slots);
//    a loop variable node bound by several loops gives one itervar per loop, as TVM's
//    "duplicated axes" snapshot does;
//  - a store enters its own access first, then visits its value, then its index (TVM's
//    BufferStore visitor: EnterMem_, then value, then indices); a load enters its access, then
//    visits its index; binary operands are visited a then b, Select cond/true/false, and an If
//    its condition, then-case, else-case;
//  - float Add/Sub count as add_ct, float Mul as mul_ct, float Div/Mod as div_ct, credited to
//    the innermost enclosing loop (TVM counts only float or bfloat16 ops). Arithmetic outside
//    every loop is not counted (TVM dereferences an empty loop stack there).
//
// Thread-safety: the functions are pure; call them concurrently on different or shared IR.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/ir.h"

namespace kiln::costmodel {

// TVM's AnnotationType, in its order: the position of an itervar's 1 in the one-hot.
enum class Annotation : uint8_t {
  kBlockX,
  kBlockY,
  kBlockZ,
  kThreadX,
  kThreadY,
  kThreadZ,
  kUnrolled,
  kVectorized,
  kParallel,
  kSerial,
  kVirtualThread,
};
inline constexpr int kNumAnnotations = 11;

Annotation annotation_of(ir::LoopKind kind);

// How one loop touches one buffer access: buf[(stride * var) % mod + other].
struct TouchPattern {
  int64_t stride = 0;  // 0: the loop's variable does not appear in the access's index
  int64_t mod = -1;    // never computed by AutoTVM: always -1 (meaning +inf)
  // Product of the extents of the loops from this one inward (on the access's loop stack) whose
  // variables appear in the index (count) or do not appear in it (reuse).
  int64_t count = 1;
  int64_t reuse = 1;
  // For a parallel loop (or a GPU axis): count/reuse divided by those of its direct serial child
  // on the access's path; 0 for other loops.
  int64_t thread_count = 0;
  int64_t thread_reuse = 0;
};

struct Itervar {
  const ir::ExprNode* var = nullptr;
  int64_t length = 0;
  int nest_level = 0;  // 1 for an outermost loop
  Annotation ann = Annotation::kSerial;
  int64_t topdown_product = 1;    // product of the extents from the root down to this loop
  int64_t bottomup_product = -1;  // max over touched accesses of count * reuse; -1 if none
  int64_t add_ct = 0, mul_ct = 0, div_ct = 0;
  // The accesses under this loop are exactly [first_access, end_access) (visit order is
  // depth-first, so they are contiguous).
  int first_access = 0, end_access = 0;
};

struct Access {
  std::string name;                   // "<buffer name>_<k>", k = earlier accesses to that name
  std::vector<int> loops;             // itervar ids on the loop stack, outermost first
  std::vector<TouchPattern> touches;  // touches[d]: the pattern of loops[d] on this access
};

struct TouchFeatures {
  std::vector<Itervar> itervars;  // in first-visit order (TVM's `order`)
  std::vector<Access> accesses;   // in visit order

  // REQUIRES: itervars[itervar] encloses the access (first_access <= access < end_access).
  const TouchPattern& touch(int itervar, int access) const {
    return accesses[access].touches[itervars[itervar].nest_level - 1];
  }
};

// Analyzes `stmts` as one sequence.
TouchFeatures extract_touch_features(const std::vector<ir::Stmt>& stmts);
// Analyzes the timed stages of `program`, in order, as one sequence: the untimed ones are
// layout transforms that AutoTVM neither times nor lowers when tuning.
TouchFeatures extract_touch_features(const ir::Program& program);

// AutoTVM's T(x) for take_log=True: log2(x + 1) for x >= 0, -log2(-x + 1) otherwise.
float log_transform(int64_t x);

// TVM's GetItervarFeatureFlatten(take_log=True): per itervar in first-visit order
//   [T(length), nest_level, T(topdown), T(bottomup), one-hot(11), T(add), T(mul), T(div)]
// then per access under it, sorted by name as strings ("A_10" < "A_2"),
//   [T(stride), T(mod), T(count), T(reuse), T(thread_count), T(thread_reuse)].
std::vector<float> itervar_feature_flatten(const TouchFeatures& features);

// TVM's GetCurveSampleFeatureFlatten: for each innermost access (touched by a loop at the
// maximum nest level; one per raw buffer name, the `_k` suffix and any `.scope` stripped,
// keeping the last in visit order), sorted by name, 8 * sample_n floats sampling the sorted
// log2 count/reuse/topdown curves over its loops. REQUIRES sample_n >= 0.
std::vector<float> curve_feature_flatten(const TouchFeatures& features, int sample_n);

}  // namespace kiln::costmodel
