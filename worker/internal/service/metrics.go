package service

import (
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/memdecay/memdecay/worker/internal/daemon"
	"github.com/memdecay/memdecay/worker/internal/memdb"
	"github.com/memdecay/memdecay/worker/internal/report"
)

// metrics are the process's Prometheus metrics, in a registry of its own.
type metrics struct {
	reg         *prometheus.Registry
	sweeps      *prometheus.CounterVec
	duration    prometheus.Histogram
	removed     *prometheus.CounterVec
	lastSuccess prometheus.Gauge
	invalid     prometheus.Gauge
	edges       prometheus.Gauge
	walBytes    prometheus.Gauge
}

// Sweep outcomes, the status label of memworker_sweeps_total.
const (
	statusDone        = "done"
	statusDryRun      = "dry_run"
	statusBusy        = "busy" // another sweep held the lease
	statusInterrupted = "interrupted"
	statusFailed      = "failed"
)

func newMetrics() *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		sweeps: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "memworker_sweeps_total",
			Help: "Sweeps this process ran, by outcome: done, dry_run, busy (another sweep held the lease), interrupted, failed."}, []string{"status"}),
		duration: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "memworker_sweep_duration_seconds",
			Help: "How long each sweep took (dry runs included).", Buckets: prometheus.ExponentialBuckets(0.01, 4, 10)}),
		removed: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "memworker_rows_removed_total",
			Help: "Rows sweeps removed, archived or excluded, by kind (dry runs not counted)."}, []string{"kind"}),
		lastSuccess: prometheus.NewGauge(prometheus.GaugeOpts{Name: "memworker_last_sweep_success_timestamp_seconds",
			Help: "Unix time the last sweep that changed the database finished without error (0: none yet)."}),
		invalid: prometheus.NewGauge(prometheus.GaugeOpts{Name: "memworker_invalid_rows",
			Help: "Rows the last sweep skipped as invalid (named in its report and by memworker decayed --invalid)."}),
		edges: prometheus.NewGauge(prometheus.GaugeOpts{Name: "memworker_edges",
			Help: "Edges in the database, read at each scrape."}),
		walBytes: prometheus.NewGauge(prometheus.GaugeOpts{Name: "memworker_wal_bytes",
			Help: "Size of the database's -wal file at each scrape (0 on rqlite, or without one)."}),
	}
	for _, s := range []string{statusDone, statusDryRun, statusBusy, statusInterrupted, statusFailed} {
		m.sweeps.WithLabelValues(s)
	}
	for _, k := range report.RemovalKinds {
		m.removed.WithLabelValues(k)
	}
	m.reg.MustRegister(m.sweeps, m.duration, m.removed, m.lastSuccess, m.invalid, m.edges, m.walBytes,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// observe counts one sweep.
func (m *metrics) observe(rep *report.Report, took time.Duration, err error, dryRun bool) {
	m.duration.Observe(took.Seconds())
	switch {
	case errors.Is(err, memdb.ErrSweepRunning):
		m.sweeps.WithLabelValues(statusBusy).Inc()
		return
	case err != nil && rep == nil && isInterrupted(err):
		m.sweeps.WithLabelValues(statusInterrupted).Inc()
		return
	case err != nil || rep == nil:
		m.sweeps.WithLabelValues(statusFailed).Inc()
		return
	case dryRun:
		m.sweeps.WithLabelValues(statusDryRun).Inc()
		return
	}
	m.sweeps.WithLabelValues(statusDone).Inc()
	for kind, n := range rep.Removals() {
		m.removed.WithLabelValues(kind).Add(float64(n))
	}
	m.invalid.Set(float64(rep.InvalidRows.Count))
	m.lastSuccess.Set(float64(time.Now().Unix()))
}

// ObserveRound records a round of the daemon's schedule: each database's
// sweep (its report's duration), busy, interrupted (stopped is the
// round's context error) or failed.
func (s *Server) ObserveRound(results []daemon.FleetResult, stopped error) {
	for _, r := range results {
		switch {
		case r.Busy:
			s.metrics.observe(nil, 0, memdb.ErrSweepRunning, false)
		case r.Report != nil:
			s.metrics.observe(r.Report, time.Duration(r.Report.DurationMS)*time.Millisecond, nil, false)
		case stopped != nil:
			s.metrics.observe(nil, 0, stopped, false)
		default:
			s.metrics.observe(nil, 0, errors.New(r.Error), false)
		}
	}
}
