package sqsbatch_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/internal/fakeclock"
	"github.com/idempotent-consumer/idempotent-consumer/internal/limits"
	"github.com/idempotent-consumer/idempotent-consumer/internal/testkit/storespy"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency/storetest"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/internal/queue/queuetest"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/sqsbatch"
)

const testWindow = queuetest.Window

var newClockFixture = queuetest.NewClockFixture

// TestAge: a record is judged by the age of its message, from the SNS
// envelope's Timestamp, else the SQS SentTimestamp, on the guard's clock.
// At Window less ClockSkewMargin it is expired: never run, no store call,
// reported failed, counted, logged at ERROR with the fix. A record without a
// readable origin time runs, with a warning.
func TestAge(t *testing.T) {
	limit := testWindow - limits.ClockSkewMargin
	for _, c := range []struct {
		name     string
		delivery contract.Delivery
		age      time.Duration // of both the envelope's Timestamp and the SentTimestamp
		edit     func(rec *events.SQSMessage, now time.Time)
		outcome  string
		level    string
		warning  string
	}{
		{name: "raw, just younger than the limit", delivery: contract.Raw, age: limit - time.Millisecond, outcome: "processed", level: "INFO"},
		{name: "raw, at the limit", delivery: contract.Raw, age: limit, outcome: "expired", level: "ERROR"},
		{name: "envelope, just younger than the limit", delivery: contract.Envelope, age: limit - time.Millisecond, outcome: "processed", level: "INFO"},
		{name: "envelope, at the limit", delivery: contract.Envelope, age: limit, outcome: "expired", level: "ERROR"},
		{name: "envelope published long ago, redriven: a fresh SentTimestamp", delivery: contract.Envelope, age: 2 * testWindow, outcome: "expired", level: "ERROR",
			edit: func(rec *events.SQSMessage, now time.Time) { rec.Attributes["SentTimestamp"] = millis(now) }},
		{name: "envelope whose Timestamp does not parse: the SentTimestamp decides", delivery: contract.Envelope, age: 2 * testWindow, outcome: "expired", level: "ERROR",
			edit: func(rec *events.SQSMessage, now time.Time) {
				rec.Body = strings.Replace(rec.Body, `"Timestamp":"`, `"Timestamp":"yesterday`, 1)
			}},
		{name: "raw, sent in the future (clock skew)", delivery: contract.Raw, age: -time.Minute, outcome: "processed", level: "INFO"},
		{name: "envelope whose Timestamp is in the future: the SentTimestamp decides", delivery: contract.Envelope, age: 2 * testWindow, outcome: "expired", level: "ERROR",
			edit: func(rec *events.SQSMessage, now time.Time) {
				i := strings.Index(rec.Body, `"Timestamp":"`) + len(`"Timestamp":"`)
				j := i + strings.Index(rec.Body[i:], `"`)
				rec.Body = rec.Body[:i] + "2099-01-01T00:00:00.000Z" + rec.Body[j:]
			}},
		{name: "no SentTimestamp", delivery: contract.Raw, age: 2 * testWindow, outcome: "processed", level: "WARN", warning: "no origin time",
			edit: func(rec *events.SQSMessage, now time.Time) { delete(rec.Attributes, "SentTimestamp") }},
		{name: "a SentTimestamp that is not a number", delivery: contract.Raw, outcome: "processed", level: "WARN", warning: "no origin time",
			edit: func(rec *events.SQSMessage, now time.Time) { rec.Attributes["SentTimestamp"] = "soon" }},
	} {
		t.Run(c.name, func(t *testing.T) {
			f, clk := newClockFixture(t)
			now := clk.Now()
			rec := messageAt(`{"orderId":"o1","amount":10}`, c.delivery, now.Add(-c.age))
			if c.edit != nil {
				c.edit(&rec, now)
			}
			neighbour := messageAt(`{"orderId":"fresh","amount":1}`, c.delivery, now)
			resp, err := sqsbatch.New(f.Guard, orderKey, f.Effect, f.Config(contract.Auto)).Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{rec, neighbour}})
			if err != nil {
				t.Fatal(err)
			}
			line := f.LogLine(t, rec.MessageId)
			if line["outcome"] != c.outcome || line["level"] != c.level {
				t.Fatalf("outcome %v at %v, want %s at %s: %v", line["outcome"], line["level"], c.outcome, c.level, line)
			}
			if w, _ := line["warning"].(string); !strings.Contains(w, c.warning) || (c.warning == "") != (w == "") {
				t.Errorf("warning %q, want %q", w, c.warning)
			}
			failed := failedIDs(resp)
			if f.EffectCount("fresh") != 1 || failed[neighbour.MessageId] {
				t.Fatal("the neighbour must be processed")
			}
			if c.outcome != "expired" {
				if f.EffectCount("o1") != 1 || len(failed) != 0 {
					t.Fatalf("effects %d, failures %v: want it processed", f.EffectCount("o1"), failed)
				}
				return
			}
			if f.EffectCount("o1") != 0 || !failed[rec.MessageId] || len(failed) != 1 || f.Store.Requests() != 2 {
				t.Fatalf("effects %d, failures %v, store calls %d: want no effect, the record failed, only the neighbour's 2 calls", f.EffectCount("o1"), failed, f.Store.Requests())
			}
			if f.Metric(t, "Expired") != 1 {
				t.Errorf("Expired = %v, want 1", f.Metric(t, "Expired"))
			}
			reason, _ := line["reason"].(string)
			for _, want := range []string{"expired: the message was sent ", " ago (", "business window is 10m0s (less 1s", "its origin time is the S", "Fix: a Window longer than", "dead-letter queue"} {
				if !strings.Contains(reason, want) {
					t.Errorf("reason %q does not say %q", reason, want)
				}
			}
		})
	}
}

func millis(t time.Time) string { return messageAt("{}", contract.Raw, t).Attributes["SentTimestamp"] }

// TestRedeliveryAfterTheWindow is issue 19's first defect: a batch whose
// invocation failed as a whole after a record completed comes back after the
// visibility timeout, which may be longer than the window. The record that
// completed must not run again: within the window it is a duplicate, after
// it expired. (Before the age check, the late redelivery was processed and
// the effect ran twice.)
func TestRedeliveryAfterTheWindow(t *testing.T) {
	for _, d := range []contract.Delivery{contract.Raw, contract.Envelope} {
		t.Run(string(d), func(t *testing.T) {
			f, clk := newClockFixture(t)
			h := sqsbatch.New(f.Guard, orderKey, f.Effect, f.Config(contract.Auto))
			rec := messageAt(`{"orderId":"o1","amount":10}`, d, clk.Now())
			batch := events.SQSEvent{Records: []events.SQSMessage{rec}}
			clk.Advance(time.Second)
			if _, err := h.Handle(context.Background(), batch); err != nil || f.EffectCount("o1") != 1 {
				t.Fatalf("first delivery: %v, %d effects", err, f.EffectCount("o1"))
			}
			// Within the window the record holds: a duplicate.
			clk.Advance(testWindow - 3*time.Second)
			f.Logs.Reset()
			if _, err := h.Handle(context.Background(), batch); err != nil || f.LogLine(t, rec.MessageId)["outcome"] != "duplicate" {
				t.Fatalf("redelivery within the window: %v, %v", err, f.LogLine(t, rec.MessageId))
			}
			// After the visibility timeout (6 × a 5 minute function timeout),
			// the record left its window long ago.
			clk.Advance(30 * time.Minute)
			f.Logs.Reset()
			resp, err := h.Handle(context.Background(), batch)
			if err != nil || f.EffectCount("o1") != 1 || len(resp.BatchItemFailures) != 1 {
				t.Fatalf("redelivery after the window: %v, %d effects, failures %v; want 1 effect and the record failed", err, f.EffectCount("o1"), resp.BatchItemFailures)
			}
			if got := f.LogLine(t, rec.MessageId)["outcome"]; got != "expired" {
				t.Fatalf("outcome %v, want expired", got)
			}
		})
	}
}

// TestExpiredInABatchWithItsFact: the age of a record whose fact an earlier
// record of the batch just completed does not matter (it is a duplicate of
// that fresh record); an expired record does not stop a younger record of
// its fact from running.
func TestExpiredInABatchWithItsFact(t *testing.T) {
	f, clk := newClockFixture(t)
	cfg := f.Config(contract.Auto)
	cfg.Concurrency = 1 // batch order decides which record is the earlier
	h := sqsbatch.New(f.Guard, orderKey, f.Effect, cfg)
	body := `{"orderId":"o1","amount":10}`
	old := messageAt(body, contract.Raw, clk.Now().Add(-time.Hour))
	fresh := messageAt(body, contract.Raw, clk.Now())
	resp, err := h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{old, fresh}})
	if err != nil || f.EffectCount("o1") != 1 {
		t.Fatalf("%v, %d effects", err, f.EffectCount("o1"))
	}
	if failed := failedIDs(resp); len(failed) != 1 || !failed[old.MessageId] || f.LogLine(t, fresh.MessageId)["outcome"] != "processed" {
		t.Fatalf("failures %v, fresh %v: want the old record expired, the fresh one processed", failed, f.LogLine(t, fresh.MessageId))
	}
	old2 := messageAt(body, contract.Raw, clk.Now().Add(-time.Hour))
	fresh2 := messageAt(`{"orderId":"o2","amount":10}`, contract.Raw, clk.Now())
	old3 := messageAt(`{"orderId":"o2","amount":10}`, contract.Raw, clk.Now().Add(-time.Hour))
	resp, err = h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{old2, fresh2, old3}})
	if err != nil {
		t.Fatal(err)
	}
	if failed := failedIDs(resp); len(failed) != 1 || !failed[old2.MessageId] || f.LogLine(t, old3.MessageId)["outcome"] != "duplicate" || f.EffectCount("o2") != 1 {
		t.Fatalf("failures %v, old3 %v: want old2 expired (o1's record is in the store, but the adapter does not look), old3 a duplicate of fresh2", failed, f.LogLine(t, old3.MessageId))
	}
}

// slowReadStore answers failed conditions without the old record, as kumo
// and dynalite do, and its reads take long: the clock moves on by slow
// during each Get.
type slowReadStore struct {
	*queuetest.CountingStore
	clk  *fakeclock.Clock
	slow time.Duration
}

func (s *slowReadStore) Get(ctx context.Context, k string) (*idempotency.Record, error) {
	s.clk.Advance(s.slow)
	return s.CountingStore.Get(ctx, k)
}

// TestExpiredWhileInTheStore: a record young enough when it starts can age
// past the window in the store's calls; the guard checks the age again
// before every write that would take the key. Here the redelivery's reserve
// fails on the fact's completed record, and the read that follows takes long
// enough for that record to leave its window: the guard's retry must not
// take the key (before, it did, and the effect ran twice).
func TestExpiredWhileInTheStore(t *testing.T) {
	for _, tx := range []bool{false, true} {
		t.Run(map[bool]string{false: "Run", true: "RunTx"}[tx], func(t *testing.T) {
			clk := fakeclock.New()
			f := &fixture{Store: newCountingStore()}
			f.Store.MemoryStore.OmitOld = true
			store := &slowReadStore{CountingStore: f.Store, clk: clk}
			g, err := idempotency.NewGuard(store, idempotency.Config{Namespace: "charge", Window: testWindow, LeaseMax: time.Minute, Now: clk.Now})
			if err != nil {
				t.Fatal(err)
			}
			f.Guard = g
			var h *sqsbatch.Handler[order]
			if tx {
				h = sqsbatch.NewTx(g, orderKey, func(ctx context.Context, o order, r idempotency.Reservation) (storetest.MemoryWrites, string, error) {
					return func() error { _, _ = f.Effect(ctx, o, r); return nil }, "ok", nil
				}, f.Config(contract.Raw))
			} else {
				h = sqsbatch.New(g, orderKey, f.Effect, f.Config(contract.Raw))
			}
			rec := messageAt(`{"orderId":"o1","amount":1}`, contract.Raw, clk.Now())
			batch := events.SQSEvent{Records: []events.SQSMessage{rec}}
			clk.Advance(time.Second)
			if _, err := h.Handle(context.Background(), batch); err != nil || f.EffectCount("o1") != 1 {
				t.Fatalf("first delivery: %v, %d effects", err, f.EffectCount("o1"))
			}
			// The redelivery starts 2s before the limit; its read takes 5s.
			clk.Advance(testWindow - limits.ClockSkewMargin - 3*time.Second)
			store.slow = 5 * time.Second
			f.Logs.Reset()
			resp, err := h.Handle(context.Background(), batch)
			if err != nil || f.EffectCount("o1") != 1 || len(resp.BatchItemFailures) != 1 {
				t.Fatalf("%v, %d effects, failures %v: want the effect once and the record failed\n%s", err, f.EffectCount("o1"), resp.BatchItemFailures, f.Logs.String())
			}
			line := f.LogLine(t, rec.MessageId)
			if reason, _ := line["reason"].(string); line["outcome"] != "expired" || !strings.Contains(reason, "Fix: a Window longer") {
				t.Fatalf("line %v, want expired with the fix", line)
			}
		})
	}
}

// TestExpiredDuringATransactionalEffect: a transactional effect computes its
// writes before the commit that takes the key; when the record has aged past
// the window by then, nothing is committed (a transactional effect has no
// effect of its own), and the record is expired.
func TestExpiredDuringATransactionalEffect(t *testing.T) {
	f, clk := newClockFixture(t)
	h := sqsbatch.NewTx(f.Guard, orderKey, func(ctx context.Context, o order, r idempotency.Reservation) (storetest.MemoryWrites, string, error) {
		clk.Advance(5 * time.Second) // a slow effect
		return func() error { _, _ = f.Effect(ctx, o, r); return nil }, "ok", nil
	}, f.Config(contract.Raw))
	rec := messageAt(`{"orderId":"o1","amount":1}`, contract.Raw, clk.Now().Add(-(testWindow - limits.ClockSkewMargin - 2*time.Second)))
	resp, err := h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{rec}})
	if err != nil || f.EffectCount("o1") != 0 || len(resp.BatchItemFailures) != 1 || f.Store.Calls(storespy.OpCommit) != 0 {
		t.Fatalf("%v, %d effects, failures %v, %d commits: want nothing committed and the record failed", err, f.EffectCount("o1"), resp.BatchItemFailures, f.Store.Calls(storespy.OpCommit))
	}
	if got := f.LogLine(t, rec.MessageId)["outcome"]; got != "expired" {
		t.Fatalf("outcome %v, want expired", got)
	}
}
