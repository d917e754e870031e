#pragma once
// Whether any live process is left in a process group (tests of the sweep workers). Zombies do not count: a
// killed grandchild of a fake worker is reparented to init, which reaps it when it gets round to it, while
// kill(-pgid, 0) keeps finding the zombie until then.
#include <sys/types.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace infertune::test {

inline size_t live_processes_in_group(pid_t pgid) {
  size_t live = 0;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    std::ifstream in(entry.path() / "stat");
    std::string stat;
    if (!in || !std::getline(in, stat)) continue;  // not a process, or gone meanwhile
    const size_t close = stat.rfind(')');          // the command name may hold spaces and parentheses
    if (close == std::string::npos) continue;
    std::istringstream fields(stat.substr(close + 1));
    char state = 0;
    long ppid = 0, group = 0;
    if (!(fields >> state >> ppid >> group)) continue;
    if (group == pgid && state != 'Z' && state != 'X') ++live;
  }
  return live;
}

}  // namespace infertune::test
