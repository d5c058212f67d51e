#pragma once
// The local Slurm of scripts/slurm-local.sh for the real-Slurm suites: where its slurm.conf is,
// or why the suite must skip.

#include <cstdlib>
#include <filesystem>
#include <string>

#include "testing/test_util.h"

namespace schedmate::service::testing {

// Sets SLURM_CONF (from the environment, else scripts/slurm-local.sh's default) and returns the
// conf path when sbatch exists and slurmctld answers; otherwise "" with `skip_reason` set.
inline std::string LocalSlurmConf(std::string& skip_reason) {
  using schedmate::testing::RunShell;
  const char* conf = std::getenv("SLURM_CONF");
  std::string path = conf != nullptr ? conf : "/tmp/schedmate-slurm/etc/slurm.conf";
  if (!std::filesystem::exists(path) || RunShell("command -v sbatch >/dev/null").exit_code != 0) {
    skip_reason = "no Slurm here (run scripts/slurm-local.sh install && start)";
    return "";
  }
  setenv("SLURM_CONF", path.c_str(), 1);
  if (RunShell("scontrol ping | grep -q UP").exit_code != 0) {
    skip_reason = "slurmctld is not answering (scripts/slurm-local.sh start)";
    return "";
  }
  return path;
}

}  // namespace schedmate::service::testing
