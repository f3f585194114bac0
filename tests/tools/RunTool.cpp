//===- tests/tools/RunTool.cpp - Run the built binaries from a test -------===//
#include "RunTool.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <stdexcept>

namespace graphc::testing {
namespace {

namespace fs = std::filesystem;

/// A temporary file, removed on destruction.
struct TempFile {
  fs::path path;
  explicit TempFile(const std::string& contents) {
    std::string pattern = (fs::temp_directory_path() / "graphc-tool-XXXXXX").string();
    int fd = mkstemp(pattern.data());
    if (fd < 0)
      throw std::runtime_error("mkstemp failed");
    close(fd);
    path = pattern;
    std::ofstream(path, std::ios::binary) << contents;
  }
  ~TempFile() { fs::remove(path); }
  std::string read() const { return readFile(path); }
};

/// In the child: redirect `fd` to `path`, or die.
void redirect(const fs::path& path, int fd, int flags) {
  int f = open(path.c_str(), flags);
  if (f < 0 || dup2(f, fd) < 0)
    _exit(127);
  close(f);
}

} // namespace

std::string ToolResult::describe() const {
  std::string how =
      signal ? "killed by signal " + std::to_string(signal) : "exit " + std::to_string(exitCode);
  return how + "\nstderr:\n" + err + "\nstdout:\n" + out.substr(0, 2000);
}

ToolResult runGraphc(const std::vector<std::string>& args, const std::string& input,
                     unsigned timeoutSeconds, size_t stackBytes) {
  return runProgram(GRAPHC_TOOL_PATH, args, input, timeoutSeconds, stackBytes);
}

ToolResult runProgram(const std::string& path, const std::vector<std::string>& args,
                      const std::string& input, unsigned timeoutSeconds, size_t stackBytes) {
  TempFile in(input), out(""), err("");
  std::vector<std::string> words = {path};
  words.insert(words.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& w : words)
    argv.push_back(w.data());
  argv.push_back(nullptr);

  pid_t pid = fork();
  if (pid < 0)
    throw std::runtime_error("fork failed");
  if (pid == 0) {
    redirect(in.path, STDIN_FILENO, O_RDONLY);
    redirect(out.path, STDOUT_FILENO, O_WRONLY | O_TRUNC);
    redirect(err.path, STDERR_FILENO, O_WRONLY | O_TRUNC);
    alarm(timeoutSeconds); // survives exec: a hung graphc dies of SIGALRM
    if (stackBytes) {
      rlimit limit{stackBytes, stackBytes};
      if (setrlimit(RLIMIT_STACK, &limit) != 0)
        _exit(127);
    }
    execv(argv[0], argv.data());
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR)
      throw std::runtime_error("waitpid failed");
  ToolResult r;
  if (WIFEXITED(status))
    r.exitCode = WEXITSTATUS(status);
  else if (WIFSIGNALED(status))
    r.signal = WTERMSIG(status);
  r.out = out.read();
  r.err = err.read();
  return r;
}

std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string sourcePath(const std::string& relative) {
  return (fs::path(GRAPHC_SOURCE_DIR) / relative).string();
}

std::vector<double> outputSums(const std::string& out) {
  std::vector<double> values;
  std::regex sum("\\bout[0-9]+: .* sum=([-+0-9.eE]+|nan|inf) ");
  for (auto it = std::sregex_iterator(out.begin(), out.end(), sum); it != std::sregex_iterator();
       ++it)
    values.push_back(std::stod((*it)[1]));
  return values;
}

} // namespace graphc::testing
