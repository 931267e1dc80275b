package sqsbatch_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/internal/limits"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/sqsbatch"
)

// TestSameFactTwiceWithADroppedResult: a fact whose result is too large to
// store is processed once, with a warning, and the same fact later in the
// batch is its duplicate, counted as one.
func TestSameFactTwiceWithADroppedResult(t *testing.T) {
	f := newFixture(t)
	cfg := f.Config(contract.Raw)
	cfg.Concurrency = 1
	big := strings.Repeat("r", limits.DefaultMaxResultBytes+1)
	h := sqsbatch.New(f.Guard, orderKey, func(context.Context, order, idempotency.Reservation) (string, error) { return big, nil }, cfg)
	a, b := message(`{"orderId":"o-1","amount":5}`, contract.Raw), message(`{"orderId":"o-1","amount":5}`, contract.Raw)
	resp, err := h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{a, b}})
	if err != nil || len(resp.BatchItemFailures) > 0 {
		t.Fatalf("%+v, %v", resp, err)
	}
	if first, second := f.LogLine(t, a.MessageId), f.LogLine(t, b.MessageId); first["outcome"] != "processed" || first["level"] != "WARN" || second["outcome"] != "duplicate" {
		t.Fatalf("lines %v and %v: want processed (WARN: the dropped result) and duplicate", first, second)
	}
	if p, d := f.Metric(t, "Processed"), f.Metric(t, "Duplicate"); p != 1 || d != 1 {
		t.Fatalf("Processed %v, Duplicate %v; want 1 and 1", p, d)
	}
}

// TestFactsSharedAcrossGroupsOnFewerWorkers: FIFO groups that carry the
// same facts in opposite orders, on fewer workers than groups, finish (no
// record waits on a fact whose leader has not started), and each fact's
// effect runs once: the rest are its duplicates.
func TestFactsSharedAcrossGroupsOnFewerWorkers(t *testing.T) {
	f := newFixture(t)
	cfg := f.Config(contract.Raw)
	cfg.Concurrency, cfg.FIFO = 2, true
	var mu sync.Mutex
	ran := map[string]int{}
	h := sqsbatch.New(f.Guard, orderKey, func(_ context.Context, o order, _ idempotency.Reservation) (string, error) {
		mu.Lock()
		defer mu.Unlock()
		ran[o.OrderID]++
		return "ok", nil
	}, cfg)
	var recs []events.SQSMessage
	for g := range 20 {
		for i := range 5 {
			id := i
			if g%2 == 1 {
				id = 4 - i // the odd groups carry the facts in the other order
			}
			m := message(fmt.Sprintf(`{"orderId":"o-%d","amount":5}`, id), contract.Raw)
			m.Attributes["MessageGroupId"] = fmt.Sprint("g-", g)
			recs = append(recs, m)
		}
	}
	resp, err := h.Handle(context.Background(), events.SQSEvent{Records: recs})
	if err != nil || len(resp.BatchItemFailures) > 0 {
		t.Fatalf("%+v, %v", resp, err)
	}
	for i := range 5 {
		if n := ran[fmt.Sprint("o-", i)]; n != 1 {
			t.Errorf("o-%d ran %d times, want once", i, n)
		}
	}
	if p, d := f.Metric(t, "Processed"), f.Metric(t, "Duplicate"); p != 5 || d != 95 {
		t.Fatalf("Processed %v, Duplicate %v; want 5 and 95", p, d)
	}
}
