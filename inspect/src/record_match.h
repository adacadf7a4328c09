// Matching a run block's kernel events against an ETRecord's methods: shared by the consistency
// check (does any method explain the block?) and the Inspector (which method's maps link it?).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "etscope/etrecord/etrecord.h"

namespace etscope::inspect {

/// One kernel (native_call_<op>) or DELEGATE_CALL event of a run block.
struct KernelEvent {
  int32_t chain = 0;
  int32_t instruction = 0;
  std::string op;    ///< operator_base_name of the event; empty for a DELEGATE_CALL
  std::string name;  ///< as recorded
  bool delegate_call = false;
};

/// The record's method whose debug maps and graph explain `events` best: every instruction
/// mapped, at most one operator in ten disagreeing, preferring the method whose mapped
/// instructions the block ran all of, then the most agreeing operators. "" when no method, or
/// several equally, explain them.
std::string record_method_for(const std::vector<KernelEvent>& events, const etrecord::EtRecord& record);

}  // namespace etscope::inspect
