// Training data for `etscope train`: one .npy per program input whose first dimension indexes
// samples, or one CIFAR-10 binary file (records of 1 label byte + 3072 pixel bytes, as the
// CIFAR-10 fine-tuning example reads it; pixels scaled to [0, 1]) for a program taking an image
// batch [B, 3, 32, 32] and a label batch [B]. Batches are consecutive slices of the program's
// batch size B in file order, or in a seeded random order per epoch; a last partial batch is
// dropped (and counted).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "etscope/core/result.h"
#include "etscope/core/scalar_type.h"

namespace etscope::training {

/// What the program expects of one input: dtype and shape, the batch size first.
struct InputSpec {
  ScalarType dtype = ScalarType::kFloat;
  std::vector<int64_t> sizes;
};

class Dataset {
 public:
  /// Reads `files` against the program's inputs. Errors name the file and say what was expected
  /// and found (sample shape, dtype, sample counts that differ between files, labels out of range).
  static Result<Dataset> open(const std::vector<std::string>& files, const std::vector<InputSpec>& inputs);

  size_t samples() const { return samples_; }
  size_t batch_size() const { return batch_; }
  /// Full batches per epoch.
  size_t batches() const { return batch_ == 0 ? 0 : samples_ / batch_; }
  /// Samples left out of every epoch (the last partial batch).
  size_t dropped() const { return batch_ == 0 ? 0 : samples_ % batch_; }
  /// "x.npy, y.npy" or "data_batch_1.bin (CIFAR-10)".
  const std::string& description() const { return description_; }

  /// The order of the samples in `epoch`: file order, or a permutation drawn from (seed, epoch).
  std::vector<uint32_t> order(bool shuffle, uint64_t seed, uint64_t epoch) const;
  /// Batch `index` of an epoch whose sample order is `order`: per program input, its bytes.
  void batch(size_t index, std::span<const uint32_t> order, std::vector<std::vector<uint8_t>>* inputs) const;

 private:
  struct Column {
    ScalarType dtype = ScalarType::kFloat;
    size_t sample_bytes = 0;
    std::vector<uint8_t> data;  // samples × sample_bytes
  };
  std::vector<Column> columns_;
  size_t samples_ = 0;
  size_t batch_ = 0;
  std::string description_;
};

}  // namespace etscope::training
