#include "sweeps/cli/slurm_job.h"

#include <fmt/format.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <system_error>

namespace infertune {
namespace {

namespace fs = std::filesystem;

// One shell word: single-quoted, with embedded single quotes closed, escaped and reopened.
std::string quoted(const std::string& word) {
  std::string out(1, '\'');
  for (char c : word) {
    if (c == '\'') {
      out.append("'\\''");
    } else {
      out.push_back(c);
    }
  }
  out.push_back('\'');
  return out;
}

std::string sbatch_lines(const SlurmJobRequest& r, const fs::path& dir) {
  std::string out;
  const auto line = [&](const std::string& option) { out += "#SBATCH " + option + "\n"; };
  line("--job-name=infertune-" + r.spec_hash.substr(0, 8));
  line(fmt::format("--array=1-{}", r.shards));
  line("--output=" + (dir / "shard-%a.log").string());
  line("--open-mode=append");  // a requeued task adds to its log
  line("--requeue");
  line("--nodes=1");
  line("--ntasks=1");
  line("--exclusive");  // a measurement beside another job's is noise
  if (!r.partition.empty()) line("--partition=" + r.partition);
  if (!r.time_limit.empty()) line("--time=" + r.time_limit);
  if (!r.constraint.empty()) line("--constraint=" + r.constraint);
  return out;
}

std::string script_text(const SlurmJobRequest& r, const fs::path& dir) {
  std::string run = fmt::format(
      "{} sweep {} --shard \"${{SLURM_ARRAY_TASK_ID}}/{}\" --resume --db {}/shard-\"${{SLURM_ARRAY_TASK_ID}}\".db",
      quoted(r.infertune.string()), quoted((dir / "spec.yaml").string()), r.shards, quoted(dir.string()));
  for (const std::string& flag : r.run_flags) run += fmt::format(" {}", quoted(flag));
  return fmt::format(
      "#!/bin/bash\n"
      "# infertune sweep {}, one slice of its plan per array task (written by `infertune sweep --slurm`).\n"
      "{}"
      "set -u\n"
      "# Each task resumes its slice: after a kill and a requeue, the trials its store holds are not run again.\n"
      "exec {}\n",
      r.spec_hash, sbatch_lines(r, dir), run);
}

Status write_text(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) return fail("{}: could not be written", path.string());
  return {};
}

}  // namespace

Result<SlurmJob> write_slurm_job(const SlurmJobRequest& request) {
  if (request.shards < 1) return fail("--shards {}: must be at least 1", request.shards);
  std::error_code error;
  const fs::path dir = fs::absolute(request.dir, error);
  fs::create_directories(dir, error);
  if (error) return fail("{}: could not be made ({})", request.dir.string(), error.message());
  SlurmJob job{.script = dir / "sweep.sbatch", .spec = dir / "spec.yaml", .merge_command = ""};
  if (Status s = write_text(job.spec, request.spec_yaml); !s) return s.error();
  if (Status s = write_text(job.script, script_text(request, dir)); !s) return s.error();
  fs::permissions(job.script, fs::perms::owner_exec, fs::perm_options::add, error);
  job.merge_command = fmt::format("infertune merge {}", quoted((dir / "all.db").string()));
  for (int i = 1; i <= request.shards; ++i) {
    job.merge_command += fmt::format(" {}", quoted((dir / fmt::format("shard-{}.db", i)).string()));
  }
  return job;
}

Result<std::string> submit_slurm_job(const fs::path& script) {
  const std::string command = "sbatch --parsable " + quoted(script.string()) + " 2>&1";
  std::FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return fail("sbatch could not be started");
  std::string output;
  std::array<char, 512> buffer{};
  while (std::fgets(buffer.data(), buffer.size(), pipe)) output += buffer.data();
  const int status = pclose(pipe);
  while (!output.empty() && (output.back() == '\n' || output.back() == ' ')) output.pop_back();
  if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    const bool missing = WIFEXITED(status) && WEXITSTATUS(status) == 127;
    return fail("sbatch {}: {}", missing ? "is not installed (Slurm's client commands)" : "refused the job",
                output.empty() ? "no message" : output);
  }
  return output.substr(0, output.find(';'));  // "123" or "123;cluster"
}

}  // namespace infertune
