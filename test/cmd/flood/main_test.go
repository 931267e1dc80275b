package main

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// TestErlangB: the formula gives the published table's values.
func TestErlangB(t *testing.T) {
	for _, tc := range []struct {
		a    float64
		c    int
		want float64
	}{
		{1, 1, 0.5},
		{10, 10, 0.2146},
		{5, 10, 0.0184},
	} {
		if got := erlangB(tc.a, tc.c); math.Abs(got-tc.want) > 0.0005 {
			t.Errorf("erlangB(%v, %d) = %.4f, want %.4f", tc.a, tc.c, got, tc.want)
		}
	}
}

// TestRun: a short run delivers the signed deliveries that find a slot and
// refuses the flood 401 (run fails on any other answer); and the model can
// throttle: one slot held 50 ms refuses most of 200 requests a second, and
// a rate quota of 20 a second most of the rest.
func TestRun(t *testing.T) {
	for _, tc := range []struct {
		name     string
		slots    int
		envRPS   float64
		overhead string
		throttle bool
	}{
		{"unhindered", 1000, 0, "0", false}, // slots enough for any burst a stalled machine bunches
		{"one slot held 50ms", 1, 0, "50ms", true},
		{"a rate quota", 10, 2, "0", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out strings.Builder
			c := config{slots: tc.slots, signed: 20, duration: 500 * time.Millisecond, max: 1000, forge: "wrong", envRPS: tc.envRPS, rng: rand.New(rand.NewPCG(1, 0))}
			if err := run(c, "200", tc.overhead, &out); err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSpace(out.String()), "\n")
			fields := strings.Fields(lines[len(lines)-1])
			if len(fields) != 12 {
				t.Fatalf("the row: %q", lines[len(lines)-1])
			}
			if all := fields[6]; (all != "0.0") != tc.throttle {
				t.Errorf("all 429 %% = %s, want throttling %v:\n%s", all, tc.throttle, out.String())
			}
		})
	}
}
