// The Hopper (sm_90a) instructions fp8dot's own GEMM kernels are made of, one PTX wrapper each:
// mbarriers (the producer/consumer handshake between the copy engine and the math warps), the
// bulk tensor copy (TMA) into shared memory, wgmma's fences, and the shared-memory matrix
// descriptor wgmma reads its operands through. The wgmma instructions themselves are in
// wgmma_fp8.cuh. Only for code compiled for sm_90a.
#pragma once

#include <cuda.h>

#include <cstdint>

namespace fp8dot::cuda::hopper {

__device__ inline uint32_t SharedAddress(const void* pointer) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(pointer));
}

// ---- mbarrier ---------------------------------------------------------------------------------

__device__ inline void BarrierInit(uint64_t* barrier, uint32_t arrivals) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(SharedAddress(barrier)),
               "r"(arrivals));
}

// Makes the initialised barriers visible to the copy engine (the async proxy).
__device__ inline void FenceBarrierInit() {
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}

__device__ inline void BarrierArrive(uint64_t* barrier) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(SharedAddress(barrier)) : "memory");
}

// One arrival that also tells the barrier to wait for `bytes` of copies completing on it.
__device__ inline void BarrierArriveExpectBytes(uint64_t* barrier, uint32_t bytes) {
  asm volatile(
      "mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(SharedAddress(barrier)),
      "r"(bytes)
      : "memory");
}

// Tells the barrier to wait for `bytes` more of copies completing on it, without arriving.
__device__ inline void BarrierExpectBytes(uint64_t* barrier, uint32_t bytes) {
  asm volatile(
      "mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], %1;" ::"r"(SharedAddress(barrier)),
      "r"(bytes)
      : "memory");
}

// Waits until the barrier's phase with parity `phase` has completed. On a fresh barrier, parity
// 1 counts as completed (the phase before the first), so a producer's first wait on an empty
// slot passes.
// The barrier is given by its 32-bit shared-window address (loops that wait on a ring of
// barriers keep the base in a register rather than converting a pointer at every wait).
__device__ inline void BarrierWait(uint32_t barrier_address, uint32_t phase) {
  asm volatile(
      "{\n"
      ".reg .pred done;\n"
      "WAIT:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra WAIT;\n"
      "}\n" ::"r"(barrier_address),
      "r"(phase)
      : "memory");
}
__device__ inline void BarrierWait(uint64_t* barrier, uint32_t phase) {
  BarrierWait(SharedAddress(barrier), phase);
}

// ---- Small asynchronous copies ---------------------------------------------------------------

// Copies 4 bytes from global to shared memory without holding a register; the destination by
// its 32-bit shared-window address or by pointer.
__device__ inline void CopyAsync4(uint32_t destination_address, const void* source) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" ::"r"(destination_address), "l"(source)
               : "memory");
}
__device__ inline void CopyAsync4(void* destination, const void* source) {
  CopyAsync4(SharedAddress(destination), source);
}

// Copies 16 bytes (both addresses 16-byte aligned).
__device__ inline void CopyAsync16(void* destination, const void* source) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(SharedAddress(destination)),
               "l"(source)
               : "memory");
}

// Waits until this thread's earlier cp.async copies have landed (visible to the others after a
// barrier).
__device__ inline void CopyAsyncWaitAll() { asm volatile("cp.async.wait_all;" ::: "memory"); }

// Arrives on `barrier` once this thread's earlier cp.async copies have landed (the arrival is
// one of the barrier's expected arrivals: .noinc).
__device__ inline void BarrierArriveWhenCopiesLand(uint64_t* barrier) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" ::"r"(SharedAddress(barrier))
               : "memory");
}

// ---- Bulk tensor copy (TMA) ---------------------------------------------------------------------

__device__ inline void PrefetchTensorMap(const CUtensorMap* map) {
  asm volatile("prefetch.tensormap [%0];" ::"l"(reinterpret_cast<uint64_t>(map)) : "memory");
}

// Copies the box at element coordinates (inner, outer) of a 2-D tensor map into shared memory;
// completion is counted in bytes on `barrier`. Out-of-bounds elements arrive as zeros (and still
// count), so ragged edges need no special case.
__device__ inline void TmaLoad2d(void* destination, const CUtensorMap* map, uint64_t* barrier,
                                 int32_t inner, int32_t outer) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%3, %4}], [%2];" ::"r"(SharedAddress(destination)),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(SharedAddress(barrier)), "r"(inner), "r"(outer)
      : "memory");
}

// The same copy, delivered to the same shared-memory offset (and barrier) of every CTA of the
// cluster in `cta_mask`.
__device__ inline void TmaLoad2dMulticast(void* destination, const CUtensorMap* map,
                                          uint64_t* barrier, int32_t inner, int32_t outer,
                                          uint16_t cta_mask) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
      ".multicast::cluster [%0], [%1, {%3, %4}], [%2], %5;" ::"r"(SharedAddress(destination)),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(SharedAddress(barrier)), "r"(inner), "r"(outer),
      "h"(cta_mask)
      : "memory");
}

// Copies a box of shared memory to the tensor at element coordinates (inner, outer) of a 2-D
// tensor map, as part of this thread's current bulk group. Elements past the tensor's edges are
// not written, so ragged tiles need no masking.
__device__ inline void TmaStore2d(const CUtensorMap* map, const void* source, int32_t inner,
                                  int32_t outer) {
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1];" ::"l"(
                   reinterpret_cast<uint64_t>(map)),
               "r"(SharedAddress(source)), "r"(inner), "r"(outer)
               : "memory");
}

// Closes this thread's bulk group of stores.
__device__ inline void BulkCommitGroup() {
  asm volatile("cp.async.bulk.commit_group;" ::: "memory");
}

// Waits until at most kPendingGroups of this thread's bulk groups still read shared memory (their
// source may then be overwritten; the writes to global memory may still be under way).
template <int kPendingGroups>
__device__ inline void BulkWaitGroupRead() {
  asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(kPendingGroups) : "memory");
}

// Waits until this thread's bulk groups have completed, global writes included.
__device__ inline void BulkWaitAll() { asm volatile("cp.async.bulk.wait_group 0;" ::: "memory"); }

// Makes this thread's ordinary shared-memory writes visible to the copy engine (the async
// proxy), before a bulk copy reads them.
__device__ inline void FenceSharedForCopyEngine() {
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

// ---- Clusters -----------------------------------------------------------------------------------

__device__ inline uint32_t ClusterRank() {
  uint32_t rank;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
  return rank;
}

// Every thread of every CTA of the cluster; orders barrier initialisation before any remote use.
__device__ inline void ClusterSync() {
  asm volatile(
      "barrier.cluster.arrive.release.aligned;\n"
      "barrier.cluster.wait.acquire.aligned;" ::
          : "memory");
}

// Arrives on the barrier at the same shared-memory offset in CTA `cta` of the cluster. The
// arrival orders nothing but this warp's completed wgmma reads of a stage before the other CTA's
// next copy into it, so it is a release at CTA scope (PTX's default); a cluster-scope release
// would make the arriving lane wait for all of its earlier memory operations to be visible
// cluster-wide, once per stage on every math warp.
__device__ inline void BarrierArriveInCta(uint64_t* barrier, uint32_t cta) {
  uint32_t remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;"
               : "=r"(remote)
               : "r"(SharedAddress(barrier)), "r"(cta));
  asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0];" ::"r"(remote) : "memory");
}

// ---- Programmatic dependent launch ------------------------------------------------------------
// A grid launched with cudaLaunchAttributeProgrammaticStreamSerialization may start while the
// grid before it in the stream still runs; both instructions are no-ops in a grid launched
// without it.

// Waits until the grids this one depends on have completed and their memory is visible: before
// this thread touches global memory.
__device__ inline void WaitForPriorGrids() { asm volatile("griddepcontrol.wait;" ::: "memory"); }

// Lets the next grid in the stream be scheduled once every CTA of this one has said so (one
// thread per CTA is enough) or exited; it still waits in WaitForPriorGrids for this grid's end.
__device__ inline void LetDependentGridsStart() {
  asm volatile("griddepcontrol.launch_dependents;" :::);
}

// ---- wgmma --------------------------------------------------------------------------------------

// Orders this thread's register accesses before the wgmma instructions that follow (needed
// whenever ordinary instructions touched the accumulator registers since the last wgmma).
__device__ inline void WgmmaFence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
__device__ inline void WgmmaCommitGroup() {
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
}
template <int kPendingGroups>
__device__ inline void WgmmaWaitGroup() {
  asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(kPendingGroups) : "memory");
}

// Pins a register at this point of the program: the compiler may not move reads or writes of it
// across (wgmma's accumulators are written behind the compiler's back until the wait).
__device__ inline void FenceRegister(float& value) { asm volatile("" : "+f"(value)::"memory"); }

// The descriptor of a K-major operand tile in shared memory laid out by a TMA copy with 128-byte
// swizzle: rows of 128 bytes (128 FP8 elements of K), in groups of 8 rows (1024 bytes, the
// stride between groups). The tile must start on a 1024-byte boundary. Moving along K inside
// the row is adding bytes/16 to the descriptor (the swizzle is applied to the final address).
__device__ inline uint64_t SwizzledK128Descriptor(uint32_t tile_address) {
  constexpr uint64_t kGroupStrideBytes = 1024;
  constexpr uint64_t kSwizzle128B = 1;
  uint64_t descriptor = (tile_address & 0x3FFFF) >> 4;
  descriptor |= uint64_t{1} << 16;  // leading-dimension stride: unused for swizzled K-major
  descriptor |= (kGroupStrideBytes >> 4) << 32;
  descriptor |= kSwizzle128B << 62;
  return descriptor;
}

// The descriptor of the same kind of tile `units` x 16 bytes further on. Only the low word
// changes: the start address (bits 0-13, in 16-byte units) stays below 2^14 because shared
// memory ends below 256 KiB, so the sum never carries into the fields above (a 64-bit addition
// would make the compiler carry, in two instructions per descriptor).
__device__ inline uint64_t AdvanceDescriptor(uint64_t descriptor, uint32_t units) {
  const uint32_t low = static_cast<uint32_t>(descriptor) + units;
  return (descriptor & 0xFFFFFFFF00000000ull) | low;
}

// Adds 1 to a counter in global memory as one acquire-release at GPU scope and returns the old
// value. After a barrier with other threads of the CTA, the release publishes their writes too
// (it is cumulative: one thread's fence for the whole CTA); the acquire makes what earlier
// arrivals published visible here, and to the other threads after the next barrier.
__device__ inline int AcquireReleaseIncrement(int* counter) {
  int old;
  asm volatile("atom.acq_rel.gpu.global.add.s32 %0, [%1], 1;"
               : "=r"(old)
               : "l"(counter)
               : "memory");
  return old;
}

// Reads a counter in global memory as an acquire at GPU scope: what the writers of the value
// read released is visible here, and to the other threads after the next barrier.
__device__ inline int LoadAcquire(const int* counter) {
  int value;
  asm volatile("ld.acquire.gpu.global.s32 %0, [%1];" : "=r"(value) : "l"(counter) : "memory");
  return value;
}

// A barrier among `threads` threads of the CTA (a multiple of 32), leaving the others out.
// Barrier 0 is __syncthreads()'s.
__device__ inline void NamedBarrierSync(int id, int threads) {
  asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(threads) : "memory");
}

// Counts this warp in on a named barrier without waiting for it (the other side bar.syncs).
__device__ inline void NamedBarrierArrive(int id, int threads) {
  asm volatile("bar.arrive %0, %1;" ::"r"(id), "r"(threads) : "memory");
}

// A float from shared memory at a 32-bit shared-window address (one LDS, where a generic
// pointer would take a 64-bit address and a generic load). Volatile, so that it stays after the
// barrier wait that makes the data visible.
__device__ inline float LoadSharedFloat(uint32_t address) {
  float value;
  asm volatile("ld.shared.f32 %0, [%1];" : "=f"(value) : "r"(address));
  return value;
}

// Two floats from shared memory by their 32-bit shared address: one LDS.64.
__device__ inline float2 LoadSharedFloat2(uint32_t address) {
  float2 value;
  asm volatile("ld.shared.v2.f32 {%0, %1}, [%2];" : "=f"(value.x), "=f"(value.y) : "r"(address));
  return value;
}

// Stores to shared memory by 32-bit shared address (STS). Volatile: they stay in order with
// the fences and barriers around them, which are volatile too.
__device__ inline void StoreShared(uint32_t address, uint32_t value) {
  asm volatile("st.shared.b32 [%0], %1;" ::"r"(address), "r"(value));
}
__device__ inline void StoreShared(uint32_t address, float2 value) {
  asm volatile("st.shared.v2.f32 [%0], {%1, %2};" ::"r"(address), "f"(value.x), "f"(value.y));
}

// Two floats from shared memory by their 32-bit shared address, loaded where the code says
// (volatile, with a memory clobber): for unrolled loops whose loads the compiler would otherwise
// all hoist to the top, keeping every value live at once, in kernels that have no registers for
// that.
__device__ inline float2 LoadSharedFloat2InPlace(uint32_t address) {
  float2 value;
  asm volatile("ld.shared.v2.f32 {%0, %1}, [%2];"
               : "=f"(value.x), "=f"(value.y)
               : "r"(address)
               : "memory");
  return value;
}

// Register budgets: the producer warpgroup gives registers back, the math warpgroups take them.
template <uint32_t kRegisters>
__device__ inline void ReleaseRegisters() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(kRegisters));
}
template <uint32_t kRegisters>
__device__ inline void AcquireRegisters() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(kRegisters));
}

}  // namespace fp8dot::cuda::hopper
