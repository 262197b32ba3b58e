#include "compiler/stage_access.h"

#include <set>

#include "ir/visitor.h"

namespace kiln::compiler {

namespace {

class AccessCollector : public ir::IRVisitor {
 public:
  std::set<const ir::BufferNode*> loads, stores;

 protected:
  void visit_load(const ir::Expr& e) override {
    loads.insert(e->buffer.get());
    IRVisitor::visit_load(e);
  }
  void visit_store(const ir::Stmt& s) override {
    stores.insert(s->buffer.get());
    IRVisitor::visit_store(s);
  }
};

}  // namespace

StageAccess stage_access(const ir::Program& program, const ir::Stage& stage) {
  AccessCollector collector;
  collector.visit(stage.body);
  StageAccess access;
  for (size_t i = 0; i < program.buffers.size(); ++i) {
    const ir::BufferNode* b = program.buffers[i].get();
    if (collector.loads.count(b)) access.reads.push_back(static_cast<int>(i));
    if (collector.stores.count(b)) access.writes.push_back(static_cast<int>(i));
  }
  return access;
}

}  // namespace kiln::compiler
