package ops

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

// TestLimiterSpacesCalls: at a rate of 4 a second, calls made at once are
// spaced 250ms apart; a call that comes late waits for nothing; 0 is no
// limit. The clock is the test's: nothing sleeps.
func TestLimiterSpacesCalls(t *testing.T) {
	clock := time.Unix(1000, 0)
	var slept []time.Duration
	l := newLimiter(4)
	l.now = func() time.Time { return clock }
	l.sleep = func(_ context.Context, d time.Duration) error {
		slept = append(slept, d)
		clock = clock.Add(d)
		return nil
	}
	for range 3 {
		if err := l.wait(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	clock = clock.Add(time.Second) // a slow send
	if err := l.wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	if want := []time.Duration{250 * time.Millisecond, 250 * time.Millisecond}; len(slept) != 2 || slept[0] != want[0] || slept[1] != want[1] {
		t.Errorf("slept %v, want %v", slept, want)
	}
	unlimited := newLimiter(0)
	unlimited.sleep = func(context.Context, time.Duration) error { t.Error("no limit slept"); return nil }
	for range 100 {
		_ = unlimited.wait(context.Background())
	}
}

func TestProgressDrawsOneLine(t *testing.T) {
	var b bytes.Buffer
	p := newProgress(&b, "copied", 4)
	p.set(1, 4)
	p.set(4, 4)
	p.done()
	got := b.String()
	if !strings.Contains(got, "\r[#######-----------------------] 1/4 copied (25%)") || !strings.HasSuffix(got, "\r[##############################] 4/4 copied (100%)\n") {
		t.Errorf("progress %q", got)
	}
}
