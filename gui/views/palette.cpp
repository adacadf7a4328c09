#include "views/palette.h"
#include "views/render_hooks.h"

namespace etscope::gui::render_hooks {
ImDrawCallback opaque_begin = nullptr;
}  // namespace etscope::gui::render_hooks

namespace etscope::gui::palette {

ImU32 role(inspect::TensorRole role) {
  switch (role) {
    case inspect::TensorRole::kInput: return IM_COL32(0x4e, 0x79, 0xa7, 255);
    case inspect::TensorRole::kWeight: return IM_COL32(0x59, 0xa1, 0x4f, 255);
    case inspect::TensorRole::kBuffer: return IM_COL32(0x76, 0xb7, 0xb2, 255);
    case inspect::TensorRole::kGradient: return IM_COL32(0xb0, 0x7a, 0xa1, 255);
    case inspect::TensorRole::kOutput: return IM_COL32(0xf2, 0x8e, 0x2b, 255);
    case inspect::TensorRole::kActivation: return IM_COL32(0x9d, 0xc3, 0xe6, 255);
  }
  return IM_COL32(0x9d, 0xc3, 0xe6, 255);
}

ImU32 bar(const BarStyle& style) {
  // Tableau-like hues that stay readable with dark text.
  static constexpr ImU32 kHues[] = {
      IM_COL32(0x76, 0xa5, 0xd6, 255), IM_COL32(0xf2, 0xa6, 0x5a, 255), IM_COL32(0x8c, 0xc0, 0x84, 255),
      IM_COL32(0xe5, 0x86, 0x86, 255), IM_COL32(0xb3, 0x9c, 0xd0, 255), IM_COL32(0xd4, 0xb0, 0x8c, 255),
      IM_COL32(0xf0, 0xa8, 0xd0, 255), IM_COL32(0xc8, 0xc8, 0x6e, 255), IM_COL32(0x7c, 0xc8, 0xc8, 255),
      IM_COL32(0xa8, 0xb8, 0xe8, 255),
  };
  switch (style.kind) {
    case BarKind::kFramework: return IM_COL32(0x6b, 0x74, 0x84, 255);
    case BarKind::kOperatorCall: return IM_COL32(0x4a, 0x5b, 0x78, 255);
    case BarKind::kDelegateCall: return IM_COL32(0x8a, 0x5a, 0x2b, 255);
    case BarKind::kDelegateOp:
    case BarKind::kNativeCall:
    case BarKind::kOther:
    case BarKind::kMarker: break;  // markers are never drawn (TimelineModel skips them)
  }
  return kHues[style.hash % (sizeof kHues / sizeof kHues[0])];
}

ImU32 severity(findings::Severity severity) {
  switch (severity) {
    case findings::Severity::kHigh: return IM_COL32(0xe8, 0x5a, 0x4f, 255);
    case findings::Severity::kMedium: return IM_COL32(0xf2, 0x9e, 0x4c, 255);
    case findings::Severity::kLow: return IM_COL32(0xe8, 0xd0, 0x6a, 255);
    case findings::Severity::kInfo: break;
  }
  return IM_COL32(0x9a, 0xa3, 0xb2, 255);
}

ImU32 text_on(ImU32 background) {
  const float r = static_cast<float>((background >> IM_COL32_R_SHIFT) & 0xff);
  const float g = static_cast<float>((background >> IM_COL32_G_SHIFT) & 0xff);
  const float b = static_cast<float>((background >> IM_COL32_B_SHIFT) & 0xff);
  const float luma = 0.299f * r + 0.587f * g + 0.114f * b;
  return luma > 140.0f ? IM_COL32(20, 20, 24, 255) : IM_COL32(240, 240, 244, 255);
}

}  // namespace etscope::gui::palette
