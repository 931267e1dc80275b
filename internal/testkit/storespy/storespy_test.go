package storespy_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/idempotent-consumer/idempotent-consumer/internal/testkit/storespy"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency/storetest"
)

// TestCounterCountsAndFails: every request is counted by its kind, failed
// ones too, and a failing Counter keeps the request from the store.
func TestCounterCountsAndFails(t *testing.T) {
	ctx, now := context.Background(), time.Now()
	mem := storetest.NewMemoryStore()
	c := storespy.NewCounter(mem)
	rec := idempotency.Record{Key: "ns#k", Status: idempotency.StatusInProgress, Owner: "o",
		LeaseUntil: now.Add(time.Minute), ExpiresAt: now.Add(time.Hour), TTL: now.Add(2 * time.Hour), PayloadHash: "h"}
	if err := c.Reserve(ctx, rec, now); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Get(ctx, "ns#k"); err != nil {
		t.Fatal(err)
	}
	throttled := errors.New("throttled")
	c.Fail(throttled)
	if err := c.Release(ctx, "ns#k", "o"); !errors.Is(err, throttled) {
		t.Fatalf("Release while failing: %v, want %v", err, throttled)
	}
	if got, _ := mem.Get(ctx, "ns#k"); got == nil {
		t.Fatal("a failed Release reached the store: the record is gone")
	}
	c.Fail(nil)
	if err := c.Release(ctx, "ns#k", "o"); err != nil {
		t.Fatal(err)
	}
	if c.Requests() != 4 || c.Calls(storespy.OpReserve) != 1 || c.Calls(storespy.OpGet) != 1 || c.Calls(storespy.OpRelease) != 2 || c.Calls(storespy.OpCommit) != 0 {
		t.Fatalf("counts: %d requests, reserve %d get %d release %d commit %d; want 4, 1, 1, 2, 0",
			c.Requests(), c.Calls(storespy.OpReserve), c.Calls(storespy.OpGet), c.Calls(storespy.OpRelease), c.Calls(storespy.OpCommit))
	}
}
