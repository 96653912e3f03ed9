package worker

import "github.com/memdecay/memdecay/worker/internal/report"

// PlannedChange is one row a sweep will change, as a dry run with
// SweepOptions.List lists it in Report.Planned (sweep --dry-run --list):
// the row (its table and key, the app's own through a mapping), the
// action and reason its event will carry, and the numbers that decided it.
type PlannedChange = report.PlannedChange
