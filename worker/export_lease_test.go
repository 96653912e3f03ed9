package worker

import (
	"time"

	"github.com/memdecay/memdecay/worker/internal/store"
	"github.com/memdecay/memdecay/worker/internal/sweep"
)

// WithLease is opt with the sweep's lease lasting d instead of
// LeaseDuration, so a test can outlive it.
func WithLease(opt SweepOptions, d time.Duration) SweepOptions {
	return sweep.WithLease(opt, d)
}

// OwnerName is the lease owner a worker writes for process pid of host,
// started at start, on the machine whose boot id is boot, in pid namespace
// ns.
func OwnerName(pid int, host, boot, ns, start string) string {
	return store.OwnerName(pid, host, boot, ns, start)
}

// ThisMachine is this boot's id and this process's pid namespace ("" when
// unknown).
func ThisMachine() (boot, ns string) { return store.Machine() }

// ProcessStart is when process pid started, as a lease owner records it.
func ProcessStart(pid int) string { return store.ProcessStart(pid) }
