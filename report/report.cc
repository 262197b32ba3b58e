#include "report/report.h"

#include "report/report_data.h"
#include "report/report_html.h"

namespace kiln::report {

Result<std::string> render_report_html(const std::string& db_path, const Scope& scope,
                                       const RenderOptions& options) {
  KILN_ASSIGN_OR_RETURN(ReportData data, gather_report(db_path, scope, options.bench_files));
  return render_page(data, options);
}

}  // namespace kiln::report
