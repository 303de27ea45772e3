#include "run_program.h"

#include <spawn.h>
#include <sys/wait.h>

#include <cerrno>
#include <cstring>

extern char** environ;

namespace fp8dot::cli {

Status RunProgram(const std::vector<std::string>& argv, const std::string& what) {
  if (argv.empty()) return InvalidArgument("%s: no program to run", what.c_str());
  std::vector<char*> pointers;
  for (const std::string& arg : argv) pointers.push_back(const_cast<char*>(arg.c_str()));
  pointers.push_back(nullptr);
  pid_t pid = 0;
  const int error =
      ::posix_spawnp(&pid, argv[0].c_str(), nullptr, nullptr, pointers.data(), environ);
  if (error != 0) {
    return Internal("%s failed: cannot start %s: %s", what.c_str(), argv[0].c_str(),
                    std::strerror(error));
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      return Internal("%s failed: waiting for %s: %s", what.c_str(), argv[0].c_str(),
                      std::strerror(errno));
    }
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return OkStatus();
  if (WIFSIGNALED(status)) {
    return Internal("%s failed: %s was killed by signal %d", what.c_str(), argv[0].c_str(),
                    WTERMSIG(status));
  }
  return Internal("%s failed: %s exited with status %d", what.c_str(), argv[0].c_str(),
                  WEXITSTATUS(status));
}

}  // namespace fp8dot::cli
