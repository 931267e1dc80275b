package sqsbatch_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/sqsbatch"
)

// replayed is rec marked as an operator's replay with value v.
func replayed(rec events.SQSMessage, v string) events.SQSMessage {
	rec.MessageAttributes = map[string]events.SQSMessageAttribute{sqsbatch.ReplayAttribute: {DataType: "String", StringValue: &v}}
	return rec
}

// TestReplayOfAnExpiredEvent: an EventBridge event older than the window
// expires; the operator's replay of it runs once (its origin the replay's
// time, the replay in the record and at WARN in the line); a second replay
// is a duplicate; a replay as old as the window (a plain redrive of it,
// long after) expires again; a marker without its audit is bad input.
func TestReplayOfAnExpiredEvent(t *testing.T) {
	f, clk := newClockFixture(t)
	h := f.handler(contract.EventBridge)
	now := clk.Now()
	body := ebEvent("archived-1", now.Add(-2*testWindow), `{"orderId":"o-1","amount":1}`)
	handle := func(rec events.SQSMessage) map[string]any {
		t.Helper()
		if _, err := h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{rec}}); err != nil {
			t.Fatal(err)
		}
		return f.logLine(t, rec.MessageId)
	}
	audit := sqsbatch.Replay{By: "arn:aws:iam::111122223333:user/ops", Reason: "INC-9: archive replay of 1 Dec", At: now, MessageID: "dlq-1"}

	if line := handle(ebMessage(body, now)); line["outcome"] != "expired" || f.effectCount("o-1") != 0 {
		t.Fatalf("a plain redrive: %v (%v), want expired", line["outcome"], line["reason"])
	}
	line := handle(replayed(ebMessage(body, now), audit.Encode()))
	r, _ := line["replay"].(map[string]any)
	if line["outcome"] != "processed" || line["level"] != "WARN" || f.effectCount("o-1") != 1 || r["by"] != audit.By || r["reason"] != audit.Reason || r["message_id"] != "dlq-1" {
		t.Fatalf("the replay: %v, effect ran %d times", line, f.effectCount("o-1"))
	}
	key, _ := f.guard.Key("o-1")
	rec, err := f.store.Get(context.Background(), key)
	if err != nil || rec == nil || rec.Replay != audit.Encode() {
		t.Fatalf("the record's replay: %+v, %v; want %s", rec, err, audit.Encode())
	}

	again := audit
	again.MessageID = "dlq-2"
	if line := handle(replayed(ebMessage(body, now), again.Encode())); line["outcome"] != "duplicate" || f.effectCount("o-1") != 1 {
		t.Fatalf("a second replay: %v, effect ran %d times; want a duplicate", line["outcome"], f.effectCount("o-1"))
	}

	old := audit
	old.At = now.Add(-testWindow)
	line = handle(replayed(ebMessage(ebEvent("archived-2", now.Add(-2*testWindow), `{"orderId":"o-2","amount":1}`), now), old.Encode()))
	if line["outcome"] != "expired" || !strings.Contains(fmt.Sprint(line["reason"]), "time of the operator's replay") || f.effectCount("o-2") != 0 {
		t.Fatalf("a replay as old as the window: %v (%v), want expired", line["outcome"], line["reason"])
	}

	for _, v := range []string{`{"by":"x","at":"2026-12-01T08:00:00Z"}`, `not json`, strings.Repeat("x", sqsbatch.MaxReplayBytes+1)} {
		line := handle(replayed(ebMessage(ebEvent("archived-3", now.Add(-2*testWindow), `{"orderId":"o-3","amount":1}`), now), v))
		if line["outcome"] != "bad_input" || !strings.Contains(fmt.Sprint(line["reason"]), sqsbatch.ReplayAttribute) || f.effectCount("o-3") != 0 {
			t.Errorf("marker %.40q: %v (%v), want bad input", v, line["outcome"], line["reason"])
		}
	}
}
