package worker_test

// A lease's owner names its machine by more than its host name: a sweep
// elsewhere under the same host name keeps its lease while its heartbeat
// is fresh, and only an owner provably of this machine (same boot id and
// pid namespace) whose process is gone loses it at once.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/memdecay/memdecay/worker"
)

func TestLeaseOwnerAcrossMachines(t *testing.T) {
	boot, ns := worker.ThisMachine()
	if boot == "" {
		t.Skip("no boot id or pid namespace to tell this machine by")
	}
	host, _ := os.Hostname()
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	dead := gone.Process.Pid
	me := os.Getpid()
	for _, c := range []struct {
		what, owner string
		takenOver   bool
	}{
		{"a live sweep on another machine under the same host name (another boot id)",
			worker.OwnerName(dead, host, "6d1f6a4e-0000-4000-8000-000000000000", ns, "1") + " run 0123456789abcdef", false},
		{"a live sweep in another pid namespace of this machine", worker.OwnerName(dead, host, boot, "pid:[1]", "1") + " run 0123456789abcdef", false},
		{"a sweep of an older memworker, named by host and pid namespace only", fmt.Sprintf("pid %d on %s %s", dead, host, ns), false},
		{"a live process of this machine", worker.OwnerName(me, host, boot, ns, worker.ProcessStart(me)) + " run 0123456789abcdef", false},
		{"a dead process of this machine", worker.OwnerName(dead, host, boot, ns, "1") + " run 0123456789abcdef", true},
		{"a pid of this machine now another process's (another start time)",
			worker.OwnerName(me, host, boot, ns, "1") + " run 0123456789abcdef", true},
	} {
		db, _ := newMemory(t, richFixture)
		mustExec(t, db, `INSERT INTO mem_sweeps (id, started_at, clock_hours, status, lease_until, owner)
			VALUES (41, ?, 480, 'running', ?, ?)`, time.Now().Unix(), time.Now().Add(time.Hour).Unix(), c.owner)
		now := 500.0
		_, err := worker.Sweep(context.Background(), db, worker.SweepOptions{Now: &now})
		switch {
		case c.takenOver && err != nil:
			t.Errorf("%s: %v, want its lease taken over", c.what, err)
		case !c.takenOver && !errors.Is(err, worker.ErrSweepRunning):
			t.Errorf("%s: %v, want ErrSweepRunning", c.what, err)
		case !c.takenOver && !strings.Contains(err.Error(), c.owner):
			t.Errorf("%s: the refusal %q does not name the owner", c.what, err)
		}
		want := "running"
		if c.takenOver {
			want = "interrupted"
		}
		if got := scalar[string](t, db, `SELECT status FROM mem_sweeps WHERE id = 41`); got != want {
			t.Errorf("%s: the other sweep is %s, want %s", c.what, got, want)
		}
	}
}

// Every sweep names itself apart: two sweeps of one process write two
// owners, each with this machine's boot id.
func TestLeaseOwnerUniquePerSweep(t *testing.T) {
	db, _ := newMemory(t, richFixture)
	sweepAt(t, db, 500)
	sweepAt(t, db, 510)
	owners := scalar[int](t, db, `SELECT count(DISTINCT owner) FROM mem_sweeps`)
	if owners != 2 {
		t.Errorf("%d distinct owners for 2 sweeps", owners)
	}
	if boot, _ := worker.ThisMachine(); boot != "" {
		if n := scalar[int](t, db, `SELECT count(*) FROM mem_sweeps WHERE instr(owner, ?) > 0`, boot); n != 2 {
			t.Errorf("%d of 2 owners name this boot", n)
		}
	}
}
