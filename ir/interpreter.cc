#include "ir/interpreter.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "ir/int_arith.h"
#include "ir/printer.h"
#include "ir/visitor.h"

namespace kiln::ir {

namespace {

struct Value {
  int64_t i = 0;  // integers and booleans
  float f = 0;    // floats
};

class Interpreter : public IRVisitor {
 public:
  Interpreter(const Program& program, const std::vector<float*>& buffers) {
    for (size_t i = 0; i < program.buffers.size(); ++i) {
      memory_[program.buffers[i].get()] = {buffers[i], program.buffers[i]->num_elements()};
    }
  }

  Status run(const Stmt& s) {
    visit(s);
    return status_;
  }

 private:
  struct Memory {
    float* data;
    int64_t size;
  };

  float* address(const Buffer& buffer, int64_t index) {
    auto it = memory_.find(buffer.get());
    if (it == memory_.end()) {
      fail("buffer " + buffer->name + " is not allocated here");
      return nullptr;
    }
    if (index < 0 || index >= it->second.size) {
      fail("access " + buffer->name + "[" + std::to_string(index) + "] is outside its " +
           std::to_string(it->second.size) + " elements");
      return nullptr;
    }
    return it->second.data + index;
  }

  void fail(std::string message) {
    if (status_.ok()) status_ = RuntimeError(std::move(message));
  }

  static float call_value(CallOp op, float x, float y) {
    switch (op) {
      case CallOp::kExp:
        return std::exp(x);
      case CallOp::kLog:
        return std::log(x);
      case CallOp::kSqrt:
        return std::sqrt(x);
      case CallOp::kTanh:
        return std::tanh(x);
      case CallOp::kErf:
        return std::erf(x);
      case CallOp::kPow:
        return std::pow(x, y);
      case CallOp::kAbs:
        return std::fabs(x);
      case CallOp::kFloor:
        return std::floor(x);
      case CallOp::kCeil:
        return std::ceil(x);
    }
    return 0.0f;
  }

  Value eval(const Expr& e) {
    Value r;
    if (!status_.ok()) return r;
    bool is_float = e->dtype == DType::kFloat32;
    switch (e->kind) {
      case ExprKind::kIntImm:
        r.i = e->int_value;
        return r;
      case ExprKind::kFloatImm:
        r.f = static_cast<float>(e->float_value);
        return r;
      case ExprKind::kVar: {
        auto it = vars_.find(e.get());
        if (it == vars_.end())
          fail("unbound variable " + e->name);
        else
          r = it->second;
        return r;
      }
      case ExprKind::kLoad: {
        float* p = address(e->buffer, eval(e->a).i);
        if (p) r.f = *p;
        return r;
      }
      case ExprKind::kNot:
        r.i = !eval(e->a).i;
        return r;
      case ExprKind::kSelect:
        return eval(e->a).i ? eval(e->b) : eval(e->c);
      case ExprKind::kCall:
        r.f = call_value(e->call_op, eval(e->a).f, e->b.defined() ? eval(e->b).f : 0.0f);
        return r;
      default:
        break;
    }
    Value a = eval(e->a), b = eval(e->b);
    bool float_operands = e->a->dtype == DType::kFloat32;
    switch (e->kind) {
      case ExprKind::kAdd:
        is_float ? r.f = a.f + b.f : r.i = a.i + b.i;
        break;
      case ExprKind::kSub:
        is_float ? r.f = a.f - b.f : r.i = a.i - b.i;
        break;
      case ExprKind::kMul:
        is_float ? r.f = a.f* b.f : r.i = a.i * b.i;
        break;
      case ExprKind::kDiv:
        if (is_float)
          r.f = a.f / b.f;
        else if (b.i == 0)
          fail("integer division by zero in " + to_string(e));
        else
          r.i = floor_div(a.i, b.i);
        break;
      case ExprKind::kMod:
        if (b.i == 0)
          fail("integer modulo by zero in " + to_string(e));
        else
          r.i = floor_mod(a.i, b.i);
        break;
      case ExprKind::kMin:
        is_float ? r.f = std::fmin(a.f, b.f) : r.i = std::min(a.i, b.i);
        break;
      case ExprKind::kMax:
        is_float ? r.f = std::fmax(a.f, b.f) : r.i = std::max(a.i, b.i);
        break;
      case ExprKind::kLT:
        r.i = float_operands ? a.f < b.f : a.i < b.i;
        break;
      case ExprKind::kLE:
        r.i = float_operands ? a.f <= b.f : a.i <= b.i;
        break;
      case ExprKind::kEQ:
        r.i = float_operands ? a.f == b.f : a.i == b.i;
        break;
      case ExprKind::kNE:
        r.i = float_operands ? a.f != b.f : a.i != b.i;
        break;
      case ExprKind::kAnd:
        r.i = a.i && b.i;
        break;
      case ExprKind::kOr:
        r.i = a.i || b.i;
        break;
      default:
        fail("unexpected expression " + to_string(e));
    }
    return r;
  }

  // Statements run through the visitor's dispatch; a failure stops everything after it.
  void visit(const Stmt& s) override {
    if (status_.ok()) IRVisitor::visit(s);
  }
  using IRVisitor::visit;

  void visit_for(const Stmt& s) override {
    for (int64_t i = 0; i < s->extent && status_.ok(); ++i) {
      vars_[s->loop_var.get()] = Value{i, 0};
      visit(s->body);
    }
    vars_.erase(s->loop_var.get());
  }
  void visit_let(const Stmt& s) override {
    vars_[s->loop_var.get()] = eval(s->value);
    visit(s->body);
    vars_.erase(s->loop_var.get());
  }
  void visit_store(const Stmt& s) override {
    Value v = eval(s->value);
    float* p = address(s->buffer, eval(s->index).i);
    if (p) *p = v.f;
  }
  void visit_if(const Stmt& s) override {
    if (eval(s->condition).i)
      visit(s->then_case);
    else
      visit(s->else_case);  // undefined when there is none: visit() ignores it
  }
  void visit_allocate(const Stmt& s) override {
    std::vector<float> storage(s->buffer->num_elements(), std::nanf(""));
    memory_[s->buffer.get()] = {storage.data(), s->buffer->num_elements()};
    visit(s->body);
    memory_.erase(s->buffer.get());
  }

  std::unordered_map<const BufferNode*, Memory> memory_;
  std::unordered_map<const ExprNode*, Value> vars_;
  Status status_;
};

}  // namespace

Status interpret(const Program& program, const std::vector<float*>& buffers) {
  if (buffers.size() != program.buffers.size()) {
    return InvalidArgument("program " + program.name + " has " +
                           std::to_string(program.buffers.size()) + " buffers, got " +
                           std::to_string(buffers.size()));
  }
  Interpreter interpreter(program, buffers);
  for (const Stage& stage : program.stages) {
    Status s = interpreter.run(stage.body);
    if (!s.ok()) return RuntimeError("stage " + stage.name + ": " + s.message());
  }
  return Status::Ok();
}

}  // namespace kiln::ir
