// The findings report (findings::Report) as text and as JSON: `etscope findings` and
// `inspect --findings`. Formatting only: every number comes from the findings library.
#pragma once

#include <ostream>

#include "render/json_output.h"
#include "etscope/findings/findings.h"

namespace etscope::cli {

void render_findings_text(const findings::Report& report, std::ostream& out);
Json findings_json(const findings::Report& report);

}  // namespace etscope::cli
