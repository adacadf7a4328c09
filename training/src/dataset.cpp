#include "etscope/training/dataset.h"

#include <cstdint>
#include <cstring>
#include <random>

#include "etscope/formats/blob.h"
#include "etscope/formats/npy.h"
#include "etscope/inspect/program_description.h"
#include "labels.h"

namespace etscope::training {
namespace {

constexpr size_t kCifarRecord = 1 + 3 * 32 * 32;

std::string shape_of(ScalarType dtype, std::span<const int64_t> sizes) {
  return inspect::shape_text(dtype, std::vector<int64_t>(sizes.begin(), sizes.end()));
}

bool is_npy(std::span<const uint8_t> bytes) { return bytes.size() >= 6 && bytes[0] == 0x93 && std::memcmp(bytes.data() + 1, "NUMPY", 5) == 0; }

}  // namespace

Result<Dataset> Dataset::open(const std::vector<std::string>& files, const std::vector<InputSpec>& inputs) {
  if (inputs.empty()) return Error(ErrorCode::kInvalidArgument, "the program takes no inputs to train on");
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].sizes.empty() || inputs[i].sizes[0] <= 0) {
      return Error(ErrorCode::kInvalidArgument, "input " + std::to_string(i) + " of the program (" +
                                                    shape_of(inputs[i].dtype, inputs[i].sizes) +
                                                    ") has no batch dimension to slice data into");
    }
    if (inputs[i].sizes[0] != inputs[0].sizes[0]) {
      return Error(ErrorCode::kInvalidArgument, "the program's inputs have different batch sizes (" +
                                                    std::to_string(inputs[0].sizes[0]) + " and " +
                                                    std::to_string(inputs[i].sizes[0]) + ")");
    }
  }
  Dataset d;
  d.batch_ = static_cast<size_t>(inputs[0].sizes[0]);
  if (files.empty()) return Error(ErrorCode::kInvalidArgument, "no --data files");

  ETSCOPE_ASSIGN_OR_RETURN(auto first, Blob::open_file(files[0]));
  if (files.size() == 1 && !is_npy(first->bytes())) {
    // CIFAR-10 binary: the program must take [B, 3, 32, 32] floats and [B] integer labels.
    const std::string& path = files[0];
    const bool image_ok = inputs.size() == 2 && inputs[0].dtype == ScalarType::kFloat &&
                          inputs[0].sizes == std::vector<int64_t>{inputs[0].sizes[0], 3, 32, 32} &&
                          is_label_dtype(inputs[1].dtype) && inputs[1].sizes.size() == 1;
    if (!image_ok) {
      return Error(ErrorCode::kInvalidArgument, path + ": not a .npy file; as CIFAR-10 binary data it needs a program taking "
                                                       "f32[B,3,32,32] images and [B] integer labels");
    }
    const auto bytes = first->bytes();
    if (bytes.empty() || bytes.size() % kCifarRecord != 0) {
      return Error(ErrorCode::kInvalidArgument, path + ": " + std::to_string(bytes.size()) +
                                                    " bytes is not a whole number of CIFAR-10 records (3073 bytes each)");
    }
    d.samples_ = bytes.size() / kCifarRecord;
    Column images{ScalarType::kFloat, 3072 * sizeof(float), {}};
    const size_t label_size = *element_size(inputs[1].dtype);
    Column labels{inputs[1].dtype, label_size, {}};
    images.data.resize(d.samples_ * images.sample_bytes);
    labels.data.resize(d.samples_ * label_size);
    auto* px = reinterpret_cast<float*>(images.data.data());
    for (size_t r = 0; r < d.samples_; ++r) {
      const uint8_t* rec = bytes.data() + r * kCifarRecord;
      if (rec[0] > 9) {
        return Error(ErrorCode::kInvalidArgument, path + ": record " + std::to_string(r) + " has label " +
                                                      std::to_string(rec[0]) + ", outside CIFAR-10's 0..9");
      }
      const int64_t label = rec[0];
      std::memcpy(labels.data.data() + r * label_size, &label, label_size);  // little-endian: the low bytes
      for (size_t k = 0; k < 3072; ++k) px[r * 3072 + k] = static_cast<float>(rec[1 + k]) / 255.0f;
    }
    d.columns_.push_back(std::move(images));
    d.columns_.push_back(std::move(labels));
    d.description_ = path + " (CIFAR-10, " + std::to_string(d.samples_) + " records)";
    return d;
  }

  if (files.size() != inputs.size()) {
    return Error(ErrorCode::kInvalidArgument, "the program takes " + std::to_string(inputs.size()) + " inputs; give one --data "
                                                  ".npy per input (" + std::to_string(files.size()) + " given)");
  }
  for (size_t i = 0; i < files.size(); ++i) {
    const std::string& path = files[i];
    std::shared_ptr<const Blob> blob = first;
    if (i > 0) {
      ETSCOPE_ASSIGN_OR_RETURN(blob, Blob::open_file(path));
    }
    ETSCOPE_ASSIGN_OR_RETURN(NpyArray a, parse_npy(blob->bytes(), path));
    const InputSpec& in = inputs[i];
    std::vector<int64_t> sample(in.sizes.begin() + 1, in.sizes.end());
    const bool shape_ok = a.shape.size() == in.sizes.size() && std::equal(sample.begin(), sample.end(), a.shape.begin() + 1);
    if (a.dtype != in.dtype || !shape_ok) {
      std::vector<int64_t> expected = sample;
      expected.insert(expected.begin(), -1);
      std::string want = shape_of(in.dtype, expected);
      want.replace(want.find("-1"), 2, "N");
      return Error(ErrorCode::kInvalidArgument, path + ": " + shape_of(a.dtype, a.shape) + ", but input " +
                                                    std::to_string(i) + " takes batches of " + shape_of(in.dtype, in.sizes) +
                                                    ", so the data must be " + want);
    }
    const auto n = static_cast<size_t>(a.shape[0]);
    // Sample order is kept as 32-bit indices; and a sample of no elements would let the first
    // dimension claim any count without bytes behind it.
    if (n > UINT32_MAX || (n > 0 && a.data.empty())) {
      return Error(ErrorCode::kInvalidArgument, path + ": " + shape_of(a.dtype, a.shape) +
                                                    " is not training data (more than 2^32 samples, or samples of no elements)");
    }
    if (i == 0) d.samples_ = n;
    if (n != d.samples_) {
      return Error(ErrorCode::kInvalidArgument, path + ": " + std::to_string(n) + " samples, but " + files[0] + " has " +
                                                    std::to_string(d.samples_));
    }
    Column c{a.dtype, n == 0 ? 0 : a.data.size() / n, std::move(a.data)};
    d.columns_.push_back(std::move(c));
    d.description_ += (i ? ", " : "") + path;
  }
  if (d.samples_ < d.batch_) {
    return Error(ErrorCode::kInvalidArgument, files[0] + ": " + std::to_string(d.samples_) +
                                                  " samples, fewer than one batch of " + std::to_string(d.batch_));
  }
  return d;
}

std::vector<uint32_t> Dataset::order(bool shuffle, uint64_t seed, uint64_t epoch) const {
  std::vector<uint32_t> o(samples_);
  for (size_t i = 0; i < o.size(); ++i) o[i] = static_cast<uint32_t>(i);
  if (!shuffle) return o;
  std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ull + epoch);
  for (size_t i = o.size(); i > 1; --i) std::swap(o[i - 1], o[static_cast<size_t>(rng() % i)]);
  return o;
}

void Dataset::batch(size_t index, std::span<const uint32_t> order, std::vector<std::vector<uint8_t>>* inputs) const {
  inputs->resize(columns_.size());
  for (size_t c = 0; c < columns_.size(); ++c) {
    const Column& col = columns_[c];
    std::vector<uint8_t>& out = (*inputs)[c];
    out.resize(batch_ * col.sample_bytes);
    for (size_t k = 0; k < batch_; ++k) {
      const size_t sample = order[index * batch_ + k];
      std::memcpy(out.data() + k * col.sample_bytes, col.data.data() + sample * col.sample_bytes, col.sample_bytes);
    }
  }
}

}  // namespace etscope::training
