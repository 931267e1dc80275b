package sqsbatch_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/internal/limits"
	"github.com/idempotent-consumer/idempotent-consumer/internal/testkit/storespy"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency/storetest"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/sqsbatch"
)

// TestOutcomeTable runs every row of DESIGN.md's per-record outcome table,
// raw and in an SNS envelope, each beside a healthy record that must still
// succeed.
func TestOutcomeTable(t *testing.T) {
	type row struct {
		name    string
		prepare func(t *testing.T, f *fixture)
		body    string // the business message (wrapped in an envelope in that mode)
		rawBody string // or a body used as it is, in both modes
		outcome string
		calls   int // store calls for this record
		reason  string
		id      string        // the order id, when the record has one
		effects int           // times the effect ran for that order
		age     time.Duration // how long ago the message was published and sent
	}
	complete := func(id string, body string) func(t *testing.T, f *fixture) {
		return func(t *testing.T, f *fixture) {
			if _, err := f.Guard.Do(context.Background(), id, []byte(body), func(context.Context, idempotency.Reservation) (string, error) { return "receipt-" + id, nil }); err != nil {
				t.Fatal(err)
			}
		}
	}
	rows := []row{
		{name: "new", id: "new", body: `{"orderId":"new","amount":10}`, outcome: "processed", calls: 2, effects: 1},
		{name: "duplicate of a completed fact", id: "dup", prepare: complete("dup", `{"orderId":"dup","amount":10}`), body: `{"amount":10,"orderId":"dup"}`, outcome: "duplicate", calls: 1},
		{name: "in progress elsewhere", id: "busy", prepare: func(t *testing.T, f *fixture) {
			fact, _ := f.Guard.Fact("busy", []byte(`{"orderId":"busy","amount":10}`))
			now := time.Now()
			if err := f.Store.MemoryStore.Reserve(context.Background(), idempotency.Record{Key: fact.Key, Status: idempotency.StatusInProgress, Owner: "other-worker", LeaseUntil: now.Add(time.Minute), ExpiresAt: now.Add(time.Hour), PayloadHash: fact.Hash}, now); err != nil {
				t.Fatal(err)
			}
		}, body: `{"orderId":"busy","amount":10}`, outcome: "in_progress", calls: 1, reason: "in progress elsewhere"},
		{name: "effect failed", id: "declined", body: `{"orderId":"declined","amount":10,"mode":"fail"}`, outcome: "failed", calls: 2, reason: "payment declined"},
		{name: "effect panicked", id: "buggy", body: `{"orderId":"buggy","amount":10,"mode":"panic"}`, outcome: "failed", calls: 2, reason: "effect panicked"},
		{name: "not JSON", body: `{"orderId":"x", amount}`, outcome: "bad_input", reason: "not JSON"},
		{name: "wrong shape", body: `{"orderId":42}`, outcome: "bad_input", reason: "decode message"},
		{name: "no key", body: `{"amount":10}`, outcome: "bad_input", reason: "empty"},
		{name: "key with control characters", body: `{"orderId":"a\u0000b"}`, outcome: "bad_input", reason: "control characters"},
		{name: "too large", body: `{"orderId":"big","pad":"` + strings.Repeat("x", contract.DefaultMaxMessageBytes) + `"}`, outcome: "bad_input", reason: "more than"},
		{name: "invalid SNS envelope", rawBody: `{"Type":"Notification","TopicArn":"arn:aws:sns:us-east-1:1:orders","Message":{"orderId":"e"}}`, outcome: "bad_input", reason: "Message is not a string"},
		{name: "SNS envelope without Message", rawBody: `{"Type":"Notification","TopicArn":"arn:aws:sns:us-east-1:1:orders"}`, outcome: "bad_input", reason: "no Message"},
		{name: "older than the window", id: "late", body: `{"orderId":"late","amount":10}`, age: limits.DefaultWindow, outcome: "expired", reason: "Fix: a Window longer than"},
		{name: "payload mismatch", id: "reused", prepare: complete("reused", `{"orderId":"reused","amount":10}`), body: `{"orderId":"reused","amount":99}`, outcome: "mismatch", calls: 1, reason: "payload mismatch"},
	}
	for _, d := range []contract.Delivery{contract.Raw, contract.Envelope} {
		for _, r := range rows {
			t.Run(string(d)+"/"+r.name, func(t *testing.T) {
				f := newFixture(t)
				if r.prepare != nil {
					r.prepare(t, f)
				}
				before := f.Store.Requests()
				rec := messageAt(r.body, d, time.Now().Add(-r.age))
				if r.rawBody != "" {
					rec.Body = r.rawBody
				}
				neighbour := message(`{"orderId":"neighbour","amount":1}`, d)
				h := sqsbatch.New(f.Guard, orderKey, f.Effect, f.Config(contract.Auto))
				resp, err := h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{rec, neighbour}})
				if err != nil {
					t.Fatalf("Handle: %v", err)
				}
				failed := failedIDs(resp)
				wantFailed := r.outcome != "processed" && r.outcome != "duplicate"
				if failed[rec.MessageId] != wantFailed || failed[neighbour.MessageId] || len(failed) != map[bool]int{true: 1}[wantFailed] {
					t.Fatalf("failures %v: record failed=%v, want %v; the neighbour must succeed", failed, failed[rec.MessageId], wantFailed)
				}
				if got := f.Store.Requests() - before - 2; got != r.calls {
					t.Errorf("store calls for the record: %d, want %d", got, r.calls)
				}
				line := f.LogLine(t, rec.MessageId)
				if line["outcome"] != r.outcome {
					t.Errorf("outcome %v, want %s (line %v)", line["outcome"], r.outcome, line)
				}
				if reason, _ := line["reason"].(string); !strings.Contains(reason, r.reason) {
					t.Errorf("reason %q, want it to mention %q", reason, r.reason)
				}
				if r.id != "" && f.EffectCount(r.id) != r.effects {
					t.Errorf("effect ran %d times for %s, want %d", f.EffectCount(r.id), r.id, r.effects)
				}
				if f.EffectCount("neighbour") != 1 || f.LogLine(t, neighbour.MessageId)["outcome"] != "processed" {
					t.Error("the neighbour was not processed once")
				}
				metric := map[string]string{"processed": "Processed", "duplicate": "Duplicate", "in_progress": "InProgress", "failed": "Failed", "bad_input": "BadInput", "mismatch": "Mismatch", "expired": "Expired"}[r.outcome]
				want := 1.0
				if r.outcome == "processed" {
					want = 2
				}
				if got := f.Metric(t, metric); got != want {
					t.Errorf("metric %s = %v, want %v", metric, got, want)
				}
			})
		}
	}
}

// TestSameFactTwiceInOneBatch: deliveries of one fact that arrive together
// run once; the others take its outcome without a redelivery.
func TestSameFactTwiceInOneBatch(t *testing.T) {
	f := newFixture(t)
	body := `{"orderId":"o20","amount":10,"mode":"slow"}`
	recs := []events.SQSMessage{message(body, contract.Envelope), message(body, contract.Raw), message(body, contract.Envelope)}
	resp, err := f.Handler(contract.Auto).Handle(context.Background(), events.SQSEvent{Records: recs})
	if err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("%v, %v: all three must succeed", resp, err)
	}
	if f.EffectCount("o20") != 1 || f.Store.Requests() != 2 || f.Metric(t, "Duplicate") != 2 {
		t.Fatalf("effects=%d store calls=%d duplicates=%v; want 1, 2 and 2", f.EffectCount("o20"), f.Store.Requests(), f.Metric(t, "Duplicate"))
	}
	// When the first one fails, so do the others, and all are retried.
	failing := `{"orderId":"o21","amount":10,"mode":"fail"}`
	resp, _ = f.Handler(contract.Auto).Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{message(failing, contract.Raw), message(failing, contract.Raw)}})
	if len(resp.BatchItemFailures) != 2 {
		t.Fatalf("failures %v, want both records", resp.BatchItemFailures)
	}
}

// TestStoreErrors: a throttled store fails the records for a retry; when no
// record could be judged the handler returns an error.
func TestStoreErrors(t *testing.T) {
	f := newFixture(t)
	f.Store.Fail(errThrottled)
	recs := []events.SQSMessage{message(`{"orderId":"a","amount":1}`, contract.Raw), message(`{"orderId":"b","amount":1}`, contract.Raw)}
	_, err := f.Handler(contract.Raw).Handle(context.Background(), events.SQSEvent{Records: recs})
	if err == nil || !strings.Contains(err.Error(), "throttled") {
		t.Fatalf("err %v, want the batch to fail with the store's error", err)
	}
	if f.LogLine(t, recs[0].MessageId)["outcome"] != "failed" {
		t.Error("a store error must be logged as failed")
	}
	// With one record judged (bad input), the batch reports item failures.
	recs = append(recs, message(`not json`, contract.Raw))
	resp, err := f.Handler(contract.Raw).Handle(context.Background(), events.SQSEvent{Records: recs})
	if err != nil || len(resp.BatchItemFailures) != 3 {
		t.Fatalf("%v, %v; want three item failures and no error", resp, err)
	}
}

// TestDeadlineTooNear: no record starts when the deadline is closer than
// MinRemaining; none touches the store.
func TestDeadlineTooNear(t *testing.T) {
	f := newFixture(t)
	cfg := f.Config(contract.Raw)
	cfg.MinRemaining = time.Minute
	h := sqsbatch.New(f.Guard, orderKey, f.Effect, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	recs := []events.SQSMessage{message(`{"orderId":"late","amount":1}`, contract.Raw)}
	if _, err := h.Handle(ctx, events.SQSEvent{Records: recs}); err == nil {
		t.Fatal("a batch with no record started must fail")
	}
	if f.Store.Requests() != 0 || f.EffectCount("late") != 0 || f.LogLine(t, recs[0].MessageId)["outcome"] != "not_started" {
		t.Fatalf("store calls %d, effects %d: want none, logged not_started", f.Store.Requests(), f.EffectCount("late"))
	}
}

// TestMinRemainingCoversTheFinishingBudget: by default a record starts only
// with more time left than the guard's finishing budget plus a second for
// the effect; a record that would leave the effect less is not started and
// touches no store.
func TestMinRemainingCoversTheFinishingBudget(t *testing.T) {
	f := newFixture(t)
	h := sqsbatch.New(f.Guard, orderKey, f.Effect, f.Config(contract.Raw))
	left := f.Guard.FinishBudget() + contract.DefaultEffectTime/2
	ctx, cancel := context.WithTimeout(context.Background(), left)
	defer cancel()
	recs := []events.SQSMessage{message(`{"orderId":"late","amount":1}`, contract.Raw)}
	_, err := h.Handle(ctx, events.SQSEvent{Records: recs})
	if err == nil || f.Store.Requests() != 0 || f.EffectCount("late") != 0 || f.LogLine(t, recs[0].MessageId)["outcome"] != "not_started" {
		t.Fatalf("with %v left: %v, store calls %d, effects %d, log %v; want not_started, no store call and no effect",
			left, err, f.Store.Requests(), f.EffectCount("late"), f.LogLine(t, recs[0].MessageId))
	}
}

// TestFIFOGroupsRunInOrder: on a FIFO queue each group runs in order, and
// the rest of a group after a failure is reported failed without running.
func TestFIFOGroupsRunInOrder(t *testing.T) {
	f := newFixture(t)
	var mu sync.Mutex
	var ran []string
	h := sqsbatch.New(f.Guard, orderKey, func(ctx context.Context, o order, r idempotency.Reservation) (string, error) {
		mu.Lock()
		ran = append(ran, o.OrderID)
		mu.Unlock()
		return f.Effect(ctx, o, r)
	}, f.Config(contract.Raw))
	fifo := func(body, group string) events.SQSMessage {
		m := message(body, contract.Raw)
		m.EventSourceARN = "arn:aws:sqs:us-east-1:123456789012:charge.fifo"
		m.Attributes["MessageGroupId"] = group
		return m
	}
	recs := []events.SQSMessage{
		fifo(`{"orderId":"a1","amount":1}`, "A"),
		fifo(`{"orderId":"b1","amount":1,"mode":"slow"}`, "B"),
		fifo(`{"orderId":"a2","amount":1,"mode":"fail"}`, "A"),
		fifo(`{"orderId":"b2","amount":1}`, "B"),
		fifo(`{"orderId":"a3","amount":1}`, "A"),
	}
	resp, err := h.Handle(context.Background(), events.SQSEvent{Records: recs})
	if err != nil {
		t.Fatal(err)
	}
	failed := failedIDs(resp)
	if len(failed) != 2 || !failed[recs[2].MessageId] || !failed[recs[4].MessageId] {
		t.Fatalf("failures %v, want a2 (failed) and a3 (not started)", failed)
	}
	pos := map[string]int{}
	for i, id := range ran {
		pos[id] = i
	}
	if _, ran := pos["a3"]; ran || pos["a1"] > pos["a2"] || pos["b1"] > pos["b2"] {
		t.Fatalf("run order %v: groups must run in order and a3 must not run", ran)
	}
	if f.LogLine(t, recs[4].MessageId)["outcome"] != "not_started" {
		t.Error("a3 must be logged not_started")
	}
}

// TestFIFOConsumer: a consumer told it is FIFO orders records by their
// MessageGroupId whatever their event source ARN says (a local run, a
// replay), runs the records without a MessageGroupId one after another in
// batch order as one group, and says so in a warning; a consumer not told
// it is FIFO does not order a standard queue's message groups (fair
// queues), which run at once.
func TestFIFOConsumer(t *testing.T) {
	rec := func(body, group string) events.SQSMessage {
		m := message(body, contract.Raw)
		m.EventSourceARN = "" // nothing in the ARN says FIFO
		if group != "" {
			m.Attributes["MessageGroupId"] = group
		}
		return m
	}
	run := func(t *testing.T, fifo bool, recs []events.SQSMessage) (*fixture, []string, map[string]bool) {
		f := newFixture(t)
		var mu sync.Mutex
		var ran []string
		cfg := f.Config(contract.Raw)
		cfg.FIFO = fifo
		// Recorded as each effect ends: a slow first record of a group
		// that ran beside its successor would end after it.
		h := sqsbatch.New(f.Guard, orderKey, func(ctx context.Context, o order, r idempotency.Reservation) (string, error) {
			defer func() {
				mu.Lock()
				ran = append(ran, o.OrderID)
				mu.Unlock()
			}()
			return f.Effect(ctx, o, r)
		}, cfg)
		resp, err := h.Handle(context.Background(), events.SQSEvent{Records: recs})
		if err != nil {
			t.Fatal(err)
		}
		return f, ran, failedIDs(resp)
	}
	before := func(ran []string, a, b string) bool {
		for _, id := range ran {
			switch id {
			case a:
				return true
			case b:
				return false
			}
		}
		return false
	}

	t.Run("groups without a FIFO ARN", func(t *testing.T) {
		recs := []events.SQSMessage{
			rec(`{"orderId":"a1","amount":1,"mode":"slow"}`, "A"),
			rec(`{"orderId":"b1","amount":1,"mode":"fail"}`, "B"),
			rec(`{"orderId":"a2","amount":1}`, "A"),
			rec(`{"orderId":"b2","amount":1}`, "B"),
		}
		f, ran, failed := run(t, true, recs)
		if len(failed) != 2 || !failed[recs[1].MessageId] || !failed[recs[3].MessageId] {
			t.Fatalf("failures %v, want b1 (failed) and b2 (not started)", failed)
		}
		if !before(ran, "a1", "a2") || slices.Contains(ran, "b2") {
			t.Fatalf("run order %v: a1 before a2, and b2 not run", ran)
		}
		if f.LogLine(t, recs[3].MessageId)["outcome"] != "not_started" {
			t.Error("b2 must be logged not_started")
		}
	})
	t.Run("records without a MessageGroupId are one group", func(t *testing.T) {
		recs := []events.SQSMessage{
			rec(`{"orderId":"n1","amount":1,"mode":"slow"}`, ""),
			rec(`{"orderId":"g1","amount":1}`, "G"),
			rec(`{"orderId":"n2","amount":1,"mode":"fail"}`, ""),
			rec(`{"orderId":"n3","amount":1}`, ""),
		}
		f, ran, failed := run(t, true, recs)
		if len(failed) != 2 || !failed[recs[2].MessageId] || !failed[recs[3].MessageId] {
			t.Fatalf("failures %v, want n2 (failed) and n3 (not started)", failed)
		}
		if !before(ran, "n1", "n2") || slices.Contains(ran, "n3") || !slices.Contains(ran, "g1") {
			t.Fatalf("run order %v: n1 before n2, n3 not run, g1 run", ran)
		}
		f.Mu.Lock()
		logs := f.Logs.String()
		f.Mu.Unlock()
		if !strings.Contains(logs, `"msg":"fifo"`) || !strings.Contains(logs, `"records":3`) {
			t.Errorf("no warning about the 3 records without a MessageGroupId:\n%s", logs)
		}
	})
	t.Run("a standard queue's message groups do not order", func(t *testing.T) {
		recs := []events.SQSMessage{
			rec(`{"orderId":"s1","amount":1,"mode":"fail"}`, "S"),
			rec(`{"orderId":"s2","amount":1}`, "S"),
		}
		_, ran, failed := run(t, false, recs)
		if len(failed) != 1 || !failed[recs[0].MessageId] || !slices.Contains(ran, "s2") {
			t.Fatalf("failures %v, ran %v: s2 must run although s1 of its group failed", failed, ran)
		}
	})
}

// TestConcurrencyBound: no more records run at once than Concurrency. The
// first three effects are held until the test has seen them start and has
// given the engine a grace period in which a fourth, were the bound broken,
// would start: a correct engine never starts one, however slow the machine,
// so the period only bounds how soon a broken bound shows.
func TestConcurrencyBound(t *testing.T) {
	f := newFixture(t)
	cfg := f.Config(contract.Raw)
	cfg.Concurrency = 3
	started, release := make(chan struct{}, 10), make(chan struct{})
	h := sqsbatch.New(f.Guard, orderKey, func(ctx context.Context, o order, r idempotency.Reservation) (string, error) {
		started <- struct{}{}
		<-release
		return "", nil
	}, cfg)
	var recs []events.SQSMessage
	for i := range 10 {
		recs = append(recs, message(`{"orderId":"c`+string(rune('0'+i))+`","amount":1}`, contract.Raw))
	}
	done := make(chan error, 1)
	go func() {
		resp, err := h.Handle(context.Background(), events.SQSEvent{Records: recs})
		if err == nil && len(resp.BatchItemFailures) != 0 {
			err = fmt.Errorf("failures %v", resp.BatchItemFailures)
		}
		done <- err
	}()
	for range 3 {
		<-started
	}
	select {
	case <-started:
		t.Error("a fourth record started while three ran")
	case <-time.After(100 * time.Millisecond):
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestConcurrencyOne: with a Concurrency of 1 the records run one after
// another in batch order, in the goroutine that called Handle, on a standard
// and on a FIFO queue; the rest of a FIFO group after a failure is not
// started, and a repeated fact takes the outcome of its first record.
func TestConcurrencyOne(t *testing.T) {
	for _, c := range []struct {
		name    string
		fifo    bool
		recs    [][2]string // body, message group
		effects string      // the effects that ran, each "+id" as it starts and "-id" as it ends
		failed  []int       // the records reported failed
		logged  map[int]string
	}{
		{
			name: "standard queue",
			recs: [][2]string{
				{`{"orderId":"o1","amount":1,"mode":"slow"}`},
				{`{"orderId":"o2","amount":1}`},
				{`{"orderId":"o3","amount":1,"mode":"fail"}`},
				{`{"orderId":"o4","amount":1,"mode":"slow"}`},
				{`{"orderId":"o1","amount":1,"mode":"slow"}`},
				{`{"orderId":"o3","amount":1,"mode":"fail"}`},
				{`{"orderId":"o5","amount":1}`},
			},
			effects: "+o1 -o1 +o2 -o2 +o3 -o3 +o4 -o4 +o5 -o5",
			failed:  []int{2, 5},
			logged:  map[int]string{4: "duplicate", 5: "failed", 6: "processed"},
		},
		{
			name: "FIFO queue",
			fifo: true,
			recs: [][2]string{
				{`{"orderId":"a1","amount":1,"mode":"slow"}`, "A"},
				{`{"orderId":"b1","amount":1}`, "B"},
				{`{"orderId":"a2","amount":1,"mode":"fail"}`, "A"},
				{`{"orderId":"b2","amount":1,"mode":"slow"}`, "B"},
				{`{"orderId":"a3","amount":1}`, "A"},
				{`{"orderId":"b1","amount":1}`, "B"},
				{`{"orderId":"b3","amount":1}`, "B"},
			},
			effects: "+a1 -a1 +b1 -b1 +a2 -a2 +b2 -b2 +b3 -b3",
			failed:  []int{2, 4},
			logged:  map[int]string{4: "not_started", 5: "duplicate", 6: "processed"},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t)
			cfg := f.Config(contract.Raw)
			cfg.Concurrency = 1
			caller := goroutineID()
			var effects []string // no lock: the records run on this goroutine
			h := sqsbatch.New(f.Guard, orderKey, func(ctx context.Context, o order, r idempotency.Reservation) (string, error) {
				if id := goroutineID(); id != caller {
					t.Errorf("the effect of %s ran on goroutine %s, not on the caller's (%s)", o.OrderID, id, caller)
				}
				effects = append(effects, "+"+o.OrderID)
				defer func() { effects = append(effects, "-"+o.OrderID) }()
				return f.Effect(ctx, o, r)
			}, cfg)
			var recs []events.SQSMessage
			for _, r := range c.recs {
				m := message(r[0], contract.Raw)
				if c.fifo {
					m.EventSourceARN += ".fifo"
					m.Attributes["MessageGroupId"] = r[1]
				}
				recs = append(recs, m)
			}
			resp, err := h.Handle(context.Background(), events.SQSEvent{Records: recs})
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(effects, " "); got != c.effects {
				t.Errorf("effects\n got %s\nwant %s", got, c.effects)
			}
			var want []string
			for _, i := range c.failed {
				want = append(want, recs[i].MessageId)
			}
			var got []string
			for _, b := range resp.BatchItemFailures {
				got = append(got, b.ItemIdentifier)
			}
			if !slices.Equal(got, want) {
				t.Errorf("failures %v, want %v", got, want)
			}
			for i, outcome := range c.logged {
				if l := f.LogLine(t, recs[i].MessageId); l["outcome"] != outcome {
					t.Errorf("record %d (%s) logged %v, want %s", i, c.recs[i][0], l["outcome"], outcome)
				}
			}
		})
	}
}

// goroutineID returns the id of the calling goroutine, from the first line
// of its stack ("goroutine 42 [running]:").
func goroutineID() string {
	buf := make([]byte, 64)
	buf = buf[:runtime.Stack(buf, false)]
	id, _, _ := strings.Cut(strings.TrimPrefix(string(buf), "goroutine "), " ")
	return id
}

// TestTransactionalCalls: a transactional new fact is one store call (the
// commit), and so is a duplicate of it.
func TestTransactionalCalls(t *testing.T) {
	f := newFixture(t)
	var balance int
	h := sqsbatch.NewTx(f.Guard, orderKey, func(ctx context.Context, o order, r idempotency.Reservation) (any, string, error) {
		return storetest.MemoryWrites(func() error { balance += o.Amount; return nil }), "credited", nil
	}, f.Config(contract.Raw))
	body := `{"orderId":"w1","amount":10}`
	for i, want := range []string{"processed", "duplicate"} {
		rec := message(body, contract.Raw)
		before := f.Store.Requests()
		if resp, err := h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{rec}}); err != nil || len(resp.BatchItemFailures) != 0 {
			t.Fatal(resp, err)
		}
		if got := f.Store.Requests() - before; got != 1 || f.Store.Calls(storespy.OpCommit) != i+1 {
			t.Errorf("%s: %d store calls (%d commits), want 1 commit", want, got, f.Store.Calls(storespy.OpCommit))
		}
		if got := f.LogLine(t, rec.MessageId)["outcome"]; got != want {
			t.Errorf("outcome %v, want %s", got, want)
		}
	}
	if balance != 10 {
		t.Fatalf("balance %d, want 10", balance)
	}
	// A write refused by its own condition is the effect's failure.
	rejecting := sqsbatch.NewTx(f.Guard, orderKey, func(ctx context.Context, o order, r idempotency.Reservation) (any, string, error) {
		return storetest.MemoryWrites(func() error { return errors.New("insufficient funds") }), "", nil
	}, f.Config(contract.Raw))
	rec := message(`{"orderId":"w2","amount":10}`, contract.Raw)
	resp, _ := rejecting.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{rec}})
	if len(resp.BatchItemFailures) != 1 || !strings.Contains(f.LogLine(t, rec.MessageId)["reason"].(string), "insufficient funds") {
		t.Fatalf("rejected transaction: %v", resp)
	}
}
