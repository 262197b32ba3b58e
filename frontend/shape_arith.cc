#include "frontend/shape_arith.h"

#include <algorithm>
#include <set>

namespace kiln::frontend {

namespace {

int64_t product(const std::vector<int64_t>& dims, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end; ++i) p *= dims[i];
  return p;
}

class Evaluator {
 public:
  Evaluator(const Node& node, const std::vector<const Tensor*>& inputs, int64_t opset)
      : node_(node), inputs_(inputs), opset_(opset) {}

  Result<Tensor> run() {
    const std::string& op = node_.op_type;
    if (op == "Shape") return shape();
    KILN_ASSIGN_OR_RETURN(const Tensor* data, input(0));
    if (op == "Identity") return out(data->shape, data->i64);
    if (op == "Gather") return gather(*data);
    if (op == "Unsqueeze") return unsqueeze(*data);
    if (op == "Squeeze") return squeeze(*data);
    if (op == "Concat") return concat();
    if (op == "Slice") return slice(*data);
    if (op == "Reshape") return reshape(*data);
    if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div") return binary(*data);
    return error("is not an operator constant folding evaluates");
  }

 private:
  Status error(const std::string& what) const {
    return InvalidArgument(node_.describe() + ": constant folding: " + what);
  }

  // Input i, which must be present and an int64 constant.
  Result<const Tensor*> input(size_t i) const {
    if (i >= inputs_.size() || inputs_[i] == nullptr) {
      return error("input " + std::to_string(i) + " is missing");
    }
    if (inputs_[i]->dtype != DType::kInt64) {
      return error("input '" + inputs_[i]->name + "' is " + dtype_name(inputs_[i]->dtype) +
                   ", not int64");
    }
    return inputs_[i];
  }
  bool has_input(size_t i) const { return i < inputs_.size() && inputs_[i] != nullptr; }

  Result<int64_t> axis(int64_t a, size_t rank) const {
    int64_t r = static_cast<int64_t>(rank);
    if (a < -r || a >= r) {
      return error("axis " + std::to_string(a) + " is out of range for rank " + std::to_string(r));
    }
    return a < 0 ? a + r : a;
  }

  // Axes given as an attribute before `input_from_opset`, as input 1 from then on.
  Result<std::optional<std::vector<int64_t>>> axes_operand(int64_t input_from_opset) const {
    if (opset_ < input_from_opset) {
      if (!node_.attrs.count("axes")) return std::optional<std::vector<int64_t>>();
      return std::optional(node_.attr_ints("axes", {}));
    }
    if (!has_input(1)) return std::optional<std::vector<int64_t>>();
    KILN_ASSIGN_OR_RETURN(const Tensor* axes, input(1));
    return std::optional(axes->i64);
  }

  Tensor out(std::vector<int64_t> shape, std::vector<int64_t> values) const {
    Tensor t;
    t.name = node_.outputs.empty() ? "" : node_.outputs[0];
    t.dtype = DType::kInt64;
    t.shape = std::move(shape);
    t.i64 = std::move(values);
    t.is_constant = true;
    return t;
  }

  Result<Tensor> shape() const {
    if (!has_input(0)) return error("input 0 is missing");
    const std::vector<int64_t>& dims = inputs_[0]->shape;
    int64_t rank = static_cast<int64_t>(dims.size());
    int64_t start = node_.attr_int("start", 0), end = node_.attr_int("end", rank);
    if (start < 0) start += rank;
    if (end < 0) end += rank;
    start = std::clamp<int64_t>(start, 0, rank);
    end = std::clamp<int64_t>(end, start, rank);
    std::vector<int64_t> values(dims.begin() + start, dims.begin() + end);
    return out({end - start}, values);
  }

  Result<Tensor> gather(const Tensor& data) const {
    KILN_ASSIGN_OR_RETURN(const Tensor* indices, input(1));
    if (data.shape.empty()) return error("cannot gather from a scalar");
    KILN_ASSIGN_OR_RETURN(int64_t ax, axis(node_.attr_int("axis", 0), data.shape.size()));
    int64_t dim = data.shape[ax];
    int64_t outer = product(data.shape, 0, ax);
    int64_t inner = product(data.shape, ax + 1, data.shape.size());
    std::vector<int64_t> shape(data.shape.begin(), data.shape.begin() + ax);
    shape.insert(shape.end(), indices->shape.begin(), indices->shape.end());
    shape.insert(shape.end(), data.shape.begin() + ax + 1, data.shape.end());
    std::vector<int64_t> values;
    values.reserve(outer * indices->i64.size() * inner);
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t idx : indices->i64) {
        if (idx < -dim || idx >= dim) {
          return error("index " + std::to_string(idx) + " is out of range for a dimension of " +
                       std::to_string(dim));
        }
        if (idx < 0) idx += dim;
        for (int64_t i = 0; i < inner; ++i) values.push_back(data.i64[(o * dim + idx) * inner + i]);
      }
    }
    return out(shape, values);
  }

  Result<Tensor> unsqueeze(const Tensor& data) const {
    KILN_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> axes, axes_operand(13));
    if (!axes) return error("has no axes");
    size_t rank = data.shape.size() + axes->size();
    std::set<int64_t> at;
    for (int64_t a : *axes) {
      KILN_ASSIGN_OR_RETURN(int64_t ax, axis(a, rank));
      if (!at.insert(ax).second) return error("axis " + std::to_string(a) + " is repeated");
    }
    std::vector<int64_t> shape;
    size_t next = 0;
    for (size_t i = 0; i < rank; ++i) {
      shape.push_back(at.count(static_cast<int64_t>(i)) ? 1 : data.shape[next++]);
    }
    return out(shape, data.i64);
  }

  Result<Tensor> squeeze(const Tensor& data) const {
    KILN_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> axes, axes_operand(13));
    std::set<int64_t> at;
    if (axes) {
      for (int64_t a : *axes) {
        KILN_ASSIGN_OR_RETURN(int64_t ax, axis(a, data.shape.size()));
        if (data.shape[ax] != 1)
          return error("cannot squeeze axis " + std::to_string(a) + " of size " +
                       std::to_string(data.shape[ax]));
        at.insert(ax);
      }
    }
    std::vector<int64_t> shape;
    for (size_t i = 0; i < data.shape.size(); ++i) {
      bool drop = axes ? at.count(static_cast<int64_t>(i)) > 0 : data.shape[i] == 1;
      if (!drop) shape.push_back(data.shape[i]);
    }
    return out(shape, data.i64);
  }

  Result<Tensor> concat() const {
    KILN_ASSIGN_OR_RETURN(const Tensor* first, input(0));
    if (first->shape.empty()) return error("cannot concatenate scalars");
    KILN_ASSIGN_OR_RETURN(int64_t ax, axis(node_.attr_int("axis", 0), first->shape.size()));
    std::vector<int64_t> shape = first->shape;
    shape[ax] = 0;
    std::vector<const Tensor*> parts;
    for (size_t i = 0; i < inputs_.size(); ++i) {
      KILN_ASSIGN_OR_RETURN(const Tensor* t, input(i));
      for (size_t d = 0; d < shape.size(); ++d) {
        if (t->shape.size() != shape.size() ||
            (static_cast<int64_t>(d) != ax && t->shape[d] != first->shape[d])) {
          return error("input shapes " + dims_text(first->shape) + " and " + dims_text(t->shape) +
                       " do not concatenate on axis " + std::to_string(ax));
        }
      }
      shape[ax] += t->shape[ax];
      parts.push_back(t);
    }
    int64_t outer = product(shape, 0, ax);
    std::vector<int64_t> values;
    for (int64_t o = 0; o < outer; ++o) {
      for (const Tensor* t : parts) {
        int64_t chunk = product(t->shape, ax, t->shape.size());
        values.insert(values.end(), t->i64.begin() + o * chunk, t->i64.begin() + (o + 1) * chunk);
      }
    }
    return out(shape, values);
  }

  Result<Tensor> slice(const Tensor& data) const {
    KILN_ASSIGN_OR_RETURN(const Tensor* starts, input(1));
    KILN_ASSIGN_OR_RETURN(const Tensor* ends, input(2));
    size_t rank = data.shape.size();
    size_t n = starts->i64.size();
    std::vector<int64_t> axes(n), steps(n, 1);
    for (size_t i = 0; i < n; ++i) axes[i] = static_cast<int64_t>(i);
    if (has_input(3)) {
      KILN_ASSIGN_OR_RETURN(const Tensor* a, input(3));
      axes = a->i64;
    }
    if (has_input(4)) {
      KILN_ASSIGN_OR_RETURN(const Tensor* s, input(4));
      steps = s->i64;
    }
    if (ends->i64.size() != n || axes.size() != n || steps.size() != n) {
      return error("starts, ends, axes and steps differ in length");
    }
    std::vector<int64_t> begin(rank, 0), step(rank, 1), shape = data.shape;
    for (size_t i = 0; i < n; ++i) {
      KILN_ASSIGN_OR_RETURN(int64_t ax, axis(axes[i], rank));
      int64_t dim = data.shape[ax], s = steps[i];
      if (s == 0) return error("step 0 on axis " + std::to_string(axes[i]));
      int64_t b = starts->i64[i], e = ends->i64[i];
      if (b < 0) b += dim;
      if (e < 0) e += dim;
      if (s > 0) {
        b = std::clamp<int64_t>(b, 0, dim);
        e = std::clamp<int64_t>(e, 0, dim);
        shape[ax] = e > b ? (e - b + s - 1) / s : 0;
      } else {
        b = std::clamp<int64_t>(b, 0, dim - 1);
        e = std::clamp<int64_t>(e, -1, dim - 1);
        shape[ax] = b > e ? (b - e - s - 1) / -s : 0;
      }
      begin[ax] = b;
      step[ax] = s;
    }
    std::vector<int64_t> values;
    int64_t count = product(shape, 0, rank);
    std::vector<int64_t> index(rank, 0);
    for (int64_t k = 0; k < count; ++k) {
      int64_t offset = 0;
      for (size_t d = 0; d < rank; ++d)
        offset = offset * data.shape[d] + begin[d] + index[d] * step[d];
      values.push_back(data.i64[offset]);
      for (size_t d = rank; d-- > 0;) {
        if (++index[d] < shape[d]) break;
        index[d] = 0;
      }
    }
    return out(shape, values);
  }

  Result<Tensor> reshape(const Tensor& data) const {
    KILN_ASSIGN_OR_RETURN(const Tensor* target, input(1));
    bool allow_zero = node_.attr_int("allowzero", 0) != 0;
    std::vector<int64_t> shape = target->i64;
    int64_t known = 1, infer_at = -1;
    for (size_t i = 0; i < shape.size(); ++i) {
      if (shape[i] == 0 && !allow_zero) {
        if (i >= data.shape.size()) return error("shape has a 0 past the input's rank");
        shape[i] = data.shape[i];
      }
      if (shape[i] == -1) {
        if (infer_at >= 0) return error("shape has more than one -1");
        infer_at = static_cast<int64_t>(i);
      } else if (shape[i] < 0) {
        return error("shape has a negative dimension " + std::to_string(shape[i]));
      } else {
        known *= shape[i];
      }
    }
    int64_t count = data.num_elements();
    if (infer_at >= 0) {
      if (known == 0 || count % known != 0) return error("cannot infer the -1 of the shape");
      shape[infer_at] = count / known;
    } else if (known != count) {
      return error("cannot reshape " + dims_text(data.shape) + " to " + dims_text(shape));
    }
    return out(shape, data.i64);
  }

  Result<Tensor> binary(const Tensor& a) const {
    KILN_ASSIGN_OR_RETURN(const Tensor* bp, input(1));
    const Tensor& b = *bp;
    size_t rank = std::max(a.shape.size(), b.shape.size());
    // Shapes aligned to the right, with the broadcast (stride 0) dimensions found.
    auto aligned = [rank](const std::vector<int64_t>& s) {
      std::vector<int64_t> r(rank - s.size(), 1);
      r.insert(r.end(), s.begin(), s.end());
      return r;
    };
    std::vector<int64_t> sa = aligned(a.shape), sb = aligned(b.shape), shape(rank);
    for (size_t d = 0; d < rank; ++d) {
      if (sa[d] != sb[d] && sa[d] != 1 && sb[d] != 1) {
        return error("shapes " + dims_text(a.shape) + " and " + dims_text(b.shape) +
                     " do not broadcast");
      }
      shape[d] = sa[d] == 1 ? sb[d] : sa[d];
    }
    auto strides = [rank](const std::vector<int64_t>& s) {
      std::vector<int64_t> st(rank, 0);
      int64_t inner = 1;
      for (size_t d = rank; d-- > 0;) {
        st[d] = s[d] == 1 ? 0 : inner;
        inner *= s[d];
      }
      return st;
    };
    std::vector<int64_t> ta = strides(sa), tb = strides(sb), index(rank, 0), values;
    int64_t count = product(shape, 0, rank);
    const std::string& op = node_.op_type;
    for (int64_t k = 0; k < count; ++k) {
      int64_t ia = 0, ib = 0;
      for (size_t d = 0; d < rank; ++d) {
        ia += index[d] * ta[d];
        ib += index[d] * tb[d];
      }
      int64_t x = a.i64[ia], y = b.i64[ib];
      if (op == "Add") {
        values.push_back(x + y);
      } else if (op == "Sub") {
        values.push_back(x - y);
      } else if (op == "Mul") {
        values.push_back(x * y);
      } else {
        if (y == 0) return error("division by zero");
        values.push_back(x / y);
      }
      for (size_t d = rank; d-- > 0;) {
        if (++index[d] < shape[d]) break;
        index[d] = 0;
      }
    }
    return out(shape, values);
  }

  const Node& node_;
  const std::vector<const Tensor*>& inputs_;
  int64_t opset_;
};

}  // namespace

bool is_foldable_op(const std::string& op_type) {
  static const std::set<std::string> kOps = {"Shape",  "Gather", "Unsqueeze", "Squeeze",
                                             "Concat", "Slice",  "Add",       "Sub",
                                             "Mul",    "Div",    "Identity",  "Reshape"};
  return kOps.count(op_type) > 0;
}

Result<Tensor> evaluate_int64(const Node& node, const std::vector<const Tensor*>& inputs,
                              int64_t opset) {
  return Evaluator(node, inputs, opset).run();
}

}  // namespace kiln::frontend
