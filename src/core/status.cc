#include "fp8dot/status.h"

#include <cctype>
#include <cstdio>

namespace fp8dot {

const char* StatusCodeName(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return "OK";
    case StatusCode::kInvalidArgument:
      return "INVALID_ARGUMENT";
    case StatusCode::kUnimplemented:
      return "UNIMPLEMENTED";
    case StatusCode::kNotFound:
      return "NOT_FOUND";
    case StatusCode::kResourceExhausted:
      return "RESOURCE_EXHAUSTED";
    case StatusCode::kInternal:
      return "INTERNAL";
    case StatusCode::kUnavailable:
      return "UNAVAILABLE";
  }
  return "UNKNOWN";
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  return std::string(StatusCodeName(code_)) + ": " + message_;
}

std::string StrFormatV(const char* format, va_list args) {
  va_list copy;
  va_copy(copy, args);
  int size = std::vsnprintf(nullptr, 0, format, copy);
  va_end(copy);
  if (size <= 0) return std::string();
  std::string out(static_cast<size_t>(size), '\0');
  std::vsnprintf(out.data(), out.size() + 1, format, args);
  return out;
}

std::string AsciiLowercase(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string StrFormat(const char* format, ...) {
  va_list args;
  va_start(args, format);
  std::string out = StrFormatV(format, args);
  va_end(args);
  return out;
}

#define FP8_DEFINE_STATUS_CONSTRUCTOR(Name, code)  \
  Status Name(const char* format, ...) {           \
    va_list args;                                  \
    va_start(args, format);                        \
    Status status(code, StrFormatV(format, args)); \
    va_end(args);                                  \
    return status;                                 \
  }

FP8_DEFINE_STATUS_CONSTRUCTOR(InvalidArgument, StatusCode::kInvalidArgument)
FP8_DEFINE_STATUS_CONSTRUCTOR(Unimplemented, StatusCode::kUnimplemented)
FP8_DEFINE_STATUS_CONSTRUCTOR(NotFound, StatusCode::kNotFound)
FP8_DEFINE_STATUS_CONSTRUCTOR(ResourceExhausted, StatusCode::kResourceExhausted)
FP8_DEFINE_STATUS_CONSTRUCTOR(Internal, StatusCode::kInternal)
FP8_DEFINE_STATUS_CONSTRUCTOR(Unavailable, StatusCode::kUnavailable)

#undef FP8_DEFINE_STATUS_CONSTRUCTOR

}  // namespace fp8dot
