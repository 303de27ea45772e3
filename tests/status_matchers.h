// GoogleTest assertions on Status and StatusOr<T>, so a test that gets an error fails with the
// error's message instead of dereferencing a StatusOr that holds no value.
//
//   FP8_ASSERT_OK(expr);   FP8_EXPECT_OK(expr);   // expr: a Status or a StatusOr<T>
//   FP8_ASSERT_OK_AND_ASSIGN(HostTensor t, HostTensor::Create(DType::kF32, {2, 3}));
//   FP8_EXPECT_OK_AND_EQ(ParseDType("f32"), DType::kF32);   // OK and holds that value
//
// FP8_ASSERT_OK and FP8_EXPECT_OK accept more context with <<, like any gtest assertion. Like
// every ASSERT_*, FP8_ASSERT_OK and FP8_ASSERT_OK_AND_ASSIGN only work in functions returning
// void.
#pragma once

#include <gtest/gtest.h>

#include <utility>

#include "fp8dot/status.h"

namespace fp8dot::testing {

inline Status StatusOf(const Status& status) { return status; }
template <typename T>
Status StatusOf(const StatusOr<T>& status_or) {
  return status_or.status();
}

// For ASSERT_PRED_FORMAT1 / EXPECT_PRED_FORMAT1: success iff `value` is OK; the failure names
// the expression and the status.
template <typename S>
::testing::AssertionResult IsOkFormat(const char* expr_text, const S& value) {
  const Status status = StatusOf(value);
  if (status.ok()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << expr_text << " is not OK: " << status.ToString();
}

// For EXPECT_PRED_FORMAT2: success iff `value` is OK and holds `expected`.
template <typename T, typename U>
::testing::AssertionResult IsOkAndEqualsFormat(const char* expr_text, const char* expected_text,
                                               const StatusOr<T>& value, const U& expected) {
  if (!value.ok()) {
    return ::testing::AssertionFailure()
           << expr_text << " is not OK: " << value.status().ToString();
  }
  if (*value == expected) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << expr_text << " holds " << ::testing::PrintToString(*value) << ", expected "
         << expected_text << " (" << ::testing::PrintToString(expected) << ")";
}

}  // namespace fp8dot::testing

#define FP8_ASSERT_OK(expr) ASSERT_PRED_FORMAT1(::fp8dot::testing::IsOkFormat, expr)
#define FP8_EXPECT_OK(expr) EXPECT_PRED_FORMAT1(::fp8dot::testing::IsOkFormat, expr)
#define FP8_EXPECT_OK_AND_EQ(expr, expected) \
  EXPECT_PRED_FORMAT2(::fp8dot::testing::IsOkAndEqualsFormat, expr, expected)

// Evaluates `expr` (a StatusOr<T>); on error fails the test (ASSERT) with the status message,
// else moves the value into `lhs`, which may be a declaration ("HostTensor t") or an lvalue.
#define FP8_ASSERT_OK_AND_ASSIGN(lhs, expr) \
  FP8_ASSERT_OK_AND_ASSIGN_IMPL(FP8_STATUS_CONCAT(fp8_test_statusor_, __LINE__), lhs, expr)
#define FP8_ASSERT_OK_AND_ASSIGN_IMPL(statusor, lhs, expr)                                     \
  auto statusor = (expr);                                                                      \
  if (!statusor.ok()) GTEST_FAIL() << #expr << " is not OK: " << statusor.status().ToString(); \
  lhs = std::move(statusor).value()
