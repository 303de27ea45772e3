// The process-wide autotuning of plans made on a caller's behalf (cuda_backend.h,
// AutotuneSetting): how the environment is read, the setter's checks, and the options every
// such plan gets. Host-side only, so it runs without a GPU (and without a CUDA build); that a
// plan made with the setting is autotuned is tested on the GPU (cuda_plan_test.cc).
#include <gtest/gtest.h>

#include <string>

#include "cuda/autotune_setting.h"
#include "scoped_autotune_setting.h"
#include "status_matchers.h"

namespace fp8dot {
namespace {

using testing::ScopedAutotuneSetting;

TEST(AutotuneSettingTest, TheEnvironmentGivesCandidatesAndACacheFile) {
  FP8_ASSERT_OK_AND_ASSIGN(AutotuneSetting unset, cuda::ParseAutotuneEnvironment(nullptr, nullptr));
  EXPECT_EQ(unset.candidates, 0);
  EXPECT_EQ(unset.cache_path, "");
  FP8_ASSERT_OK_AND_ASSIGN(AutotuneSetting empty, cuda::ParseAutotuneEnvironment("", ""));
  EXPECT_EQ(empty.candidates, 0);
  FP8_ASSERT_OK_AND_ASSIGN(AutotuneSetting set,
                           cuda::ParseAutotuneEnvironment("8", "/tmp/fp8dot-tune.txt"));
  EXPECT_EQ(set.candidates, 8);
  EXPECT_EQ(set.cache_path, "/tmp/fp8dot-tune.txt");
}

TEST(AutotuneSettingTest, AMalformedCountIsAnErrorNamingTheVariable) {
  for (const char* bad : {"-1", "eight", "8x", " 8", "1.5", "99999999999"}) {
    SCOPED_TRACE(bad);
    const StatusOr<AutotuneSetting> setting = cuda::ParseAutotuneEnvironment(bad, nullptr);
    ASSERT_FALSE(setting.ok());
    EXPECT_EQ(setting.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(setting.status().message().find("FP8DOT_AUTOTUNE='" + std::string(bad) + "'"),
              std::string::npos)
        << setting.status().message();
  }
}

TEST(AutotuneSettingTest, TheSettingIsWhatEveryPlanMadeOnACallersBehalfGets) {
  const ScopedAutotuneSetting restore;
  FP8_ASSERT_OK(SetDefaultAutotune({.candidates = 4, .cache_path = "/tmp/tune.txt"}));
  FP8_ASSERT_OK_AND_ASSIGN(AutotuneSetting setting, DefaultAutotune());
  EXPECT_EQ(setting.candidates, 4);
  EXPECT_EQ(setting.cache_path, "/tmp/tune.txt");
  FP8_ASSERT_OK_AND_ASSIGN(CudaDotOptions options, DefaultCudaDotOptions());
  EXPECT_EQ(options.autotune_candidates, 4);
  EXPECT_EQ(options.autotune_cache_path, "/tmp/tune.txt");
  // Everything else is CudaDotOptions' default.
  EXPECT_EQ(options.engine, GemmEngine::kAuto);
  EXPECT_EQ(options.workspace_bytes, CudaDotOptions{}.workspace_bytes);
  EXPECT_EQ(options.own_tile, "");

  // A negative count is refused and changes nothing.
  const Status refused = SetDefaultAutotune({.candidates = -2});
  EXPECT_EQ(refused.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(refused.message().find("-2"), std::string::npos) << refused.message();
  FP8_ASSERT_OK_AND_ASSIGN(setting, DefaultAutotune());
  EXPECT_EQ(setting.candidates, 4);

  // One candidate is the heuristic's first: no autotuning, the same options as zero.
  FP8_ASSERT_OK(SetDefaultAutotune({.candidates = 1}));
  FP8_ASSERT_OK_AND_ASSIGN(options, DefaultCudaDotOptions());
  EXPECT_EQ(options.autotune_candidates, 0);
  FP8_ASSERT_OK(SetDefaultAutotune({}));
  FP8_ASSERT_OK_AND_ASSIGN(options, DefaultCudaDotOptions());
  EXPECT_EQ(options.autotune_candidates, 0);
  EXPECT_EQ(options.autotune_cache_path, "");
}

}  // namespace
}  // namespace fp8dot
