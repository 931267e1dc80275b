package limits

import (
	"testing"
	"time"
)

// TestConflictWaitCap: the caps of the store's waits double from
// ConflictBackoffBase up to ConflictBackoffCap, however many attempts, and
// add up to 1.775s over the ConflictAttempts-1 waits (within the default
// finishing budget, as DESIGN.md and the package's text say).
func TestConflictWaitCap(t *testing.T) {
	ms := time.Millisecond
	for attempt, want := range map[int]time.Duration{1: 25 * ms, 2: 50 * ms, 3: 100 * ms, 4: 200 * ms, 5: 400 * ms, 6: 500 * ms, 7: 500 * ms, 17: 500 * ms, 64: 500 * ms} {
		if got := ConflictWaitCap(attempt); got != want {
			t.Errorf("ConflictWaitCap(%d) = %s, want %s", attempt, got, want)
		}
	}
	var sum time.Duration
	for attempt := 1; attempt < ConflictAttempts; attempt++ {
		sum += ConflictWaitCap(attempt)
	}
	if sum != 1775*ms || sum >= DefaultFinishBudget {
		t.Errorf("the caps add up to %s, want 1.775s, within the default finishing budget %s", sum, DefaultFinishBudget)
	}
}
