// Where a job may write its exports (export.tvm_log, export.compiled_model): kiln serve writes
// them with its own rights, for whoever submitted the job, so a path is checked before it is
// taken, at submit and again when the job writes it.
//
// A path is refused (kInvalidArgument "<field>: <path>: <why>") when its directory does not
// exist, when it resolves (symlinks of its directories followed) outside every allowed
// directory, when it is the record store itself or one of the files SQLite and kiln serve keep
// beside it (DB-wal, DB-shm, DB-journal, DB.http-token, DB.serve-lock), by name or as a hard link
// of the store's file, or when something other than a regular file is there (a directory, a
// symlink, a FIFO, a device).
#pragma once

#include <string>
#include <vector>

#include "common/status.h"

namespace kiln::daemon {

struct ExportPolicy {
  std::string store;                      // the record store's path (--db), as given
  std::vector<std::string> allowed_dirs;  // kiln serve --export-dir; empty: the store's directory
};

Status check_export_path(const std::string& field, const std::string& path,
                         const ExportPolicy& policy);

}  // namespace kiln::daemon
