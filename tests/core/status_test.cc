#include "fp8dot/status.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <utility>

namespace fp8dot {
namespace {

StatusOr<int> Half(int x) {
  if (x % 2 != 0) return InvalidArgument("%d is odd", x);
  return x / 2;
}

Status Quarter(int x, int* out) {
  FP8_ASSIGN_OR_RETURN(int half, Half(x));
  FP8_ASSIGN_OR_RETURN(*out, Half(half));
  return OkStatus();
}

TEST(StatusTest, FormatsCodeAndMessage) {
  Status status = InvalidArgument("lhs rank must be >= %d, got %d", 2, 1);
  EXPECT_FALSE(status.ok());
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(status.ToString(), "INVALID_ARGUMENT: lhs rank must be >= 2, got 1");
  EXPECT_EQ(OkStatus().ToString(), "OK");
}

TEST(StatusTest, AssignOrReturnPropagatesTheFirstError) {
  int out = 0;
  EXPECT_TRUE(Quarter(12, &out).ok());
  EXPECT_EQ(out, 3);
  Status status = Quarter(6, &out);
  EXPECT_EQ(status.message(), "3 is odd");
}

TEST(StatusTest, StatusOrFromOkStatusIsAnInternalError) {
  StatusOr<int> value = OkStatus();
  EXPECT_EQ(value.status().code(), StatusCode::kInternal);
}

TEST(StatusDeathTest, AccessingAnErrorAbortsWithTheStatus) {
  const char* expected =
      "fp8dot: StatusOr accessed while holding an error: INVALID_ARGUMENT: 3 is odd";
  EXPECT_DEATH(
      {
        StatusOr<int> value = Half(3);
        std::printf("%d\n", *value);
      },
      expected);
  EXPECT_DEATH(
      {
        StatusOr<std::string> value = InvalidArgument("no text");
        std::printf("%zu\n", value->size());
      },
      "StatusOr accessed while holding an error: INVALID_ARGUMENT: no text");
  EXPECT_DEATH((void)Half(5).value(), "INVALID_ARGUMENT: 5 is odd");
  EXPECT_DEATH(
      {
        StatusOr<std::string> value = NotFound("missing.npy");
        std::string moved = std::move(value).value();
        std::printf("%s\n", moved.c_str());
      },
      "NOT_FOUND: missing.npy");
}

TEST(StatusTest, AccessorsReturnTheValue) {
  StatusOr<std::string> value = std::string("abc");
  ASSERT_TRUE(value.ok());
  EXPECT_EQ(*value, "abc");
  EXPECT_EQ(value->size(), 3u);
  EXPECT_EQ(value.value(), "abc");
  EXPECT_EQ(std::move(value).value(), "abc");
}

}  // namespace
}  // namespace fp8dot
