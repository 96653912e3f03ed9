package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/memdecay/memdecay/worker"
)

func runCommand() *cli.Command {
	return withFlags(&cli.Command{
		Name:  "run",
		Usage: "the daemon: sweep on a schedule until SIGINT or SIGTERM",
		Description: "Exactly one of --schedule (cron, local time), --every or --when-due " +
			"(when active_hours − last_curate_at ≥ curate_interval_hours, polled). --db may be a glob, " +
			"or several rqlite URLs separated by commas.",
		Flags: append(sweepFlags(),
			&cli.StringFlag{Name: "schedule", Usage: "cron `EXPR`, e.g. \"30 4 * * 0\" (Sundays 04:30)"},
			durationFlag("every", 0, "sweep now and then every `DURATION`: 30m, 4h, 2d"),
			&cli.BoolFlag{Name: "when-due", Usage: "sweep when curate_interval_hours of activity have passed"},
			durationFlag("poll", time.Minute, "how often --when-due looks (`DURATION`)"),
			&cli.StringFlag{Name: "log-format", Value: "text", Usage: "text or json"},
			&cli.StringFlag{Name: "log-level", Value: "info", Usage: "debug, info, warn or error"},
			&cli.StringFlag{Name: "listen", Usage: "also serve the HTTP API, health and metrics on `ADDR` (127.0.0.1:8080 this machine only; :8080 every interface); docs/running.md"},
			&cli.StringFlag{Name: "token-file", Usage: "with --listen: every route but /healthz wants the bearer token in `FILE` (or in MEMWORKER_TOKEN)"},
		),
		Action: func(c *cli.Context) error {
			args, err := positional(c)
			if err != nil {
				return err
			}
			if len(args) > 0 {
				return usagef("run", "unexpected argument %q", args[0])
			}
			opt, err := sweepOptions(c, "run")
			if err != nil {
				return err
			}
			pattern, err := dbPath(c)
			if err != nil {
				return err
			}
			var level slog.Level
			if err := level.UnmarshalText([]byte(c.String("log-level"))); err != nil {
				return usagef("run", "--log-level %q: want debug, info, warn or error", c.String("log-level"))
			}
			handlerOpts := &slog.HandlerOptions{Level: level}
			var handler slog.Handler
			switch c.String("log-format") {
			case "text":
				handler = slog.NewTextHandler(c.App.ErrWriter, handlerOpts)
			case "json":
				handler = slog.NewJSONHandler(c.App.ErrWriter, handlerOpts)
			default:
				return usagef("run", "--log-format %q: want text or json", c.String("log-format"))
			}
			// A sweep is not a busy loop: an interval under minEvery is a
			// mistake (1ns, a missing unit).
			if every := durationOf(c, "every"); every > 0 && every < minEvery {
				return usagef("run", "--every %v is under %v", every, minEvery)
			}
			if poll := durationOf(c, "poll"); poll < minEvery {
				return usagef("run", "--poll %v is under %v", poll, minEvery)
			}
			ro := worker.RunOptions{
				Schedule: c.String("schedule"), Every: durationOf(c, "every"), WhenDue: c.Bool("when-due"),
				Poll: durationOf(c, "poll"), Jobs: c.Int("jobs"), Sweep: opt, Logger: slog.New(handler),
			}
			if err := ro.Validate(); errors.Is(err, worker.ErrOneTrigger) {
				return usagef("run", "want exactly one of --schedule, --every, --when-due")
			} else if err != nil {
				return usagef("run", "%v", strings.Replace(err.Error(), "run: schedule", "--schedule", 1))
			}
			ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
			defer stop()
			defer logHangups(ctx, ro.Logger)()
			if c.String("listen") == "" {
				if c.String("token-file") != "" {
					return usagef("run", "--token-file needs --listen")
				}
				return worker.Run(ctx, pattern, ro)
			}
			return runServing(ctx, c, pattern, ro)
		},
	})
}

// logHangups keeps SIGHUP (a closed terminal, systemd's reload) from
// killing the daemon mid-sweep with its lease held: there is nothing to
// reload, since every sweep reads its settings, policies and mapping from
// the database, so it is logged and the schedule goes on. The returned
// function stops listening.
func logHangups(ctx context.Context, log *slog.Logger) (stop func()) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-hup:
				log.Info("SIGHUP: nothing to reload (each sweep reads its settings, policies and mapping from the database); the schedule goes on")
			case <-ctx.Done():
				return
			case <-done:
				return
			}
		}
	}()
	return func() {
		signal.Stop(hup)
		close(done)
	}
}

// minEvery is the shortest interval run --every takes.
const minEvery = 100 * time.Millisecond

// runServing runs the daemon and its HTTP service side by side until ctx
// ends: the service counts the schedule's sweeps and its own in its
// metrics. It serves one database: a fleet is refused, since each
// database has its own lease, health and metrics (run one daemon each).
func runServing(ctx context.Context, c *cli.Context, pattern string, ro worker.RunOptions) error {
	if worker.IsFleet(pattern) {
		return usagef("run", "--listen serves one database, and --db %q may name several: run one memworker run --listen per database, each on its own port", worker.DisplayName(pattern))
	}
	// A sweep asked for over HTTP claims the file on a connection of
	// its own, which may wait for a scheduled sweep's lock: this process
	// is no longer the sweep's alone.
	ro.Sweep.OwnProcess = false
	token, err := serviceToken(c.String("token-file"))
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", c.String("listen"))
	if err != nil {
		return usagef("run", "--listen %s: %v", c.String("listen"), err)
	}
	// The service ends the daemon if it fails, and the daemon's end (ctx:
	// SIGTERM) shuts the service down, letting requests finish.
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	srv := worker.NewService(ctx, worker.ServiceOptions{Path: pattern, Sweep: ro.Sweep, Token: token, Logger: ro.Logger})
	after := ro.AfterRound
	ro.AfterRound = func(results []worker.FleetResult) {
		srv.ObserveRound(results, ctx.Err())
		if after != nil {
			after(results)
		}
	}
	served := make(chan error, 1)
	go func() {
		err := srv.ServeListener(ctx, ln, 30*time.Second)
		if err != nil {
			cancel(fmt.Errorf("--listen: %w", err))
		}
		served <- err
	}()
	runErr := worker.Run(ctx, pattern, ro)
	cancel(nil)
	if err := <-served; err != nil {
		return err
	}
	return runErr
}

// serviceToken is the bearer token of --token-file, or MEMWORKER_TOKEN,
// or "" for none; a file that holds none is an error, never no token.
func serviceToken(file string) (string, error) {
	if file == "" {
		return strings.TrimSpace(os.Getenv("MEMWORKER_TOKEN")), nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return "", usagef("run", "--token-file: %v", err)
	}
	token := strings.TrimSpace(string(b))
	if token == "" || strings.ContainsAny(token, " \t\r\n") {
		return "", usagef("run", "--token-file %s: want one token on one line", file)
	}
	return token, nil
}
