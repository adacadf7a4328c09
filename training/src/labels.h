// Class labels as the training library reads them: which dtypes can hold them, and label k of a
// dense buffer. Private to runtime/training (the dataset checks CIFAR-10 labels, the trainer
// compares predictions with them).
#pragma once

#include <cstdint>

#include "etscope/core/scalar_type.h"

namespace etscope::training {

/// The integer dtypes a label input may have.
inline bool is_label_dtype(ScalarType t) {
  return t == ScalarType::kLong || t == ScalarType::kInt || t == ScalarType::kShort || t == ScalarType::kChar ||
         t == ScalarType::kByte;
}

/// Element `i` of a dense buffer of a label dtype; 0 for any other dtype.
inline int64_t label_at(ScalarType t, const void* data, int64_t i) {
  switch (t) {
    case ScalarType::kLong: return static_cast<const int64_t*>(data)[i];
    case ScalarType::kInt: return static_cast<const int32_t*>(data)[i];
    case ScalarType::kShort: return static_cast<const int16_t*>(data)[i];
    case ScalarType::kChar: return static_cast<const int8_t*>(data)[i];
    case ScalarType::kByte: return static_cast<const uint8_t*>(data)[i];
    default: return 0;
  }
}

}  // namespace etscope::training
