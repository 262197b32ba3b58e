#include "compiler/strided_copy_fusion.h"

#include <map>
#include <set>
#include <string>

#include "compiler/graph_rewrite.h"
#include "compiler/lowering_util.h"
#include "compiler/lowerings.h"
#include "compiler/op_lowering.h"

namespace kiln::compiler {

namespace {

using frontend::Graph;
using frontend::Node;

// A strided view of the Slice's input: element o of `shape` is input element
// base + sum o_d * strides[d].
struct Strided {
  std::vector<int64_t> shape, strides;
  int64_t base = 0;
};

// The op types a chain may pass through: views that only reinterpret the shape.
bool is_reshaping_view(const Node& node) {
  return is_view_op(node.op_type) && node.op_type != "Dropout" && node.outputs.size() == 1;
}

class ChainFinder {
 public:
  explicit ChainFinder(const Graph& g) : g_(g) {
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      std::set<std::string> seen;
      for (const std::string& in : g.nodes[i].inputs) {
        if (!in.empty() && seen.insert(in).second) consumers_[in].push_back(i);
      }
    }
    outputs_.insert(g.outputs.begin(), g.outputs.end());
  }

  // The nodes from the Slice at `slice` to its Transpose (in order) and the copy they make, or
  // nullopt when `slice` does not start such a chain.
  std::optional<std::pair<std::vector<size_t>, Strided>> match(size_t slice) const {
    const Node& s = g_.nodes[slice];
    if (s.op_type != "Slice" || s.inputs.empty() || s.outputs.size() != 1) return std::nullopt;
    Result<SliceGeometry> geometry = slice_geometry(g_, s);
    if (!geometry.ok()) return std::nullopt;  // lower_slice names what is wrong
    Strided view{geometry->shape, geometry->strides, geometry->base};
    for (int64_t st : view.strides) {
      if (st < 0) return std::nullopt;
    }
    if (product(view.shape) == 0) return std::nullopt;
    std::vector<size_t> chain = {slice};
    std::string tensor = s.outputs[0];
    while (true) {
      auto readers = consumers_.find(tensor);
      if (readers == consumers_.end() || readers->second.size() != 1 || outputs_.count(tensor)) {
        return std::nullopt;
      }
      const size_t next = readers->second[0];
      const Node& n = g_.nodes[next];
      if (n.inputs.empty() || n.inputs[0] != tensor) return std::nullopt;
      chain.push_back(next);
      if (is_reshaping_view(n)) {
        std::optional<std::vector<int64_t>> strides =
            reshape_strides(view.shape, view.strides, g_.tensor(n.outputs[0]).shape);
        if (!strides) return std::nullopt;
        view.shape = g_.tensor(n.outputs[0]).shape;
        view.strides = *strides;
        tensor = n.outputs[0];
        continue;
      }
      if (n.op_type != "Transpose" || n.outputs.size() != 1) return std::nullopt;
      // lower_transpose names a perm that is not a permutation.
      std::optional<std::vector<int64_t>> perm =
          transpose_perm(n, static_cast<int64_t>(view.shape.size()));
      if (!perm) return std::nullopt;
      Strided out;
      out.base = view.base;
      for (int64_t p : *perm) {
        out.shape.push_back(view.shape[p]);
        out.strides.push_back(view.strides[p]);
      }
      if (g_.tensor(n.outputs[0]).shape != out.shape) return std::nullopt;
      return std::make_pair(chain, out);
    }
  }

 private:
  const Graph& g_;
  std::map<std::string, std::vector<size_t>> consumers_;
  std::set<std::string> outputs_;
};

}  // namespace

std::optional<std::vector<int64_t>> reshape_strides(const std::vector<int64_t>& shape,
                                                    const std::vector<int64_t>& strides,
                                                    const std::vector<int64_t>& new_shape) {
  if (product(shape) != product(new_shape) || product(shape) == 0) return std::nullopt;
  // Dimensions of one element say nothing of the layout.
  std::vector<int64_t> dims, steps;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 1) continue;
    dims.push_back(shape[i]);
    steps.push_back(strides[i]);
  }
  std::vector<int64_t> out(new_shape.size(), 0);
  size_t oi = 0, ni = 0;
  while (oi < dims.size() && ni < new_shape.size()) {
    if (new_shape[ni] == 1) {
      ++ni;
      continue;
    }
    // The smallest run of old dimensions [oi, oj) and new ones [ni, nj) of equal element count.
    size_t oj = oi + 1, nj = ni + 1;
    int64_t old_count = dims[oi], new_count = new_shape[ni];
    while (old_count != new_count) {
      if (old_count < new_count) {
        if (oj == dims.size()) return std::nullopt;
        old_count *= dims[oj++];
      } else {
        if (nj == new_shape.size()) return std::nullopt;
        new_count *= new_shape[nj++];
      }
    }
    // The old run must be one block of memory in row-major order ...
    for (size_t k = oi; k + 1 < oj; ++k) {
      if (steps[k] != dims[k + 1] * steps[k + 1]) return std::nullopt;
    }
    // ... which the new run splits in row-major order.
    int64_t stride = steps[oj - 1];
    for (size_t k = nj; k-- > ni;) {
      out[k] = new_shape[k] == 1 ? 0 : stride;
      stride *= new_shape[k];
    }
    oi = oj;
    ni = nj;
  }
  return out;
}

int fuse_strided_copies(Graph* graph) {
  Graph& g = *graph;
  std::vector<bool> erase(g.nodes.size(), false);
  std::map<size_t, Node> replace;  // a chain's Transpose -> the copy that replaces the chain
  {
    ChainFinder finder(g);
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      if (erase[i]) continue;
      auto m = finder.match(i);
      if (!m) continue;
      const auto& [chain, copy] = *m;
      const Node& transpose = g.nodes[chain.back()];
      Node n;
      n.op_type = kStridedCopyOp;
      n.name = transpose.name.empty() ? transpose.outputs[0] : transpose.name;
      n.index = transpose.index;
      n.inputs = {g.nodes[i].inputs[0]};
      n.outputs = transpose.outputs;
      n.attrs["base"] = copy.base;
      n.attrs["strides"] = copy.strides;
      for (size_t k : chain) erase[k] = true;
      replace[chain.back()] = std::move(n);
    }
  }
  return rewrite_nodes(&g, erase, std::move(replace));
}

}  // namespace kiln::compiler
