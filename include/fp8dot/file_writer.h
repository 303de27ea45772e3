// Checked file writes for every file fp8dot writes (.npy, CSV, JSON): the bytes go to a temporary
// file in the target's folder, every write, the flush and the close are checked, and only a
// complete file is renamed into place. A failed write leaves no file behind and says why.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "fp8dot/status.h"

namespace fp8dot {

// Writes `bytes` to `path`. A new or regular file is replaced atomically (temporary + rename);
// an existing non-regular path (a device such as /dev/stdout or /dev/full, a FIFO, a symlink) is
// written in place, with the same checks. Errors name the path and the system's reason.
Status WriteFileAtomically(const std::string& path, std::string_view bytes);

// A group of files written all or none (`run --outputs`, `accuracy --record`): Add writes each
// file's temporary; Commit renames them all into place. When an Add or the Commit fails, or the
// writer is destroyed uncommitted, the temporaries and the files this writer already renamed
// into place are removed.
class FileSetWriter {
 public:
  FileSetWriter() = default;
  FileSetWriter(const FileSetWriter&) = delete;
  FileSetWriter& operator=(const FileSetWriter&) = delete;
  ~FileSetWriter();

  Status Add(const std::string& path, std::string_view bytes);
  Status Commit();

 private:
  struct Pending {
    std::string path;
    std::string temporary;  // empty: written in place (a non-regular target)
  };
  void RemoveAll();

  std::vector<Pending> pending_;
  std::vector<std::string> committed_;  // renamed into place by this writer
  bool done_ = false;
};

}  // namespace fp8dot
