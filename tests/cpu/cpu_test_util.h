// Helpers shared by the CPU backend tests.
#pragma once

#include <gtest/gtest.h>

#include <cmath>

#include "fp8dot/cpu_backend.h"
#include "fp8dot/dot_problem.h"

namespace fp8dot::testing {

// sum_k |scale_a a| |scale_b b| for every output element (f64, row-major): the scale of the
// rounding error any summation order can make (Higham's bound |err| <= gamma_K * this).
inline StatusOr<HostTensor> AbsoluteProductSums(const DotProblem& problem) {
  DotProblem absolute = problem;
  for (HostTensor* t : {&absolute.lhs, &absolute.rhs}) {
    for (int64_t i = 0; i < t->element_count(); ++i)
      t->SetPhysical(i, std::fabs(t->GetPhysical(i)));
  }
  absolute.spec.epilogue = Epilogue::kDefault;
  absolute.spec.bias.reset();
  absolute.bias.reset();
  absolute.spec.c.reset();
  absolute.c.reset();
  absolute.spec.beta = 0.0;
  absolute.spec.alpha = std::fabs(problem.spec.alpha);
  return ReferenceDotExact(absolute.spec, absolute.arguments());
}

// Every element of `actual` is within `relative_bound` * AbsoluteProductSums of the exact result
// (a failure, with the status, if either reference fails).
inline ::testing::AssertionResult WithinSummationBound(const DotProblem& problem,
                                                       const HostTensor& actual,
                                                       double relative_bound) {
  StatusOr<HostTensor> exact_or = ReferenceDotExact(problem.spec, problem.arguments());
  if (!exact_or.ok()) {
    return ::testing::AssertionFailure() << "ReferenceDotExact: " << exact_or.status().ToString();
  }
  StatusOr<HostTensor> scale_or = AbsoluteProductSums(problem);
  if (!scale_or.ok()) {
    return ::testing::AssertionFailure() << "AbsoluteProductSums: " << scale_or.status().ToString();
  }
  const HostTensor& exact = *exact_or;
  const HostTensor& scale = *scale_or;
  HostTensor got = actual.ToRowMajor();
  for (int64_t i = 0; i < exact.element_count(); ++i) {
    const double error = std::fabs(got.GetPhysical(i) - exact.GetPhysical(i));
    const double bound = relative_bound * scale.GetPhysical(i) + 1e-300;
    if (!(error <= bound)) {
      return ::testing::AssertionFailure()
             << "element " << i << ": got " << got.GetPhysical(i) << ", exact "
             << exact.GetPhysical(i) << ", error " << error << " > bound " << bound;
    }
  }
  return ::testing::AssertionSuccess();
}

// gamma_K = K u / (1 - K u): the worst-case relative error of a K-term sum with unit roundoff u.
inline double Gamma(int64_t k, double unit_roundoff) {
  const double ku = static_cast<double>(k) * unit_roundoff;
  return ku / (1.0 - ku);
}

}  // namespace fp8dot::testing
