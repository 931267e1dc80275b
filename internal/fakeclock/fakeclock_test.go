package fakeclock_test

import (
	"testing"
	"time"

	"github.com/idempotent-consumer/idempotent-consumer/internal/fakeclock"
)

// TestOnlyAdvanceMovesTheClock: the clock starts at the current second
// and stands still until Advance moves it by exactly its argument.
func TestOnlyAdvanceMovesTheClock(t *testing.T) {
	before := time.Now().Truncate(time.Second)
	c := fakeclock.New()
	start := c.Now()
	if start.Before(before) || start.After(time.Now()) || !start.Equal(start.Truncate(time.Second)) {
		t.Fatalf("New() = %v, want the current whole second (after %v)", start, before)
	}
	time.Sleep(10 * time.Millisecond)
	if !c.Now().Equal(start) {
		t.Fatalf("the clock moved by itself: %v, then %v", start, c.Now())
	}
	c.Advance(90 * time.Second)
	if got := c.Now().Sub(start); got != 90*time.Second {
		t.Fatalf("Advance(90s) moved the clock by %v", got)
	}
}
