// Reading and writing NumPy .npy files (format versions 1.0-3.0, little-endian) for every fp8dot
// element type.
//
// numpy has no native FP8 or bfloat16 type, and np.save of an ml_dtypes array writes a descr that
// np.load cannot read back ('<f1') or that loses the type ('<V1'). fp8dot therefore writes these
// types as a one-field structured array whose field name is the ml_dtypes type name:
//   f8e4m3fn -> [('float8_e4m3fn', '|u1')]   f8e5m2 -> [('float8_e5m2', '|u1')]
//   bf16     -> [('bfloat16', '<u2')]
// which plain numpy loads, and ml_dtypes users view as the real type:
//   a = np.load(path); a = a[a.dtype.names[0]].view(getattr(ml_dtypes, a.dtype.names[0]))
// f16/f32/f64 use the standard '<f2'/'<f4'/'<f8'. Reading also accepts what np.save writes for
// ml_dtypes arrays ('<V1', '|V1', '<f1', '<V2') and raw '|u1'/'<u2' bits, when the caller names
// the type (`type_hint`). fortran_order files load with a column-major layout.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "fp8dot/tensor.h"

namespace fp8dot {

std::string SerializeNpy(const HostTensor& tensor);
Status WriteNpy(const std::string& path, const HostTensor& tensor);

// The one .npy writer's two halves, for element types that have no DType (the HLO
// interpreter's pred and integer arrays): the file's bytes for row-major `data` of `dims`, with
// `descr` as the header spells it (e.g. "'<i4'"), and the write of those bytes to `path`.
std::string SerializeNpyRaw(std::string_view descr, const Dims& dims, std::string_view data);
Status WriteNpyBytes(const std::string& path, std::string_view bytes);

// Errors name the file (or "<bytes>"), what is malformed, and the expected form.
StatusOr<HostTensor> ParseNpy(std::string_view bytes, std::optional<DType> type_hint = std::nullopt,
                              const std::string& source_name = "<bytes>");
StatusOr<HostTensor> ReadNpy(const std::string& path,
                             std::optional<DType> type_hint = std::nullopt);

}  // namespace fp8dot
