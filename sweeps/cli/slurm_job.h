#pragma once
// `infertune sweep SPEC --slurm`: the sweep as a Slurm job array, one task per slice of its plan
// (sweeps/plan/shard_plan.h). The job's folder gets the spec as resolved (every task runs the same one, whatever
// becomes of the file it came from), the batch script, and, as the tasks run, one results store and one log per
// slice. Each task runs `infertune sweep --shard I/N --resume` into its own store on the shared folder, so a task
// that is killed and requeued (the script asks for --requeue) continues its slice and loses nothing; afterwards
// `infertune merge` combines the stores.
#include <filesystem>
#include <string>
#include <vector>

#include "kernels/result.h"

namespace infertune {

struct SlurmJobRequest {
  std::filesystem::path dir;           // the job's folder on storage every node sees (made when absent)
  std::string spec_yaml;               // the resolved spec, written to dir/spec.yaml
  std::string spec_hash;               // names the job
  int shards = 4;                      // array tasks, one per slice
  std::string partition;               // --partition; "": the cluster's default
  std::string time_limit;              // --time per task; "": the partition's default
  std::string constraint;              // --constraint (node features, such as a GPU kind)
  std::vector<std::string> run_flags;  // sweep options every task passes on (--min-reps 3, --no-warmup, ...)
  std::filesystem::path infertune;     // the binary the tasks run (absolute)
};

struct SlurmJob {
  std::filesystem::path script;  // dir/sweep.sbatch
  std::filesystem::path spec;    // dir/spec.yaml
  std::string merge_command;     // `infertune merge OUT.db dir/shard-1.db ...`
};

// Writes the spec and the batch script. Errors name the path that could not be written.
Result<SlurmJob> write_slurm_job(const SlurmJobRequest& request);

// `sbatch --parsable SCRIPT`: the job id, or an error with sbatch's own message.
Result<std::string> submit_slurm_job(const std::filesystem::path& script);

}  // namespace infertune
