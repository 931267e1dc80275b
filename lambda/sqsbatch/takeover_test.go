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
)

// TestTakeoverIsLogged: a delivery that takes over the reservation of a
// worker that crashed (its lease ended) is processed, and the takeover is a
// line of its own, with the key and when the lapsed lease ended; a plain
// new fact logs none.
func TestTakeoverIsLogged(t *testing.T) {
	f := newFixture(t)
	body := `{"orderId":"o-crashed","amount":1}`
	fact, err := f.Guard.Fact("o-crashed", []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	crashed := idempotency.Record{Key: fact.Key, Status: idempotency.StatusInProgress, Owner: "crashed-worker", LeaseUntil: now.Add(-time.Minute).Truncate(time.Millisecond),
		ExpiresAt: now.Add(time.Hour), TTL: now.Add(2 * time.Hour), PayloadHash: fact.Hash}
	if err := f.Store.MemoryStore.Reserve(context.Background(), crashed, now.Add(-2*time.Minute)); err != nil {
		t.Fatal(err)
	}
	h := f.Handler(contract.Raw)
	rec := message(body, contract.Raw)
	resp, err := h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{rec, message(`{"orderId":"neighbour","amount":1}`, contract.Raw)}})
	if err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("%+v, %v; want both processed", resp, err)
	}
	var takeovers []map[string]any
	f.Mu.Lock()
	for _, l := range strings.Split(strings.TrimSpace(f.Logs.String()), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) != nil {
			continue
		}
		switch {
		case m["msg"] == "takeover":
			takeovers = append(takeovers, m)
		case m["msg"] == "record" && m["outcome"] != "processed":
			t.Errorf("record line %v, want processed", m)
		}
	}
	f.Mu.Unlock()
	if len(takeovers) != 1 {
		t.Fatalf("%d takeover lines, want 1 (the neighbour, a new fact, logs none)", len(takeovers))
	}
	m := takeovers[0]
	lapsed, _ := time.Parse(time.RFC3339Nano, m["lapsed_lease"].(string))
	if m["level"] != "WARN" || m["key"] != fact.Key || m["message_id"] != rec.MessageId || m["consumer"] != "charge" || !lapsed.Equal(crashed.LeaseUntil) {
		t.Fatalf("takeover line %v: want WARN, the key %s, the message id and the lapsed lease %v", m, fact.Key, crashed.LeaseUntil)
	}
}
