// The words of a findings report, once for every front end: `etscope findings`, `inspect
// --findings` and the viewer's Findings view print a place, a cost, the profile and the totals
// with these, so that they read the same everywhere.
#pragma once

#include <string>

#include "etscope/findings/findings.h"

namespace etscope::findings {

/// A share as a percentage with three significant figures: "12.3%".
std::string share_text(double share);
/// "instruction 4 (chain 1) aten::add.out (blocks.2, model.py:7)", "method forward".
std::string place_text(const Place& place);
/// "1.23 ms/run (12.3%)", "4.0 KiB", both joined by ", "; "-" when the finding costs nothing known.
std::string cost_text(const Finding& finding);
/// "profile of 20 runs by executorch 1.5.1+cpu, run time 862 us", or "program only (no profile: no times)".
std::string profile_text(const Report& report);
/// "2 findings; together they cost 0.45 ms per run (52.1% of the run, each instruction once); 4.0 KiB of memory".
std::string totals_text(const Report& report);

}  // namespace etscope::findings
