#include "costmodel/touch_extractor.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string_view>
#include <unordered_map>

#include "ir/visitor.h"

namespace kiln::costmodel {

Annotation annotation_of(ir::LoopKind kind) {
  switch (kind) {
    case ir::LoopKind::kSerial:
      return Annotation::kSerial;
    case ir::LoopKind::kParallel:
      return Annotation::kParallel;
    case ir::LoopKind::kVectorized:
      return Annotation::kVectorized;
    case ir::LoopKind::kUnrolled:
      return Annotation::kUnrolled;
  }
  return Annotation::kSerial;
}

float log_transform(int64_t x) {
  // Same arithmetic as TVM (natural logs divided, in double, then narrowed), so that values
  // match bit for bit where the platforms' libm agree.
  if (x < 0) return static_cast<float>(-std::log(static_cast<double>(-x + 1)) / std::log(2.0));
  return static_cast<float>(std::log(static_cast<double>(x + 1)) / std::log(2.0));
}

namespace {

// TVM's ParallelLevel: GPU blocks 2, GPU threads and parallel loops 1, everything else 0.
int parallel_level(Annotation ann) {
  switch (ann) {
    case Annotation::kBlockX:
    case Annotation::kBlockY:
    case Annotation::kBlockZ:
      return 2;
    case Annotation::kThreadX:
    case Annotation::kThreadY:
    case Annotation::kThreadZ:
    case Annotation::kParallel:
      return 1;
    default:
      return 0;
  }
}

// The variables of an index expression with their constant coefficient, when the index is
// c*var + (terms free of var). TVM's IndexParser reads the stride off the first occurrence of
// the var in its *simplified* index (var*c after canonicalization, a bare var otherwise).
// kiln's indices are not canonicalized ((io*8 + ii)*K + k), so the coefficient is computed
// instead: it is what TVM's simplifier would have put next to the var. A var under a division,
// modulo, min/max, select, nested load or a product with a non-constant counts as "appears
// without a constant stride": 1, as in TVM.
struct IndexTerm {
  const ir::ExprNode* var;
  int64_t coefficient;
  bool nonlinear;
};

void collect_terms(const ir::Expr& e, int64_t scale, bool nonlinear,
                   std::vector<IndexTerm>& terms) {
  if (!e.defined()) return;
  switch (e->kind) {
    case ir::ExprKind::kIntImm:
    case ir::ExprKind::kFloatImm:
      return;
    case ir::ExprKind::kVar: {
      for (IndexTerm& t : terms) {
        if (t.var == e.get()) {
          if (nonlinear) {
            t.nonlinear = true;
          } else {
            t.coefficient += scale;
          }
          return;
        }
      }
      terms.push_back({e.get(), nonlinear ? 0 : scale, nonlinear});
      return;
    }
    case ir::ExprKind::kAdd:
      collect_terms(e->a, scale, nonlinear, terms);
      collect_terms(e->b, scale, nonlinear, terms);
      return;
    case ir::ExprKind::kSub:
      collect_terms(e->a, scale, nonlinear, terms);
      collect_terms(e->b, -scale, nonlinear, terms);
      return;
    case ir::ExprKind::kMul: {
      int64_t k = 0;
      if (ir::is_const_int(e->a, &k)) {
        collect_terms(e->b, scale * k, nonlinear, terms);
        return;
      }
      if (ir::is_const_int(e->b, &k)) {
        collect_terms(e->a, scale * k, nonlinear, terms);
        return;
      }
      collect_terms(e->a, 0, true, terms);
      collect_terms(e->b, 0, true, terms);
      return;
    }
    default:
      collect_terms(e->a, 0, true, terms);
      collect_terms(e->b, 0, true, terms);
      collect_terms(e->c, 0, true, terms);
      return;
  }
}

int64_t stride_of(const std::vector<IndexTerm>& terms, const ir::ExprNode* var) {
  for (const IndexTerm& t : terms) {
    if (t.var != var) continue;
    // Present but with no usable constant (nonlinear, or c*v - c*v): TVM's default stride 1.
    if (t.nonlinear || t.coefficient == 0) return 1;
    return t.coefficient;
  }
  return 0;
}

// TVM's TouchExtractor, on the IR visitor: loops open itervars, loads and stores are accesses
// (a store's access first, then its value's, then its index's, as TVM walks a Store), and float
// arithmetic counts towards the innermost loop.
class TouchExtractor : public ir::IRVisitor {
 public:
  TouchFeatures Run(const std::vector<ir::Stmt>& stmts) {
    for (const ir::Stmt& s : stmts) visit(s);
    return std::move(out_);
  }

 private:
  void visit_for(const ir::Stmt& s) override {
    EnterItervar(s.get());
    visit(s->body);
    ExitItervar();
  }
  void visit_store(const ir::Stmt& s) override {
    EnterMem(s->buffer, s->index);
    visit(s->value);
    visit(s->index);  // not the per-dimension indices: they are the same index again
  }

  void visit_binary(const ir::Expr& e) override {
    if (e->dtype == ir::DType::kFloat32 && !stack_.empty()) {
      switch (e->kind) {
        case ir::ExprKind::kAdd:
        case ir::ExprKind::kSub:
          ++Innermost().add_ct;
          break;
        case ir::ExprKind::kMul:
          ++Innermost().mul_ct;
          break;
        case ir::ExprKind::kDiv:
        case ir::ExprKind::kMod:
          ++Innermost().div_ct;
          break;
        default:
          break;
      }
    }
    IRVisitor::visit_binary(e);
  }
  void visit_load(const ir::Expr& e) override {
    EnterMem(e->buffer, e->a);
    IRVisitor::visit_load(e);
  }

  Itervar& Innermost() { return out_.itervars[stack_.back()]; }

  void EnterItervar(const ir::StmtNode* loop) {
    saved_topdown_.push_back(topdown_);
    topdown_ *= loop->extent;
    Itervar iv;
    iv.var = loop->loop_var.get();
    iv.length = loop->extent;
    iv.nest_level = static_cast<int>(stack_.size()) + 1;
    iv.ann = annotation_of(loop->loop_kind);
    iv.topdown_product = topdown_;
    iv.first_access = static_cast<int>(out_.accesses.size());
    stack_.push_back(static_cast<int>(out_.itervars.size()));
    out_.itervars.push_back(iv);
  }

  // TVM multiplies, on exit of loop v, every enclosing loop's entry by len(v). The entry of the
  // loop at depth d is therefore final once that loop exits, and equals its child's entry (the
  // next loop on the access's stack, already exited) times its own length: computing it that
  // way gives TVM's numbers in time linear in the number of (loop, access) pairs.
  void ExitItervar() {
    const int id = stack_.back();
    const size_t depth = stack_.size() - 1;  // index of this loop on the access stacks
    Itervar& iv = out_.itervars[id];
    iv.end_access = static_cast<int>(out_.accesses.size());

    int64_t bottomup = -1;
    for (int a = iv.first_access; a < iv.end_access; ++a) {
      std::vector<TouchPattern>& t = out_.accesses[a].touches;
      int64_t count = 1, reuse = 1;
      if (t.size() > depth + 1) {
        count = t[depth + 1].count;
        reuse = t[depth + 1].reuse;
      }
      if (t[depth].stride != 0) {
        count *= iv.length;
      } else {
        reuse *= iv.length;
      }
      t[depth].count = count;
      t[depth].reuse = reuse;
      bottomup = std::max(bottomup, count * reuse);
    }
    iv.bottomup_product = bottomup;

    // A loop directly under a loop one parallel level higher (a serial loop in a parallel one)
    // leaves its count/reuse, negated to mark them as a base, on every enclosing loop of that
    // higher level.
    const int level = parallel_level(iv.ann);
    if (depth > 0 && parallel_level(out_.itervars[stack_[depth - 1]].ann) == level + 1) {
      for (int a = iv.first_access; a < iv.end_access; ++a) {
        std::vector<TouchPattern>& t = out_.accesses[a].touches;
        for (size_t d = 0; d < depth; ++d) {
          if (parallel_level(out_.itervars[stack_[d]].ann) != level + 1) continue;
          t[d].thread_reuse = -t[depth].reuse;
          t[d].thread_count = -t[depth].count;
        }
      }
    }
    for (int a = iv.first_access; a < iv.end_access; ++a) {
      TouchPattern& p = out_.accesses[a].touches[depth];
      if (p.thread_count < 0) {
        p.thread_count = p.count / -p.thread_count;
        // Both bases are set together; reuse >= 1 keeps the divisor non-zero.
        if (p.thread_reuse < 0) p.thread_reuse = p.reuse / -p.thread_reuse;
      }
    }

    stack_.pop_back();
    // Restoring (rather than dividing by the length, as TVM does) also handles extent 0.
    topdown_ = saved_topdown_.back();
    saved_topdown_.pop_back();
  }

  void EnterMem(const ir::Buffer& buffer, const ir::Expr& index) {
    Access access;
    const std::string& name = buffer->name;
    int& k = buffer_counter_[name];
    access.name = name + "_" + std::to_string(k++);

    terms_.clear();
    collect_terms(index, 1, false, terms_);
    access.loops = stack_;
    access.touches.resize(stack_.size());
    for (size_t d = 0; d < stack_.size(); ++d) {
      access.touches[d].stride = stride_of(terms_, out_.itervars[stack_[d]].var);
    }
    out_.accesses.push_back(std::move(access));
  }

  TouchFeatures out_;
  std::vector<int> stack_;  // itervar ids, outermost first
  int64_t topdown_ = 1;
  std::vector<int64_t> saved_topdown_;
  std::unordered_map<std::string, int> buffer_counter_;
  std::vector<IndexTerm> terms_;  // scratch for EnterMem
};

// Access ids ordered by name, as TVM's std::sort of the buffer-id strings.
std::vector<int> name_ranks(const TouchFeatures& f) {
  std::vector<int> order(f.accesses.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(),
            [&](int x, int y) { return f.accesses[x].name < f.accesses[y].name; });
  std::vector<int> rank(order.size());
  for (size_t i = 0; i < order.size(); ++i) rank[order[i]] = static_cast<int>(i);
  return rank;
}

// 'A_0' -> 'A', 'A.local_3' -> 'A' (TVM strips the counter, then everything from the first
// '.').
std::string_view raw_buffer_name(std::string_view id) {
  std::string_view raw = id.substr(0, id.rfind('_'));
  size_t dot = raw.find('.');
  if (dot != std::string_view::npos) raw = raw.substr(0, dot);
  return raw;
}

double log2_of(int64_t x) { return std::log(static_cast<double>(x)) / std::log(2.0); }

}  // namespace

TouchFeatures extract_touch_features(const std::vector<ir::Stmt>& stmts) {
  return TouchExtractor().Run(stmts);
}

TouchFeatures extract_touch_features(const ir::Program& program) {
  std::vector<ir::Stmt> bodies;
  for (const ir::Stage& stage : program.stages) {
    if (stage.timed) bodies.push_back(stage.body);
  }
  return extract_touch_features(bodies);
}

std::vector<float> itervar_feature_flatten(const TouchFeatures& f) {
  const std::vector<int> rank = name_ranks(f);
  size_t total = 0;
  for (const Itervar& iv : f.itervars) total += 18 + 6 * (iv.end_access - iv.first_access);
  std::vector<float> out;
  out.reserve(total);
  std::vector<int> ids;
  for (int i = 0; i < static_cast<int>(f.itervars.size()); ++i) {
    const Itervar& iv = f.itervars[i];
    out.push_back(log_transform(iv.length));
    out.push_back(static_cast<float>(iv.nest_level));
    out.push_back(log_transform(iv.topdown_product));
    out.push_back(log_transform(iv.bottomup_product));
    for (int k = 0; k < kNumAnnotations; ++k) {
      out.push_back(k == static_cast<int>(iv.ann) ? 1.0f : 0.0f);
    }
    out.push_back(log_transform(iv.add_ct));
    out.push_back(log_transform(iv.mul_ct));
    out.push_back(log_transform(iv.div_ct));

    ids.resize(iv.end_access - iv.first_access);
    std::iota(ids.begin(), ids.end(), iv.first_access);
    std::sort(ids.begin(), ids.end(), [&](int x, int y) { return rank[x] < rank[y]; });
    for (int a : ids) {
      const TouchPattern& p = f.touch(i, a);
      out.push_back(log_transform(p.stride));
      out.push_back(log_transform(p.mod));
      out.push_back(log_transform(p.count));
      out.push_back(log_transform(p.reuse));
      out.push_back(log_transform(p.thread_count));
      out.push_back(log_transform(p.thread_reuse));
    }
  }
  return out;
}

std::vector<float> curve_feature_flatten(const TouchFeatures& f, int sample_n) {
  int max_depth = 0;
  for (const Itervar& iv : f.itervars) max_depth = std::max(max_depth, iv.nest_level);

  // Innermost accesses, one per raw buffer name: the last in visit order wins, as TVM walks the
  // itervars backwards. (Within one loop TVM walks an unordered_map, so its pick among several
  // accesses of the same raw name there is unspecified; kiln takes the last.)
  std::vector<int> innermost;
  std::vector<std::string_view> added;
  for (auto it = f.itervars.rbegin(); it != f.itervars.rend(); ++it) {
    if (it->nest_level != max_depth) continue;
    for (int a = it->end_access - 1; a >= it->first_access; --a) {
      std::string_view raw = raw_buffer_name(f.accesses[a].name);
      if (std::find(added.begin(), added.end(), raw) != added.end()) continue;
      added.push_back(raw);
      innermost.push_back(a);
    }
  }
  std::sort(innermost.begin(), innermost.end(),
            [&](int x, int y) { return f.accesses[x].name < f.accesses[y].name; });

  std::vector<float> out;
  out.reserve(innermost.size() * 8 * std::max(sample_n, 0));
  // For i in [0, n): the last point j with x[j] <= i (within 1e-6): (y[j], i - x[j]).
  auto sample = [&](const std::vector<double>& x, const std::vector<double>& y) {
    for (int i = 0; i < sample_n; ++i) {
      const double xx = i;
      for (int j = static_cast<int>(x.size()) - 1; j >= 0; --j) {
        if (xx > x[j] - 1e-6) {
          out.push_back(static_cast<float>(y[j]));
          out.push_back(static_cast<float>(xx - x[j]));
          break;
        }
      }
    }
  };
  std::vector<double> count, reuse, topdown;
  for (int a : innermost) {
    const Access& acc = f.accesses[a];
    // Each curve starts with a 0 point, then one point per loop touching the access.
    count.assign(1, 0.0);
    reuse.assign(1, 0.0);
    topdown.assign(1, 0.0);
    for (size_t d = 0; d < acc.loops.size(); ++d) {
      count.push_back(log2_of(acc.touches[d].count));
      reuse.push_back(log2_of(acc.touches[d].reuse));
      topdown.push_back(log2_of(f.itervars[acc.loops[d]].topdown_product));
    }
    // TVM sorts each curve on its own, so the relations pair ranks, not loops.
    std::sort(count.begin(), count.end());
    std::sort(reuse.begin(), reuse.end());
    std::sort(topdown.begin(), topdown.end());
    sample(count, reuse);
    sample(reuse, count);
    sample(count, topdown);
    sample(topdown, count);
  }
  return out;
}

}  // namespace kiln::costmodel
