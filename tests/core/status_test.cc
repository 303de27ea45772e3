#include "fp8dot/status.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace fp8dot
