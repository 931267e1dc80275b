package chaos_test

import (
	"strings"
	"testing"
	"time"

	"github.com/idempotent-consumer/idempotent-consumer/test/chaos"
)

// TestOutageWithBackoff is the proof of the backoff (issue 36, item 4): the
// charge consumer's provider is down for an hour, from 30 minutes into a
// run whose facts are published over two hours, and the same seed runs with
// the queue's fixed visibility timeout (the adapter's backoff off) and with
// the adapter's default backoff, through the simulated
// ChangeMessageVisibility. Both keep every invariant (no double effect,
// nothing lost or stuck: a fact dead-lettered by the outage is counted as
// such, waiting for a redrive); the fixed timeout dead-letters messages
// published early in the outage, and the backoff fewer. go test -v prints
// the table.
func TestOutageWithBackoff(t *testing.T) {
	cfg := chaos.Config{Seed: 1, Facts: 300, Outage: time.Hour}
	cfg.FixedVisibility = true
	fixed := run(t, cfg)
	cfg.FixedVisibility = false
	backoff := run(t, cfg)
	var table strings.Builder
	chaos.OutageTable(&table, fixed, backoff)
	t.Log("\n" + table.String())
	f, b := fixed.Outage, backoff.Outage
	if f.DeadLettered == 0 || f.DeadLetteredFacts == 0 {
		t.Errorf("the fixed visibility dead-lettered %d messages (%d facts): the outage is not exercised", f.DeadLettered, f.DeadLetteredFacts)
	}
	if b.DeadLettered >= f.DeadLettered {
		t.Errorf("the backoff dead-lettered %d messages, the fixed visibility %d: want fewer", b.DeadLettered, f.DeadLettered)
	}
	if f.VisibilityChanges != 0 || b.VisibilityChanges == 0 {
		t.Errorf("%d visibility changes with the backoff off, %d with it: the adapter does not drive the queue", f.VisibilityChanges, b.VisibilityChanges)
	}
	if f.Attempts == 0 || b.Attempts == 0 {
		t.Errorf("%d and %d provider attempts during the outage", f.Attempts, b.Attempts)
	}
}
