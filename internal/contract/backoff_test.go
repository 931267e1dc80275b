package contract_test

import (
	"strings"
	"testing"
	"time"

	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/internal/limits"
)

// TestBackoffRules: the backoff's settings are refused, all at once and in
// words that name the values and the fix, where they would lose messages or
// that SQS would refuse; the defaults pass, and ride out an hour.
func TestBackoffRules(t *testing.T) {
	valid := func() contract.Settings {
		s := contract.Defaults(30 * time.Second)
		s.Table, s.Namespace, s.Consumer = "t", "orders", "Shop/Orders"
		return s
	}
	if p := valid().Problems(); len(p) != 0 {
		t.Fatalf("the defaults are refused: %v", p)
	}
	if b, _ := valid().Backoff(); b.Horizon(contract.DefaultMaxReceiveCount) != 130*time.Minute || b.Floor(contract.DefaultMaxReceiveCount) < time.Hour {
		t.Errorf("default horizon %s, floor %s: want 2h10m, and a floor of at least an hour", b.Horizon(5), b.Floor(5))
	}
	for _, c := range []struct {
		name string
		mod  func(*contract.Settings)
		want []string
	}{
		{"off", func(s *contract.Settings) { s.BackoffBase, s.BackoffCap = 0, 0 }, nil},
		{"negative base", func(s *contract.Settings) { s.BackoffBase = -time.Second },
			[]string{"BackoffBase -1s is negative; give 0 to turn the backoff off, or at least 1s (default 10m)"}},
		{"base under a second", func(s *contract.Settings) { s.BackoffBase = 500 * time.Millisecond },
			[]string{"BackoffBase 500ms is shorter than 1s"}},
		{"cap under base", func(s *contract.Settings) { s.BackoffCap = 5 * time.Minute },
			[]string{"BackoffCap 5m is shorter than BackoffBase 10m; give a cap of at least 10m (default 1h)"}},
		{"cap over 12h", func(s *contract.Settings) { s.BackoffCap, s.Window = 13*time.Hour, 72*time.Hour },
			[]string{"BackoffCap 13h is longer than 12h, the longest visibility timeout SQS's ChangeMessageVisibility takes; give at most 12h (default 1h)"}},
		{"FIFO cap over 12h", func(s *contract.Settings) { s.BackoffFIFOCap = 24 * time.Hour },
			[]string{"BackoffFIFOCap 24h is longer than 12h"}},
		{"horizon past the window", func(s *contract.Settings) { s.Window = 2 * time.Hour },
			[]string{"the retry horizon 130m (the longest delays after receives 1 to 4 of MaxReceiveCount 5: BackoffBase 10m, doubled up to BackoffCap 1h) is not shorter than Window 2h less 1s",
				"give a Window longer than 7801s, or a smaller BackoffCap, BackoffBase or MaxReceiveCount"}},
		{"FIFO horizon takes the FIFO cap", func(s *contract.Settings) { s.FIFO, s.Window = true, 40*time.Minute },
			[]string{"the retry horizon 55m (the longest delays after receives 1 to 4 of MaxReceiveCount 5: BackoffBase 10m, doubled up to BackoffFIFOCap 15m) is not shorter than Window 40m"}},
		{"FIFO under the window", func(s *contract.Settings) { s.FIFO, s.Window = true, time.Hour }, nil},
		{"all at once", func(s *contract.Settings) { s.BackoffCap, s.BackoffFIFOCap, s.Window = 13*time.Hour, 0, 90*time.Minute },
			[]string{"BackoffCap 13h is longer than 12h", "BackoffFIFOCap 0s is shorter than 1s", "the retry horizon"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := valid()
			c.mod(&s)
			got := strings.Join(s.Problems(), "\n")
			if c.want == nil && got != "" {
				t.Errorf("refused: %s", got)
			}
			for _, w := range c.want {
				if !strings.Contains(got, w) {
					t.Errorf("problems\n%s\nwant one containing %q", got, w)
				}
			}
		})
	}
}

// TestRetryAfterStaysWithinTheHorizon: whatever retry time an effect asks
// for, the delay after receive n is at most its ceiling, so that the
// delays of receives 1 to MaxReceiveCount − 1 never add up to more than the
// retry horizon; and the contract accepts a Window exactly one
// ClockSkewMargin and a second longer than that horizon, and refuses one a
// second shorter.
func TestRetryAfterStaysWithinTheHorizon(t *testing.T) {
	for _, c := range []struct {
		name string
		mod  func(*contract.Settings)
	}{
		{"defaults", func(*contract.Settings) {}},
		{"FIFO", func(s *contract.Settings) { s.FIFO = true }},
		{"12h cap", func(s *contract.Settings) { s.BackoffBase, s.BackoffCap = time.Hour, contract.MaxBackoff }},
		{"cap reached at once", func(s *contract.Settings) {
			s.BackoffBase, s.BackoffCap, s.MaxReceiveCount = 2*time.Hour, 2*time.Hour, 10
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := contract.Defaults(30 * time.Second)
			s.Table, s.Namespace, s.Consumer = "t", "orders", "Shop/Orders"
			c.mod(&s)
			b, _ := s.Backoff()
			horizon := b.Horizon(s.MaxReceiveCount)
			for _, asked := range []time.Duration{b.Cap, contract.MaxBackoff, 100 * time.Hour} {
				var sum time.Duration
				for n := 1; n < s.MaxReceiveCount; n++ {
					d := b.RetryAfter(n, asked)
					if d > b.Ceiling(n) {
						t.Errorf("RetryAfter(%d, %s) = %s, more than the ceiling %s", n, asked, d, b.Ceiling(n))
					}
					sum += d
				}
				if sum != horizon {
					t.Errorf("asking %s on every receive waits %s in all, want the horizon %s", asked, sum, horizon)
				}
			}
			if d := b.RetryAfter(1, 1500*time.Millisecond); d != 2*time.Second {
				t.Errorf("RetryAfter(1, 1.5s) = %s, want 2s (rounded up, within the ceiling)", d)
			}
			s.Window = horizon + limits.ClockSkewMargin + time.Second
			if p := s.Problems(); len(p) != 0 {
				t.Errorf("Window %s (the horizon %s + %s + 1s) is refused: %v", s.Window, horizon, limits.ClockSkewMargin, p)
			}
			s.Window -= time.Second
			if p := s.Problems(); len(p) != 1 || !strings.Contains(p[0], "the retry horizon") {
				t.Errorf("Window %s (the horizon + %s) is accepted, or refused for another reason: %v", s.Window, limits.ClockSkewMargin, p)
			}
		})
	}
}
