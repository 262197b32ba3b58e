#include "builder/build.h"

#include <chrono>

#include "builder/linker.h"

namespace kiln::builder {

Result<BuildOutput> build_program(const ir::Program& program, const Target& target) {
  auto start = std::chrono::steady_clock::now();
  BuildOutput out;
  KILN_ASSIGN_OR_RETURN(std::string object, compile_program(program, target, &out.timings));
  auto link_start = std::chrono::steady_clock::now();
  KILN_ASSIGN_OR_RETURN(out.shared_object, link_shared_object(object));
  auto end = std::chrono::steady_clock::now();
  out.link_ms = std::chrono::duration<double, std::milli>(end - link_start).count();
  out.total_ms = std::chrono::duration<double, std::milli>(end - start).count();
  return out;
}

}  // namespace kiln::builder
