package idempotency_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency/storetest"
)

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
	var ip *idempotency.InProgressError
	if !errors.Is(err, idempotency.ErrInProgress) || !errors.As(err, &ip) {
		t.Fatalf("err = %v, want an *InProgressError", err)
	}
	if want := now.Add(time.Minute); !ip.LeaseUntil.Equal(want) {
		t.Errorf("LeaseUntil = %v, want %v", ip.LeaseUntil, want)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
