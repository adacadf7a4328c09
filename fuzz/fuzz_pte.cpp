// .pte: the program reader, then what `etscope pte`, `etscope memory`, `etscope findings` and the
// viewer's graph derive from a program.
#include "etscope/findings/findings.h"
#include "etscope/formats/pte_reader.h"
#include "etscope/inspect/memory_plan.h"
#include "etscope/inspect/program_description.h"
#include "etscope/inspect/program_graph.h"
#include "fuzz_target.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto program = etscope::PteReader::read(etscope::Blob::from_bytes("fuzz.pte", {data, size}));
  if (!program.ok()) return 0;
  (void)etscope::inspect::ProgramDescription::describe(*program);
  (void)etscope::inspect::declared_memory_warnings(*program, uint64_t{1} << 30);
  for (const etscope::ExecutionPlan& plan : program->plans) {
    (void)etscope::inspect::PlanDescription::describe(plan);
    (void)etscope::inspect::MemoryPlan::build(*program, plan);
    (void)etscope::inspect::build_program_graph(plan, nullptr, &*program);
    // Every rule that reads a program alone (the profile's rules need a dump).
    etscope::findings::Inputs in;
    in.program = &*program;
    in.method = plan.name;
    (void)etscope::findings::analyse(in);
  }
  return 0;
}
