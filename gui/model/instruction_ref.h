// InstructionRef: which instruction of which plan, the unit of the viewer's shared selection.
#pragma once

#include <cstdint>

namespace etscope::gui {

/// An instruction of an execution plan, as ETDump events name it: a chain index and the index
/// of the instruction inside that chain. `chain < 0` means nothing is selected.
struct InstructionRef {
  int32_t chain = -1;
  int32_t instruction = -1;

  bool valid() const { return chain >= 0 && instruction >= 0; }
  bool operator==(const InstructionRef& o) const { return chain == o.chain && instruction == o.instruction; }
  bool operator!=(const InstructionRef& o) const { return !(*this == o); }
};

}  // namespace etscope::gui
