// QuantizeOnCuda against QuantizeOnCpu, bit for bit, on fresh random data: every granularity,
// input and FP8 type, with and without qᵀ, on shapes with partial tiles and on shapes that
// leave the vectorised path. Outputs are poisoned before each run.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "cuda_test_util.h"
#include "fp8dot/cpu_backend.h"
#include "fp8dot/cuda_backend.h"
#include "fp8dot/cuda_buffer.h"
#include "fp8dot/float_codec.h"
#include "fp8dot/random.h"

namespace fp8dot {
namespace {

struct Case {
  int64_t rows, cols;
  ScaleGranularity granularity;
  DType input_type, output_type;
  bool row_major, transposed, given_scale, compute_amax;
  int margin;
  float given_value = 0.0371f;  // with given_scale; one that is not usable falls back
  ScaleLayout scale_layout = ScaleLayout::kRowMajor;
  QuantizeActivation activation = QuantizeActivation::kNone;  // kSwiGlu: a second random input
  Distribution distribution = Distribution::kHeavyTailed;
  bool misaligned_up = false;  // up one element past a 16-byte boundary: no vector loads
};

std::string Describe(const Case& c) {
  return StrFormat(
      "%lldx%lld %s %s->%s row_major=%d transposed=%d given=%d (%g) amax=%d margin=%d, %s "
      "scales, activation %s",
      static_cast<long long>(c.rows), static_cast<long long>(c.cols),
      ScaleGranularityName(c.granularity), DTypeName(c.input_type), DTypeName(c.output_type),
      c.row_major, c.transposed, c.given_scale, c.given_value, c.compute_amax, c.margin,
      ScaleLayoutName(c.scale_layout), QuantizeActivationName(c.activation));
}

size_t Count(const std::vector<int64_t>& dims) {
  size_t n = 1;
  for (int64_t d : dims) n *= static_cast<size_t>(d);
  return n;
}

// Host and device copies of one output, the device one poisoned (0xff bytes: NaN in f32 and
// FP8, so an element the kernel forgets cannot pass).
struct Output {
  std::vector<uint8_t> host;
  DeviceBuffer device;
  static StatusOr<Output> Make(size_t bytes, const char* what) {
    Output out;
    out.host.assign(bytes, 0);
    FP8_ASSIGN_OR_RETURN(out.device, DeviceBuffer::Allocate(bytes, what));
    if (cudaMemset(out.device.data(), 0xff, bytes) != cudaSuccess) {
      return Internal("cudaMemset of %s failed", what);
    }
    return out;
  }
};

// Bytes equal, except that NaN equals NaN (the hardware's NaN encoding may differ in sign).
void ExpectSameFp8(const std::vector<uint8_t>& cpu, const std::vector<uint8_t>& gpu, DType type,
                   const char* what) {
  ASSERT_EQ(cpu.size(), gpu.size());
  for (size_t i = 0; i < cpu.size(); ++i) {
    if (cpu[i] == gpu[i]) continue;
    const double a = LoadElement(type, cpu.data(), static_cast<int64_t>(i));
    const double b = LoadElement(type, gpu.data(), static_cast<int64_t>(i));
    ASSERT_TRUE(std::isnan(a) && std::isnan(b))
        << what << "[" << i << "]: cpu " << a << " gpu " << b;
  }
}

void ExpectSameFloats(const std::vector<uint8_t>& cpu, const std::vector<uint8_t>& gpu,
                      const char* what) {
  ASSERT_EQ(cpu.size(), gpu.size());
  for (size_t i = 0; i < cpu.size() / 4; ++i) {
    float a, b;
    std::memcpy(&a, cpu.data() + 4 * i, 4);
    std::memcpy(&b, gpu.data() + 4 * i, 4);
    if (std::isnan(a) && std::isnan(b)) continue;
    ASSERT_EQ(a, b) << what << "[" << i << "]";
  }
}

void RunCase(const Case& c, uint64_t seed) {
  SCOPED_TRACE(Describe(c));
  QuantizeSpec spec;
  spec.input_type = c.input_type;
  spec.output_type = c.output_type;
  spec.rows = c.rows;
  spec.cols = c.cols;
  spec.granularity = c.granularity;
  spec.row_major = c.row_major;
  spec.transposed = c.transposed;
  spec.given_scale = c.given_scale;
  spec.compute_amax = c.compute_amax;
  spec.margin = c.margin;
  spec.scale_layout = c.scale_layout;
  spec.activation = c.activation;
  FP8_ASSERT_OK_AND_ASSIGN(QuantizeOutputs outputs, ValidateQuantizeSpec(spec));
  const bool swiglu = c.activation == QuantizeActivation::kSwiGlu;
  FP8_ASSERT_OK_AND_ASSIGN(HostTensor input,
                           RandomTensor(c.input_type, {c.rows, c.cols}, c.distribution, seed));
  const size_t input_bytes = static_cast<size_t>(input.size_in_bytes());
  FP8_ASSERT_OK_AND_ASSIGN(DeviceBuffer device_input, DeviceBuffer::Allocate(input_bytes, "input"));
  FP8_ASSERT_OK(CopyToDevice(device_input.data(), input.data(), input_bytes, "input"));
  HostTensor up;
  DeviceBuffer device_up;
  if (swiglu) {
    FP8_ASSERT_OK_AND_ASSIGN(
        up, RandomTensor(c.input_type, {c.rows, c.cols}, c.distribution, seed + 1'000'000));
    const size_t offset = c.misaligned_up ? static_cast<size_t>(DTypeSizeInBytes(c.input_type)) : 0;
    FP8_ASSERT_OK_AND_ASSIGN(device_up, DeviceBuffer::Allocate(input_bytes + offset, "up"));
    FP8_ASSERT_OK(CopyToDevice(static_cast<uint8_t*>(device_up.data()) + offset, up.data(),
                               input_bytes, "up"));
  }
  const float given = c.given_value;
  FP8_ASSERT_OK_AND_ASSIGN(DeviceBuffer device_given, DeviceBuffer::Allocate(4, "given scale"));
  FP8_ASSERT_OK(CopyToDevice(device_given.data(), &given, 4, "given scale"));

  const size_t elements = static_cast<size_t>(c.rows * c.cols);
  FP8_ASSERT_OK_AND_ASSIGN(Output q, Output::Make(c.row_major ? elements : 1, "q"));
  FP8_ASSERT_OK_AND_ASSIGN(Output q_t, Output::Make(c.transposed ? elements : 1, "q_t"));
  FP8_ASSERT_OK_AND_ASSIGN(Output scale, Output::Make(4 * Count(outputs.scale_dims), "scale"));
  FP8_ASSERT_OK_AND_ASSIGN(Output scale_t,
                           Output::Make(4 * Count(outputs.transposed_scale_dims), "scale_t"));
  FP8_ASSERT_OK_AND_ASSIGN(Output amax, Output::Make(4, "amax"));

  QuantizeBuffers cpu, gpu;
  cpu.input = input.data();
  gpu.input = device_input.data();
  if (swiglu) {
    cpu.up = up.data();
    gpu.up = static_cast<uint8_t*>(device_up.data()) +
             (c.misaligned_up ? DTypeSizeInBytes(c.input_type) : 0);
  }
  if (c.given_scale) cpu.given_scale = &given, gpu.given_scale = device_given.as<float>();
  if (c.row_major) cpu.output = q.host.data(), gpu.output = q.device.data();
  if (outputs.has_scale) {
    cpu.scale = reinterpret_cast<float*>(scale.host.data());
    gpu.scale = scale.device.as<float>();
  }
  if (c.transposed)
    cpu.transposed_output = q_t.host.data(), gpu.transposed_output = q_t.device.data();
  if (outputs.has_transposed_scale) {
    cpu.transposed_scale = reinterpret_cast<float*>(scale_t.host.data());
    gpu.transposed_scale = scale_t.device.as<float>();
  }
  if (c.compute_amax) {
    cpu.amax = reinterpret_cast<float*>(amax.host.data());
    gpu.amax = amax.device.as<float>();
  }
  FP8_ASSERT_OK(QuantizeOnCpu(spec, cpu));
  FP8_ASSERT_OK(QuantizeOnCuda(spec, gpu, nullptr));
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);

  auto fetch = [](Output& out) {
    std::vector<uint8_t> bytes(out.host.size());
    EXPECT_TRUE(CopyToHost(bytes.data(), out.device.data(), bytes.size(), "result").ok());
    return bytes;
  };
  if (c.row_major) ExpectSameFp8(q.host, fetch(q), c.output_type, "q");
  if (c.transposed) ExpectSameFp8(q_t.host, fetch(q_t), c.output_type, "q_t");
  if (outputs.has_scale) ExpectSameFloats(scale.host, fetch(scale), "scale");
  if (outputs.has_transposed_scale) ExpectSameFloats(scale_t.host, fetch(scale_t), "scale_t");
  if (c.compute_amax) ExpectSameFloats(amax.host, fetch(amax), "amax");
}

TEST(CudaQuantizeTest, BitIdenticalToTheCpuBackend) {
  FP8_SKIP_WITHOUT_GPU();
  // 1030 x 6200 has more tiles (9 x 49) than the persistent grid has CTAs on an H200 (132 x 3),
  // so CTAs loop over tiles, partial ones at both edges included.
  const std::vector<std::pair<int64_t, int64_t>> shapes = {
      {256, 384}, {200, 136}, {1, 8}, {129, 7}, {8, 1000}, {3, 130}, {1030, 6200}};
  uint64_t seed = 100;
  int cases = 0;
  for (auto [rows, cols] : shapes) {
    for (ScaleGranularity granularity : {ScaleGranularity::kTensor, ScaleGranularity::kRow,
                                         ScaleGranularity::k1x128, ScaleGranularity::k128x128}) {
      for (DType input_type : {DType::kBF16, DType::kF32, DType::kF16}) {
        for (DType output_type : {DType::kF8E4M3FN, DType::kF8E5M2}) {
          for (int outputs = 0; outputs < 3; ++outputs) {  // q, qᵀ, both
            // The large shape (CPU reference time) only with both outputs.
            if (rows * cols > 1'000'000 && outputs != 2) continue;
            const bool row_major = outputs != 1, transposed = outputs != 0;
            const bool amax = (seed % 2) == 0;
            RunCase({rows, cols, granularity, input_type, output_type, row_major, transposed, false,
                     amax, static_cast<int>(seed % 3) - 1},
                    ++seed);
            ++cases;
            if (HasFatalFailure()) return;
          }
        }
      }
    }
    // Given scales are tensor scales: once per shape, not per granularity.
    // A usable given scale (delayed scaling), with and without the amax output, which the cast
    // then takes from its own reads of q's or qᵀ's values. With the amax output the cast
    // resolves the scale itself (resolve_given_scale), without it a kernel does.
    struct Outputs {
      bool row_major, transposed, amax;
      DType input_type;
    };
    for (const Outputs o :
         {Outputs{true, true, true, DType::kBF16}, Outputs{true, true, true, DType::kF32},
          Outputs{false, true, true, DType::kBF16}, Outputs{true, false, false, DType::kF16}}) {
      RunCase({rows, cols, ScaleGranularity::kTensor, o.input_type, DType::kF8E5M2, o.row_major,
               o.transposed, true, o.amax, 0},
              ++seed);
      ++cases;
      if (HasFatalFailure()) return;
    }
    // Given scales that are not usable: the input's own scale (an amax pass on the GPU, into the
    // amax output where there is one, else into q's scale), with and without the amax.
    for (const float unusable : {0.0f, -1.0f, std::numeric_limits<float>::quiet_NaN()}) {
      for (const bool amax : {true, false}) {
        RunCase({rows, cols, ScaleGranularity::kTensor, DType::kF32, DType::kF8E4M3FN, true,
                 rows % 2 == 1, true, amax, 1, unusable},
                ++seed);
        ++cases;
        if (HasFatalFailure()) return;
      }
    }
  }
  RecordProperty("cases", cases);
}

// Column-major 1x128 scales (what fp8dot.torch's layers ask for): the same bytes as the CPU
// backend's, which writes them as the transpose of its row-major ones (cpu/quantize_test.cc), on
// shapes with partial blocks at both edges, a row or column alone, and more tiles than the
// persistent grid has CTAs.
TEST(CudaQuantizeTest, ColumnMajorBlockScalesAreBitIdenticalToTheCpuBackend) {
  FP8_SKIP_WITHOUT_GPU();
  const std::vector<std::pair<int64_t, int64_t>> shapes = {{256, 384}, {200, 136}, {1, 8},
                                                           {129, 7},   {3, 130},   {1030, 6200}};
  uint64_t seed = 700;
  for (auto [rows, cols] : shapes) {
    for (DType input_type : {DType::kBF16, DType::kF32}) {
      for (int outputs = 0; outputs < 3; ++outputs) {  // q, qᵀ, both
        const Case c{.rows = rows,
                     .cols = cols,
                     .granularity = ScaleGranularity::k1x128,
                     .input_type = input_type,
                     .output_type = DType::kF8E4M3FN,
                     .row_major = outputs != 1,
                     .transposed = outputs != 0,
                     .given_scale = false,
                     .compute_amax = seed % 2 == 0,
                     .margin = 0,
                     .scale_layout = ScaleLayout::kColumnMajor};
        RunCase(c, ++seed);
        if (HasFatalFailure()) return;
      }
    }
  }
}

// An activation quantised on the way in (QuantizeActivation::kSwiGlu, kGelu): its own load path
// in the cast (SwiGLU: synchronous, one buffer; GELU: applied in shared memory to the staged
// tile, 1030 x 6200 giving CTAs several tiles) and in both amax passes, against the CPU backend,
// which computes the activation with the same activation_rule.h. Heavy-tailed inputs reach both
// ends of its exp (beyond ±88); uniform ones give the values a training run has.
void ExpectActivationIsBitIdenticalToTheCpuBackend(QuantizeActivation activation, uint64_t seed) {
  const std::vector<std::pair<int64_t, int64_t>> shapes = {{256, 384}, {200, 136}, {1, 8},
                                                           {129, 7},   {3, 130},   {1030, 6200}};
  for (auto [rows, cols] : shapes) {
    for (ScaleGranularity granularity : {ScaleGranularity::kTensor, ScaleGranularity::kRow,
                                         ScaleGranularity::k1x128, ScaleGranularity::k128x128}) {
      for (DType input_type : {DType::kBF16, DType::kF32, DType::kF16}) {
        for (int outputs = 0; outputs < 3; ++outputs) {  // q, qᵀ, both
          if (rows * cols > 1'000'000 && (outputs != 2 || input_type == DType::kF16)) continue;
          ++seed;
          Case c{rows,         cols,         granularity, input_type,    DType::kF8E4M3FN,
                 outputs != 1, outputs != 0, false,       seed % 2 == 0, 0};
          c.activation = activation;
          c.distribution = seed % 3 == 0 ? Distribution::kHeavyTailed : Distribution::kSymmetric;
          if (granularity == ScaleGranularity::k1x128 && seed % 2 == 1) {
            c.scale_layout = ScaleLayout::kColumnMajor;
          }
          RunCase(c, seed);
          if (::testing::Test::HasFatalFailure()) return;
        }
      }
    }
    // An up that is not 16-byte aligned while the gate is: every kernel's element-wise path.
    for (ScaleGranularity granularity :
         {ScaleGranularity::kTensor, ScaleGranularity::kRow, ScaleGranularity::k1x128}) {
      if (activation != QuantizeActivation::kSwiGlu || cols % 8 != 0 || rows * cols > 1'000'000) {
        break;
      }
      Case c{rows, cols, granularity, DType::kBF16, DType::kF8E4M3FN, true, true, false, true, 0};
      c.activation = QuantizeActivation::kSwiGlu;
      c.distribution = Distribution::kSymmetric;
      c.misaligned_up = true;
      RunCase(c, ++seed);
      if (::testing::Test::HasFatalFailure()) return;
    }
    // Delayed scaling: a usable given scale (one pass) and an unusable one (the amax pass of the
    // product first), with the amax output and without.
    for (const float given : {0.0371f, 0.0f}) {
      for (const bool amax : {true, false}) {
        Case c{rows,
               cols,
               ScaleGranularity::kTensor,
               DType::kBF16,
               DType::kF8E5M2,
               true,
               true,
               true,
               amax,
               0,
               given};
        c.activation = activation;
        c.distribution = Distribution::kSymmetric;
        RunCase(c, ++seed);
        if (::testing::Test::HasFatalFailure()) return;
      }
    }
  }
}

TEST(CudaQuantizeTest, SwiGluIsBitIdenticalToTheCpuBackend) {
  FP8_SKIP_WITHOUT_GPU();
  ExpectActivationIsBitIdenticalToTheCpuBackend(QuantizeActivation::kSwiGlu, 900);
}

TEST(CudaQuantizeTest, GeluIsBitIdenticalToTheCpuBackend) {
  FP8_SKIP_WITHOUT_GPU();
  ExpectActivationIsBitIdenticalToTheCpuBackend(QuantizeActivation::kGelu, 1900);
}

TEST(CudaQuantizeTest, NanAndInfinityMatchTheCpuBackend) {
  FP8_SKIP_WITHOUT_GPU();
  // Specials inside blocks: a NaN makes its group's scale 1 and stays NaN; inf saturates.
  std::vector<float> x(256 * 256);
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(static_cast<float>(i)) * 100.0f;
  x[3] = NAN;
  x[300 * 1 + 7] = INFINITY;
  x[256 * 200 + 100] = -INFINITY;
  for (ScaleGranularity granularity : {ScaleGranularity::kTensor, ScaleGranularity::kRow,
                                       ScaleGranularity::k1x128, ScaleGranularity::k128x128}) {
    QuantizeSpec spec;
    spec.input_type = DType::kF32;
    spec.rows = spec.cols = 256;
    spec.granularity = granularity;
    spec.transposed = true;
    spec.compute_amax = true;
    FP8_ASSERT_OK_AND_ASSIGN(QuantizeOutputs outputs, ValidateQuantizeSpec(spec));
    std::vector<uint8_t> q(x.size()), q_t(x.size()), gq(x.size()), gq_t(x.size());
    std::vector<float> scale(Count(outputs.scale_dims)),
        scale_t(Count(outputs.transposed_scale_dims));
    std::vector<float> gscale(scale.size()), gscale_t(scale_t.size());
    float amax = 0, gamax = 0;
    FP8_ASSERT_OK(
        QuantizeOnCpu(spec, {x.data(), nullptr, q.data(), scale.data(), q_t.data(),
                             outputs.has_transposed_scale ? scale_t.data() : nullptr, &amax}));
    FP8_ASSERT_OK_AND_ASSIGN(DeviceBuffer in, DeviceBuffer::Allocate(4 * x.size(), "x"));
    FP8_ASSERT_OK(CopyToDevice(in.data(), x.data(), 4 * x.size(), "x"));
    FP8_ASSERT_OK_AND_ASSIGN(DeviceBuffer dq, DeviceBuffer::Allocate(x.size(), "q"));
    FP8_ASSERT_OK_AND_ASSIGN(DeviceBuffer dq_t, DeviceBuffer::Allocate(x.size(), "q_t"));
    FP8_ASSERT_OK_AND_ASSIGN(DeviceBuffer ds, DeviceBuffer::Allocate(4 * scale.size(), "s"));
    FP8_ASSERT_OK_AND_ASSIGN(DeviceBuffer ds_t,
                             DeviceBuffer::Allocate(4 * scale_t.size() + 4, "s_t"));
    FP8_ASSERT_OK_AND_ASSIGN(DeviceBuffer da, DeviceBuffer::Allocate(4, "amax"));
    FP8_ASSERT_OK(
        QuantizeOnCuda(spec,
                       {in.data(), nullptr, dq.data(), ds.as<float>(), dq_t.data(),
                        outputs.has_transposed_scale ? ds_t.as<float>() : nullptr, da.as<float>()},
                       nullptr));
    FP8_ASSERT_OK(CopyToHost(gq.data(), dq.data(), gq.size(), "q"));
    FP8_ASSERT_OK(CopyToHost(gq_t.data(), dq_t.data(), gq_t.size(), "q_t"));
    FP8_ASSERT_OK(CopyToHost(gscale.data(), ds.data(), 4 * gscale.size(), "s"));
    // Without a transposed scale (tensor and 128x128 scales serve both orientations) neither
    // backend writes one: nothing to fetch (the device buffer was never written).
    if (outputs.has_transposed_scale) {
      FP8_ASSERT_OK(CopyToHost(gscale_t.data(), ds_t.data(), 4 * gscale_t.size(), "s_t"));
    }
    FP8_ASSERT_OK(CopyToHost(&gamax, da.data(), 4, "amax"));
    SCOPED_TRACE(ScaleGranularityName(granularity));
    ExpectSameFp8(q, gq, DType::kF8E4M3FN, "q");
    ExpectSameFp8(q_t, gq_t, DType::kF8E4M3FN, "q_t");
    EXPECT_EQ(scale, gscale);
    EXPECT_EQ(scale_t, gscale_t);
    EXPECT_TRUE(std::isnan(amax) && std::isnan(gamax));
  }
}

// Values a few ulp around every FP8 rounding boundary, with a scale that is not a power of two:
// the GPU's multiplication and paired conversion must round each exactly as the CPU does.
TEST(CudaQuantizeTest, ValuesNextToRoundingBoundariesMatchTheCpuBackend) {
  FP8_SKIP_WITHOUT_GPU();
  for (DType type : {DType::kF8E4M3FN, DType::kF8E5M2}) {
    SCOPED_TRACE(DTypeName(type));
    const float scale = 0.3f;
    std::vector<float> x;
    for (int bits = 0; bits < 0x7f; ++bits) {  // midpoints between neighbouring positive values
      const double low = LoadElement(type, &bits, 0);
      const int next_bits = bits + 1;
      const double high = LoadElement(type, &next_bits, 0);
      if (!std::isfinite(low) || !std::isfinite(high)) continue;
      const float center = static_cast<float>((low + high) / 2 * scale);
      float below = center, above = center;
      for (int step = 0; step < 6; ++step) {
        x.push_back(below);
        x.push_back(-above);
        x.push_back(above);
        below = std::nextafter(below, 0.0f);
        above = std::nextafter(above, INFINITY);
      }
    }
    while (x.size() % 8) x.push_back(1.0f);
    QuantizeSpec spec;
    spec.input_type = DType::kF32;
    spec.output_type = type;
    spec.rows = static_cast<int64_t>(x.size() / 8);
    spec.cols = 8;
    spec.given_scale = true;
    spec.transposed = true;
    std::vector<uint8_t> q(x.size()), q_t(x.size()), gq(x.size()), gq_t(x.size());
    float scale_cast_with = 0;
    FP8_ASSERT_OK(QuantizeOnCpu(
        spec, {x.data(), &scale, q.data(), &scale_cast_with, q_t.data(), nullptr, nullptr}));
    FP8_ASSERT_OK_AND_ASSIGN(DeviceBuffer in, DeviceBuffer::Allocate(4 * x.size(), "x"));
    FP8_ASSERT_OK(CopyToDevice(in.data(), x.data(), 4 * x.size(), "x"));
    FP8_ASSERT_OK_AND_ASSIGN(DeviceBuffer s, DeviceBuffer::Allocate(4, "scale"));
    FP8_ASSERT_OK(CopyToDevice(s.data(), &scale, 4, "scale"));
    FP8_ASSERT_OK_AND_ASSIGN(DeviceBuffer dq, DeviceBuffer::Allocate(x.size(), "q"));
    FP8_ASSERT_OK_AND_ASSIGN(DeviceBuffer dq_t, DeviceBuffer::Allocate(x.size(), "q_t"));
    FP8_ASSERT_OK_AND_ASSIGN(DeviceBuffer d_scale, DeviceBuffer::Allocate(4, "scale cast with"));
    FP8_ASSERT_OK(QuantizeOnCuda(
        spec,
        {in.data(), s.as<float>(), dq.data(), d_scale.as<float>(), dq_t.data(), nullptr, nullptr},
        nullptr));
    FP8_ASSERT_OK(CopyToHost(gq.data(), dq.data(), gq.size(), "q"));
    FP8_ASSERT_OK(CopyToHost(gq_t.data(), dq_t.data(), gq_t.size(), "q_t"));
    ExpectSameFp8(q, gq, type, "q");
    ExpectSameFp8(q_t, gq_t, type, "q_t");
    RecordProperty("values", static_cast<int>(x.size()));
  }
}

TEST(CudaQuantizeTest, RefusesBuffersThatDoNotMatchTheSpec) {
  FP8_SKIP_WITHOUT_GPU();
  QuantizeSpec spec;
  spec.rows = spec.cols = 16;
  spec.granularity = ScaleGranularity::k1x128;
  spec.transposed = true;
  QuantizeBuffers buffers;
  int dummy = 0;
  buffers.input = buffers.output = buffers.transposed_output = &dummy;
  buffers.scale = reinterpret_cast<float*>(&dummy);
  const Status status = QuantizeOnCuda(spec, buffers, nullptr);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("transposed_scale is null"), std::string::npos);
}

}  // namespace
}  // namespace fp8dot
