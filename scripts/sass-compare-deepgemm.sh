#!/usr/bin/env bash
# The own block-scaled GEMM's K loop beside DeepGEMM's, from their SASS, on the development
# machine (no GPU needed): per K-block instructions, wgmma and promotion instructions, and where
# each stage's barrier wait sits (bench/sass_loop.py). DeepGEMM's sm90_fp8_gemm_1d2d is
# instantiated as its JIT does for one problem (N and K compiled in; its flags) and compiled to a
# cubin; the own kernel is read from build-gpu's object, so build that first
# (ninja -C build-gpu gpu_bench).
#
#   scripts/sass-compare-deepgemm.sh
# Environment (defaults: 4096x7168x16384, DeepGEMM's choice there, the own plan's tile):
#   N, K                                   the problem (M is a run-time value in both)
#   DG_TILE=256x128 DG_STAGES=3 DG_CLUSTER=2  DeepGEMM's config for it: its JIT log says which
#                                          (DG_PRINT_CONFIGS=1, bench/results/*/deepgemm-jit.log)
#   OWN_TILE=256x128 OWN_CLUSTER=1         the own kernel to compare (bf16 D, A 1x128 x B 128x128)
#   DEEPGEMM_INCLUDE                       DeepGEMM's include folder (with cute/ and cutlass/);
#                                          else build-tools/deepgemm-2.6.1-pkg.tar.xz
#                                          (scripts/build-gpu-carry.sh) is unpacked
#   KEEP_SASS=1                            keep the temporary folder with both SASS listings
#                                          (its path is printed), e.g. to read the producer loops
# cuobjdump and nvdisasm: the CUDA toolkit's where it has them, else the nvidia-cuda-cuobjdump
# and nvidia-cuda-nvdisasm wheels from the package index, kept in build-tools/sass-tools.
set -eu -o pipefail
cd "$(dirname "$0")/.."
N=${N:-7168} K=${K:-16384}
DG_TILE=${DG_TILE:-256x128} DG_STAGES=${DG_STAGES:-3} DG_CLUSTER=${DG_CLUSTER:-2}
OWN_TILE=${OWN_TILE:-256x128} OWN_CLUSTER=${OWN_CLUSTER:-1}
own_object=build-gpu/src/cuda/CMakeFiles/fp8dot_cuda_sm90a.dir/kernels/block_scaled_gemm.cu.o
[[ -f $own_object ]] || { echo "no $own_object: ninja -C build-gpu gpu_bench" >&2; exit 1; }
work=$(mktemp -d)
if [[ -n ${KEEP_SASS:-} ]]; then echo "SASS kept in $work"; else trap 'rm -rf "$work"' EXIT; fi

if ! command -v cuobjdump > /dev/null || ! command -v nvdisasm > /dev/null; then
  tools=build-tools/sass-tools
  if [[ ! -x $tools/nvidia/cu13/bin/nvdisasm ]]; then
    python3 -m pip install -q --target "$tools" --no-deps nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm
  fi
  export PATH=$PWD/$tools/nvidia/cu13/bin:$PATH
fi

include=${DEEPGEMM_INCLUDE:-}
if [[ -z $include ]]; then
  tar xJf build-tools/deepgemm-2.6.1-pkg.tar.xz -C "$work"
  include=$(dirname "$(find "$work" -path '*/include/deep_gemm' -type d | head -1)")
fi
block_m=${DG_TILE%x*} block_n=${DG_TILE#*x}
# DeepGEMM's JIT: bf16 D swizzled up to 128 bytes, one math warpgroup for 64-row tiles, two
# otherwise; a cluster shares A (multicast on A).
swizzle_d=$((block_n * 2 < 128 ? block_n * 2 : 128))
math_threads=$((block_m <= 64 ? 128 : 256))
multicast_on_a=$([[ $DG_CLUSTER -gt 1 ]] && echo true || echo false)
cat > "$work/deepgemm.cu" << EOF
#include <deep_gemm/impls/sm90_fp8_gemm_1d2d.cuh>
using namespace deep_gemm;
void* instantiate() {
  return reinterpret_cast<void*>(&sm90_fp8_gemm_1d2d_impl<
      cute::UMMA::Major::K, 0, $N, $K, 1, $block_m, $block_n, 128, 128, 128, $swizzle_d,
      $DG_STAGES, 128, $math_threads, $DG_CLUSTER, $multicast_on_a, 132, GemmType::Normal,
      cutlass::bfloat16_t, epilogue::transform::EpilogueIdentity>);
}
EOF
nvcc "$work/deepgemm.cu" -cubin -o "$work/deepgemm.cubin" -std=c++20 -O3 \
  --diag-suppress=39,161,174,177,186,940 --ptxas-options=--register-usage-level=10 \
  -I"$include" --gpu-architecture=sm_90a --expt-relaxed-constexpr --expt-extended-lambda \
  --compiler-options=-fPIC,-O3,-fconcepts,-Wno-deprecated-declarations,-Wno-abi
cuobjdump -sass "$work/deepgemm.cubin" > "$work/deepgemm.sass"
cuobjdump -sass "$own_object" > "$work/own.sass"

echo "== DeepGEMM ${DG_TILE}, $DG_STAGES stages, cluster $DG_CLUSTER (N = $N, K = $K)"
python3 bench/sass_loop.py "$work/deepgemm.sass" sm90_fp8_gemm_1d2d_impl
own_m=${OWN_TILE%x*} own_n=${OWN_TILE#*x}
echo "== own ${OWN_TILE}, cluster $OWN_CLUSTER (bf16 D, block scales)"
python3 bench/sass_loop.py "$work/own.sass" \
  "ILi${own_m}ELi${own_n}ELi${OWN_CLUSTER}ELNS0_6hopper8WgmmaLhsE0E13__nv_bfloat16LNS0_11GemmScalingE0E"
