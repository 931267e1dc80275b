package queue_test

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/internal/fakeclock"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/internal/queue"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/internal/queue/queuetest"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/sqsbatch"
)

// holdFact reserves the fact of order id for another worker until lease.
func holdFact(t *testing.T, f *queuetest.Fixture, id string, lease time.Time) {
	t.Helper()
	fact, err := f.Guard.Fact(id, []byte(`{"orderId":"`+id+`","amount":5}`))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	rec := idempotency.Record{Key: fact.Key, Status: idempotency.StatusInProgress, Owner: "other-worker", LeaseUntil: lease.Truncate(time.Millisecond),
		ExpiresAt: now.Add(time.Hour), TTL: now.Add(2 * time.Hour), PayloadHash: fact.Hash}
	if err := f.Store.MemoryStore.Reserve(context.Background(), rec, now); err != nil {
		t.Fatal(err)
	}
}

// TestUngroupedRecordsKeepTheirOrderOnTheBackoff: on a FIFO consumer, the
// records without a MessageGroupId (a standard queue's) are one ordering
// group: after one fails and is delayed by its backoff, or is found in
// progress and brought back at its lease's end, the records behind it are
// not started and come back with it, never before it; a record of a
// message group of its own is untouched.
func TestUngroupedRecordsKeepTheirOrderOnTheBackoff(t *testing.T) {
	setup := func(t *testing.T) (*queuetest.Fixture, *queuetest.Changes, sqsbatch.Config) {
		f := queuetest.NewFixture(t)
		ch := &queuetest.Changes{}
		cfg := f.Config(contract.Raw)
		cfg.Visibility, cfg.MaxReceiveCount, cfg.FIFO, cfg.Random = ch, 5, true, func() float64 { return 0.5 }
		return f, ch, cfg
	}
	check := func(t *testing.T, f *queuetest.Fixture, ch *queuetest.Changes, first, second, third events.SQSMessage, want time.Duration) {
		t.Helper()
		d1, d2, d3 := ch.Calls[first.ReceiptHandle], ch.Calls[second.ReceiptHandle], ch.Calls[third.ReceiptHandle]
		if d1 != want || d2 != d1 || d3 != d1 {
			t.Errorf("visibilities %v, %v, %v; want %v for all three: the records behind come back with the first, not after the queue's timeout", d1, d2, d3, want)
		}
		if f.EffectCount("o-2") != 0 || f.EffectCount("o-3") != 0 {
			t.Errorf("the records behind ran: o-2 %d, o-3 %d", f.EffectCount("o-2"), f.EffectCount("o-3"))
		}
		for _, m := range []events.SQSMessage{second, third} {
			if line := f.LogLine(t, m.MessageId); line["outcome"] != "not_started" {
				t.Errorf("%s: outcome %v, want not_started", m.MessageId, line["outcome"])
			}
		}
	}
	t.Run("backoff", func(t *testing.T) {
		f, ch, cfg := setup(t)
		clock := fakeclock.New()
		h := sqsbatch.New(f.Guard, queuetest.OrderKey, f.Effect, cfg)
		queue.SetClock((*queue.Handler[queuetest.Order])(h), clock.Now)
		first := queuetest.Received("o-1", 1, "")
		first.Body = `{"orderId":"o-1","amount":5,"mode":"fail"}`
		second, third := queuetest.Received("o-2", 1, ""), queuetest.Received("o-3", 1, "")
		grouped := queuetest.Received("o-4", 1, "g")
		if _, err := h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{first, second, grouped, third}}); err != nil {
			t.Fatal(err)
		}
		// receive 1: c = min(BackoffFIFOCap 15m, 10m) = 10m; 5m + 0.5 × 5m.
		check(t, f, ch, first, second, third, 7*time.Minute+30*time.Second)
		if _, changed := ch.Calls[grouped.ReceiptHandle]; changed || f.EffectCount("o-4") != 1 {
			t.Errorf("the record of group g was changed (%v) or did not run (%d)", changed, f.EffectCount("o-4"))
		}
	})
	t.Run("in progress", func(t *testing.T) {
		f, ch, cfg := setup(t)
		holdFact(t, f, "o-1", time.Now().Add(20*time.Second))
		h := sqsbatch.New(f.Guard, queuetest.OrderKey, f.Effect, cfg)
		queue.SetClock((*queue.Handler[queuetest.Order])(h), fakeclock.New().Now) // one instant for the whole batch
		first, second, third := queuetest.Received("o-1", 1, ""), queuetest.Received("o-2", 1, ""), queuetest.Received("o-3", 1, "")
		if _, err := h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{first, second, third}}); err != nil {
			t.Fatal(err)
		}
		d := ch.Calls[first.ReceiptHandle]
		if d < 21*time.Second || d > 23*time.Second {
			t.Fatalf("the first record: visibility %v, want the lease's end + margin", d)
		}
		check(t, f, ch, first, second, third, d)
	})
}
