// Status and StatusOr<T>: how every fallible fp8dot call reports failure.
// User input never reaches an assert or exit(): it comes back as a Status that names what is wrong.
#pragma once

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace fp8dot {

enum class StatusCode {
  kOk,
  kInvalidArgument,    // the caller's input is wrong (shape, type, scale, text)
  kUnimplemented,      // valid input that this build or backend cannot run
  kNotFound,           // a file or resource does not exist
  kResourceExhausted,  // out of (device) memory
  kInternal,           // a library call failed (CUDA, cuBLASLt, I/O)
  kUnavailable,        // e.g. no GPU present
};

const char* StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;  // OK
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "INVALID_ARGUMENT: message", or "OK".
  std::string ToString() const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status OkStatus() { return Status(); }

// printf-style constructors; the message should name the object and the offending value.
Status InvalidArgument(const char* format, ...) __attribute__((format(printf, 1, 2)));
Status Unimplemented(const char* format, ...) __attribute__((format(printf, 1, 2)));
Status NotFound(const char* format, ...) __attribute__((format(printf, 1, 2)));
Status ResourceExhausted(const char* format, ...) __attribute__((format(printf, 1, 2)));
Status Internal(const char* format, ...) __attribute__((format(printf, 1, 2)));
Status Unavailable(const char* format, ...) __attribute__((format(printf, 1, 2)));

// printf into a std::string.
std::string StrFormat(const char* format, ...) __attribute__((format(printf, 1, 2)));
std::string StrFormatV(const char* format, va_list args);
// "DEFAULT" -> "default": for case-insensitive parsing of names.
std::string AsciiLowercase(std::string_view text);

template <typename T>
class [[nodiscard]] StatusOr {
 public:
  StatusOr(T value) : value_(std::move(value)) {}  // NOLINT: implicit like absl::StatusOr
  StatusOr(Status status)                          // NOLINT
      : status_(status.ok() ? Status(StatusCode::kInternal, "StatusOr built from an OK status")
                            : std::move(status)) {}

  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }
  // The accessors need ok(): on an error they print the status to stderr and abort.
  T& value() & {
    CheckOk();
    return *value_;
  }
  const T& value() const& {
    CheckOk();
    return *value_;
  }
  T&& value() && {
    CheckOk();
    return std::move(*value_);
  }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  void CheckOk() const {
    if (!status_.ok()) {
      std::fprintf(stderr, "fp8dot: StatusOr accessed while holding an error: %s\n",
                   status_.ToString().c_str());
      std::abort();
    }
  }

  Status status_;
  std::optional<T> value_;
};

}  // namespace fp8dot

#define FP8_STATUS_CONCAT_INNER(a, b) a##b
#define FP8_STATUS_CONCAT(a, b) FP8_STATUS_CONCAT_INNER(a, b)

#define FP8_RETURN_IF_ERROR(expr)              \
  do {                                         \
    ::fp8dot::Status fp8_status_ = (expr);     \
    if (!fp8_status_.ok()) return fp8_status_; \
  } while (0)

#define FP8_ASSIGN_OR_RETURN(lhs, expr) \
  FP8_ASSIGN_OR_RETURN_IMPL(FP8_STATUS_CONCAT(fp8_statusor_, __LINE__), lhs, expr)
#define FP8_ASSIGN_OR_RETURN_IMPL(statusor, lhs, expr) \
  auto statusor = (expr);                              \
  if (!statusor.ok()) return statusor.status();        \
  lhs = std::move(statusor).value()
