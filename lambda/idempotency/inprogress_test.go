package idempotency_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency/storetest"
)

// TestInProgressSaysWhenTheLeaseEnds: a delivery blocked by a live lease
// learns when that lease ends (LeaseEnd), and still matches ErrInProgress.
func TestInProgressSaysWhenTheLeaseEnds(t *testing.T) {
	store := storetest.NewMemoryStore()
	g, err := idempotency.NewGuard(store, idempotency.Config{Namespace: "charge"})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second).Truncate(time.Millisecond)
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	started, release := make(chan struct{}), make(chan struct{})
	done := make(chan error)
	go func() {
		_, err := g.Do(ctx, "o-1", []byte(`{"id":"o-1"}`), func(context.Context, idempotency.Reservation) (string, error) {
			close(started)
			<-release
			return "", nil
		})
		done <- err
	}()
	<-started
	_, err = g.Do(context.Background(), "o-1", []byte(`{"id":"o-1"}`), func(context.Context, idempotency.Reservation) (string, error) {
		t.Error("the effect ran beside a live lease")
		return "", nil
	})
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	until, ok := idempotency.LeaseEnd(err)
	if !errors.Is(err, idempotency.ErrInProgress) || !ok || !until.Equal(deadline) {
		t.Errorf("blocked delivery: %v, lease end %v (%v); want ErrInProgress until %v", err, until, ok, deadline)
	}
	if _, ok := idempotency.LeaseEnd(errors.New("other")); ok {
		t.Error("LeaseEnd of another error")
	}
}

// A delivery that meets a live reservation learns when that reservation's
// lease ends, which an HTTP adapter turns into Retry-After.
func TestInProgressCarriesTheLease(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	g, err := idempotency.NewGuard(storetest.NewMemoryStore(), idempotency.Config{Namespace: "n", Now: func() time.Time { return now }, LeaseMax: time.Minute, Window: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if g.Window() != time.Hour {
		t.Fatalf("Window() = %v", g.Window())
	}
	entered, release := make(chan struct{}), make(chan struct{})
	done := make(chan error, 1)
	go func() {
		_, err := g.Do(context.Background(), "k", []byte(`{}`), func(context.Context, idempotency.Reservation) (string, error) {
			close(entered)
			<-release
			return "", nil
		})
		done <- err
	}()
	<-entered
	_, err = g.Do(context.Background(), "k", []byte(`{}`), func(context.Context, idempotency.Reservation) (string, error) {
		t.Error("the effect ran twice")
		return "", nil
	})
	until, ok := idempotency.LeaseEnd(err)
	if !errors.Is(err, idempotency.ErrInProgress) || !ok {
		t.Fatalf("err = %v, want an ErrInProgress that says when the lease ends", err)
	}
	if want := now.Add(time.Minute); !until.Equal(want) {
		t.Errorf("LeaseEnd = %v, want %v", until, want)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
