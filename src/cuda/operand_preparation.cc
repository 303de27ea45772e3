// Operand, C, bias and scale preparation for CudaDotPlan (operand_preparation.h).
#include "cuda/operand_preparation.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdlib>

#include "cuda/cuda_status.h"
#include "cuda/lt_matmul.h"
#include "fp8dot/arithmetic.h"

namespace fp8dot::cuda {
namespace {

std::string ScaleLayoutName(const OperandScale& scale) {
  if (scale.minor_to_major.empty()) return "row-major";
  const std::string text = DimsToString(scale.minor_to_major);  // "[0,1]"
  std::string name = "{";
  name.append(text, 1, text.size() - 2);
  name += "}";
  return name;
}

}  // namespace

StatusOr<PreparedTensor> PrepareTensor(const TensorRequest& r, const std::string& context) {
  PreparedTensor t;
  t.present = true;
  t.source_type = r.spec->dtype;
  t.target_type = r.target_type;
  const auto batch = static_cast<int64_t>(r.index.batch.size());
  const auto rows = static_cast<int64_t>(r.index.rows.size());
  const auto cols = static_cast<int64_t>(r.index.cols.size());
  const int64_t rows_padded = std::max(rows, r.rows_padded);
  const int64_t element = DTypeSizeInBytes(r.target_type);
  auto aligned = [&](int64_t elements) { return elements * element % kAlignmentBytes == 0; };

  if (r.conversion == GatherConversion::kCopy && r.cols_padded == cols && rows_padded == rows) {
    if (std::optional<AffineStrides> s = FindAffineStrides(r.index)) {
      const bool batch_ok = batch == 1 || aligned(s->batch);
      const int64_t row_ld = rows == 1 ? cols : s->row;  // any ld >= cols fits a single row
      const int64_t col_ld = cols == 1 ? rows : s->col;
      if (batch_ok && (cols == 1 || s->col == 1) && row_ld >= cols && aligned(row_ld)) {
        t.cols_contiguous = true;
        t.ld = row_ld;
        t.batch_stride = s->batch;
        t.how = StrFormat("%s %s: read in place (%s contiguous, ld=%lld)", r.name,
                          r.spec->ToString().c_str(), r.cols_name, static_cast<long long>(t.ld));
        return t;
      }
      if (r.allow_rows_contiguous && batch_ok && (rows == 1 || s->row == 1) && col_ld >= rows &&
          aligned(col_ld)) {
        t.cols_contiguous = false;
        t.ld = col_ld;
        t.batch_stride = s->batch;
        t.how =
            StrFormat("%s %s: read in place (%s contiguous, cuBLASLt op flipped, ld=%lld)", r.name,
                      r.spec->ToString().c_str(), r.rows_name, static_cast<long long>(t.ld));
        return t;
      }
    }
  }

  // Gather into [batch][rows_padded][cols_padded].
  t.gathered = true;
  t.cols_contiguous = true;
  t.ld = r.cols_padded;
  t.batch_stride = rows_padded * r.cols_padded;
  GatherParams& g = t.gather;
  if (std::optional<AffineStrides> s = FindAffineStrides(r.index)) {
    g.affine = true;
    g.batch_stride = s->batch;
    g.row_stride = s->row;
    g.col_stride = s->col;
  } else {
    std::vector<int64_t> tables = r.index.batch;
    tables.insert(tables.end(), r.index.rows.begin(), r.index.rows.end());
    tables.insert(tables.end(), r.index.cols.begin(), r.index.cols.end());
    FP8_ASSIGN_OR_RETURN(t.tables, DeviceBuffer::Allocate(tables.size() * sizeof(int64_t), r.name));
    FP8_CUDA_RETURN_IF_ERROR(cudaMemcpy(t.tables.data(), tables.data(),
                                        tables.size() * sizeof(int64_t), cudaMemcpyHostToDevice),
                             context);
    g.batch_offsets = t.tables.as<const int64_t>();
    g.row_offsets = g.batch_offsets + batch;
    g.col_offsets = g.row_offsets + rows;
  }
  FP8_ASSIGN_OR_RETURN(
      t.copy, DeviceBuffer::Allocate(
                  static_cast<size_t>(batch * rows_padded * r.cols_padded * element), r.name));
  g.dest = t.copy.data();
  g.conversion = r.conversion;
  g.source_type = r.spec->dtype;
  g.batch = batch;
  g.rows = rows;
  g.cols = cols;
  g.rows_padded = rows_padded;
  g.cols_padded = r.cols_padded;
  auto step = [](const std::vector<int64_t>& offsets) {
    return offsets.size() > 1 ? std::abs(offsets[1] - offsets[0]) : INT64_MAX;
  };
  g.read_rows_fastest = step(r.index.rows) < step(r.index.cols);

  std::vector<std::string> what;
  if (g.read_rows_fastest) what.push_back(StrFormat("transposed (%s contiguous)", r.rows_name));
  if (rows_padded != rows) {
    what.push_back(StrFormat("%s padded %lld->%lld", r.rows_name, static_cast<long long>(rows),
                             static_cast<long long>(rows_padded)));
  }
  if (r.cols_padded != cols) {
    what.push_back(StrFormat("%s padded %lld->%lld", r.cols_name, static_cast<long long>(cols),
                             static_cast<long long>(r.cols_padded)));
  }
  if (r.conversion == GatherConversion::kE5M2ToF16) what.push_back("converted e5m2->f16 (exact)");
  if (r.conversion == GatherConversion::kFp8ToF32Scaled) {
    what.push_back("converted to f32 with its block scales applied");
  }
  if (what.empty()) what.push_back("layout not strided as cuBLASLt needs");
  std::string joined;
  for (const std::string& w : what) joined += (joined.empty() ? "" : ", ") + w;
  t.how = StrFormat("%s %s: gathered on the device into [%lld][%lld][%lld] %s (%s)", r.name,
                    r.spec->ToString().c_str(), static_cast<long long>(batch),
                    static_cast<long long>(rows_padded), static_cast<long long>(r.cols_padded),
                    DTypeName(r.target_type), joined.c_str());
  return t;
}

ScaleStrides SourceScaleStrides(const OperandScale& scale, bool is_lhs) {
  const auto rank = static_cast<int64_t>(scale.dims.size());
  std::vector<int64_t> layout =
      scale.minor_to_major.empty() ? RowMajorLayout(rank) : scale.minor_to_major;
  std::vector<int64_t> strides(static_cast<size_t>(rank), 1);
  int64_t stride = 1;
  for (int64_t d : layout) {
    strides[static_cast<size_t>(d)] = stride;
    stride *= scale.dims[static_cast<size_t>(d)];
  }
  if (rank != 2) return {1, 0};
  // lhs [rows, KB]; rhs [KB, rows].
  return is_lhs ? ScaleStrides{strides[0], strides[1]} : ScaleStrides{strides[1], strides[0]};
}

// The caller's scale is [rows, ...] (lhs) or [K/128, ...] (rhs) in the spec's layout.
StatusOr<PreparedScale> PrepareScale(const OperandScale& scale, bool is_lhs, int64_t rows,
                                     int64_t rows_padded, int64_t k) {
  const ScaleMode mode = scale.mode;
  PreparedScale s;
  s.mode = mode;
  const char* name = is_lhs ? "lhs" : "rhs";
  const int64_t k_blocks = ScaleBlockCount(k);
  const ScaleStrides source = SourceScaleStrides(scale, is_lhs);
  ScaleRelayoutParams& p = s.params;
  switch (mode) {
    case ScaleMode::kNone:
      s.how = StrFormat("%s scale: none", name);
      return s;
    case ScaleMode::kTensor:
      s.how = StrFormat("%s scale: per tensor (SCALAR_32F), in place", name);
      return s;
    case ScaleMode::kOuterVector:
      p = {nullptr, nullptr, rows, 1, rows_padded, 1, 1, 0, 1, 0};
      break;
    case ScaleMode::kBlock1x128:
      // Wanted: (row, kb) at kb * rows_padded + row ("outer-dim-major").
      p = {nullptr,  nullptr,    rows,         k_blocks, rows_padded,
           k_blocks, source.row, source.block, 1,        rows_padded};
      break;
    case ScaleMode::kBlock128x128: {
      // Wanted: (row block, kb) at rb * round_up(KB, 4) + kb (16-byte aligned rows).
      const int64_t row_blocks = ScaleBlockCount(rows);
      const int64_t ld = RoundUp(k_blocks, 4);
      p = {nullptr, nullptr, row_blocks, k_blocks, row_blocks, ld, source.row, source.block, ld, 1};
      break;
    }
  }
  // In place when nothing is padded and every axis longer than 1 has cuBLASLt's stride.
  const bool same_extents = p.dest_rows == p.rows && p.dest_cols == p.cols;
  const bool rows_match = p.rows <= 1 || p.source_row_stride == p.dest_row_stride;
  const bool cols_match = p.cols <= 1 || p.source_col_stride == p.dest_col_stride;
  s.relayout = !(same_extents && rows_match && cols_match);
  if (s.relayout) {
    FP8_ASSIGN_OR_RETURN(s.copy,
                         DeviceBuffer::Allocate(static_cast<size_t>(p.dest_rows * p.dest_cols) * 4,
                                                "scale relayout"));
    p.dest = s.copy.as<float>();
  }
  s.how = StrFormat(
      "%s scale: %s %s (%s), %s", name, ScaleModeName(mode), ScaleLayoutName(scale).c_str(),
      ScaleModeEnumName(LtScaleMode(mode)),
      s.relayout
          ? StrFormat("reordered on the device into cuBLASLt's layout [%lld x %lld] at every run",
                      static_cast<long long>(p.dest_rows), static_cast<long long>(p.dest_cols))
                .c_str()
          : "already in cuBLASLt's layout: read in place");
  return s;
}

}  // namespace fp8dot::cuda
