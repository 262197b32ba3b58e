// Copying a whole store into another, of any backends (SQLite to PostgreSQL and back): every
// record, run-times row and daemon job. Idempotent: what the destination already holds is not
// added again, so a second copy adds nothing and an interrupted copy can be run again.
//
//   - Records: one already in the destination with the same fields (all but its id) is skipped;
//     the others are appended in the source's id order, in batches.
//   - Jobs: a job with the same name, spec and submission time is the same job. A new one is
//     added with its priority, state (a running one becomes queued: no daemon of the destination
//     runs it), reason and seconds; the destination numbers it, and the sources of its records
//     and run times ("kiln serve job N", store/job_store.h) are renumbered to match.
//   - Run times: a row whose (run, task) the destination has is skipped.
#pragma once

#include <cstdint>

#include "common/status.h"
#include "store/job_store.h"
#include "store/store.h"

namespace kiln::store {

struct CopyReport {
  int64_t records = 0;          // appended to the destination
  int64_t records_present = 0;  // already there
  int64_t jobs = 0;
  int64_t jobs_present = 0;
  int64_t run_times = 0;
  int64_t run_times_present = 0;
};

Result<CopyReport> copy_store(Store& src, JobStore& src_jobs, Store& dst, JobStore& dst_jobs);

}  // namespace kiln::store
