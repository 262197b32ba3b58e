#include "ir/passes/forward_stores.h"

#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ir/analysis.h"
#include "ir/mutator.h"

namespace kiln::ir::passes {

namespace {

// What the current region knows of one element of a buffer: the pass keeps one per buffer, the
// last scalar store's, since any other store to the buffer might write the same element.
struct Element {
  Expr index;           // the element's flat index
  Expr value;           // what a load of the element is; undefined if unknown
  int value_depth = 0;  // the allocation depth the value is named at (0: anywhere)
  Stmt store;           // the store that wrote it, while nothing has read the buffer
  int store_depth = 0;  // the allocation depth of that store
};

class Forwarder {
 public:
  Forwarder(const SimdLoops& simd_loops, const OrderedReductions& reductions)
      : simd_in_(simd_loops), reductions_in_(reductions) {}

  ForwardedStmt run(const Stmt& stmt) {
    ForwardedStmt out;
    out.body = region(stmt);
    out.simd_loops = std::move(simd_out_);
    out.ordered_reductions = std::move(reductions_out_);
    return out;
  }

 private:
  // ---- What the region knows -----------------------------------------------------------------

  Element* find(const BufferNode* buffer, const Expr& index) {
    auto it = memory_.find(buffer);
    return it != memory_.end() && structurally_equal(it->second.index, index) ? &it->second
                                                                              : nullptr;
  }

  // Any read of the buffer: its store so far is no longer dead.
  void read(const BufferNode* buffer) {
    auto it = memory_.find(buffer);
    if (it != memory_.end()) it->second.store = Stmt();
  }

  // A store to buffer[index]: the previous store to the element is dead if nothing has read the
  // buffer since.
  void overwrite(const BufferNode* buffer, const Expr& index) {
    Element* e = find(buffer, index);
    if (e && e->store.defined()) dead_.emplace(e->store.get(), e->store);
  }

  void forget(const BufferNode* buffer) { memory_.erase(buffer); }

  void remember(const BufferNode* buffer, Element element) {
    memory_.insert_or_assign(buffer, std::move(element));
  }

  // Leaving the allocation at `depth`: its names and its stores' fate stay inside.
  void leave(int depth) {
    for (auto& [buffer, e] : memory_) {
      if (e.value.defined() && e.value_depth >= depth) e.value = Expr();
      if (e.store.defined() && e.store_depth >= depth) e.store = Stmt();
    }
  }

  // The depth at which a stored value that needs no Let is named.
  int depth_of(const Expr& value) const {
    auto it = let_depth_.find(value.get());
    return it == let_depth_.end() ? 0 : it->second;
  }

  static bool needs_no_name(const Expr& value) {
    return value->kind == ExprKind::kFloatImm || value->kind == ExprKind::kVar;
  }

  // ---- Expressions ---------------------------------------------------------------------------

  // Rewrites the loads of an expression, in the region as it stands.
  class Loads : public IRMutator {
   public:
    explicit Loads(Forwarder& f) : f_(f) {}

   protected:
    Expr mutate_load(const Expr& load) override {
      Expr rewritten = IRMutator::mutate_load(load);
      const BufferNode* buffer = load->buffer.get();
      const Expr& index = rewritten->a;
      if (!(f_.lane_ && uses_var(index, f_.lane_))) {
        Element* e = f_.find(buffer, index);
        if (e && e->value.defined()) return e->value;
      }
      f_.read(buffer);
      return rewritten;
    }

   private:
    Forwarder& f_;
  };

  Expr rewrite(const Expr& e) { return Loads(*this).mutate(e); }

  // ---- Statements ----------------------------------------------------------------------------

  // A region of its own: `stmt` after a block boundary, and a boundary after it.
  Stmt region(const Stmt& stmt) {
    memory_.clear();
    std::vector<Stmt> list;
    append_flattened(&list, stmt);
    Stmt out = rewrite_list(list, 0);
    memory_.clear();
    return out;
  }

  // A store with a rewritten index and value; its per-dimension indices are kept while its flat
  // index is unchanged.
  static Stmt store_of(const Stmt& store, const Expr& index, const Expr& value) {
    if (index.same_as(store->index) && value.same_as(store->value)) return store;
    StmtNode n = *store.get();
    if (!index.same_as(store->index)) n.indices.clear();
    n.index = index;
    n.value = value;
    return make_stmt(std::move(n));
  }

  // list[from..] rewritten, as one statement: a scalar store of a computed value becomes a Let
  // of the value around the store and the rest of the list.
  Stmt rewrite_list(const std::vector<Stmt>& list, size_t from) {
    std::vector<Stmt> out;
    for (size_t i = from; i < list.size(); ++i) {
      const Stmt& s = list[i];
      if (s->kind != StmtKind::kStore || lane_) {
        out.push_back(rewrite_stmt(s));
        continue;
      }
      Expr value = rewrite(s->value);
      Expr index = rewrite(s->index);
      const BufferNode* buffer = s->buffer.get();
      overwrite(buffer, index);
      if (needs_no_name(value)) {
        Stmt store = store_of(s, index, value);
        remember(buffer, {index, value, depth_of(value), store, depth_});
        out.push_back(store);
        continue;
      }
      Expr name = var(s->buffer->name + ".v" + std::to_string(next_name_++), value->dtype);
      let_depth_[name.get()] = depth_;
      Stmt store = store_of(s, index, name);
      remember(buffer, {index, name, depth_, store, depth_});
      Stmt rest = rewrite_list(list, i + 1);
      std::vector<Stmt> body;
      if (!dead_.count(store.get())) body.push_back(store);
      append_flattened(&body, rest);
      out.push_back(Let(name, std::move(value), Seq(std::move(body))));
      break;
    }
    std::vector<Stmt> live;
    for (Stmt& s : out) {
      if (!dead_.count(s.get())) live.push_back(std::move(s));
    }
    return Seq(std::move(live));
  }

  Stmt rewrite_stmt(const Stmt& s) {
    switch (s->kind) {
      case StmtKind::kStore:
        return rewrite_simd_store(s);
      case StmtKind::kFor:
        return rewrite_loop(s);
      case StmtKind::kIf: {
        Expr condition = rewrite(s->condition);
        Stmt then_case = region(s->then_case);
        Stmt else_case = s->else_case.defined() ? region(s->else_case) : Stmt();
        StmtNode n = *s.get();
        n.condition = std::move(condition);
        n.then_case = std::move(then_case);
        n.else_case = std::move(else_case);
        return make_stmt(std::move(n));
      }
      case StmtKind::kAllocate:
        return Allocate(s->buffer, nested(s->body));
      case StmtKind::kLet: {
        Expr value = rewrite(s->value);
        return Let(s->loop_var, std::move(value), nested(s->body));
      }
      case StmtKind::kSeq:
        return nested(s);
    }
    return s;
  }

  // A scope within the region (an allocation's body): what is named or stored in it stays in it.
  Stmt nested(const Stmt& body) {
    ++depth_;
    std::vector<Stmt> list;
    append_flattened(&list, body);
    Stmt out = rewrite_list(list, 0);
    leave(depth_);
    --depth_;
    return out;
  }

  // A store in a SIMD body: a vector store forgets its buffer; a store of one element (every
  // lane writes it) ends what is known of the buffer, and is remembered when its value is a
  // scalar that needs no name.
  Stmt rewrite_simd_store(const Stmt& s) {
    Expr value = rewrite(s->value);
    Expr index = rewrite(s->index);
    const BufferNode* buffer = s->buffer.get();
    if (uses_var(index, lane_)) {
      forget(buffer);
    } else {
      overwrite(buffer, index);
      forget(buffer);
      if (needs_no_name(value) && !uses_var(value, lane_)) {
        remember(buffer, {index, value, depth_of(value), Stmt(), depth_});
      }
    }
    return store_of(s, index, value);
  }

  Stmt rewrite_loop(const Stmt& loop) {
    auto reduction = reductions_in_.find(loop.get());
    if (reduction != reductions_in_.end()) return rewrite_reduction(loop, reduction->second);
    if (simd_in_.count(loop.get())) {
      lane_ = loop->loop_var.get();
      std::vector<Stmt> list;
      append_flattened(&list, loop->body);
      std::vector<Stmt> body;
      for (const Stmt& s : list) body.push_back(rewrite_stmt(s));
      lane_ = nullptr;
      StmtNode n = *loop.get();
      n.body = Seq(std::move(body));
      Stmt out = make_stmt(std::move(n));
      simd_out_.insert(out.get());
      return out;
    }
    StmtNode n = *loop.get();
    ++depth_;
    n.body = region(loop->body);
    --depth_;
    return make_stmt(std::move(n));
  }

  // An ordered reduction reads its accumulator's buffer and its addend's, and stores a value the
  // IR does not name. Its accumulator is not forwarded: the loop's body, which states what it
  // computes, loads it from memory.
  Stmt rewrite_reduction(const Stmt& loop, const OrderedReduction& r) {
    const Stmt& store = loop->body;
    read(store->buffer.get());
    read(r.addend->buffer.get());
    forget(store->buffer.get());
    Stmt copy = make_stmt(*loop.get());
    reductions_out_.emplace(copy.get(), r);
    return copy;
  }

  const SimdLoops& simd_in_;
  const OrderedReductions& reductions_in_;
  SimdLoops simd_out_;
  OrderedReductions reductions_out_;
  std::unordered_map<const BufferNode*, Element> memory_;
  // The stores found dead, held so that no other node can take their addresses.
  std::unordered_map<const StmtNode*, Stmt> dead_;
  std::unordered_map<const ExprNode*, int> let_depth_;  // the Lets' variables, by depth
  const ExprNode* lane_ = nullptr;  // the variable of the SIMD body being rewritten
  int depth_ = 0;                   // allocations entered in the current region
  int next_name_ = 0;
};

}  // namespace

ForwardedStmt forward_stores(const Stmt& stmt, const SimdLoops& simd_loops,
                             const OrderedReductions& reductions) {
  return Forwarder(simd_loops, reductions).run(stmt);
}

}  // namespace kiln::ir::passes
