#include "common/python_compat.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <string_view>

namespace kiln {
namespace {

// CPython set emulation. TVM builds the "verbose" split policy's factors as
// list(set(divisors) | set(pow2s)), so the config indices in TVM logs follow CPython's hash-table
// slot order. This models Objects/setobject.c (3.x, unchanged from 3.7 to 3.12) for positive
// ints, whose hash is the value itself (mod 2^61 - 1). Sets built here never delete, so there are
// no dummy entries.
class PySet {
 public:
  static constexpr size_t kMinSize = 8;       // PySet_MINSIZE
  static constexpr size_t kLinearProbes = 9;  // LINEAR_PROBES
  static constexpr int kPerturbShift = 5;     // PERTURB_SHIFT

  PySet() : table_(kMinSize, 0), mask_(kMinSize - 1) {}

  // set(list): set_add_entry for each element, in list order.
  static PySet FromList(const std::vector<int64_t>& keys) {
    PySet s;
    for (int64_t k : keys) s.Add(k);
    return s;
  }

  // set_add_entry().
  void Add(int64_t key) {
    const uint64_t hash = Hash(key);
    size_t i = hash & mask_;
    uint64_t perturb = hash;
    while (true) {
      // Probe slot i and, when they fit before the end of the table, the next kLinearProbes.
      const size_t last = (i + kLinearProbes <= mask_) ? i + kLinearProbes : i;
      for (size_t j = i; j <= last; ++j) {
        if (table_[j] == key) return;  // ints: equal hash <=> equal value in this range
        if (table_[j] == 0) {
          table_[j] = key;
          ++fill_;
          ++used_;
          if (static_cast<size_t>(fill_) * 5 >= mask_ * 3) {
            Resize(used_ > 50000 ? used_ * 2 : used_ * 4);
          }
          return;
        }
      }
      perturb >>= kPerturbShift;
      i = (i * 5 + 1 + perturb) & mask_;
    }
  }

  // set_merge(): `this |= other`, as set_update_internal() does for a set argument. `a | b` is
  // a copy of a (an empty set merged with a) then merged with b.
  void Merge(const PySet& other) {
    if (other.used_ == 0) return;
    // One resize up front, expecting few overlapping keys.
    if ((fill_ + other.used_) * 5 >= static_cast<int64_t>(mask_) * 3) {
      Resize((used_ + other.used_) * 2);
    }
    if (fill_ == 0 && mask_ == other.mask_) {  // same size, no dummies: copy the slots verbatim
      table_ = other.table_;
      fill_ = other.fill_;
      used_ = other.used_;
      return;
    }
    if (fill_ == 0) {  // empty: clean inserts in the other's slot order
      for (int64_t k : other.table_) {
        if (k != 0) InsertClean(table_, mask_, k);
      }
      fill_ = used_ = other.used_;
      return;
    }
    for (int64_t k : other.table_) {
      if (k != 0) Add(k);
    }
  }

  // Iteration order: slot order.
  std::vector<int64_t> Items() const {
    std::vector<int64_t> out;
    out.reserve(used_);
    for (int64_t k : table_) {
      if (k != 0) out.push_back(k);
    }
    return out;
  }

 private:
  static uint64_t Hash(int64_t key) {
    constexpr uint64_t kModulus = (uint64_t{1} << 61) - 1;  // _PyHASH_MODULUS on 64-bit
    return static_cast<uint64_t>(key) % kModulus;
  }

  // set_insert_clean(): insert a key known to be absent into a table without dummies.
  static void InsertClean(std::vector<int64_t>& table, size_t mask, int64_t key) {
    const uint64_t hash = Hash(key);
    size_t i = hash & mask;
    uint64_t perturb = hash;
    while (true) {
      if (table[i] == 0) {
        table[i] = key;
        return;
      }
      if (i + kLinearProbes <= mask) {
        for (size_t j = 1; j <= kLinearProbes; ++j) {
          if (table[i + j] == 0) {
            table[i + j] = key;
            return;
          }
        }
      }
      perturb >>= kPerturbShift;
      i = (i * 5 + 1 + perturb) & mask;
    }
  }

  // set_table_resize(): the smallest power of two > minused (at least kMinSize); the old
  // entries are re-inserted in slot order.
  void Resize(int64_t minused) {
    size_t newsize = kMinSize;
    while (newsize <= static_cast<size_t>(minused)) newsize <<= 1;
    std::vector<int64_t> newtable(newsize, 0);
    for (int64_t k : table_) {
      if (k != 0) InsertClean(newtable, newsize - 1, k);
    }
    table_ = std::move(newtable);
    mask_ = newsize - 1;
    fill_ = used_;
  }

  std::vector<int64_t> table_;  // 0 marks an unused slot (keys are >= 1)
  size_t mask_;
  int64_t fill_ = 0;
  int64_t used_ = 0;
};

}  // namespace

std::vector<int64_t> py_set_union_order(const std::vector<int64_t>& a,
                                        const std::vector<int64_t>& b) {
  // set(a) | set(b): set_or() copies the first set, then merges the second into the copy.
  PySet result;
  result.Merge(PySet::FromList(a));
  result.Merge(PySet::FromList(b));
  return result.Items();
}

std::string py_float_repr(double x) {
  if (x == 0) return std::signbit(x) ? "-0.0" : "0.0";
  // std::to_chars without a precision gives the shortest digits that read back to x, choosing
  // the closest such digits: the same digits as CPython's repr (David Gay's mode 0).
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), x, std::chars_format::scientific);
  (void)ec;                              // 64 bytes hold any double in scientific form
  std::string_view sci(buf, end - buf);  // e.g. "-4.5656413e-03"
  std::string sign;
  if (sci.front() == '-') {
    sign = "-";
    sci.remove_prefix(1);
  }
  size_t e = sci.find('e');
  std::string digits(1, sci[0]);
  if (e > 1) digits += std::string(sci.substr(2, e - 2));  // skip the '.'
  int exp10 = std::atoi(std::string(sci.substr(e + 1)).c_str());
  // CPython (float_repr_style 'short', format code 'r'): with decpt = exp10 + 1 the position of
  // the decimal point, use exponent notation when decpt <= -4 or decpt > 16.
  int decpt = exp10 + 1;
  if (decpt <= -4 || decpt > 16) {
    std::string out = sign + digits.substr(0, 1);
    if (digits.size() > 1) out += "." + digits.substr(1);
    std::string exponent = std::to_string(std::abs(exp10));
    if (exponent.size() < 2) exponent = "0" + exponent;  // Python: at least two digits
    return out + "e" + (exp10 < 0 ? "-" : "+") + exponent;
  }
  std::string out = sign;
  if (decpt <= 0) {
    out += "0." + std::string(-decpt, '0') + digits;
  } else if (static_cast<size_t>(decpt) >= digits.size()) {
    out += digits + std::string(decpt - digits.size(), '0') + ".0";
  } else {
    out += digits.substr(0, decpt) + "." + digits.substr(decpt);
  }
  return out;
}

namespace {

std::string repr(const nlohmann::json& v, bool quote_strings) {
  switch (v.type()) {
    case nlohmann::json::value_t::null:
      return "None";
    case nlohmann::json::value_t::boolean:
      return v.get<bool>() ? "True" : "False";
    case nlohmann::json::value_t::number_float: {
      const double x = v.get<double>();
      if (std::isnan(x)) return "nan";
      if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
      return py_float_repr(x);
    }
    case nlohmann::json::value_t::string:
      return quote_strings ? "'" + v.get<std::string>() + "'" : v.get<std::string>();
    case nlohmann::json::value_t::array: {
      std::string s = "[";
      for (size_t i = 0; i < v.size(); ++i) {
        if (i > 0) s += ", ";
        s += repr(v[i], /*quote_strings=*/true);
      }
      return s + "]";
    }
    default:
      return v.dump();
  }
}

}  // namespace

std::string py_repr(const nlohmann::json& value) { return repr(value, /*quote_strings=*/true); }

std::string py_str(const nlohmann::json& value) { return repr(value, /*quote_strings=*/false); }

}  // namespace kiln
