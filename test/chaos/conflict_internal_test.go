package chaos

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/idempotent-consumer/idempotent-consumer/internal/limits"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/dynamostore"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/test/internal/kumotest"
)

// racingSim is a two-Region simulation reduced to one invocation of
// us-east-2 whose every write of "charge#o-1" races us-east-1's write of it
// at the start (a race window of an hour), and runs call as the
// invocation's only task. It returns the invocation and the virtual time
// the call took.
func racingSim(t *testing.T, call func(s *sim, inv *invocation) error) (*invocation, time.Duration, error) {
	t.Helper()
	cfg := Config{Seed: 1, Regions: true, RaceWindow: time.Hour}
	s := &sim{cfg: cfg, scale: 1, rng: rand.New(rand.NewPCG(1, 2)), clock: &clock{now: epoch}, stats: newSummary(cfg),
		lastWrites: map[string]lastWrite{"charge#o-1": {region: 0, at: epoch}}}
	s.sched = newScheduler(s.clock, time.Minute)
	r := &region{index: 1, name: "us-east-2"}
	inv := &invocation{w: &worker{sim: s, c: &consumer{region: r}}, deadline: epoch.Add(time.Hour)}
	var err error
	s.sched.spawn("us-east-2-worker", epoch, func(tk *task) {
		inv.w.t = tk
		err = call(s, inv)
	})
	if rerr := s.sched.run(context.Background(), epoch.Add(limit)); rerr != nil {
		t.Fatal(rerr)
	}
	return inv, s.clock.Now().Sub(epoch), err
}

// TestModelledConflictRetryIsTheStores: on the memory store the simulation
// models dynamostore's retry of ReplicatedWriteConflictException with the
// store's own figures: a write that races on every attempt is sent
// limits.ConflictAttempts times, its waits add up to no more than the caps
// of limits.ConflictWaitCap, no wait passes the write's budget, and the
// error wraps dynamostore.ErrReplicatedConflict, as the store's does. (The
// model's first policy, three sends and no budget, contradicted the
// store's.)
func TestModelledConflictRetryIsTheStores(t *testing.T) {
	var caps time.Duration
	for attempt := 1; attempt < limits.ConflictAttempts; attempt++ {
		caps += limits.ConflictWaitCap(attempt)
	}
	for _, c := range []struct {
		name   string
		budget time.Duration // 0: none
	}{{"to the last attempt", 0}, {"to the budget", 20 * time.Millisecond}} {
		t.Run(c.name, func(t *testing.T) {
			inv, took, err := racingSim(t, func(s *sim, inv *invocation) error {
				var budget time.Time
				if c.budget > 0 {
					budget = s.clock.Now().Add(c.budget)
				}
				return s.modelConflicts(inv, inv.w.c.region, "reserve", "charge#o-1", budget)
			})
			if !errors.Is(err, dynamostore.ErrReplicatedConflict) {
				t.Fatalf("err %v, want one wrapping dynamostore.ErrReplicatedConflict", err)
			}
			if took > caps {
				t.Errorf("the waits took %s, more than their caps add up to (%s)", took, caps)
			}
			switch {
			case c.budget == 0 && inv.conflicts != limits.ConflictAttempts:
				t.Errorf("%d attempts, want the store's %d", inv.conflicts, limits.ConflictAttempts)
			case c.budget > 0 && (took >= c.budget || inv.conflicts >= limits.ConflictAttempts):
				t.Errorf("%d attempts in %s; want fewer than %d, within the budget of %s", inv.conflicts, took, limits.ConflictAttempts, c.budget)
			}
		})
	}
}

// TestConflictTransportDrivesTheStoresRetry: on dynamostore the conflict is
// the DynamoDB client's HTTP answer (conflictTransport), so the retry is
// dynamostore's own: a reserve that races on every attempt is answered
// limits.ConflictAttempts times with ReplicatedWriteConflictException, as
// the SDK decodes it, and ends in an error wrapping
// dynamostore.ErrReplicatedConflict; none of its requests reached the
// table, and the store's waits passed on the virtual clock.
func TestConflictTransportDrivesTheStoresRetry(t *testing.T) {
	ddb, stop := kumotest.StartDynamoDB(false)
	defer stop()
	table, err := kumotest.NewTable(context.Background(), ddb, "conflict")
	if err != nil {
		t.Fatal(err)
	}
	var store *dynamostore.Store
	inv, took, err := racingSim(t, func(s *sim, inv *invocation) error {
		store = dynamostore.New(s.conflictClient(ddb), table)
		ctx := context.WithValue(context.Background(), invKey{}, inv)
		rec := idempotency.Record{Key: "charge#o-1", Status: idempotency.StatusInProgress, Owner: "owner-1", PayloadHash: "h",
			LeaseUntil: epoch.Add(time.Minute), ExpiresAt: epoch.Add(time.Hour), TTL: epoch.Add(2 * time.Hour)}
		return store.Reserve(ctx, rec, epoch)
	})
	var rc *types.ReplicatedWriteConflictException
	if !errors.Is(err, dynamostore.ErrReplicatedConflict) || !errors.As(err, &rc) {
		t.Fatalf("err %v, want dynamostore's, wrapping ErrReplicatedConflict and the SDK's ReplicatedWriteConflictException", err)
	}
	if inv.conflicts != limits.ConflictAttempts {
		t.Errorf("%d attempts answered with the conflict, want the store's %d", inv.conflicts, limits.ConflictAttempts)
	}
	if took == 0 {
		t.Errorf("the store's waits took no virtual time")
	}
	if rec, err := store.Get(context.Background(), "charge#o-1"); err != nil || rec != nil {
		t.Errorf("the table holds %+v (%v), want nothing: every attempt was rejected", rec, err)
	}
}
