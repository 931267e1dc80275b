package queue_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/internal/queue"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/internal/queue/queuetest"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/outcome"
)

// lines is a source that exists only here, on the seam: a body of
// newline-separated orders, each line a fact of its own. It is all a new
// queue-fed source writes besides its entry points.
type lines struct{}

func (lines) MaxBody(int) int { return contract.MaxQueueBodyBytes }

func (lines) ReadRecords(body []byte) ([]queue.Item, string, error) {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, "an empty body: nothing to run", nil
	}
	var items []queue.Item
	for _, l := range bytes.Split(bytes.TrimSpace(body), []byte("\n")) {
		it := queue.Item{Payload: l, Source: "the SQS SentTimestamp"}
		if !json.Valid(l) {
			it.Err = fmt.Errorf("%w: line %q is not JSON", outcome.ErrBadInput, l)
		}
		items = append(items, it)
	}
	return items, "", nil
}

func (lines) DecodeFact(it *queue.Item, out *queuetest.Order) error {
	return json.Unmarshal(it.Payload, out)
}

// TestASourceOnTheSeam: a source that gives the transport only how a body
// becomes facts gets every rule of the queue: each line runs once (a line
// repeated in the message is a duplicate), a bad line fails its message
// alone and says why, the message's good lines are duplicates when it comes
// back, and a skipped body is acknowledged.
func TestASourceOnTheSeam(t *testing.T) {
	f := queuetest.NewFixture(t)
	h := queue.NewRecords(f.Guard, queuetest.OrderKey, f.Effect, queue.Config(f.Config("")), lines{})
	good := queuetest.Message("{\"orderId\":\"o-1\",\"amount\":5}\n{\"orderId\":\"o-2\",\"amount\":5}\n{\"orderId\":\"o-1\",\"amount\":5}", contract.Raw)
	bad := queuetest.Message("{\"orderId\":\"o-3\",\"amount\":5}\nnot json", contract.Raw)
	empty := queuetest.Message(" ", contract.Raw)
	handle := func(recs ...events.SQSMessage) map[string]bool {
		t.Helper()
		resp, err := h.Handle(context.Background(), events.SQSEvent{Records: recs})
		if err != nil {
			t.Fatal(err)
		}
		return queuetest.FailedIDs(resp)
	}
	if failed := handle(good, bad, empty); failed[good.MessageId] || !failed[bad.MessageId] || failed[empty.MessageId] {
		t.Fatalf("failed %v: want only the message with a bad line", failed)
	}
	for id, want := range map[string]int{"o-1": 1, "o-2": 1, "o-3": 1} {
		if got := f.EffectCount(id); got != want {
			t.Errorf("%s ran %d times, want %d", id, got, want)
		}
	}
	outcomes := []string{}
	for _, l := range f.Lines(bad.MessageId) {
		outcomes = append(outcomes, fmt.Sprint(l["outcome"]))
	}
	if fmt.Sprint(outcomes) != "[processed bad_input]" {
		t.Errorf("the bad message's lines: %v, want one per line: processed, bad_input", outcomes)
	}
	if p, d, b := f.Metric(t, "Processed"), f.Metric(t, "Duplicate"), f.Metric(t, "BadInput"); p != 3 || d != 1 || b != 1 {
		t.Errorf("Processed %v, Duplicate %v, BadInput %v; want 3, 1, 1", p, d, b)
	}
	handle(bad) // its redelivery: the good line is a duplicate now
	if f.EffectCount("o-3") != 1 || f.Metric(t, "Duplicate") != 1 {
		t.Errorf("the redelivery ran o-3 %d times, duplicates %v", f.EffectCount("o-3"), f.Metric(t, "Duplicate"))
	}
}
