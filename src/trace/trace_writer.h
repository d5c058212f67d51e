#pragma once
// Writes a JobTable in the venus_sept2020_jobs.csv schema (kLucid), so generated or converted
// traces read back with ReadTrace:
//   job_id,user,vc,gpu_num,cpu_num,state,submit_s,duration_s,dataset,model,batchsize,amp,speed,
//   gpu_util,gmem_util,gmem
// Round trip is exact for every column of the schema: times print as integer seconds when whole,
// else with 6 decimals (microseconds); fractional GPU counts print as decimals ("0.46"); reals
// print in shortest round-trip form; amp -1 prints as an empty field; text with ',', '"', line
// breaks or outer blanks is quoted. NOT written (the schema has no column for them): name, nodes,
// time_limit, estimate, iterations.

#include <string>

#include "core/job.h"
#include "core/status.h"

namespace schedmate::trace {

// The whole CSV text (header + one line per job, LF line ends).
std::string FormatLucidCsv(const JobTable& table);
// FormatLucidCsv written to `path` (see WriteOutputFile).
Status WriteLucidCsv(const JobTable& table, const std::string& path);

// Writes `data` to `path`: atomically (temp file + rename) for regular files and new paths, but
// directly into an existing non-regular file (/dev/null, /dev/stdout, a FIFO), which a rename
// would replace.
Status WriteOutputFile(const std::string& path, std::string_view data);

}  // namespace schedmate::trace
