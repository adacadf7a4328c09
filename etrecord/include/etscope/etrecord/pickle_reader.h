// Unpickler: a small, inert interpreter for the pickle subset torch.save writes (protocol 2,
// plus the few protocol 3-5 opcodes newer writers use). It builds plain objects and never calls
// anything: tensor rebuild functions become PyObject tensors, storages come from persistent ids,
// and every other callable becomes an opaque object named after its class.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "etscope/etrecord/etrecord_reader.h"
#include "etscope/core/result.h"
#include "etscope/core/scalar_type.h"

namespace etscope::etrecord {

enum class PyKind : uint8_t {
  kNone, kBool, kInt, kFloat, kStr, kBytes, kTuple, kList, kDict, kSet, kGlobal, kStorage, kTensor, kObject,
};

/// One unpickled object. Owned by the Unpickler's arena; objects refer to each other by raw
/// pointer (pickles may share and even cycle).
struct PyObject {
  PyKind kind = PyKind::kNone;
  bool boolean = false;
  int64_t integer = 0;
  double real = 0;
  std::string text;  ///< str / bytes payload; "module.name" for a global or an object's class.
  std::vector<PyObject*> items;                          ///< tuple, list, set; object args
  std::vector<std::pair<PyObject*, PyObject*>> entries;  ///< dict
  // Storage (from a persistent id).
  std::optional<ScalarType> dtype;  ///< nullopt for a storage class etscope does not map
  std::string storage_key;
  int64_t storage_numel = 0;
  // Tensor (from _rebuild_tensor_v2).
  PyObject* storage = nullptr;
  int64_t storage_offset = 0;
  std::vector<int64_t> sizes;
  std::vector<int64_t> strides;
  bool requires_grad = false;
};

class Unpickler {
 public:
  explicit Unpickler(const ReadLimits& limits) : limits_(limits) {}
  /// Runs the pickle in `bytes` (borrowed for the call) and returns its result, owned by this
  /// Unpickler. Errors (kCorrupt, kNotSupported, kOutOfResources) start with `where`.
  Result<PyObject*> load(std::span<const uint8_t> bytes, const std::string& where);

 private:
  PyObject* make(PyKind kind);
  std::vector<std::unique_ptr<PyObject>> arena_;
  ReadLimits limits_;
};

/// ScalarType of a torch storage class name such as "torch.FloatStorage", or nullopt.
std::optional<ScalarType> storage_class_dtype(const std::string& qualified_name);

}  // namespace etscope::etrecord
