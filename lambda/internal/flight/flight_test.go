package flight_test

import (
	"errors"
	"sync"
	"testing"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/internal/flight"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/outcome"
)

func TestAFactRunsOnceAndItsFollowersTakeItsAnswer(t *testing.T) {
	var s flight.Set
	prior, led := s.Join("ns#o-1", "h1", true)
	if prior != nil || led == nil {
		t.Fatalf("first record: prior %v, led %v; want to lead", prior, led)
	}
	var wg sync.WaitGroup
	answers := make([]idempotency.Result, 8)
	for i := range answers {
		p, l := s.Join("ns#o-1", "h1", true)
		if p == nil || l != nil {
			t.Fatalf("follower %d: prior %v, led %v; want to follow", i, p, l)
		}
		wg.Go(func() { answers[i], _ = p.Wait() })
	}
	led.Set(idempotency.Result{Outcome: outcome.Processed, Value: "ch_1"}, nil)
	led.Close()
	wg.Wait()
	for i, a := range answers {
		if a.Value != "ch_1" {
			t.Errorf("follower %d got %+v", i, a)
		}
	}
}

func TestAnotherPayloadOrARecordThatWillNotRunLeadsNothing(t *testing.T) {
	var s flight.Set
	_, led := s.Join("ns#o-1", "h1", true)
	if p, l := s.Join("ns#o-1", "h2", true); p != nil || l != nil {
		t.Errorf("another hash: prior %v, led %v; want neither (the guard judges it)", p, l)
	}
	if p, l := s.Join("ns#o-2", "h1", false); p != nil || l != nil {
		t.Errorf("a record that will not run: prior %v, led %v; want neither", p, l)
	}
	if _, l := s.Join("ns#o-2", "h1", true); l == nil {
		t.Error("the next record of o-2 that may run does not lead")
	}
	led.Close()
}

func TestAFlightClosedWithoutAnAnswerSaysSo(t *testing.T) {
	var s flight.Set
	_, led := s.Join("ns#o-1", "h1", true)
	prior, _ := s.Join("ns#o-1", "h1", true)
	led.Close() // the leader panicked before Set
	if _, err := prior.Wait(); err == nil || errors.Is(err, idempotency.ErrInProgress) {
		t.Errorf("err = %v, want the earlier record did not finish", err)
	}
}
