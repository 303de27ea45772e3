// The checked writer behind every file fp8dot writes: complete files or an error, never a
// truncated or empty file left behind.
#include "fp8dot/file_writer.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "status_matchers.h"

namespace fp8dot {
namespace {

namespace fs = std::filesystem;

// A fresh, empty folder per test.
std::string FreshFolder() {
  const std::string folder = ::testing::TempDir() + "/file_writer_" +
                             ::testing::UnitTest::GetInstance()->current_test_info()->name();
  fs::remove_all(folder);
  fs::create_directories(folder);
  return folder;
}

std::string ReadAll(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
}

int FilesIn(const std::string& folder) {
  int count = 0;
  for ([[maybe_unused]] const auto& entry : fs::directory_iterator(folder)) ++count;
  return count;
}

TEST(FileWriterTest, WritesTheBytesAndLeavesNoTemporary) {
  const std::string folder = FreshFolder();
  FP8_ASSERT_OK(WriteFileAtomically(folder + "/a.bin", std::string("abc\0def", 7)));
  EXPECT_EQ(ReadAll(folder + "/a.bin"), std::string("abc\0def", 7));
  FP8_ASSERT_OK(WriteFileAtomically(folder + "/a.bin", "replaced"));
  EXPECT_EQ(ReadAll(folder + "/a.bin"), "replaced");
  EXPECT_EQ(FilesIn(folder), 1);
}

TEST(FileWriterTest, DevFullIsAnErrorNamingThePath) {
  Status status = WriteFileAtomically("/dev/full", std::string(1 << 16, 'x'));
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("'/dev/full'"), std::string::npos) << status.message();
  EXPECT_NE(status.message().find("No space left on device"), std::string::npos)
      << status.message();
}

TEST(FileWriterTest, MissingFolderIsAnError) {
  const std::string folder = FreshFolder();
  Status status = WriteFileAtomically(folder + "/no/such/folder/a.bin", "x");
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("No such file or directory"), std::string::npos)
      << status.message();
}

TEST(FileWriterTest, ReadOnlyFolderIsAnErrorAndKeepsTheOldFile) {
  if (::geteuid() == 0) GTEST_SKIP() << "root writes into read-only folders";
  const std::string folder = FreshFolder();
  FP8_ASSERT_OK(WriteFileAtomically(folder + "/a.bin", "old"));
  ASSERT_EQ(::chmod(folder.c_str(), 0555), 0);
  Status status = WriteFileAtomically(folder + "/a.bin", "new");
  ::chmod(folder.c_str(), 0755);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("Permission denied"), std::string::npos) << status.message();
  EXPECT_EQ(ReadAll(folder + "/a.bin"), "old");
  EXPECT_EQ(FilesIn(folder), 1);
}

// Root writes into chmod'ed folders; no one, root included, creates files in sysfs's top folder.
TEST(FileWriterTest, AFolderNoOneCanWriteIsAnError) {
  if (!fs::is_directory("/sys/kernel")) GTEST_SKIP() << "no sysfs here";
  Status status = WriteFileAtomically("/sys/fp8dot_file_writer_test.npy", "x");
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("creating '/sys/fp8dot_file_writer_test.npy' failed: "),
            std::string::npos)
      << status.message();
  EXPECT_FALSE(fs::exists("/sys/fp8dot_file_writer_test.npy"));
}

TEST(FileSetWriterTest, WritesAllOnCommit) {
  const std::string folder = FreshFolder();
  FileSetWriter files;
  FP8_ASSERT_OK(files.Add(folder + "/a", "1"));
  FP8_ASSERT_OK(files.Add(folder + "/b", "2"));
  EXPECT_FALSE(fs::exists(folder + "/a"));  // only temporaries so far
  FP8_ASSERT_OK(files.Commit());
  EXPECT_EQ(ReadAll(folder + "/a"), "1");
  EXPECT_EQ(ReadAll(folder + "/b"), "2");
  EXPECT_EQ(FilesIn(folder), 2);
}

TEST(FileSetWriterTest, AFailedAddRemovesTheFilesAlreadyWritten) {
  const std::string folder = FreshFolder();
  FileSetWriter files;
  FP8_ASSERT_OK(files.Add(folder + "/a", "1"));
  EXPECT_FALSE(files.Add("/dev/full", std::string(1 << 16, 'x')).ok());
  EXPECT_FALSE(files.Commit().ok());
  EXPECT_EQ(FilesIn(folder), 0);
}

TEST(FileSetWriterTest, AFailedCommitRemovesTheFilesAlreadyRenamed) {
  const std::string folder = FreshFolder();
  FileSetWriter files;
  FP8_ASSERT_OK(files.Add(folder + "/a", "1"));
  FP8_ASSERT_OK(files.Add(folder + "/b", "2"));
  // b's place is taken by a non-empty folder after its temporary was written.
  fs::create_directories(folder + "/b/inside");
  Status status = files.Commit();
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find(folder + "/b"), std::string::npos) << status.message();
  EXPECT_FALSE(fs::exists(folder + "/a"));
  EXPECT_EQ(FilesIn(folder), 1);  // only the folder b
}

TEST(FileSetWriterTest, AnUncommittedSetLeavesNothing) {
  const std::string folder = FreshFolder();
  {
    FileSetWriter files;
    FP8_ASSERT_OK(files.Add(folder + "/a", "1"));
  }
  EXPECT_EQ(FilesIn(folder), 0);
}

}  // namespace
}  // namespace fp8dot
