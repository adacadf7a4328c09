// write_png: saves an RGB or RGBA image (rows top to bottom) as a PNG, with libpng.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "etscope/core/result.h"

namespace etscope::gui {

struct Image {
  int width = 0;
  int height = 0;
  int channels = 3;              ///< 3 (RGB) or 4 (RGBA).
  std::vector<uint8_t> pixels;   ///< width * height * channels bytes, first row on top.
};

/// Writes `image` to `path`. Errors (kIo, kInvalidArgument) name the path.
Status write_png(const std::string& path, const Image& image);

/// Reads an 8-bit RGB or RGBA PNG (for tests). Errors name the path.
Result<Image> read_png(const std::string& path);

}  // namespace etscope::gui
