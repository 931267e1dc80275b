package sqsbatch_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/internal/queue/queuetest"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/sqsbatch"
)

// changes records the visibility changes the handler asks for.
type changes = queuetest.Changes

// holdFact reserves the fact of order id for another worker until lease.
func holdFact(t *testing.T, f *fixture, id string, lease time.Time) {
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

var received = queuetest.Received

// TestInProgressComesBackWhenTheLeaseEnds: a record found in progress is
// made visible again at the blocking lease's end plus InProgressMargin, only
// before its last two receives; the later records of its FIFO group follow
// it; a failed change leaves it to the queue's timeout, with a warning.
func TestInProgressComesBackWhenTheLeaseEnds(t *testing.T) {
	lease := time.Now().Add(20 * time.Second)
	want := func(d time.Duration) bool { // the lease's end + margin, rounded up to a second
		return d >= 21*time.Second && d <= 23*time.Second
	}
	for _, c := range []struct {
		name        string
		count, max  int
		fail        bool
		queue       time.Duration
		wantChanged bool
	}{
		{"first receive", 1, 5, false, 0, true},
		{"receive max-2", 3, 5, false, 0, true},
		{"receive max-1: today's timeout", 4, 5, false, 0, false},
		{"last receive", 5, 5, false, 0, false},
		{"maxReceiveCount unknown", 1, 0, false, 0, false},
		{"the call fails", 1, 5, true, 0, false},
		{"the queue's timeout is sooner", 1, 5, false, 20 * time.Second, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t)
			holdFact(t, f, "o-1", lease)
			ch := &changes{Fail: c.fail, Queue: c.queue}
			cfg := f.Config(contract.Raw)
			cfg.Visibility, cfg.MaxReceiveCount = ch, c.max
			h := sqsbatch.New(f.Guard, orderKey, f.Effect, cfg)
			m := received("o-1", c.count, "")
			resp, err := h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{m}})
			if err != nil || !failedIDs(resp)[m.MessageId] {
				t.Fatalf("Handle: %v, %+v", err, resp)
			}
			line := recordLine(t, f, m.MessageId)
			d, changed := ch.Calls[m.ReceiptHandle]
			switch {
			case line["outcome"] != "in_progress":
				t.Errorf("outcome %v", line["outcome"])
			case changed != c.wantChanged:
				t.Errorf("visibility changed: %v (%v), want %v", changed, d, c.wantChanged)
			case changed && (!want(d) || !strings.Contains(line["reason"].(string), "visible again in")):
				t.Errorf("visibility %v, reason %q; want the lease's end + margin", d, line["reason"])
			case c.fail && !strings.Contains(f.Logs.String(), `"msg":"visibility"`):
				t.Error("a failed change is not logged")
			}
		})
	}
	t.Run("FIFO group follows", func(t *testing.T) {
		f := newFixture(t)
		holdFact(t, f, "o-1", lease)
		ch := &changes{}
		cfg := f.Config(contract.Raw)
		cfg.Visibility, cfg.MaxReceiveCount, cfg.FIFO = ch, 5, true
		h := sqsbatch.New(f.Guard, orderKey, f.Effect, cfg)
		first, second, other := received("o-1", 1, "g"), received("o-2", 1, "g"), received("o-3", 1, "h")
		if _, err := h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{first, second, other}}); err != nil {
			t.Fatal(err)
		}
		if d1, d2 := ch.Calls[first.ReceiptHandle], ch.Calls[second.ReceiptHandle]; !want(d1) || d2 != d1 {
			t.Errorf("group g: %v then %v, want the same lease-bound timeout", d1, d2)
		}
		if _, changed := ch.Calls[other.ReceiptHandle]; changed || f.EffectCount("o-3") != 1 || f.EffectCount("o-2") != 0 {
			t.Errorf("the other group was changed (%v) or the effects ran wrong: o-2 %d, o-3 %d", changed, f.EffectCount("o-2"), f.EffectCount("o-3"))
		}
	})
}

// TestInProgressWaitsForALeaseThatEndsSoon: a lease that ends well before
// the invocation's deadline is waited for in the invocation; the record then
// runs (here a takeover of the lapsed reservation) instead of coming back.
func TestInProgressWaitsForALeaseThatEndsSoon(t *testing.T) {
	f := newFixture(t)
	holdFact(t, f, "o-1", time.Now().Add(50*time.Millisecond))
	ch := &changes{}
	cfg := f.Config(contract.Raw)
	cfg.Visibility, cfg.MaxReceiveCount = ch, 5
	h := sqsbatch.New(f.Guard, orderKey, f.Effect, cfg)
	m := received("o-1", 1, "")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	resp, err := h.Handle(ctx, events.SQSEvent{Records: []events.SQSMessage{m}})
	if err != nil || len(resp.BatchItemFailures) != 0 || f.EffectCount("o-1") != 1 || len(ch.Calls) != 0 {
		t.Errorf("Handle: %v, failures %v, effects %d, visibility changes %v; want processed after the wait", err, resp.BatchItemFailures, f.EffectCount("o-1"), ch.Calls)
	}
	// No time to wait before the deadline: it comes back instead.
	f = newFixture(t)
	holdFact(t, f, "o-1", time.Now().Add(50*time.Millisecond))
	ch = &changes{}
	cfg = f.Config(contract.Raw)
	cfg.Visibility, cfg.MaxReceiveCount = ch, 5
	h = sqsbatch.New(f.Guard, orderKey, f.Effect, cfg)
	ctx, cancel = context.WithTimeout(context.Background(), 4*time.Second)
	defer cancel()
	if _, err := h.Handle(ctx, events.SQSEvent{Records: []events.SQSMessage{m}}); err != nil {
		t.Fatal(err)
	}
	if d, ok := ch.Calls[m.ReceiptHandle]; !ok || d > 3*time.Second || f.EffectCount("o-1") != 0 {
		t.Errorf("visibility %v (%v), effects %d; want it back at the lease's end, not run", d, ok, f.EffectCount("o-1"))
	}
}

// recordLine is the record line of a message id.
func recordLine(t *testing.T, f *fixture, id string) map[string]any {
	t.Helper()
	f.Mu.Lock()
	defer f.Mu.Unlock()
	for _, l := range strings.Split(strings.TrimSpace(f.Logs.String()), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) == nil && m["msg"] == "record" && m["message_id"] == id {
			return m
		}
	}
	t.Fatalf("no record line for %s in:\n%s", id, f.Logs.String())
	return nil
}
