#include "fp8dot/tensor.h"
#include "status_matchers.h"

#include <gtest/gtest.h>

namespace fp8dot {
namespace {

TEST(TensorTest, RowMajorStridesAndShapeString) {
  FP8_ASSERT_OK_AND_ASSIGN(HostTensor t, HostTensor::Create(DType::kF8E4M3FN, {2, 3, 4}));
  EXPECT_EQ(t.strides(), (std::vector<int64_t>{12, 4, 1}));
  EXPECT_EQ(t.size_in_bytes(), 24);
  EXPECT_EQ(t.ShapeString(), "f8e4m3fn[2,3,4]{2,1,0}");
  EXPECT_TRUE(t.is_row_major());
}

TEST(TensorTest, ColumnMajorLayoutAndToRowMajor) {
  FP8_ASSERT_OK_AND_ASSIGN(HostTensor t, HostTensor::Create(DType::kF32, {2, 3}, {0, 1}));
  EXPECT_EQ(t.strides(), (std::vector<int64_t>{1, 2}));
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 3; ++j) t.Set({i, j}, static_cast<double>(10 * i + j));
  EXPECT_EQ(t.GetPhysical(1), 10.0);  // (1, 0) is next to (0, 0) in memory
  HostTensor r = t.ToRowMajor();
  EXPECT_TRUE(r.is_row_major());
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 3; ++j) EXPECT_EQ(r.GetPhysical(i * 3 + j), 10.0 * i + j);
}

TEST(TensorTest, RejectsBadLayoutsAndSizes) {
  EXPECT_EQ(HostTensor::Create(DType::kF32, {2, 3}, {0, 0}).status().message(),
            "layout [0,0] is not a permutation of the dims of [2,3]");
  EXPECT_EQ(HostTensor::Create(DType::kF32, {2, 3}, {0}).status().message(),
            "layout has 1 entries but the shape [2,3] has rank 2");
  EXPECT_EQ(HostTensor::Create(DType::kF32, {2, -1}).status().message(),
            "tensor dims [2,-1]: negative size");
  EXPECT_EQ(HostTensor::Create(DType::kF64, {1 << 30, 1 << 30}).status().code(),
            StatusCode::kResourceExhausted);
  // Under 1 TiB but more than any test machine has: refused before the allocator is asked.
  StatusOr<HostTensor> huge = HostTensor::Create(DType::kF8E4M3FN, {1000000, 1000000});
  EXPECT_EQ(huge.status().code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(huge.status().message(),
            "tensor f8e4m3fn[1000000,1000000] needs 1000000000000 bytes, more than this "
            "machine's memory");
}

TEST(TensorTest, ScalarAndZeroSizedTensors) {
  HostTensor s = HostTensor::Scalar(DType::kBF16, 3.0);
  EXPECT_EQ(s.rank(), 0);
  EXPECT_EQ(s.element_count(), 1);
  EXPECT_EQ(s.GetPhysical(0), 3.0);
  FP8_ASSERT_OK_AND_ASSIGN(HostTensor empty, HostTensor::Create(DType::kF16, {0, 5}));
  EXPECT_EQ(empty.element_count(), 0);
  EXPECT_EQ(empty.size_in_bytes(), 0);
}

// Regression (the long fuzz run, npy_fuzzer): an empty tensor whose other dims multiply past
// int64 overflowed computing its strides. Its non-zero dims must fit like any tensor's.
TEST(TensorTest, EmptyTensorsWithHugeOtherDimsAreRefused) {
  StatusOr<HostTensor> t = HostTensor::Create(DType::kBF16, {0, 777777777777777, 777777777, 72});
  EXPECT_EQ(t.status().code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(t.status().message(),
            "tensor dims [0,777777777777777,777777777,72]: too many elements");
  FP8_ASSERT_OK_AND_ASSIGN(HostTensor fine, HostTensor::Create(DType::kBF16, {0, 1 << 20, 64}));
  EXPECT_EQ(fine.element_count(), 0);
}

TEST(TensorTest, LayoutFromStridesReadsDenseLayouts) {
  using Layout = std::vector<int64_t>;
  FP8_EXPECT_OK_AND_EQ(LayoutFromStrides({4, 8}, {8, 1}), (Layout{1, 0}));  // row-major
  FP8_EXPECT_OK_AND_EQ(LayoutFromStrides({4, 8}, {1, 4}), (Layout{0, 1}));  // column-major
  FP8_EXPECT_OK_AND_EQ(LayoutFromStrides({2, 3, 4}, {1, 8, 2}), (Layout{0, 2, 1}));
  // Size-1 dims carry any stride (torch gives them arbitrary ones); they go outermost.
  FP8_EXPECT_OK_AND_EQ(LayoutFromStrides({1, 8}, {999, 1}), (Layout{1, 0}));
  FP8_EXPECT_OK_AND_EQ(LayoutFromStrides({8, 1}, {1, 1}), (Layout{0, 1}));
  FP8_EXPECT_OK_AND_EQ(LayoutFromStrides({0, 5}, {7, 3}), (Layout{1, 0}));  // empty: row-major
  FP8_EXPECT_OK_AND_EQ(LayoutFromStrides({}, {}), Layout{});
}

TEST(TensorTest, LayoutFromStridesRefusesViewsWithGapsOrOverlaps) {
  StatusOr<std::vector<int64_t>> sliced = LayoutFromStrides({4, 4}, {8, 2});
  EXPECT_EQ(sliced.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(sliced.status().message(),
            "dims [4,4] with element strides [8,2] are not a dense layout (dim 1 has stride 2, a "
            "dense array would have 1): a non-contiguous view (slice, step or expand); make it "
            "contiguous first");
  EXPECT_FALSE(LayoutFromStrides({4, 4}, {0, 1}).ok());  // expand: overlapping rows
  EXPECT_FALSE(LayoutFromStrides({4, 4}, {4, 1, 1}).ok());
  EXPECT_FALSE(LayoutFromStrides({-1, 4}, {4, 1}).ok());
}

TEST(TensorTest, ViewsReadTheCallersMemoryWithoutACopy) {
  std::vector<float> data = {1, 2, 3, 4, 5, 6};
  FP8_ASSERT_OK_AND_ASSIGN(HostTensor view,
                           HostTensor::View(DType::kF32, {2, 3}, {0, 1}, data.data()));
  EXPECT_TRUE(view.is_view());
  EXPECT_EQ(view.data(), data.data());
  EXPECT_EQ(view.size_in_bytes(), 24);
  EXPECT_EQ(view.Get({1, 0}), 2.0);  // column-major: (1,0) is the second element
  data[1] = 20;
  EXPECT_EQ(view.Get({1, 0}), 20.0);
  HostTensor copy = view;  // a copy of a view views the same memory
  EXPECT_EQ(copy.data(), data.data());
  HostTensor row_major = view.ToRowMajor();  // a real copy, in the other layout
  EXPECT_FALSE(row_major.is_view());
  EXPECT_EQ(row_major.GetPhysical(1), 3.0);
  EXPECT_FALSE(HostTensor::View(DType::kF32, {2, 3}, {0, 0}, data.data()).ok());
  EXPECT_FALSE(HostTensor::View(DType::kF32, {2, 3}, {1, 0}, nullptr).ok());
  EXPECT_FALSE(HostTensor::View(DType::kF32, {int64_t{1} << 62, 4}, {1, 0}, data.data()).ok());
}

}  // namespace
}  // namespace fp8dot
