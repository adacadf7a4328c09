// etscope::Error and etscope::Result<T>: how every etscope library reports failure.
//
// No exception crosses a library boundary. A fallible call returns Result<T>, which holds either
// a value or an Error. The Error carries a code for programs and a one-line message for people;
// messages name the file and the problem ("model.pte: value 12: memory_id 0 is not a valid arena
// id"), so a command-line front end can print them unchanged.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <variant>

namespace etscope {

/// Failure categories. Programs branch on these; people read Error::message().
enum class ErrorCode : uint8_t {
  kInternal = 1,         ///< An etscope bug: a broken invariant.
  kInvalidArgument,      ///< The caller passed something unusable (bad index, bad option).
  kNotFound,             ///< A named thing (file, method, key) does not exist.
  kIo,                   ///< The operating system refused a read or write.
  kWrongKind,            ///< The bytes are some other kind of file.
  kTruncated,            ///< The file ends before a structure it declares.
  kCorrupt,              ///< The bytes are of the right kind but inconsistent or out of range.
  kNotSupported,         ///< Well-formed, but a version or feature etscope does not handle.
  kOutOfResources,       ///< A buffer or limit is too small for the request.
};

/// Short stable name of a code, e.g. "corrupt".
const char* to_string(ErrorCode code);

/// A failure: a code plus a human-readable, single-line message.
class Error {
 public:
  Error(ErrorCode code, std::string message) : code_(code), message_(std::move(message)) {}

  ErrorCode code() const { return code_; }
  const std::string& message() const { return message_; }

  /// Returns a copy whose message is "<prefix>: <message>", for adding context such as a file
  /// name or a value index as the error travels outwards.
  Error with_context(const std::string& prefix) const {
    return Error(code_, prefix + ": " + message_);
  }

 private:
  ErrorCode code_;
  std::string message_;
};

/// A value or an Error. Move-only in spirit when T is; has no empty state.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::in_place_index<0>, std::move(value)) {}  // NOLINT: implicit
  Result(Error error) : state_(std::in_place_index<1>, std::move(error)) {}  // NOLINT: implicit

  bool ok() const { return state_.index() == 0; }
  explicit operator bool() const { return ok(); }

  /// The value. Only valid when ok().
  T& value() & { return std::get<0>(state_); }
  const T& value() const& { return std::get<0>(state_); }
  T&& value() && { return std::get<0>(std::move(state_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  /// The error. Only valid when !ok().
  const Error& error() const { return std::get<1>(state_); }

 private:
  std::variant<T, Error> state_;
};

/// Result of an operation that produces no value.
template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error error) : error_(std::move(error)), ok_(false) {}  // NOLINT: implicit

  bool ok() const { return ok_; }
  explicit operator bool() const { return ok_; }
  const Error& error() const { return error_; }

 private:
  Error error_{ErrorCode::kInternal, ""};
  bool ok_ = true;
};

using Status = Result<void>;

inline Status ok_status() { return Status(); }

/// Builds an Error from a printf-style message.
Error make_error(ErrorCode code, const char* format, ...) __attribute__((format(printf, 2, 3)));

}  // namespace etscope

#define ETSCOPE_CONCAT_INNER(a, b) a##b
#define ETSCOPE_CONCAT(a, b) ETSCOPE_CONCAT_INNER(a, b)

/// Evaluates a Status or Result expression and returns its error from the enclosing function.
#define ETSCOPE_TRY(expr)                          \
  do {                                             \
    auto&& etscope_try_result_ = (expr);           \
    if (!etscope_try_result_.ok()) {               \
      return etscope_try_result_.error();          \
    }                                              \
  } while (0)

/// `ETSCOPE_ASSIGN_OR_RETURN(auto x, f());` declares x from a Result or returns its error.
#define ETSCOPE_ASSIGN_OR_RETURN(lhs, expr) \
  ETSCOPE_ASSIGN_OR_RETURN_IMPL(ETSCOPE_CONCAT(etscope_result_, __LINE__), lhs, expr)
#define ETSCOPE_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                  \
  if (!tmp.ok()) {                                    \
    return tmp.error();                               \
  }                                                   \
  lhs = std::move(tmp).value()

/// Returns an Error built from a printf-style message unless `cond` holds.
#define ETSCOPE_CHECK_OR_RETURN(cond, code, ...)        \
  do {                                                  \
    if (!(cond)) {                                      \
      return ::etscope::make_error((code), __VA_ARGS__); \
    }                                                   \
  } while (0)
