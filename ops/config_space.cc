#include "ops/config_space.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <mutex>
#include <sstream>

#include "common/check.h"
#include "common/python_compat.h"

namespace kiln {
namespace {

// ---------------------------------------------------------------------------------------------
// Enumeration helpers.

// Saturating product: anything that overflows compares greater than every length.
int64_t MulSat(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return std::numeric_limits<int64_t>::max();
  return r;
}

// SplitSpace._generate_space: slot `now` takes each factor in turn; slot 0 is the outermost loop
// and ends up last in size. Subtrees whose partial product already exceeds the length are pruned,
// which drops nothing: factors are >= 1, so TVM would reject every leaf below them.
void GenerateSplits(const std::vector<int64_t>& factors, int64_t length, bool no_tail, size_t now,
                    int64_t prod, std::vector<int64_t>& slots, std::vector<Entity>& out) {
  if (now == slots.size()) {
    if (length % prod == 0 || (!no_tail && prod < length)) {
      SplitEntity e;
      e.size.reserve(slots.size() + 1);
      e.size.push_back(-1);
      e.size.insert(e.size.end(), slots.rbegin(), slots.rend());
      out.push_back(std::move(e));
    }
    return;
  }
  for (int64_t f : factors) {
    const int64_t p = MulSat(prod, f);
    if (p > length) continue;
    slots[now] = f;
    GenerateSplits(factors, length, no_tail, now + 1, p, slots, out);
  }
}

// ReorderSpace._merge_dfs: repeatedly takes the next axis of the chain with the most axes left
// (the first such chain on ties, as numpy.argmax does).
void MergeDfs(const std::vector<std::vector<int>>& chains, size_t total, std::vector<size_t>& pt,
              std::vector<int>& stack, std::vector<std::vector<int>>& merged) {
  size_t taken = 0;
  for (size_t p : pt) taken += p;
  if (taken == total) {
    merged.push_back(stack);
    return;
  }
  size_t argmax = 0;
  for (size_t i = 1; i < chains.size(); ++i) {
    if (chains[i].size() - pt[i] > chains[argmax].size() - pt[argmax]) argmax = i;
  }
  for (size_t i = 0; i < chains.size(); ++i) {
    if (pt[i] < chains[i].size() && i == argmax) {
      stack.push_back(chains[i][pt[i]]);
      ++pt[i];
      MergeDfs(chains, total, pt, stack, merged);
      --pt[i];
      stack.pop_back();
    }
  }
}

std::vector<std::vector<int>> MergeChains(const std::vector<std::vector<int>>& chains) {
  size_t total = 0;
  for (const auto& c : chains) total += c.size();
  std::vector<size_t> pt(chains.size(), 0);
  std::vector<int> stack;
  std::vector<std::vector<int>> merged;
  MergeDfs(chains, total, pt, stack, merged);
  return merged;
}

void GenerateAnnotations(const std::vector<std::string>& atoms, size_t num_axes,
                         std::vector<std::string>& stack, std::vector<Entity>& out) {
  if (stack.size() == num_axes) {
    // Only one axis (the innermost, by the template's choice) may be vectorized.
    if (std::count(stack.begin(), stack.end(), "vec") <= 1) out.push_back(AnnotateEntity{stack});
    return;
  }
  for (const std::string& a : atoms) {
    stack.push_back(a);
    GenerateAnnotations(atoms, num_axes, stack, out);
    stack.pop_back();
  }
}

// Calls fn(config) for every raw index in order, updating one ConfigEntity in place like an
// odometer: the first knob changes every step, so most steps copy a single entity.
template <typename Fn>
void ForEachPoint(const std::vector<Knob>& knobs, int64_t range_length,
                  std::vector<std::pair<std::string, Entity>>& entities, Fn&& fn) {
  std::vector<size_t> digit(knobs.size(), 0);
  for (int64_t index = 0; index < range_length; ++index) {
    fn(index);
    for (size_t k = 0; k < knobs.size(); ++k) {
      if (++digit[k] < knobs[k].entities.size()) {
        entities[k].second = knobs[k].entities[digit[k]];
        break;
      }
      digit[k] = 0;
      entities[k].second = knobs[k].entities[0];
    }
  }
}

std::string JoinKnobNames(const std::vector<Knob>& knobs) {
  std::string s;
  for (const Knob& k : knobs) {
    if (!s.empty()) s += ", ";
    s += k.name;
  }
  return s;
}

// The entity of `knob` described by a JSON payload, or an error naming what is wrong with it.
Result<Entity> ParsePayload(const Knob& knob, const nlohmann::json& payload) {
  auto bad = [&](const char* want) {
    return InvalidArgument("config entity list: the payload of knob '" + knob.name + "' (tag '" +
                           knob.tag + "') must be " + want + ", got " + payload.dump());
  };
  if (knob.tag == "ot") return Entity{OtherOptionEntity{payload}};
  if (!payload.is_array()) return bad("a list");
  if (knob.tag == "sp" || knob.tag == "re") {
    std::vector<int64_t> ints;
    for (const auto& x : payload) {
      if (!x.is_number_integer()) return bad("a list of integers");
      ints.push_back(x.get<int64_t>());
    }
    if (knob.tag == "sp") return Entity{SplitEntity{ints}};
    ReorderEntity re;
    for (int64_t v : ints) {
      if (v < std::numeric_limits<int>::min() || v > std::numeric_limits<int>::max()) {
        return bad("a list of axis indices");
      }
      re.perm.push_back(static_cast<int>(v));
    }
    return Entity{re};
  }
  AnnotateEntity an;
  for (const auto& x : payload) {
    if (!x.is_string()) return bad("a list of strings");
    an.anns.push_back(x.get<std::string>());
  }
  return Entity{an};
}

// Position of `entity` in knob.entities, or -1. With `fallback_sizes`, a split entity with an
// explicit size[0] also matches [-1] + size[1:] when size[0] is the outer extent that implies.
int64_t FindEntity(const Knob& knob, const Entity& entity, bool fallback_sizes) {
  for (size_t i = 0; i < knob.entities.size(); ++i) {
    if (knob.entities[i] == entity) return static_cast<int64_t>(i);
  }
  const auto* sp = std::get_if<SplitEntity>(&entity);
  if (!fallback_sizes || sp == nullptr || sp->size.empty() || sp->size[0] == -1) return -1;
  int64_t inner = 1;
  for (size_t i = 1; i < sp->size.size(); ++i) inner = MulSat(inner, sp->size[i]);
  if (inner < 1 || sp->size[0] != (knob.product + inner - 1) / inner) return -1;
  SplitEntity normalized = *sp;
  normalized.size[0] = -1;
  return FindEntity(knob, normalized, /*fallback_sizes=*/false);
}

const char* KindName(const Entity& e) {
  switch (e.index()) {
    case 0:
      return "split";
    case 1:
      return "reorder";
    case 2:
      return "annotate";
    default:
      return "other-option";
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Entities.

const char* entity_tag(const Entity& entity) {
  static constexpr const char* kTags[] = {"sp", "re", "an", "ot"};
  return kTags[entity.index()];
}

nlohmann::ordered_json entity_payload(const Entity& entity) {
  return std::visit(
      [](const auto& e) -> nlohmann::ordered_json {
        using T = std::decay_t<decltype(e)>;
        if constexpr (std::is_same_v<T, SplitEntity>) return e.size;
        if constexpr (std::is_same_v<T, ReorderEntity>) return e.perm;
        if constexpr (std::is_same_v<T, AnnotateEntity>) return e.anns;
        if constexpr (std::is_same_v<T, OtherOptionEntity>) return nlohmann::ordered_json(e.val);
      },
      entity);
}

std::string entity_repr(const Entity& entity) {
  return std::visit(
      [](const auto& e) -> std::string {
        using T = std::decay_t<decltype(e)>;
        if constexpr (std::is_same_v<T, SplitEntity>) return py_repr(e.size);
        if constexpr (std::is_same_v<T, ReorderEntity>) return py_repr(e.perm);
        if constexpr (std::is_same_v<T, AnnotateEntity>) return py_repr(e.anns);
        // OtherOptionEntity.__repr__ is str(val): a top-level string is not quoted.
        if constexpr (std::is_same_v<T, OtherOptionEntity>) return py_str(e.val);
      },
      entity);
}

// ---------------------------------------------------------------------------------------------
// ConfigEntity.

const Entity* ConfigEntity::find(std::string_view knob) const {
  for (const auto& [name, entity] : entities_) {
    if (name == knob) return &entity;
  }
  return nullptr;
}

namespace {
template <typename T>
const T& GetTyped(const ConfigEntity& c, std::string_view knob, const char* kind) {
  const Entity* e = c.find(knob);
  KILN_CHECK(e != nullptr) << "ConfigSpace: "
                           << "config has no knob '" + std::string(knob) + "'";
  const T* t = std::get_if<T>(e);
  KILN_CHECK(t != nullptr) << "ConfigSpace: "
                           << "knob '" + std::string(knob) + "' is a " + KindName(*e) +
                                  " knob, not a " + kind + " knob";
  return *t;
}
}  // namespace

const SplitEntity& ConfigEntity::split(std::string_view knob) const {
  return GetTyped<SplitEntity>(*this, knob, "split");
}
const ReorderEntity& ConfigEntity::reorder(std::string_view knob) const {
  return GetTyped<ReorderEntity>(*this, knob, "reorder");
}
const AnnotateEntity& ConfigEntity::annotate(std::string_view knob) const {
  return GetTyped<AnnotateEntity>(*this, knob, "annotate");
}
const OtherOptionEntity& ConfigEntity::other(std::string_view knob) const {
  return GetTyped<OtherOptionEntity>(*this, knob, "other-option");
}

nlohmann::ordered_json ConfigEntity::to_json() const {
  nlohmann::ordered_json j;
  j["index"] = index_;
  j["code_hash"] = nullptr;
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const auto& [name, entity] : entities_) {
    list.push_back(
        nlohmann::ordered_json::array({name, entity_tag(entity), entity_payload(entity)}));
  }
  j["entity"] = std::move(list);
  return j;
}

std::string ConfigEntity::entity_string() const {
  std::string s = "[";
  for (size_t i = 0; i < entities_.size(); ++i) {
    if (i > 0) s += ", ";
    s += "('" + entities_[i].first + "', " + entity_repr(entities_[i].second) + ")";
  }
  return s + "]";
}

// ---------------------------------------------------------------------------------------------
// Factor helpers.

std::vector<int64_t> get_factors(int64_t n) {
  KILN_CHECK(n >= 1) << "ConfigSpace: "
                     << "get_factors needs n >= 1, got " + std::to_string(n);
  std::vector<int64_t> small, large;
  for (int64_t i = 1; i <= n / i; ++i) {
    if (n % i == 0) {
      small.push_back(i);
      if (i != n / i) large.push_back(n / i);
    }
  }
  small.insert(small.end(), large.rbegin(), large.rend());
  return small;
}

std::vector<int64_t> get_pow2s(int64_t n) {
  KILN_CHECK(n >= 1 && n <= (int64_t{1} << 62))
      << "ConfigSpace: "
      << "get_pow2s needs 1 <= n <= 2^62, got " + std::to_string(n);
  // Python: range(math.floor(math.log2(n)) + 1); math.log2 of an int is libm's log2 of the
  // correctly rounded double, reproduced here bit for bit.
  const int top = static_cast<int>(std::floor(std::log2(static_cast<double>(n))));
  std::vector<int64_t> out;
  for (int x = 0; x <= top; ++x) out.push_back(int64_t{1} << x);
  return out;
}

std::vector<int64_t> split_factors(int64_t n, std::string_view policy) {
  if (policy == "factors") return get_factors(n);
  if (policy == "power2") return get_pow2s(n);
  KILN_CHECK(policy == "verbose") << "ConfigSpace: "
                                  << "invalid split policy '" + std::string(policy) + "'";
  return py_set_union_order(get_factors(n), get_pow2s(n));
}

SplitEntity fallback_split(int64_t length, const std::vector<int64_t>& constraints) {
  KILN_CHECK(length >= 1) << "ConfigSpace: "
                          << "fallback_split needs length >= 1, got " + std::to_string(length);
  SplitEntity out;
  out.size.assign(constraints.size(), 0);
  int64_t now = length;
  for (size_t i = constraints.size(); i-- > 0;) {
    const int64_t c = constraints[i];
    KILN_CHECK(c == -1 || c >= 1) << "ConfigSpace: "
                                  << "fallback_split constraints must be -1 or >= 1, got " +
                                         std::to_string(c);
    // TVM substitutes 1e10 for -1.
    const int64_t limit = c == -1 ? int64_t{10000000000} : c;
    int64_t best = 1;
    for (int64_t f : get_factors(now)) {
      if (f > limit) break;
      best = f;
    }
    out.size[i] = best;
    now /= best;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// ConfigSpace.

struct ConfigSpace::FilterCache {
  std::once_flag once;
  // Bit i set when raw index i is valid; empty above kMaxFilterCacheRange.
  std::vector<uint64_t> bits;
  std::vector<int64_t> rank;  // rank[w] = number of valid indices in words [0, w)
  int64_t count = 0;          // number of valid indices
};

ConfigSpace::ConfigSpace() = default;
ConfigSpace::~ConfigSpace() = default;
ConfigSpace::ConfigSpace(const ConfigSpace&) = default;
ConfigSpace& ConfigSpace::operator=(const ConfigSpace&) = default;
ConfigSpace::ConfigSpace(ConfigSpace&&) noexcept = default;
ConfigSpace& ConfigSpace::operator=(ConfigSpace&&) noexcept = default;

void ConfigSpace::AddKnob(Knob knob) {
  KILN_CHECK(!knob.name.empty()) << "ConfigSpace: "
                                 << "a knob needs a name";
  KILN_CHECK(find_knob(knob.name) == nullptr) << "ConfigSpace: "
                                              << "knob '" + knob.name + "' is defined twice";
  int64_t r;
  KILN_CHECK(!__builtin_mul_overflow(range_length_, static_cast<int64_t>(knob.entities.size()), &r))
      << "ConfigSpace: "
      << "the space overflows int64 when adding knob '" + knob.name + "'";
  range_length_ = r;
  knobs_.push_back(std::move(knob));
  cache_.reset();  // validity depends on the knobs
  if (filter_) cache_ = std::make_shared<FilterCache>();
}

void ConfigSpace::define_split(const std::string& name, int64_t length, SplitOptions opts) {
  KILN_CHECK(length >= 1 && length <= (int64_t{1} << 62))
      << "ConfigSpace: "
      << "split '" + name + "': length must be in [1, 2^62], got " + std::to_string(length);
  Knob knob{name, "sp", opts.policy, {}, length, opts.num_outputs};
  if (opts.policy == "candidate") {
    KILN_CHECK(opts.num_outputs >= 1) << "ConfigSpace: "
                                      << "split '" + name + "': num_outputs must be >= 1";
    for (const auto& size : opts.candidate) {
      KILN_CHECK(static_cast<int>(size.size()) == opts.num_outputs)
          << "ConfigSpace: "
          << "split '" + name + "': a candidate has " + std::to_string(size.size()) +
                 " sizes, num_outputs is " + std::to_string(opts.num_outputs);
      knob.entities.push_back(SplitEntity{size});
    }
  } else {
    KILN_CHECK(opts.policy == "factors" || opts.policy == "power2" || opts.policy == "verbose")
        << "ConfigSpace: "
        << "split '" + name + "': invalid policy '" + opts.policy + "'";
    // TVM cannot enumerate a 1-way split either (reduce() over no slots fails).
    KILN_CHECK(opts.num_outputs >= 2) << "ConfigSpace: "
                                      << "split '" + name + "': num_outputs must be >= 2";
    std::vector<int64_t> factors;
    for (int64_t f : split_factors(length, opts.policy)) {
      if (f <= opts.max_factor) factors.push_back(f);
    }
    const bool no_tail = opts.no_tail.value_or(opts.policy == "factors");
    std::vector<int64_t> slots(opts.num_outputs - 1);
    GenerateSplits(factors, length, no_tail, 0, 1, slots, knob.entities);
  }
  if (opts.filter) {
    std::erase_if(knob.entities,
                  [&](const Entity& e) { return !opts.filter(std::get<SplitEntity>(e)); });
  }
  AddKnob(std::move(knob));
}

void ConfigSpace::define_reorder(const std::string& name, int num_axes, const std::string& policy,
                                 ReorderOptions opts) {
  KILN_CHECK(num_axes >= 0) << "ConfigSpace: "
                            << "reorder '" + name + "': num_axes must be >= 0";
  Knob knob{name, "re", policy, {}, 0, num_axes};
  auto check_axes = [&](const std::vector<int>& axes) {
    for (int a : axes) {
      KILN_CHECK(a >= 0 && a < num_axes) << "ConfigSpace: "
                                         << "reorder '" + name + "': axis " + std::to_string(a) +
                                                " is not in [0, " + std::to_string(num_axes) + ")";
    }
  };
  std::vector<int> identity(num_axes);
  for (int i = 0; i < num_axes; ++i) identity[i] = i;
  if (policy == "identity") {
    knob.entities.push_back(ReorderEntity{identity});
  } else if (policy == "all") {
    std::vector<int> perm = identity;
    do {
      knob.entities.push_back(ReorderEntity{perm});
    } while (std::next_permutation(perm.begin(), perm.end()));
  } else if (policy == "interval_all") {
    const auto [begin, end] = opts.interval;
    KILN_CHECK(0 <= begin && begin <= end && end <= num_axes)
        << "ConfigSpace: "
        << "reorder '" + name + "': bad interval";
    std::vector<int> perm = identity;
    do {
      knob.entities.push_back(ReorderEntity{perm});
    } while (std::next_permutation(perm.begin() + begin, perm.begin() + end));
  } else if (policy == "candidate") {
    for (const auto& perm : opts.candidate) {
      check_axes(perm);
      knob.entities.push_back(ReorderEntity{perm});
    }
  } else if (policy == "interleave" || policy == "interleave_cuda") {
    for (const auto& c : opts.spatial) check_axes(c);
    for (const auto& c : opts.reduce) check_axes(c);
    std::vector<std::vector<int>> outer_chains;
    for (const auto& c : opts.spatial) {
      outer_chains.emplace_back(c.begin(), c.empty() ? c.end() : c.end() - 1);
    }
    const auto outer = MergeChains(outer_chains);
    if (policy == "interleave") {
      std::vector<std::vector<int>> inner_chains;
      for (const auto& c : opts.spatial) {
        inner_chains.emplace_back(c.empty() ? c.end() : c.end() - 1, c.end());
      }
      inner_chains.insert(inner_chains.end(), opts.reduce.begin(), opts.reduce.end());
      for (const auto& o : outer) {
        for (const auto& i : MergeChains(inner_chains)) {
          std::vector<int> perm = o;
          perm.insert(perm.end(), i.begin(), i.end());
          knob.entities.push_back(ReorderEntity{perm});
        }
      }
    } else {
      std::vector<int> innermost;
      for (const auto& c : opts.spatial) {
        KILN_CHECK(!c.empty()) << "ConfigSpace: "
                               << "reorder '" + name + "': empty spatial chain";
        innermost.push_back(c.back());
      }
      for (const auto& o : outer) {
        for (const auto& r : MergeChains(opts.reduce)) {
          std::vector<int> perm = o;
          perm.insert(perm.end(), r.begin(), r.end());
          perm.insert(perm.end(), innermost.begin(), innermost.end());
          knob.entities.push_back(ReorderEntity{perm});
        }
      }
    }
  } else {
    KILN_UNREACHABLE("ConfigSpace: reorder '" + name + "': invalid policy '" + policy + "'");
  }
  AddKnob(std::move(knob));
}

void ConfigSpace::define_annotate(const std::string& name, const std::vector<int64_t>& axis_lengths,
                                  const std::string& policy) {
  const int n = static_cast<int>(axis_lengths.size());
  Knob knob{name, "an", policy, {}, 0, n};
  auto bind = [&](std::vector<std::string> slots, const char* what) {
    KILN_CHECK(n >= static_cast<int>(slots.size()))
        << "ConfigSpace: "
        << "annotate '" + name + "': " + what + " needs more axes";
    std::vector<std::string> anns(n - slots.size(), "fuse");
    anns.insert(anns.end(), slots.begin(), slots.end());
    knob.entities.push_back(AnnotateEntity{anns});
  };
  if (policy == "bind_gpu") {
    if (n >= 6) {
      bind({"blockIdx.z", "blockIdx.y", "blockIdx.x", "threadIdx.z", "threadIdx.y", "threadIdx.x"},
           "bind_gpu");
    } else if (n >= 4) {
      bind({"blockIdx.y", "blockIdx.x", "threadIdx.y", "threadIdx.x"}, "bind_gpu");
    } else {
      bind({"blockIdx.x", "threadIdx.x"}, "bind_gpu");
    }
  } else if (policy == "bind_gpu_virtual") {
    if (n >= 9) {
      bind({"blockIdx.z", "blockIdx.y", "blockIdx.x", "vthread", "vthread", "vthread",
            "threadIdx.z", "threadIdx.y", "threadIdx.x"},
           "bind_gpu_virtual");
    } else if (n >= 6) {
      bind({"blockIdx.y", "blockIdx.x", "vthread", "vthread", "threadIdx.y", "threadIdx.x"},
           "bind_gpu_virtual");
    } else {
      bind({"blockIdx.x", "vthread", "threadIdx.x"}, "bind_gpu_virtual");
    }
  } else {
    // policy.replace("try", "none").split("_")
    std::string p = policy;
    for (size_t pos = 0; (pos = p.find("try", pos)) != std::string::npos; pos += 4) {
      p.replace(pos, 3, "none");
    }
    std::vector<std::string> atoms;
    size_t start = 0;
    while (true) {
      const size_t us = p.find('_', start);
      atoms.push_back(p.substr(start, us == std::string::npos ? std::string::npos : us - start));
      if (us == std::string::npos) break;
      start = us + 1;
    }
    for (const auto& a : atoms) {
      KILN_CHECK(a == "none" || a == "unroll" || a == "vec")
          << "ConfigSpace: "
          << "annotate '" + name + "': invalid policy '" + policy + "'";
    }
    std::vector<std::string> stack;
    GenerateAnnotations(atoms, n, stack, knob.entities);
  }
  AddKnob(std::move(knob));
}

void ConfigSpace::define_knob(const std::string& name, std::vector<nlohmann::json> candidates) {
  Knob knob{name, "ot", "", {}, 0, 0};
  for (auto& c : candidates) knob.entities.push_back(OtherOptionEntity{std::move(c)});
  AddKnob(std::move(knob));
}

void ConfigSpace::multi_filter(std::function<bool(const ConfigEntity&)> pred) {
  filter_ = std::move(pred);
  cache_ = filter_ ? std::make_shared<FilterCache>() : nullptr;
}

const Knob* ConfigSpace::find_knob(std::string_view name) const {
  for (const Knob& k : knobs_) {
    if (k.name == name) return &k;
  }
  return nullptr;
}

std::vector<int64_t> ConfigSpace::dims() const {
  std::vector<int64_t> d;
  d.reserve(knobs_.size());
  for (const Knob& k : knobs_) d.push_back(static_cast<int64_t>(k.entities.size()));
  return d;
}

const ConfigSpace::FilterCache& ConfigSpace::Cache() const {
  FilterCache& c = *cache_;
  std::call_once(c.once, [&] {
    if (range_length_ == 0) return;
    ConfigEntity scratch = get(0);
    const bool keep_bits = range_length_ <= kMaxFilterCacheRange;
    if (keep_bits) c.bits.assign((range_length_ + 63) / 64, 0);
    int64_t count = 0;
    ForEachPoint(knobs_, range_length_, scratch.entities_, [&](int64_t index) {
      scratch.index_ = index;
      if (filter_(scratch)) {
        ++count;
        if (keep_bits) c.bits[index / 64] |= uint64_t{1} << (index % 64);
      }
    });
    c.count = count;
    if (keep_bits) {
      c.rank.resize(c.bits.size() + 1);
      c.rank[0] = 0;
      for (size_t w = 0; w < c.bits.size(); ++w)
        c.rank[w + 1] = c.rank[w] + std::popcount(c.bits[w]);
    }
  });
  return c;
}

int64_t ConfigSpace::size() const {
  if (!filter_) return range_length_;
  return Cache().count;
}

bool ConfigSpace::is_index_valid(int64_t index) const {
  if (index < 0 || index >= range_length_) return false;
  if (!filter_) return true;
  if (range_length_ > kMaxFilterCacheRange) return filter_(get(index));
  const FilterCache& c = Cache();
  return (c.bits[index / 64] >> (index % 64)) & 1;
}

int64_t ConfigSpace::nth_valid_index(int64_t k) const {
  KILN_CHECK(0 <= k && k < size())
      << "ConfigSpace: "
      << "nth_valid_index(" + std::to_string(k) + ") outside [0, " + std::to_string(size()) + ")";
  if (!filter_) return k;
  if (range_length_ > kMaxFilterCacheRange) {
    for (int64_t i = 0;; ++i) {
      if (filter_(get(i)) && k-- == 0) return i;
    }
  }
  const FilterCache& c = Cache();
  // The last word w with rank[w] <= k holds the k-th valid index.
  const auto it = std::upper_bound(c.rank.begin(), c.rank.end(), k);
  const size_t w = static_cast<size_t>(it - c.rank.begin()) - 1;
  uint64_t word = c.bits[w];
  for (int64_t skip = k - c.rank[w]; skip > 0; --skip) word &= word - 1;  // drop lowest set bit
  return static_cast<int64_t>(w) * 64 + std::countr_zero(word);
}

ConfigEntity ConfigSpace::get(int64_t index) const {
  KILN_CHECK(index >= 0 && index < range_length_)
      << "ConfigSpace: "
      << "get(" + std::to_string(index) + ") outside [0, " + std::to_string(range_length_) + ")";
  ConfigEntity c;
  c.index_ = index;
  c.entities_.reserve(knobs_.size());
  int64_t t = index;
  for (const Knob& k : knobs_) {
    const int64_t n = static_cast<int64_t>(k.entities.size());
    c.entities_.emplace_back(k.name, k.entities[t % n]);
    t /= n;
  }
  return c;
}

Result<ConfigEntity> ConfigSpace::checked_get(int64_t index) const {
  if (index < 0 || index >= range_length_) {
    return InvalidArgument("config index " + std::to_string(index) +
                           " is out of range: the space has " + std::to_string(range_length_) +
                           " indices [0, " + std::to_string(range_length_) + ")");
  }
  if (!is_index_valid(index)) {
    return InvalidArgument("config index " + std::to_string(index) +
                           " is excluded by the space's multi_filter");
  }
  return get(index);
}

std::vector<int64_t> ConfigSpace::point2knob(int64_t point) const {
  KILN_CHECK(point >= 0 && point < range_length_)
      << "ConfigSpace: "
      << "point2knob(" + std::to_string(point) + ") outside [0, " + std::to_string(range_length_) +
             ")";
  std::vector<int64_t> knob;
  knob.reserve(knobs_.size());
  for (const Knob& k : knobs_) {
    const int64_t n = static_cast<int64_t>(k.entities.size());
    knob.push_back(point % n);
    point /= n;
  }
  return knob;
}

int64_t ConfigSpace::knob2point(const std::vector<int64_t>& knob) const {
  KILN_CHECK(knob.size() == knobs_.size())
      << "ConfigSpace: "
      << "knob2point: " + std::to_string(knob.size()) + " digits for " +
             std::to_string(knobs_.size()) + " knobs";
  int64_t point = 0;
  int64_t radix = 1;
  for (size_t j = 0; j < knob.size(); ++j) {
    const int64_t n = static_cast<int64_t>(knobs_[j].entities.size());
    KILN_CHECK(knob[j] >= 0 && knob[j] < n)
        << "ConfigSpace: "
        << "knob2point: digit " + std::to_string(j) + " = " + std::to_string(knob[j]) +
               " outside [0, " + std::to_string(n) + ")";
    point += knob[j] * radix;
    radix *= n;
  }
  return point;
}

Result<ConfigEntity> ConfigSpace::from_json_entities(const nlohmann::json& entity_list) const {
  if (!entity_list.is_array()) {
    return InvalidArgument("config entity list: expected a list of [name, tag, payload], got " +
                           entity_list.dump());
  }
  std::vector<int64_t> digit(knobs_.size(), -1);
  for (size_t i = 0; i < entity_list.size(); ++i) {
    const nlohmann::json& item = entity_list[i];
    const std::string where = "config entity list: entry " + std::to_string(i) + " ";
    if (!item.is_array() || item.size() != 3 || !item[0].is_string() || !item[1].is_string()) {
      return InvalidArgument(where + item.dump() + " is not a [name, tag, payload] triple");
    }
    const std::string name = item[0].get<std::string>();
    const std::string tag = item[1].get<std::string>();
    const auto it =
        std::find_if(knobs_.begin(), knobs_.end(), [&](const Knob& k) { return k.name == name; });
    if (it == knobs_.end()) {
      return InvalidArgument(where + "names knob '" + name +
                             "', which this space does not have (knobs: " + JoinKnobNames(knobs_) +
                             ")");
    }
    const Knob& knob = *it;
    const size_t k = static_cast<size_t>(it - knobs_.begin());
    if (tag != knob.tag) {
      return InvalidArgument(where + "gives knob '" + name + "' tag '" + tag +
                             "', but in this space it has tag '" + knob.tag + "'");
    }
    if (digit[k] != -1) return InvalidArgument(where + "repeats knob '" + name + "'");
    KILN_ASSIGN_OR_RETURN(Entity entity, ParsePayload(knob, item[2]));
    const int64_t pos = FindEntity(knob, entity, /*fallback_sizes=*/false);
    if (pos < 0) {
      std::string desc = knob.tag == "sp" ? "split of " + std::to_string(knob.product) +
                                                " (policy " + knob.policy + ")"
                                          : std::to_string(knob.entities.size()) + " entities";
      return InvalidArgument(where + "gives knob '" + name + "' the value " + item[2].dump() +
                             ", which is not one of its entities (" + desc + ")");
    }
    digit[k] = pos;
  }
  for (size_t k = 0; k < knobs_.size(); ++k) {
    if (digit[k] == -1) {
      return InvalidArgument("config entity list: knob '" + knobs_[k].name + "' is missing");
    }
  }
  const int64_t index = knob2point(digit);
  if (!is_index_valid(index)) {
    return InvalidArgument("config entity list: the config (index " + std::to_string(index) +
                           ") is excluded by the space's multi_filter");
  }
  return get(index);
}

Result<ConfigEntity> ConfigSpace::make_config(
    std::vector<std::pair<std::string, Entity>> entities) const {
  std::vector<int64_t> digit(knobs_.size(), -1);
  for (const auto& [name, entity] : entities) {
    const auto it =
        std::find_if(knobs_.begin(), knobs_.end(), [&](const Knob& k) { return k.name == name; });
    if (it == knobs_.end()) {
      return InvalidArgument("make_config: no knob '" + name +
                             "' in this space (knobs: " + JoinKnobNames(knobs_) + ")");
    }
    const size_t k = static_cast<size_t>(it - knobs_.begin());
    if (digit[k] != -1) return InvalidArgument("make_config: knob '" + name + "' given twice");
    if (entity_tag(entity) != it->tag) {
      return InvalidArgument("make_config: knob '" + name + "' has tag '" + it->tag +
                             "', the entity given has tag '" + entity_tag(entity) + "'");
    }
    const int64_t pos = FindEntity(*it, entity, /*fallback_sizes=*/true);
    if (pos < 0) {
      return InvalidArgument("make_config: " + entity_repr(entity) + " is not an entity of knob '" +
                             name + "'");
    }
    digit[k] = pos;
  }
  for (size_t k = 0; k < knobs_.size(); ++k) {
    if (digit[k] != -1) continue;
    if (knobs_[k].entities.empty()) {
      return InvalidArgument("make_config: knob '" + knobs_[k].name + "' has no entities");
    }
    digit[k] = 0;
  }
  return get(knob2point(digit));
}

int64_t ConfigSpace::get_next_index(int64_t index, int64_t n, int64_t start, int64_t end) const {
  KILN_CHECK(n != 0) << "ConfigSpace: "
                     << "get_next_index needs n != 0";
  if (end < 0) end = range_length_;
  if (!filter_) {
    index += n;
    return (start <= index && index < end) ? index : -1;
  }
  const int64_t trend = n > 0 ? 1 : -1;
  for (int64_t counter = n > 0 ? n : -n; counter != 0;) {
    index += trend;
    if (index < start || index >= end) return -1;
    if (is_index_valid(index)) --counter;
  }
  return index;
}

int64_t ConfigSpace::subrange_length(int64_t start, int64_t end) const {
  KILN_CHECK(0 <= start && start <= end && end <= range_length_)
      << "ConfigSpace: "
      << "subrange_length: bad range [" + std::to_string(start) + ", " + std::to_string(end) + ")";
  if (!filter_) return end - start;
  int64_t count = 0;
  for (int64_t i = start; i < end; ++i) count += is_index_valid(i) ? 1 : 0;
  return count;
}

std::string ConfigSpace::debug_string() const {
  std::ostringstream os;
  os << "ConfigSpace (len=" << size() << ", range_length=" << range_length_ << ", space_map=\n";
  for (size_t i = 0; i < knobs_.size(); ++i) {
    const Knob& k = knobs_[i];
    os << "  " << (i < 10 ? " " : "") << i << " " << k.name << ": ";
    if (k.tag == "sp") {
      os << "Split(policy=" << k.policy << ", product=" << k.product
         << ", num_outputs=" << k.num_outputs << ")";
    } else if (k.tag == "re") {
      os << "Reorder(policy=" << k.policy << ")";
    } else if (k.tag == "an") {
      os << "Annotate(policy=" << k.policy << ")";
    } else {
      os << "OtherOption([";
      for (size_t j = 0; j < k.entities.size(); ++j) {
        os << (j > 0 ? ", " : "") << entity_repr(k.entities[j]);
      }
      os << "])";
    }
    os << " len=" << k.entities.size() << "\n";
  }
  os << ")";
  return os.str();
}

}  // namespace kiln
