// libpng's simplified API (1.6+) reports errors in png_image::message instead of longjmp, which
// keeps this file free of setjmp.
#include "app/png_writer.h"

#include <png.h>

#include <cstring>

namespace etscope::gui {

Status write_png(const std::string& path, const Image& image) {
  if (image.width <= 0 || image.height <= 0 || (image.channels != 3 && image.channels != 4) ||
      image.pixels.size() != static_cast<size_t>(image.width) * static_cast<size_t>(image.height) *
                                 static_cast<size_t>(image.channels)) {
    return Error(ErrorCode::kInvalidArgument, path + ": image size and pixel buffer disagree");
  }
  png_image png;
  std::memset(&png, 0, sizeof png);
  png.version = PNG_IMAGE_VERSION;
  png.width = static_cast<png_uint_32>(image.width);
  png.height = static_cast<png_uint_32>(image.height);
  png.format = image.channels == 4 ? PNG_FORMAT_RGBA : PNG_FORMAT_RGB;
  const int ok = png_image_write_to_file(&png, path.c_str(), 0, image.pixels.data(), 0, nullptr);
  if (!ok) {
    std::string why = png.message;
    png_image_free(&png);
    return Error(ErrorCode::kIo, path + ": cannot write PNG: " + why);
  }
  return ok_status();
}

Result<Image> read_png(const std::string& path) {
  png_image png;
  std::memset(&png, 0, sizeof png);
  png.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_file(&png, path.c_str())) {
    return Error(ErrorCode::kIo, path + ": cannot read PNG: " + png.message);
  }
  const bool alpha = (png.format & PNG_FORMAT_FLAG_ALPHA) != 0;
  png.format = alpha ? PNG_FORMAT_RGBA : PNG_FORMAT_RGB;
  Image image;
  image.width = static_cast<int>(png.width);
  image.height = static_cast<int>(png.height);
  image.channels = alpha ? 4 : 3;
  image.pixels.resize(PNG_IMAGE_SIZE(png));
  if (!png_image_finish_read(&png, nullptr, image.pixels.data(), 0, nullptr)) {
    std::string why = png.message;
    png_image_free(&png);
    return Error(ErrorCode::kCorrupt, path + ": cannot decode PNG: " + why);
  }
  return image;
}

}  // namespace etscope::gui
