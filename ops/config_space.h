// The tuning space of a schedule template, with AutoTVM's exact semantics (reference/autotvm.md §1,
// python/tvm/autotvm/task/space.py at v0.16), so that config indices and entity lists read from or
// written to TVM logs mean the same thing in kiln.
//
// A ConfigSpace is an ordered list of knobs. Each knob has an ordered list of entities (a split's
// tile sizes, a permutation, per-axis annotations, or a raw option value). A config is one entity
// per knob. It is addressed by an index in the mixed-radix product of the knob lengths in which the
// FIRST-defined knob is the LEAST significant digit:
//   index = digit[0] + dims[0] * (digit[1] + dims[1] * (digit[2] + ...)).
// The entity list, not the index, is what records store (DESIGN.md): from_json_entities() turns a
// stored list back into a config of this space, or explains why it does not belong to it.
//
// An optional cross-knob predicate (multi_filter) marks some indices invalid. Then
// range_length() is the raw size of the index range and size() the number of valid indices; get()
// still decodes any raw index, and the random helpers of tuner/space_walk.h return only valid ones.
//
// Errors: arguments that come from outside (an index typed by a user, a log line) are checked and
// answered with a Status. Arguments that only a template author controls (a policy name, a knob
// name used by the template) are REQUIRES preconditions, checked in every build type: a violation
// prints a message and aborts, because it is a bug in the template, not bad input.
//
// Thread-safety: define_*() and multi_filter() must not run concurrently with anything else on the
// same space. Every const method may be called from several threads at once (the multi_filter
// validity cache is built once, under std::call_once); the multi_filter predicate must then be safe
// to call concurrently, which a pure function is. Copies of a space are independent.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "common/status.h"

namespace kiln {

// ---------------------------------------------------------------------------------------------
// Entities: the value of one knob. The JSON tag and payload are those of TVM logs.

// Tile sizes of one split, outermost first. An entity of a space has size[0] == -1 ("the rest");
// a fallback entity (fallback_split) has an explicit size[0]. Applying it splits the axis once per
// position i >= 1 with factor prod(size[i:]). JSON tag "sp", payload e.g. [-1, 4, 16].
struct SplitEntity {
  std::vector<int64_t> size;
  bool operator==(const SplitEntity&) const = default;
};

// The new order of a list of axes: new_order[k] = axes[perm[k]]. JSON tag "re", e.g. [0, 2, 1].
struct ReorderEntity {
  std::vector<int> perm;
  bool operator==(const ReorderEntity&) const = default;
};

// One annotation per axis: "none", "unroll", "vec", or for the bind_gpu policies a thread axis
// name ("blockIdx.x", "vthread", ...) or "fuse". JSON tag "an", e.g. ["none", "vec"].
struct AnnotateEntity {
  std::vector<std::string> anns;
  bool operator==(const AnnotateEntity&) const = default;
};

// A raw option value from define_knob (bool, integer or string in practice). JSON tag "ot".
struct OtherOptionEntity {
  nlohmann::json val;
  bool operator==(const OtherOptionEntity& o) const { return val == o.val; }
};

using Entity = std::variant<SplitEntity, ReorderEntity, AnnotateEntity, OtherOptionEntity>;

// The JSON tag of an entity's kind: "sp", "re", "an" or "ot".
const char* entity_tag(const Entity& entity);
// The JSON payload of an entity (the third element of a TVM log entity item).
nlohmann::ordered_json entity_payload(const Entity& entity);
// Python's repr of the entity as TVM prints it in a config, e.g. [-1, 8], ['none', 'vec'], False.
// Permutations print as lists (TVM sometimes prints tuples or range(0, n) there).
std::string entity_repr(const Entity& entity);

// ---------------------------------------------------------------------------------------------
// Knobs and options.

struct Knob {
  std::string name;
  std::string tag;     // "sp", "re", "an" or "ot"
  std::string policy;  // as given to define_*; empty for define_knob
  std::vector<Entity> entities;
  int64_t product = 0;  // split: the axis length; 0 for other kinds
  int num_outputs = 0;  // split: number of output axes; reorder/annotate: number of axes
};

struct SplitOptions {
  // "factors": the divisors of the length, ascending; no tail by default.
  // "power2": 1, 2, 4, ... up to the length; tails allowed by default.
  // "verbose": divisors and powers of two in CPython set order (see split_factors); tails allowed.
  // "candidate": exactly the size lists in `candidate`, in order.
  std::string policy = "factors";
  int num_outputs = 2;             // REQUIRES >= 1 ("candidate") or >= 2 (other policies)
  int64_t max_factor = 1LL << 31;  // candidate factors above this are dropped (not "candidate")
  // Keeps an entity when it returns true. Runs after enumeration, for every policy.
  std::function<bool(const SplitEntity&)> filter = {};
  // Keep only splits whose factors' product divides the length. Default: policy == "factors".
  std::optional<bool> no_tail = {};
  std::vector<std::vector<int64_t>> candidate = {};  // policy "candidate": each of size num_outputs
};

struct ReorderOptions {
  std::pair<int, int> interval{0, 0};            // "interval_all": permute axes [first, second)
  std::vector<std::vector<int>> candidate = {};  // "candidate": the permutations, as axis indices
  // "interleave" / "interleave_cuda": chains of axis indices, outermost first.
  std::vector<std::vector<int>> spatial = {};
  std::vector<std::vector<int>> reduce = {};
};

// ---------------------------------------------------------------------------------------------
// ConfigEntity: one point of a space.

class ConfigEntity {
 public:
  ConfigEntity() = default;
  ConfigEntity(int64_t index, std::vector<std::pair<std::string, Entity>> entities)
      : index_(index), entities_(std::move(entities)) {}

  // The index in the space this config came from (the raw mixed-radix index).
  int64_t index() const { return index_; }
  // (knob name, entity) in knob definition order.
  const std::vector<std::pair<std::string, Entity>>& entities() const { return entities_; }

  // The entity of `knob`, or nullptr when the config has no such knob.
  const Entity* find(std::string_view knob) const;
  // Typed access. REQUIRES: the knob exists and holds that kind of entity (aborts otherwise).
  const SplitEntity& split(std::string_view knob) const;
  const ReorderEntity& reorder(std::string_view knob) const;
  const AnnotateEntity& annotate(std::string_view knob) const;
  const OtherOptionEntity& other(std::string_view knob) const;

  // TVM's ConfigEntity.to_json_dict(), keys in TVM's order:
  //   {"index": 172, "code_hash": null, "entity": [["tile_ic", "sp", [-1, 1]], ...]}
  nlohmann::ordered_json to_json() const;
  // Python's repr of the entity map as TVM prints it:
  //   [('tile_ic', [-1, 1]), ('tile_oc', [-1, 4]), ('unroll_kw', False)]
  std::string entity_string() const;

  bool operator==(const ConfigEntity&) const = default;

 private:
  friend class ConfigSpace;
  int64_t index_ = 0;
  std::vector<std::pair<std::string, Entity>> entities_;
};

// ---------------------------------------------------------------------------------------------
// ConfigSpace.

class ConfigSpace {
 public:
  // Above this many raw indices the multi_filter validity is not cached as a bit vector (2 MiB at
  // the limit); it is then evaluated per query and size() streams once over the whole range.
  static constexpr int64_t kMaxFilterCacheRange = int64_t{1} << 24;

  ConfigSpace();
  ~ConfigSpace();
  ConfigSpace(const ConfigSpace&);
  ConfigSpace& operator=(const ConfigSpace&);
  ConfigSpace(ConfigSpace&&) noexcept;
  ConfigSpace& operator=(ConfigSpace&&) noexcept;

  // --- Definition (called by a template, in a fixed order). Every define_* REQUIRES a name not
  // defined before and a valid policy. A knob may end up with zero entities (e.g. a filter that
  // rejects all splits of this length); then the space is empty (range_length() == 0).

  // Splits an axis of `length` (REQUIRES 1 <= length <= 2^62) into opts.num_outputs axes.
  // Entities enumerate num_outputs-1 inner factors by DFS: slot 0 (outermost loop of the DFS)
  // becomes the LAST element of size; size = [-1] + reversed(slots). An entity is kept when
  // prod <= length and (length % prod == 0 or (!no_tail and prod < length)).
  void define_split(const std::string& name, int64_t length, SplitOptions opts = {});
  // Orders `num_axes` axes. Policies: "identity"; "all" (every permutation, lexicographic);
  // "interval_all" (permutations of [interval.first, interval.second), others fixed);
  // "candidate"; "interleave" and "interleave_cuda" (TVM's chain merges).
  void define_reorder(const std::string& name, int num_axes, const std::string& policy,
                      ReorderOptions opts = {});
  // Annotates one axis per element of `axis_lengths` (the lengths matter only when applying).
  // Policy: "try" is replaced by "none" and the result split on '_' into atoms from
  // {none, unroll, vec} tried on every axis in that order, e.g. "try_unroll_vec" =
  // {none, unroll, vec}; the first axis varies slowest and assignments with more than one "vec"
  // are dropped. Also "bind_gpu" and "bind_gpu_virtual" (one entity each). TVM's "locate_cache"
  // is not supported.
  void define_annotate(const std::string& name, const std::vector<int64_t>& axis_lengths,
                       const std::string& policy);
  // A knob whose entities are the candidate values, in order.
  void define_knob(const std::string& name, std::vector<nlohmann::json> candidates);
  // Sets the cross-knob validity predicate; it REPLACES any earlier one (as in AutoTVM).
  void multi_filter(std::function<bool(const ConfigEntity&)> pred);

  // --- Shape.
  const std::vector<Knob>& knobs() const { return knobs_; }
  const Knob* find_knob(std::string_view name) const;
  std::vector<int64_t> dims() const;                      // entity count per knob, definition order
  int64_t range_length() const { return range_length_; }  // prod(dims()); 1 with no knobs
  // Number of valid indices; == range_length() without multi_filter. With a filter, the first
  // call evaluates the predicate over the whole range (cached afterwards).
  int64_t size() const;
  bool has_filter() const { return static_cast<bool>(filter_); }
  // False for an index outside [0, range_length()) or rejected by multi_filter.
  bool is_index_valid(int64_t index) const;

  // --- Index <-> config.
  // REQUIRES 0 <= index < range_length(). Decodes raw indices, valid or not.
  ConfigEntity get(int64_t index) const;
  // get() for an untrusted index: an error names the index and the range, or says that
  // multi_filter excludes it.
  Result<ConfigEntity> checked_get(int64_t index) const;
  // Digits of `point`, least significant (first knob) first. REQUIRES 0 <= point < range_length().
  std::vector<int64_t> point2knob(int64_t point) const;
  // Inverse of point2knob. REQUIRES knob.size() == knobs().size() and 0 <= knob[j] < dims()[j].
  int64_t knob2point(const std::vector<int64_t>& knob) const;

  // Rebuilds a config from a TVM log entity list [[name, tag, payload], ...]. Every knob of the
  // space must appear exactly once (any order); the index is computed from the entities. Errors
  // name the offending entry: not a [name, tag, payload] triple, unknown knob, wrong tag, payload
  // of the wrong type, entity not among the knob's entities, duplicate or missing knob, or a
  // config that multi_filter excludes.
  Result<ConfigEntity> from_json_entities(const nlohmann::json& entity_list) const;
  // Builds the config of this space holding the given entities (e.g. a template's fallback).
  // Knobs not mentioned take their entity 0 (as AutoTVM's collected default). A split entity with
  // an explicit size[0] (from fallback_split) matches the space entity [-1] + size[1:] when
  // size[0] == ceil(length / prod(size[1:])); the result holds the space's own entities, so
  // make_config(e) == get(make_config(e).index()). Errors: unknown knob, wrong kind, entity not in
  // the knob's list. multi_filter is NOT checked (see is_index_valid).
  Result<ConfigEntity> make_config(std::vector<std::pair<std::string, Entity>> entities) const;

  // --- Navigation over valid indices (random sampling and walks are in tuner/space_walk.h).
  // The k-th (0-based) valid index in ascending order. REQUIRES 0 <= k < size(). Constant time
  // after the validity cache is built; above kMaxFilterCacheRange a scan from 0.
  int64_t nth_valid_index(int64_t k) const;
  // AutoTVM's get_next_index: the n-th valid index after (n > 0) or before (n < 0) `index`
  // within [start, end) (end = -1 means range_length()), or -1 when it leaves the range.
  int64_t get_next_index(int64_t index, int64_t n = 1, int64_t start = 0, int64_t end = -1) const;
  // Number of valid indices in [start, end). REQUIRES 0 <= start <= end <= range_length().
  int64_t subrange_length(int64_t start, int64_t end) const;

  // TVM's repr of the space: "ConfigSpace (len=308, range_length=308, space_map=\n   0 tile_ic:
  // Split(policy=factors, product=3, num_outputs=2) len=2\n ...)".
  std::string debug_string() const;

 private:
  struct FilterCache;  // validity bits and counts, built lazily; see config_space.cc

  void AddKnob(Knob knob);
  const FilterCache& Cache() const;  // REQUIRES has_filter()

  std::vector<Knob> knobs_;
  int64_t range_length_ = 1;
  std::function<bool(const ConfigEntity&)> filter_;
  // Shared between copies (it depends only on knobs_ and filter_); replaced, never mutated, by
  // define_*() and multi_filter().
  std::shared_ptr<FilterCache> cache_;
};

// ---------------------------------------------------------------------------------------------
// Factor helpers (exposed for templates and tests).

// All divisors of n, ascending. REQUIRES n >= 1.
std::vector<int64_t> get_factors(int64_t n);
// 1, 2, 4, ..., 2^floor(log2(n)) with log2 computed in double precision as Python's math.log2
// does (so just below a large power of two the next power may be included). REQUIRES
// 1 <= n <= 2^62.
std::vector<int64_t> get_pow2s(int64_t n);
// The candidate factors of a split policy ("factors", "power2" or "verbose"), before max_factor.
// "verbose" is list(set(get_factors(n)) | set(get_pow2s(n))) in the iteration order of CPython's
// set (3.x, int hash = value), which is NOT sorted: 112 -> [32, 1, 2, 64, 4, 7, 8, 14, 16, 112,
// 56, 28]. TVM's config indices depend on that order.
std::vector<int64_t> split_factors(int64_t n, std::string_view policy);

// AutoTVM's FallbackConfigEntity.fallback_split for an axis of `length`: walks the positions from
// last to first; each takes the largest divisor of the remaining product that is <= its
// constraint, where -1 means unlimited (exactly: 1e10, as in TVM). With constraint[0] == -1,
// size[0] is the remaining product, e.g. 128 with {-1, 8, 4} -> [4, 8, 4], 49 -> [7, 7, 1].
// REQUIRES length >= 1 and each constraint == -1 or >= 1 (so a divisor always exists).
SplitEntity fallback_split(int64_t length, const std::vector<int64_t>& constraints);

}  // namespace kiln
