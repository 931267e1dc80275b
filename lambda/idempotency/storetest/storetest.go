// Package storetest is what tests of the idempotency library and of its
// users need, kept out of the core package: MemoryStore, a store in process
// memory with DynamoDB's semantics; Counter, which counts the requests that
// reach a store; and Run, a conformance suite for idempotency.Store
// implementations (the guard's guarantees, checked through a real store),
// for the stores of this module and for a user's own.
//
// Run it from a store's tests with a Harness that makes fresh, empty stores
// (for a database-backed store: a new table on a server the test started).
package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idempotent-consumer/idempotent-consumer/internal/fakeclock"
	"github.com/idempotent-consumer/idempotent-consumer/internal/limits"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/outcome"
)

// Harness describes the store under test.
type Harness struct {
	// NewStore returns an empty store.
	NewStore func(t *testing.T) idempotency.Store
	// Credit returns the transactional writes that add amount to the
	// balance of wallet, in the store's writes type. Nil when the store is
	// not an idempotency.TxStore.
	Credit func(wallet string, amount int) any
	// Balance reads the balance of wallet (0 when it has none).
	Balance func(t *testing.T, wallet string) int
	// TakeoversUnreported is set for a store whose Reserve cannot tell what
	// its write replaced (it never calls idempotency.ReportReplaced): the
	// suite then checks only that no takeover is reported where there was
	// none.
	TakeoversUnreported bool
}

// Run runs the suite.
func Run(t *testing.T, h Harness) {
	t.Run("ConcurrentReserveOneWinner", func(t *testing.T) { concurrentReserve(t, h) })
	t.Run("LeaseTakeoverFencesStaleOwner", func(t *testing.T) { leaseTakeover(t, h) })
	t.Run("ReleaseThenRetry", func(t *testing.T) { releaseThenRetry(t, h) })
	t.Run("PayloadMismatch", func(t *testing.T) { payloadMismatch(t, h) })
	t.Run("LapsedReservationIsNotTakenByOtherContent", func(t *testing.T) { lapsedOtherContent(t, h) })
	t.Run("ExpiredRecordIsReusable", func(t *testing.T) { expiredReusable(t, h) })
	t.Run("NamespacesAreIsolated", func(t *testing.T) { namespaces(t, h) })
	t.Run("DuplicateGetsStoredResult", func(t *testing.T) { storedResult(t, h) })
	t.Run("ReplayIsKept", func(t *testing.T) { replayKept(t, h) })
	t.Run("LiveLeaseBlocksWhateverTheWindow", func(t *testing.T) { liveLease(t, h) })
	t.Run("WindowStartsAtCompletion", func(t *testing.T) { windowAtCompletion(t, h) })
	t.Run("RetriedWritesAreTheirOwn", func(t *testing.T) { retriedWrites(t, h) })
	t.Run("UnreadableRecordIsErrStore", func(t *testing.T) { unreadableRecord(t, h) })
	if h.Credit != nil {
		t.Run("TransactionalEffectExactlyOnce", func(t *testing.T) { transactional(t, h) })
	}
}

func newGuard(t *testing.T, s idempotency.Store, ns string, clock *fakeclock.Clock) *idempotency.Guard {
	t.Helper()
	g, err := idempotency.NewGuard(s, idempotency.Config{Namespace: ns, Window: time.Hour, LeaseMax: time.Minute, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

var payload = []byte(`{"orderId":"42","amount":5000}`)

// concurrentReserve: 64 goroutines deliver the same fact at once; exactly one
// runs the effect, the others see it in progress or completed.
func concurrentReserve(t *testing.T, h Harness) {
	s := h.NewStore(t)
	g := newGuard(t, s, "charge", fakeclock.New())
	const n = 64
	var effects, inProgress, duplicates atomic.Int32
	release := make(chan struct{})
	var started sync.WaitGroup
	started.Add(n)
	var done sync.WaitGroup
	for range n {
		done.Go(func() {
			started.Done()
			started.Wait() // all at once
			res, err := g.Do(context.Background(), "order-42", payload, func(ctx context.Context, r idempotency.Reservation) (string, error) {
				effects.Add(1)
				<-release // hold the reservation until every other caller has answered
				return "receipt-1", nil
			})
			switch {
			case errors.Is(err, idempotency.ErrInProgress):
				if inProgress.Add(1)+duplicates.Load() == n-1 {
					close(release)
				}
			case err != nil:
				t.Errorf("Do: %v", err)
			case res.Outcome == outcome.Duplicate:
				duplicates.Add(1)
			}
		})
	}
	done.Wait()
	if effects.Load() != 1 || inProgress.Load()+duplicates.Load() != n-1 {
		t.Fatalf("effects=%d in_progress=%d duplicates=%d, want 1 effect and %d others", effects.Load(), inProgress.Load(), duplicates.Load(), n-1)
	}
	res, err := g.Do(context.Background(), "order-42", payload, failIfRun(t))
	if err != nil || res.Outcome != outcome.Duplicate || res.Value != "receipt-1" {
		t.Fatalf("after: %+v, %v; want a duplicate with receipt-1", res, err)
	}
	noTakeover(t, "a duplicate", res)
	res, err = g.Do(context.Background(), "order-43", payload, okEffect)
	if err != nil || res.Outcome != outcome.Processed {
		t.Fatalf("a new fact: %+v, %v", res, err)
	}
	noTakeover(t, "a new fact", res)
}

// leaseTakeover: a worker's reservation is taken over once its deadline
// passed; the stale worker's complete and release are rejected and change
// nothing.
func leaseTakeover(t *testing.T, h Harness) {
	s := h.NewStore(t)
	clock := fakeclock.New()
	g := newGuard(t, s, "charge", clock)
	ctx := context.Background()
	// The stale worker: its invocation has 10s left.
	staleCtx, cancel := context.WithDeadline(ctx, clock.Now().Add(10*time.Second))
	defer cancel()
	staleIn, staleOut := make(chan struct{}), make(chan error, 1)
	go func() {
		_, err := g.Do(staleCtx, "order-7", payload, func(ctx context.Context, r idempotency.Reservation) (string, error) {
			if want := clock.Now().Add(10 * time.Second).Truncate(time.Millisecond); !r.LeaseUntil.Equal(want) {
				t.Errorf("lease until %v, want the deadline %v", r.LeaseUntil, want)
			}
			close(staleIn)
			<-ctx.Done() // the effect's context ends with the lease
			return "stale-receipt", nil
		})
		staleOut <- err
	}()
	<-staleIn
	if _, err := g.Do(ctx, "order-7", payload, failIfRun(t)); !errors.Is(err, idempotency.ErrInProgress) {
		t.Fatalf("during the lease: %v, want ErrInProgress", err)
	}
	clock.Advance(11 * time.Second)
	var newOwner string
	res, err := g.Do(ctx, "order-7", payload, func(ctx context.Context, r idempotency.Reservation) (string, error) {
		newOwner = r.Token
		// The stale worker wakes up now (its context deadline is real time, so
		// cancel it) and tries to complete: it must be refused.
		cancel()
		if err := <-staleOut; !errors.Is(err, idempotency.ErrLeaseLost) {
			t.Errorf("stale complete: %v, want ErrLeaseLost", err)
		}
		return "new-receipt", nil
	})
	if err != nil || res.Outcome != outcome.Processed {
		t.Fatalf("take-over: %+v, %v", res, err)
	}
	checkTakeover(t, h, "the take-over of a lease that ended", res, clock.Now().Add(-11*time.Second).Add(10*time.Second))
	rec, err := s.Get(ctx, "charge#order-7")
	if err != nil || rec == nil || rec.Owner != newOwner || rec.Status != idempotency.StatusCompleted || rec.Result != "new-receipt" {
		t.Fatalf("record after take-over: %+v, %v; want COMPLETED by the new owner with new-receipt", rec, err)
	}
	// A stale release changes nothing either.
	if err := s.Release(ctx, "charge#order-7", "stale-token"); !errors.Is(err, idempotency.ErrLeaseLost) {
		t.Fatalf("stale release: %v, want ErrLeaseLost", err)
	}
	if err := s.Complete(ctx, idempotency.Record{Key: "charge#order-7", Owner: "stale-token", Status: idempotency.StatusCompleted, Result: "x"}); !errors.Is(err, idempotency.ErrLeaseLost) {
		t.Fatalf("stale complete: %v, want ErrLeaseLost", err)
	}
	if after, _ := s.Get(ctx, "charge#order-7"); after == nil || *after != *rec {
		t.Fatalf("record changed by a stale worker: %+v, was %+v", after, rec)
	}
}

// releaseThenRetry: a failed effect releases its reservation; the retry runs
// the effect, which has then succeeded once in total.
func releaseThenRetry(t *testing.T, h Harness) {
	s := h.NewStore(t)
	g := newGuard(t, s, "charge", fakeclock.New())
	ctx := context.Background()
	var charged int
	boom := errors.New("payment API unavailable")
	_, err := g.Do(ctx, "order-9", payload, func(context.Context, idempotency.Reservation) (string, error) { return "", boom })
	if !errors.Is(err, idempotency.ErrEffect) || !errors.Is(err, boom) {
		t.Fatalf("failing effect: %v, want an ErrEffect wrapping it", err)
	}
	if rec, err := s.Get(ctx, "charge#order-9"); err != nil || rec != nil {
		t.Fatalf("after release: %+v, %v; want no record", rec, err)
	}
	if _, err := g.Do(ctx, "order-9", payload, func(context.Context, idempotency.Reservation) (string, error) { panic("bug") }); !errors.Is(err, idempotency.ErrEffectPanicked) {
		t.Fatalf("panicking effect: %v, want ErrEffectPanicked", err)
	}
	for range 2 {
		if _, err := g.Do(ctx, "order-9", payload, func(context.Context, idempotency.Reservation) (string, error) {
			charged++
			return "r", nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	if charged != 1 {
		t.Fatalf("effect succeeded %d times, want 1", charged)
	}
}

// payloadMismatch: the same key with different content never runs the
// effect, whether the first is completed or in progress.
func payloadMismatch(t *testing.T, h Harness) {
	s := h.NewStore(t)
	g := newGuard(t, s, "charge", fakeclock.New())
	ctx := context.Background()
	if _, err := g.Do(ctx, "order-1", payload, okEffect); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Do(ctx, "order-1", []byte(`{"orderId":"42","amount":9999}`), failIfRun(t)); !errors.Is(err, idempotency.ErrPayloadMismatch) {
		t.Fatalf("completed, other payload: %v, want ErrPayloadMismatch", err)
	}
	// Key order and whitespace do not matter: canonical JSON.
	if res, err := g.Do(ctx, "order-1", []byte(`{ "amount": 5000, "orderId": "42" }`), failIfRun(t)); err != nil || res.Outcome != outcome.Duplicate {
		t.Fatalf("same payload reordered: %+v, %v; want a duplicate", res, err)
	}
	_, err := g.Do(ctx, "order-2", payload, func(ctx context.Context, r idempotency.Reservation) (string, error) {
		_, err := g.Do(ctx, "order-2", []byte(`{"orderId":"2"}`), failIfRun(t))
		if !errors.Is(err, idempotency.ErrPayloadMismatch) {
			t.Errorf("in progress, other payload: %v, want ErrPayloadMismatch", err)
		}
		return "", nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// lapsedOtherContent: the reservation of a worker that crashed mid-effect
// is taken over, after its lease, by a redelivery of the same payload only;
// other content under the same key is a mismatch (the crashed effect may
// have reached a downstream API under that key).
func lapsedOtherContent(t *testing.T, h Harness) {
	s := h.NewStore(t)
	clock := fakeclock.New()
	g := newGuard(t, s, "charge", clock)
	ctx := context.Background()
	fact, err := g.Fact("order-8", payload)
	if err != nil {
		t.Fatal(err)
	}
	now := clock.Now()
	crashed := idempotency.Record{Key: fact.Key, Status: idempotency.StatusInProgress, Owner: "crashed-worker", LeaseUntil: now.Add(10 * time.Second),
		ExpiresAt: now.Add(time.Hour), TTL: now.Add(2 * time.Hour), PayloadHash: fact.Hash}
	if err := s.Reserve(ctx, crashed, now); err != nil {
		t.Fatal(err)
	}
	clock.Advance(11 * time.Second)
	if _, err := g.Do(ctx, "order-8", []byte(`{"orderId":"42","amount":1}`), failIfRun(t)); !errors.Is(err, idempotency.ErrPayloadMismatch) {
		t.Fatalf("other content after the lease: %v, want ErrPayloadMismatch", err)
	}
	if rec, err := s.Get(ctx, fact.Key); err != nil || rec == nil || rec.Owner != "crashed-worker" {
		t.Fatalf("record %+v, %v: other content must not take the reservation over", rec, err)
	}
	res, err := g.Do(ctx, "order-8", payload, okEffect)
	if err != nil || res.Outcome != outcome.Processed {
		t.Fatalf("redelivery of the same payload after the lease: %+v, %v; want it to take over", res, err)
	}
	checkTakeover(t, h, "the take-over of a crashed worker's reservation", res, now.Add(10*time.Second))
}

// checkTakeover checks that res reports the takeover of a lease that ended
// at lapsed (unless the store cannot tell).
func checkTakeover(t *testing.T, h Harness, what string, res idempotency.Result, lapsed time.Time) {
	t.Helper()
	if h.TakeoversUnreported {
		return
	}
	if !res.TookOver || !res.LapsedLease.Equal(lapsed.Truncate(time.Millisecond)) {
		t.Errorf("%s: TookOver %v, LapsedLease %v; want it reported, with the lease that ended at %v", what, res.TookOver, res.LapsedLease, lapsed)
	}
}

// noTakeover checks that res reports no takeover.
func noTakeover(t *testing.T, what string, res idempotency.Result) {
	t.Helper()
	if res.TookOver || !res.LapsedLease.IsZero() {
		t.Errorf("%s: TookOver %v, LapsedLease %v; there was no reservation to take over", what, res.TookOver, res.LapsedLease)
	}
}

// expiredReusable: a record past its business window but not yet deleted
// (TTL deletes days late) no longer suppresses the fact.
func expiredReusable(t *testing.T, h Harness) {
	s := h.NewStore(t)
	clock := fakeclock.New()
	g := newGuard(t, s, "charge", clock)
	ctx := context.Background()
	var runs int
	effect := func(context.Context, idempotency.Reservation) (string, error) { runs++; return "r", nil }
	if _, err := g.Do(ctx, "order-3", payload, effect); err != nil {
		t.Fatal(err)
	}
	clock.Advance(59 * time.Minute)
	if res, err := g.Do(ctx, "order-3", payload, effect); err != nil || res.Outcome != outcome.Duplicate {
		t.Fatalf("inside the window: %+v, %v", res, err)
	}
	clock.Advance(2 * time.Minute)
	if rec, _ := s.Get(ctx, "charge#order-3"); rec == nil {
		t.Fatal("the record should still be stored (TTL has not deleted it)")
	}
	other := []byte(`{"orderId":"42","amount":1}`) // a new fact may reuse the key, even with new content
	res, err := g.Do(ctx, "order-3", other, effect)
	if err != nil || res.Outcome != outcome.Processed {
		t.Fatalf("after the window: %+v, %v; want processed", res, err)
	}
	noTakeover(t, "a new fact over a COMPLETED record past its window", res)
	if runs != 2 {
		t.Fatalf("effect ran %d times, want 2", runs)
	}
}

// namespaces: two consumers sharing a table keep separate records.
func namespaces(t *testing.T, h Harness) {
	s := h.NewStore(t)
	clock := fakeclock.New()
	charge, receipt := newGuard(t, s, "charge", clock), newGuard(t, s, "receipt", clock)
	ctx := context.Background()
	for _, g := range []*idempotency.Guard{charge, receipt} {
		if res, err := g.Do(ctx, "order-5", payload, okEffect); err != nil || res.Outcome != outcome.Processed {
			t.Fatalf("%+v, %v: each namespace processes its own fact", res, err)
		}
	}
	for _, k := range []string{"charge#order-5", "receipt#order-5"} {
		if rec, err := s.Get(ctx, k); err != nil || rec == nil {
			t.Fatalf("record %s: %+v, %v", k, rec, err)
		}
	}
}

// storedResult: the result of the effect is returned to duplicates; a
// result over the limit is not stored, but the fact is processed and the
// effect is not repeated.
func storedResult(t *testing.T, h Harness) {
	s := h.NewStore(t)
	g := newGuard(t, s, "charge", fakeclock.New())
	ctx := context.Background()
	if _, err := g.Do(ctx, "order-6", payload, okEffect); err != nil {
		t.Fatal(err)
	}
	if res, err := g.Do(ctx, "order-6", payload, failIfRun(t)); err != nil || res.Value != "ok" {
		t.Fatalf("duplicate: %+v, %v; want the stored result", res, err)
	}
	big := make([]byte, limits.DefaultMaxResultBytes+1)
	for i := range big {
		big[i] = 'x'
	}
	res, err := g.Do(ctx, "order-big", payload, func(context.Context, idempotency.Reservation) (string, error) { return string(big), nil })
	if err != nil || res.Outcome != outcome.Processed || res.DroppedBytes != len(big) || res.Value != "" {
		t.Fatalf("large result: %+v, %v; want processed, with the result dropped", res, err)
	}
	if res, err := g.Do(ctx, "order-big", payload, failIfRun(t)); err != nil || res.Outcome != outcome.Duplicate || res.Value != "" {
		t.Fatalf("after a large result: %+v, %v; want a duplicate with no result (the effect is done)", res, err)
	}
}

// replayKept: an operator's replay (Fact.Replay) is stored with the
// record its reservation writes, and is still there once completed.
func replayKept(t *testing.T, h Harness) {
	s := h.NewStore(t)
	g := newGuard(t, s, "charge", fakeclock.New())
	ctx := context.Background()
	f, err := g.Fact("order-r", payload)
	if err != nil {
		t.Fatal(err)
	}
	f.Replay = `{"by":"arn:aws:iam::111122223333:user/ops","reason":"INC-1"}`
	if res, err := g.Run(ctx, f, okEffect); err != nil || res.Outcome != outcome.Processed {
		t.Fatalf("the replay: %+v, %v", res, err)
	}
	rec, err := s.Get(ctx, f.Key)
	if err != nil || rec == nil || rec.Replay != f.Replay || rec.Status != idempotency.StatusCompleted {
		t.Fatalf("the record: %+v, %v; want COMPLETED with the replay %s", rec, err, f.Replay)
	}
}

// liveLease: an IN_PROGRESS record under a live lease blocks every other
// reservation, even past the end of its business window (a record written
// with a window shorter than its lease).
func liveLease(t *testing.T, h Harness) {
	s := h.NewStore(t)
	clock := fakeclock.New()
	g := newGuard(t, s, "charge", clock)
	ctx := context.Background()
	fact, err := g.Fact("order-13", payload)
	if err != nil {
		t.Fatal(err)
	}
	start := clock.Now()
	running := idempotency.Record{Key: fact.Key, Status: idempotency.StatusInProgress, Owner: "running-worker", LeaseUntil: start.Add(15 * time.Minute),
		ExpiresAt: start.Add(5 * time.Minute), TTL: start.Add(time.Hour), PayloadHash: fact.Hash}
	if err := s.Reserve(ctx, running, start); err != nil {
		t.Fatal(err)
	}
	later := start.Add(6 * time.Minute)
	for _, hash := range []string{fact.Hash, "other-content"} {
		second := idempotency.Record{Key: fact.Key, Status: idempotency.StatusInProgress, Owner: "second-worker", LeaseUntil: later.Add(time.Minute),
			ExpiresAt: later.Add(time.Hour), TTL: later.Add(2 * time.Hour), PayloadHash: hash}
		if err := s.Reserve(ctx, second, later); !errors.Is(err, idempotency.ErrConditionFailed) {
			t.Fatalf("reserve 6m into a 5m window, under a 15m lease that has not ended: %v; want the live lease to block it", err)
		}
	}
	if rec, err := s.Get(ctx, fact.Key); err != nil || rec == nil || rec.Owner != "running-worker" {
		t.Fatalf("record %+v, %v: the running worker's reservation must stand", rec, err)
	}
}

// windowAtCompletion: the business window starts when the fact is
// completed, not when it was reserved, so that a long effect does not
// shorten it; the TTL moves with it.
func windowAtCompletion(t *testing.T, h Harness) {
	s := h.NewStore(t)
	clock := fakeclock.New()
	g := newGuard(t, s, "charge", clock) // Window 1h
	ctx := context.Background()
	if _, err := g.Do(ctx, "order-14", payload, func(context.Context, idempotency.Reservation) (string, error) {
		clock.Advance(50 * time.Second) // a long effect, within its 1m lease
		return "r", nil
	}); err != nil {
		t.Fatal(err)
	}
	completed := clock.Now()
	rec, err := s.Get(ctx, "charge#order-14")
	if err != nil || rec == nil {
		t.Fatalf("record %+v, %v", rec, err)
	}
	if want := completed.Add(time.Hour); !rec.ExpiresAt.Equal(want) || !rec.TTL.Equal(want.Add(limits.DefaultTTLAfterWindow)) {
		t.Fatalf("window ends %v, TTL %v; want %v (completion + window) and the TTL a day later", rec.ExpiresAt, rec.TTL, want)
	}
	clock.Advance(time.Hour - 20*time.Second) // 1h30s after the reservation, 40s before the window ends
	if res, err := g.Do(ctx, "order-14", payload, failIfRun(t)); err != nil || res.Outcome != outcome.Duplicate {
		t.Fatalf("inside the window counted from completion: %+v, %v; want a duplicate", res, err)
	}
}

// retriedWrites: every write is applied and then sent again, as the SDK's
// retryer does when a response is lost after the server applied the request.
// The retry of a reservation finds this reservation's own record and runs
// the effect; a retried complete succeeds; a retried release finds no record
// and is a release, not a lost lease; a retried commit is processed, not a
// duplicate.
func retriedWrites(t *testing.T, h Harness) {
	inner := h.NewStore(t)
	s := retriedStore(inner)
	g := newGuard(t, s, "charge", fakeclock.New())
	ctx := context.Background()
	runs := 0
	res, err := g.Do(ctx, "order-15", payload, func(context.Context, idempotency.Reservation) (string, error) { runs++; return "r", nil })
	if err != nil || res.Outcome != outcome.Processed || runs != 1 {
		t.Fatalf("reserve and complete each sent twice: %+v, %v, effect ran %d times; want processed once", res, err, runs)
	}
	if rec, err := inner.Get(ctx, "charge#order-15"); err != nil || rec == nil || rec.Status != idempotency.StatusCompleted {
		t.Fatalf("record %+v, %v; want COMPLETED", rec, err)
	}
	boom := errors.New("payment API unavailable")
	_, err = g.Do(ctx, "order-16", payload, func(context.Context, idempotency.Reservation) (string, error) { return "", boom })
	if !errors.Is(err, boom) || errors.Is(err, idempotency.ErrLeaseLost) {
		t.Fatalf("release sent twice: %v; want the effect's error alone, not a lost lease", err)
	}
	if rec, err := inner.Get(ctx, "charge#order-16"); err != nil || rec != nil {
		t.Fatalf("record %+v, %v; want it released", rec, err)
	}
	if h.Credit == nil {
		return
	}
	fact, err := g.Fact("order-17", payload)
	if err != nil {
		t.Fatal(err)
	}
	res, err = g.RunTx(ctx, fact, func(context.Context, idempotency.Reservation) (any, string, error) {
		return h.Credit("w-retried", 10), "credited", nil
	})
	if err != nil || res.Outcome != outcome.Processed || res.Value != "credited" {
		t.Fatalf("commit sent twice: %+v, %v; want processed", res, err)
	}
	if got := h.Balance(t, "w-retried"); got != 10 {
		t.Fatalf("balance %d, want 10: the credit exactly once", got)
	}
}

// retriedStore returns a store that applies every write of s and then sends it
// again, returning the second answer, as an SDK retryer does when the
// server applied a request whose response was lost. Reads pass through.
func retriedStore(s idempotency.Store) idempotency.Store {
	if txs, ok := s.(idempotency.TxStore); ok {
		return retriedTx{retried{txs}, txs}
	}
	return retried{s}
}

type retried struct{ idempotency.Store }

func (r retried) Reserve(ctx context.Context, rec idempotency.Record, now time.Time) error {
	if err := r.Store.Reserve(ctx, rec, now); err != nil {
		return err
	}
	return r.Store.Reserve(ctx, rec, now)
}

func (r retried) Complete(ctx context.Context, rec idempotency.Record) error {
	if err := r.Store.Complete(ctx, rec); err != nil {
		return err
	}
	return r.Store.Complete(ctx, rec)
}

func (r retried) Release(ctx context.Context, key, owner string) error {
	if err := r.Store.Release(ctx, key, owner); err != nil {
		return err
	}
	return r.Store.Release(ctx, key, owner)
}

type retriedTx struct {
	retried
	tx idempotency.TxStore
}

func (r retriedTx) AcceptsWrites(writes any) error { return r.tx.AcceptsWrites(writes) }

func (r retriedTx) Commit(ctx context.Context, rec idempotency.Record, now time.Time, writes any) error {
	if err := r.tx.Commit(ctx, rec, now, writes); err != nil {
		return err
	}
	return r.tx.Commit(ctx, rec, now, writes)
}

// transactional: concurrent duplicates of a credit apply it exactly once.
func transactional(t *testing.T, h Harness) {
	s := h.NewStore(t)
	g := newGuard(t, s, "wallet", fakeclock.New())
	ctx := context.Background()
	const deliveries, facts = 16, 4
	var wg sync.WaitGroup
	var processed atomic.Int32
	for f := range facts {
		for range deliveries {
			wg.Go(func() {
				p := fmt.Appendf(nil, `{"txId":"t%d","wallet":"w1","amount":10}`, f)
				fact, err := g.Fact(fmt.Sprintf("t%d", f), p)
				if err != nil {
					t.Error(err)
					return
				}
				res, err := g.RunTx(ctx, fact, func(context.Context, idempotency.Reservation) (any, string, error) {
					return h.Credit("w1", 10), "credited", nil
				})
				switch {
				case errors.Is(err, idempotency.ErrTxConflict):
					// Two transactions collided; SQS would redeliver. Counted below.
				case err != nil:
					t.Errorf("RunTx: %v", err)
				case res.Outcome == outcome.Processed:
					processed.Add(1)
				}
			})
		}
	}
	wg.Wait()
	// Redeliver each fact once more, as SQS would after any conflict.
	for f := range facts {
		p := fmt.Appendf(nil, `{"txId":"t%d","wallet":"w1","amount":10}`, f)
		fact, _ := g.Fact(fmt.Sprintf("t%d", f), p)
		res, err := g.RunTx(ctx, fact, func(context.Context, idempotency.Reservation) (any, string, error) {
			return h.Credit("w1", 10), "credited", nil
		})
		if err != nil {
			t.Fatalf("redelivery: %v", err)
		}
		if res.Outcome == outcome.Processed {
			processed.Add(1)
		}
	}
	if got := h.Balance(t, "w1"); got != 10*facts || processed.Load() != facts {
		t.Fatalf("balance %d after %d processed, want %d after %d: each credit exactly once", got, processed.Load(), 10*facts, facts)
	}
}

// unreadableRecord: a record of a status this release does not know (the
// peer's invalid-status case) is never overwritten nor misread: delivering
// its fact is an ErrStore wrapping ErrUnreadableRecord, whether the store
// returns the record with the failed condition or the guard reads it, and
// the effect does not run.
func unreadableRecord(t *testing.T, h Harness) {
	s := h.NewStore(t)
	clock := fakeclock.New()
	g := newGuard(t, s, "charge", clock)
	ctx := context.Background()
	fact, err := g.Fact("order-18", payload)
	if err != nil {
		t.Fatal(err)
	}
	now := clock.Now()
	odd := idempotency.Record{Key: fact.Key, Status: "EXPIRED", Owner: "another-library", ExpiresAt: now.Add(-time.Hour), TTL: now.Add(-time.Minute), PayloadHash: fact.Hash}
	if err := s.Reserve(ctx, odd, now); err != nil {
		t.Fatal(err)
	}
	check := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, idempotency.ErrStore) || !errors.Is(err, idempotency.ErrUnreadableRecord) {
			t.Errorf("%s over a record of status EXPIRED: %v; want an ErrStore wrapping ErrUnreadableRecord", what, err)
		}
	}
	_, err = g.Do(ctx, "order-18", payload, failIfRun(t))
	check("Do", err)
	if _, ok := s.(idempotency.TxStore); ok && h.Credit != nil {
		_, err = g.RunTx(ctx, fact, func(context.Context, idempotency.Reservation) (any, string, error) {
			return h.Credit("w-unreadable", 10), "credited", nil
		})
		check("RunTx", err)
		if got := h.Balance(t, "w-unreadable"); got != 0 {
			t.Errorf("balance %d, want nothing written", got)
		}
	}
}

func okEffect(context.Context, idempotency.Reservation) (string, error) { return "ok", nil }

func failIfRun(t *testing.T) idempotency.Effect {
	return func(context.Context, idempotency.Reservation) (string, error) {
		t.Error("the effect ran for a fact that must not run")
		return "", nil
	}
}
