// Checked, atomic file writes: temporary file in the target's folder, checked write/fsync/close,
// rename into place; see include/fp8dot/file_writer.h.
#include "fp8dot/file_writer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>

namespace fp8dot {
namespace {

Status SystemError(const char* what, const std::string& path, int error) {
  return Internal("%s '%s' failed: %s", what, path.c_str(), std::strerror(error));
}

// Writes every byte to `fd` (retrying short writes and EINTR).
Status WriteAll(int fd, std::string_view bytes, const std::string& path) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return SystemError("writing", path, errno);
    if (n == 0) return Internal("writing '%s' failed: no progress", path.c_str());
    done += static_cast<size_t>(n);
  }
  return OkStatus();
}

// Writes, syncs (for regular files) and closes `fd`; closes it on every path.
Status WriteAndClose(int fd, std::string_view bytes, const std::string& path, bool sync) {
  Status status = WriteAll(fd, bytes, path);
  // NOTE: fsync makes a full disk show up here (delayed allocation, NFS) rather than never.
  if (status.ok() && sync && ::fsync(fd) != 0 && errno != EINVAL) {
    status = SystemError("flushing", path, errno);
  }
  if (::close(fd) != 0 && status.ok()) status = SystemError("closing", path, errno);
  return status;
}

// True when `path` exists and is not a plain regular file (device, FIFO, symlink, folder).
bool ExistsAsNonRegular(const std::string& path) {
  struct stat info;
  return ::lstat(path.c_str(), &info) == 0 && !S_ISREG(info.st_mode);
}

// Creates a new temporary next to `path` ("DIR/.NAME.tmp.PID.N"), mode 0666 less the umask.
StatusOr<int> CreateTemporary(const std::string& path, std::string* temporary) {
  static std::atomic<unsigned> counter{0};
  const size_t slash = path.rfind('/');
  const std::string folder = slash == std::string::npos ? "" : path.substr(0, slash + 1);
  const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  for (int attempt = 0; attempt < 100; ++attempt) {
    *temporary = folder + "." + name + ".tmp." + std::to_string(::getpid()) + "." +
                 std::to_string(counter++);
    const int fd = ::open(temporary->c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0) return fd;
    if (errno != EEXIST) return SystemError("creating", path, errno);
  }
  return Internal("creating '%s' failed: no free temporary name", path.c_str());
}

// Writes `bytes` for `path`: into a temporary (returned in `temporary`) or, for a non-regular
// target, in place (`temporary` left empty).
Status WriteToTemporary(const std::string& path, std::string_view bytes, std::string* temporary) {
  temporary->clear();
  if (path.empty()) return InvalidArgument("cannot write a file with an empty path");
  if (ExistsAsNonRegular(path)) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
    if (fd < 0) return SystemError("opening", path, errno);
    return WriteAndClose(fd, bytes, path, /*sync=*/false);
  }
  FP8_ASSIGN_OR_RETURN(int fd, CreateTemporary(path, temporary));
  Status status = WriteAndClose(fd, bytes, path, /*sync=*/true);
  if (!status.ok()) {
    ::unlink(temporary->c_str());
    temporary->clear();
  }
  return status;
}

Status RenameIntoPlace(const std::string& temporary, const std::string& path) {
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    const int error = errno;
    ::unlink(temporary.c_str());
    return SystemError("renaming the finished file to", path, error);
  }
  return OkStatus();
}

}  // namespace

Status WriteFileAtomically(const std::string& path, std::string_view bytes) {
  std::string temporary;
  FP8_RETURN_IF_ERROR(WriteToTemporary(path, bytes, &temporary));
  if (temporary.empty()) return OkStatus();
  return RenameIntoPlace(temporary, path);
}

FileSetWriter::~FileSetWriter() {
  if (!done_) RemoveAll();
}

Status FileSetWriter::Add(const std::string& path, std::string_view bytes) {
  if (done_) return Internal("'%s': the file set was already committed", path.c_str());
  Pending pending{path, ""};
  Status status = WriteToTemporary(path, bytes, &pending.temporary);
  if (!status.ok()) {
    RemoveAll();
    done_ = true;
    return status;
  }
  pending_.push_back(std::move(pending));
  return OkStatus();
}

Status FileSetWriter::Commit() {
  if (done_) return Internal("the file set was already committed or failed");
  done_ = true;
  for (size_t i = 0; i < pending_.size(); ++i) {
    if (pending_[i].temporary.empty()) continue;
    Status status = RenameIntoPlace(pending_[i].temporary, pending_[i].path);
    if (!status.ok()) {
      pending_[i].temporary.clear();  // RenameIntoPlace removed it
      RemoveAll();
      return status;
    }
    committed_.push_back(pending_[i].path);
    pending_[i].temporary.clear();
  }
  return OkStatus();
}

void FileSetWriter::RemoveAll() {
  for (const Pending& pending : pending_) {
    if (!pending.temporary.empty()) ::unlink(pending.temporary.c_str());
  }
  for (const std::string& path : committed_) ::unlink(path.c_str());
  pending_.clear();
  committed_.clear();
}

}  // namespace fp8dot
