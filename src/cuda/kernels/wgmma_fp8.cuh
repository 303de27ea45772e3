// wgmma.mma_async for FP8 operands, both read from shared memory through matrix descriptors
// (K-major, which FP8 wgmma requires), f32 accumulators in registers: D[64 x N] (+)= A . B over
// one k32 step. One specialisation per (N, lhs type). Written by dev/generate_wgmma.py (PTX names
// every accumulator register, so each N spells out its operand list); do not edit by hand.
#pragma once

#include <cstdint>

namespace fp8dot::cuda::hopper {

// The lhs (A) type; the rhs (B) is e4m3 (the weights and activations of the seed's recipe: e5m2
// appears only as the gradient, which is the lhs of both gradient GEMMs).
enum class WgmmaLhs { kE4m3, kE5m2 };

template <int kN, WgmmaLhs kLhs>
struct WgmmaFp8;

#define FP8DOT_WGMMA_FP8_N16(kLhsType, lhs_ptx)                                                 \
  template <>                                                                                   \
  struct WgmmaFp8<16, kLhsType> {                                                               \
    static constexpr int kRegisters = 8;                                                        \
    /* accumulate == false: D = A . B (the registers' old values are ignored). */               \
    __device__ static void Run(float (&d)[8], uint64_t a, uint64_t b, bool accumulate) {        \
      asm volatile(                                                                             \
          "{\n.reg .pred p;\nsetp.ne.b32 p, %10, 0;\n"                                          \
          "wgmma.mma_async.sync.aligned.m64n16k32.f32." lhs_ptx                                 \
          ".e4m3 "                                                                              \
          "{%0, %1, %2, %3, %4, %5, %6, %7},"                                                   \
          " %8, %9, p, 1, 1;\n}\n"                                                              \
          : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), \
            "+f"(d[7])                                                                          \
          : "l"(a), "l"(b), "r"(static_cast<int>(accumulate)));                                 \
    }                                                                                           \
  };

#define FP8DOT_WGMMA_FP8_N32(kLhsType, lhs_ptx)                                                 \
  template <>                                                                                   \
  struct WgmmaFp8<32, kLhsType> {                                                               \
    static constexpr int kRegisters = 16;                                                       \
    /* accumulate == false: D = A . B (the registers' old values are ignored). */               \
    __device__ static void Run(float (&d)[16], uint64_t a, uint64_t b, bool accumulate) {       \
      asm volatile(                                                                             \
          "{\n.reg .pred p;\nsetp.ne.b32 p, %18, 0;\n"                                          \
          "wgmma.mma_async.sync.aligned.m64n32k32.f32." lhs_ptx                                 \
          ".e4m3 "                                                                              \
          "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15},"             \
          " %16, %17, p, 1, 1;\n}\n"                                                            \
          : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), \
            "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]),          \
            "+f"(d[13]), "+f"(d[14]), "+f"(d[15])                                               \
          : "l"(a), "l"(b), "r"(static_cast<int>(accumulate)));                                 \
    }                                                                                           \
  };

#define FP8DOT_WGMMA_FP8_N64(kLhsType, lhs_ptx)                                                 \
  template <>                                                                                   \
  struct WgmmaFp8<64, kLhsType> {                                                               \
    static constexpr int kRegisters = 32;                                                       \
    /* accumulate == false: D = A . B (the registers' old values are ignored). */               \
    __device__ static void Run(float (&d)[32], uint64_t a, uint64_t b, bool accumulate) {       \
      asm volatile(                                                                             \
          "{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"                                          \
          "wgmma.mma_async.sync.aligned.m64n64k32.f32." lhs_ptx                                 \
          ".e4m3 "                                                                              \
          "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15,"              \
          " %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31},"   \
          " %32, %33, p, 1, 1;\n}\n"                                                            \
          : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), \
            "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]),          \
            "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]),       \
            "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]),       \
            "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]),       \
            "+f"(d[31])                                                                         \
          : "l"(a), "l"(b), "r"(static_cast<int>(accumulate)));                                 \
    }                                                                                           \
  };

#define FP8DOT_WGMMA_FP8_N128(kLhsType, lhs_ptx)                                                \
  template <>                                                                                   \
  struct WgmmaFp8<128, kLhsType> {                                                              \
    static constexpr int kRegisters = 64;                                                       \
    /* accumulate == false: D = A . B (the registers' old values are ignored). */               \
    __device__ static void Run(float (&d)[64], uint64_t a, uint64_t b, bool accumulate) {       \
      asm volatile(                                                                             \
          "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"                                          \
          "wgmma.mma_async.sync.aligned.m64n128k32.f32." lhs_ptx                                \
          ".e4m3 "                                                                              \
          "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15,"              \
          " %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31,"    \
          " %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47,"    \
          " %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63},"   \
          " %64, %65, p, 1, 1;\n}\n"                                                            \
          : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), \
            "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]),          \
            "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]),       \
            "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]),       \
            "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]),       \
            "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]),       \
            "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]),       \
            "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]),       \
            "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]),       \
            "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]),       \
            "+f"(d[61]), "+f"(d[62]), "+f"(d[63])                                               \
          : "l"(a), "l"(b), "r"(static_cast<int>(accumulate)));                                 \
    }                                                                                           \
  };

#define FP8DOT_WGMMA_FP8_N192(kLhsType, lhs_ptx)                                                \
  template <>                                                                                   \
  struct WgmmaFp8<192, kLhsType> {                                                              \
    static constexpr int kRegisters = 96;                                                       \
    /* accumulate == false: D = A . B (the registers' old values are ignored). */               \
    __device__ static void Run(float (&d)[96], uint64_t a, uint64_t b, bool accumulate) {       \
      asm volatile(                                                                             \
          "{\n.reg .pred p;\nsetp.ne.b32 p, %98, 0;\n"                                          \
          "wgmma.mma_async.sync.aligned.m64n192k32.f32." lhs_ptx                                \
          ".e4m3 "                                                                              \
          "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15,"              \
          " %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31,"    \
          " %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47,"    \
          " %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63,"    \
          " %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79,"    \
          " %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95},"   \
          " %96, %97, p, 1, 1;\n}\n"                                                            \
          : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), \
            "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]),          \
            "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]),       \
            "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]),       \
            "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]),       \
            "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]),       \
            "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]),       \
            "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]),       \
            "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]),       \
            "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]),       \
            "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]),       \
            "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), "+f"(d[72]),       \
            "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]),       \
            "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]),       \
            "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]),       \
            "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95])                     \
          : "l"(a), "l"(b), "r"(static_cast<int>(accumulate)));                                 \
    }                                                                                           \
  };

FP8DOT_WGMMA_FP8_N16(WgmmaLhs::kE4m3, "e4m3")
FP8DOT_WGMMA_FP8_N16(WgmmaLhs::kE5m2, "e5m2")
FP8DOT_WGMMA_FP8_N32(WgmmaLhs::kE4m3, "e4m3")
FP8DOT_WGMMA_FP8_N32(WgmmaLhs::kE5m2, "e5m2")
FP8DOT_WGMMA_FP8_N64(WgmmaLhs::kE4m3, "e4m3")
FP8DOT_WGMMA_FP8_N64(WgmmaLhs::kE5m2, "e5m2")
FP8DOT_WGMMA_FP8_N128(WgmmaLhs::kE4m3, "e4m3")
FP8DOT_WGMMA_FP8_N128(WgmmaLhs::kE5m2, "e5m2")
FP8DOT_WGMMA_FP8_N192(WgmmaLhs::kE4m3, "e4m3")
FP8DOT_WGMMA_FP8_N192(WgmmaLhs::kE5m2, "e5m2")
#undef FP8DOT_WGMMA_FP8_N16
#undef FP8DOT_WGMMA_FP8_N32
#undef FP8DOT_WGMMA_FP8_N64
#undef FP8DOT_WGMMA_FP8_N128
#undef FP8DOT_WGMMA_FP8_N192
}  // namespace fp8dot::cuda::hopper
