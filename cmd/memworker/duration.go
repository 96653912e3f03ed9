package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/memdecay/memdecay/worker"
)

// duration is a flag value in the one duration grammar memworker speaks:
// the policies' 30m, 4h, 2d, and Go's forms besides (100ms, 1h30m), so a
// day is written the same in a flag, a setting and a policy.
type duration struct{ d time.Duration }

func (v *duration) Set(s string) error {
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		v.d = d
		return nil
	}
	if days, ok := strings.CutSuffix(s, "d"); ok {
		if n, err := strconv.ParseFloat(days, 64); err == nil && n >= 0 && n*24 < 1e6 {
			v.d = time.Duration(n * float64(24*time.Hour))
			return nil
		}
	}
	return fmt.Errorf("%q is not a duration of 0 or more (want e.g. 100ms, 30m, 4h, 2d)", s)
}

func (v *duration) String() string { return v.d.String() }

// durationFlag is a flag of the duration grammar, with its default.
func durationFlag(name string, value time.Duration, usage string) cli.Flag {
	def := value.String()
	if value == 0 {
		def = "off"
	}
	return &cli.GenericFlag{Name: name, Value: &duration{value}, Usage: usage, DefaultText: def}
}

// durationOf reads a duration flag.
func durationOf(c *cli.Context, name string) time.Duration {
	if v, ok := c.Generic(name).(*duration); ok {
		return v.d
	}
	return 0
}

// timeLeft is an edge's time before decay in its clock's unit: active
// hours, or days on the wall clock.
func timeLeft(o worker.EdgeOutlook) string {
	if o.Clock == "wall" {
		return fmt.Sprintf("%.1f days (wall clock)", o.TimeLeft)
	}
	return fmt.Sprintf("%.1f h", o.TimeLeft)
}
