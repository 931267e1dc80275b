package kinesis_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/idempotent-consumer/idempotent-consumer/internal/limits"
	"github.com/idempotent-consumer/idempotent-consumer/internal/testkit/storespy"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/handler"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency/storetest"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/kinesis"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/outcome"
)

type order struct {
	ID   string `json:"id"`
	Seq  int    `json:"seq"`
	Fail bool   `json:"fail,omitempty"`
}

func orderKey(o order) (string, error) { return fmt.Sprintf("%s/%d", o.ID, o.Seq), nil }

// effects records the effects in the order they ran.
type effects struct {
	mu  sync.Mutex
	ran []string
}

func (e *effects) fn(ctx context.Context, o order, r idempotency.Reservation) (string, error) {
	if o.Fail {
		return "", errors.New("the downstream refused it")
	}
	e.mu.Lock()
	e.ran = append(e.ran, fmt.Sprintf("%s/%d", o.ID, o.Seq))
	e.mu.Unlock()
	return "ok", nil
}

func (e *effects) of(id string) []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []string
	for _, x := range e.ran {
		if strings.HasPrefix(x, id+"/") {
			out = append(out, x)
		}
	}
	return out
}

func newGuard(t *testing.T, store idempotency.Store) *idempotency.Guard {
	t.Helper()
	g, err := idempotency.NewGuard(store, idempotency.Config{Namespace: "stream"})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// kin is a Kinesis record of o at sequence number seq, partition key o.ID.
func kin(seq string, o order) events.KinesisEventRecord {
	data, _ := json.Marshal(o)
	return events.KinesisEventRecord{EventID: "shardId-000000000000:" + seq, Kinesis: events.KinesisRecord{
		SequenceNumber: seq, PartitionKey: o.ID, Data: data,
		ApproximateArrivalTimestamp: events.SecondsEpochTime{Time: time.Now()},
	}}
}

// seqN is a realistic 56-digit Kinesis sequence number ending in n.
func seqN(n int) string { return fmt.Sprintf("4961%052d", n) }

type logBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuf) Write(p []byte) (int, error) { l.mu.Lock(); defer l.mu.Unlock(); return l.b.Write(p) }

// lines returns the "record" lines, by sequence number.
func (l *logBuf) outcomes(t *testing.T) map[string]string {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	out := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(l.b.String()), "\n") {
		var v struct{ Msg, Sequence_number, Outcome string }
		var raw map[string]any
		if err := json.Unmarshal([]byte(line), &raw); err != nil {
			t.Fatalf("not JSON: %q", line)
		}
		v.Msg, _ = raw["msg"].(string)
		v.Sequence_number, _ = raw["sequence_number"].(string)
		v.Outcome, _ = raw["outcome"].(string)
		if v.Msg == "record" {
			out[v.Sequence_number] = v.Outcome
		}
	}
	return out
}

func config(logs io.Writer) handler.Batch {
	return handler.Batch{Logger: outcome.NewLogger(logs, slog.LevelDebug), Metrics: io.Discard}
}

// TestOrderPerPartitionKey pins the order guarantee: the records of one
// partition key run in shard order, and after one fails its later records
// are not started, while the other keys' records run; the response names
// the failed record.
func TestOrderPerPartitionKey(t *testing.T) {
	for _, conc := range []int{0, 1, 2} {
		t.Run(fmt.Sprintf("concurrency %d", conc), func(t *testing.T) {
			var e effects
			var logs logBuf
			cfg := config(&logs)
			cfg.Concurrency = conc
			h := kinesis.New(newGuard(t, storetest.NewMemoryStore()), orderKey, e.fn, cfg)
			ev := events.KinesisEvent{Records: []events.KinesisEventRecord{
				kin(seqN(1), order{ID: "a", Seq: 1}),
				kin(seqN(2), order{ID: "b", Seq: 1}),
				kin(seqN(3), order{ID: "a", Seq: 2, Fail: true}),
				kin(seqN(4), order{ID: "b", Seq: 2}),
				kin(seqN(5), order{ID: "a", Seq: 3}),
				kin(seqN(6), order{ID: "b", Seq: 3}),
			}}
			resp, err := h.Handle(context.Background(), ev)
			if err != nil {
				t.Fatal(err)
			}
			if len(resp.BatchItemFailures) != 1 || resp.BatchItemFailures[0].ItemIdentifier != seqN(3) {
				t.Fatalf("reported %+v, want only %s", resp.BatchItemFailures, seqN(3))
			}
			if got := e.of("a"); !slices.Equal(got, []string{"a/1"}) {
				t.Errorf("key a's effects %v: want a/1 only (a/2 failed, a/3 must not overtake it)", got)
			}
			if got := e.of("b"); !slices.Equal(got, []string{"b/1", "b/2", "b/3"}) {
				t.Errorf("key b's effects %v, want b/1 b/2 b/3 in order", got)
			}
			if got := logs.outcomes(t); got[seqN(5)] != "not_started" || got[seqN(3)] != "failed" || got[seqN(6)] != "processed" {
				t.Errorf("outcomes %v", got)
			}
		})
	}
}

// TestReportsTheLowestSequenceNumberAsANumber: with several keys failed the
// one item reported is the lowest sequence number, compared as a number
// ("99" sorts after "100" as a string).
func TestReportsTheLowestSequenceNumberAsANumber(t *testing.T) {
	var e effects
	h := kinesis.New(newGuard(t, storetest.NewMemoryStore()), orderKey, e.fn, config(io.Discard))
	ev := events.KinesisEvent{Records: []events.KinesisEventRecord{
		kin("100", order{ID: "a", Seq: 1, Fail: true}),
		kin("99", order{ID: "b", Seq: 1, Fail: true}),
		kin("1000", order{ID: "c", Seq: 1}),
	}}
	resp, err := h.Handle(context.Background(), ev)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.BatchItemFailures) != 1 || resp.BatchItemFailures[0].ItemIdentifier != "99" {
		t.Fatalf("reported %+v, want only 99", resp.BatchItemFailures)
	}
}

// TestCheckpointReplayIsAbsorbed: Lambda replays the shard from the
// reported record; the records that had completed are duplicates, and each
// fact's effect runs once.
func TestCheckpointReplayIsAbsorbed(t *testing.T) {
	var e effects
	counter := storespy.NewCounter(storetest.NewMemoryStore())
	h := kinesis.New(newGuard(t, counter), orderKey, e.fn, config(io.Discard))
	recs := []events.KinesisEventRecord{
		kin(seqN(1), order{ID: "a", Seq: 1}),
		kin(seqN(2), order{ID: "b", Seq: 1, Fail: true}),
		kin(seqN(3), order{ID: "a", Seq: 2}),
		kin(seqN(4), order{ID: "b", Seq: 2}),
	}
	resp, err := h.Handle(context.Background(), events.KinesisEvent{Records: recs})
	if err != nil || len(resp.BatchItemFailures) != 1 || resp.BatchItemFailures[0].ItemIdentifier != seqN(2) {
		t.Fatalf("first delivery: %+v, %v", resp, err)
	}
	// The downstream recovers; Lambda replays from seqN(2).
	var o order
	_ = json.Unmarshal(recs[1].Kinesis.Data, &o)
	o.Fail = false
	recs[1] = kin(seqN(2), o)
	before := counter.Requests()
	var logs logBuf
	cfg := config(&logs)
	h = kinesis.New(newGuard(t, counter), orderKey, e.fn, cfg)
	resp, err = h.Handle(context.Background(), events.KinesisEvent{Records: recs[1:]})
	if err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("replay: %+v, %v", resp, err)
	}
	if got := logs.outcomes(t); got[seqN(3)] != "duplicate" || got[seqN(2)] != "processed" || got[seqN(4)] != "processed" {
		t.Errorf("replay outcomes %v", got)
	}
	// b/1 differs from its first delivery (Fail), so it is a new payload only
	// because the test changed it; what matters: a/2 ran once.
	if got := e.of("a"); !slices.Equal(got, []string{"a/1", "a/2"}) {
		t.Errorf("a's effects %v, want each once", got)
	}
	if got := e.of("b"); !slices.Equal(got, []string{"b/1", "b/2"}) {
		t.Errorf("b's effects %v, want b/1 then b/2", got)
	}
	// The duplicate cost one request (a read of the completed record).
	if n := counter.Requests() - before; n != 1+2*2 {
		t.Errorf("replay made %d store requests, want 5 (1 for the duplicate, 2 per processed record)", n)
	}
}

// TestSameFactTwiceInABatch: a producer's retry puts the fact twice in the
// shard (two sequence numbers); it runs once, the second record is a
// duplicate without a store request.
func TestSameFactTwiceInABatch(t *testing.T) {
	var e effects
	counter := storespy.NewCounter(storetest.NewMemoryStore())
	var logs logBuf
	h := kinesis.New(newGuard(t, counter), orderKey, e.fn, config(&logs))
	resp, err := h.Handle(context.Background(), events.KinesisEvent{Records: []events.KinesisEventRecord{
		kin(seqN(1), order{ID: "a", Seq: 1}),
		kin(seqN(2), order{ID: "a", Seq: 1}),
	}})
	if err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("%+v, %v", resp, err)
	}
	if got := e.of("a"); len(got) != 1 {
		t.Errorf("effects %v, want one", got)
	}
	if got := logs.outcomes(t)[seqN(2)]; got != "duplicate" {
		t.Errorf("second record %q", got)
	}
	if n := counter.Requests(); n != 2 {
		t.Errorf("%d store requests, want 2 (reserve and complete of the first)", n)
	}
}

// TestKinesisBadInput: data that is no JSON, and KPL aggregates, are bad
// input, reported (Lambda retries until the on-failure destination takes
// them), never skipped.
func TestKinesisBadInput(t *testing.T) {
	var e effects
	var logs logBuf
	h := kinesis.New(newGuard(t, storetest.NewMemoryStore()), orderKey, e.fn, config(&logs))
	agg := kin(seqN(1), order{})
	agg.Kinesis.Data = append([]byte{0xF3, 0x89, 0x9A, 0xC2}, 0x0a, 0x01, 'k')
	notJSON := kin(seqN(2), order{})
	notJSON.Kinesis.PartitionKey = "x"
	notJSON.Kinesis.Data = []byte("not json")
	resp, err := h.Handle(context.Background(), events.KinesisEvent{Records: []events.KinesisEventRecord{agg, notJSON, kin(seqN(3), order{ID: "ok", Seq: 1})}})
	if err != nil || len(resp.BatchItemFailures) != 1 || resp.BatchItemFailures[0].ItemIdentifier != seqN(1) {
		t.Fatalf("%+v, %v", resp, err)
	}
	got := logs.outcomes(t)
	if got[seqN(1)] != "bad_input" || got[seqN(2)] != "bad_input" || got[seqN(3)] != "processed" {
		t.Errorf("outcomes %v", got)
	}
	if !strings.Contains(logs.b.String(), "KPL aggregate") || !strings.Contains(logs.b.String(), "AggregationEnabled=false") {
		t.Errorf("the aggregate's line does not say what it is and the fix:\n%s", logs.b.String())
	}
	if !errors.Is(kinesis.ErrAggregate, outcome.ErrBadInput) {
		t.Error("ErrAggregate is not bad input")
	}
}

// TestMisconfiguredFailsTheInvocation: an error wrapping
// outcome.ErrMisconfigured fails the whole invocation.
func TestMisconfiguredFailsTheInvocation(t *testing.T) {
	fn := func(ctx context.Context, o order, r idempotency.Reservation) (string, error) {
		return "", fmt.Errorf("write: %w", outcome.ErrMisconfigured)
	}
	h := kinesis.New(newGuard(t, storetest.NewMemoryStore()), orderKey, fn, config(io.Discard))
	_, err := h.Handle(context.Background(), events.KinesisEvent{Records: []events.KinesisEventRecord{kin(seqN(1), order{ID: "a"})}})
	if !errors.Is(err, outcome.ErrMisconfigured) {
		t.Fatalf("err %v, want ErrMisconfigured", err)
	}
}

// TestNotStartedNearTheDeadline: with too little time left no record
// starts; the first is reported.
func TestNotStartedNearTheDeadline(t *testing.T) {
	var e effects
	h := kinesis.New(newGuard(t, storetest.NewMemoryStore()), orderKey, e.fn, config(io.Discard))
	ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(time.Second))
	defer cancel()
	_, err := h.Handle(ctx, events.KinesisEvent{Records: []events.KinesisEventRecord{kin(seqN(7), order{ID: "a"}), kin(seqN(8), order{ID: "b"})}})
	if err == nil || !strings.Contains(err.Error(), "no record of the batch could be judged") {
		t.Fatalf("err %v, want the invocation failed: nothing judged", err)
	}
	if len(e.ran) != 0 {
		t.Errorf("effects ran: %v", e.ran)
	}
}

// TestExpiredRecordIsNotRun: a record as old as the window is Expired,
// reported, not run.
func TestExpiredRecordIsNotRun(t *testing.T) {
	var e effects
	var logs logBuf
	h := kinesis.New(newGuard(t, storetest.NewMemoryStore()), orderKey, e.fn, config(&logs))
	old := kin(seqN(1), order{ID: "a"})
	old.Kinesis.ApproximateArrivalTimestamp.Time = time.Now().Add(-limits.DefaultWindow)
	resp, err := h.Handle(context.Background(), events.KinesisEvent{Records: []events.KinesisEventRecord{old, kin(seqN(2), order{ID: "b"})}})
	if err != nil || len(resp.BatchItemFailures) != 1 || resp.BatchItemFailures[0].ItemIdentifier != seqN(1) {
		t.Fatalf("%+v, %v", resp, err)
	}
	if got := logs.outcomes(t)[seqN(1)]; got != "expired" {
		t.Errorf("outcome %q", got)
	}
	if !strings.Contains(logs.b.String(), "ApproximateArrivalTimestamp") {
		t.Error("the line does not name the origin")
	}
	if got := e.of("a"); len(got) != 0 {
		t.Errorf("expired record ran: %v", got)
	}
}

// TestMetricsLine: one EMF line with the queue adapter's names and Skipped.
func TestMetricsLine(t *testing.T) {
	var e effects
	var metrics bytes.Buffer
	cfg := config(io.Discard)
	cfg.Metrics, cfg.Consumer = &metrics, "Shop/Outbox"
	h := kinesis.New(newGuard(t, storetest.NewMemoryStore()), orderKey, e.fn, cfg)
	if _, err := h.Handle(context.Background(), events.KinesisEvent{Records: []events.KinesisEventRecord{kin(seqN(1), order{ID: "a"}), kin(seqN(2), order{ID: "a"})}}); err != nil {
		t.Fatal(err)
	}
	var line map[string]any
	if err := json.Unmarshal(metrics.Bytes(), &line); err != nil {
		t.Fatalf("%v: %q", err, metrics.String())
	}
	if line[outcome.MetricDimension] != "Shop/Outbox" || line["Processed"] != 1.0 || line["Duplicate"] != 1.0 || line[outcome.MetricSkipped] != 0.0 || line[outcome.LogTimeKey] == nil {
		t.Errorf("metrics line %v", line)
	}
}

// TestSameFactTwiceWithADroppedResult: a fact whose result is too large to
// store is processed once, with a warning, and the same fact later in the
// batch is its duplicate (the warning is the first record's, not the
// second's outcome).
func TestSameFactTwiceWithADroppedResult(t *testing.T) {
	big := strings.Repeat("r", limits.DefaultMaxResultBytes+1)
	var logs logBuf
	h := kinesis.New(newGuard(t, storetest.NewMemoryStore()), orderKey, func(context.Context, order, idempotency.Reservation) (string, error) { return big, nil }, config(&logs))
	o := order{ID: "o-1", Seq: 1}
	resp, err := h.Handle(context.Background(), events.KinesisEvent{Records: []events.KinesisEventRecord{kin(seqN(1), o), kin(seqN(2), o)}})
	if err != nil || len(resp.BatchItemFailures) > 0 {
		t.Fatalf("%+v, %v", resp, err)
	}
	if got := logs.outcomes(t); got[seqN(1)] != "processed" || got[seqN(2)] != "duplicate" {
		t.Fatalf("outcomes %v, want processed then duplicate", got)
	}
}
