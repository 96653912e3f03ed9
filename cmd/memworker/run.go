package main

import (
	"context"
	"errors"
	"log/slog"
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
			return worker.Run(ctx, pattern, ro)
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
