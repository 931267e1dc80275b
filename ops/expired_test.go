package ops_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/eventbridge"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/outcome"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/sqsbatch"
	"github.com/idempotent-consumer/idempotent-consumer/ops"
)

// archivedEvent is an EventBridge event of order id as an archive replays
// it: its time, which the age rule reads, is when it was first put.
func archivedEvent(id string, at time.Time) string {
	return `{"version":"0","id":"ev-` + id + `","detail-type":"OrderPlaced","source":"com.example.orders","account":"111122223333",` +
		`"time":"` + at.UTC().Format(time.RFC3339) + `","region":"us-east-1","resources":[],"detail":{"orderId":"` + id + `","amount":5}}`
}

// consumer is the EventBridge consumer of the world's queue: its handler
// (the guard's default 24 h window), its log, and how often its effect ran.
type consumer struct {
	w       *world
	h       *sqsbatch.Handler[eventbridge.Event[order]]
	logs    bytes.Buffer
	effects map[string]*atomic.Int32
}

func newConsumer(w *world) *consumer {
	c := &consumer{w: w, effects: map[string]*atomic.Int32{}}
	key := func(e eventbridge.Event[order]) (string, error) { return orderKey(e.Detail) }
	c.h = eventbridge.New(w.guard, key, func(_ context.Context, e eventbridge.Event[order], _ idempotency.Reservation) (string, error) {
		o := e.Detail
		if c.effects[o.OrderID] == nil {
			c.effects[o.OrderID] = new(atomic.Int32)
		}
		c.effects[o.OrderID].Add(1)
		return "charged", nil
	}, sqsbatch.Config{Consumer: "Shop/Charge", Logger: outcome.NewLogger(&c.logs, slog.LevelInfo), Metrics: io.Discard, Concurrency: 1})
	return c
}

func (c *consumer) ran(id string) int {
	if n := c.effects[id]; n != nil {
		return int(n.Load())
	}
	return 0
}

// consume receives the queue's messages, as Lambda's event source mapping
// does, and runs them: a record the handler reports failed is sent to the
// dead-letter queue, as SQS does after maxReceiveCount receives (kumo's
// queue is received once here; the handler reports an expired record failed
// on every receive). It returns the records' log lines.
func (c *consumer) consume() []map[string]any {
	c.w.t.Helper()
	c.logs.Reset()
	for _, m := range c.w.drain(c.w.queue) {
		rec := events.SQSMessage{MessageId: aws.ToString(m.MessageId), Body: aws.ToString(m.Body), Attributes: m.Attributes}
		for name, a := range m.MessageAttributes {
			if rec.MessageAttributes == nil {
				rec.MessageAttributes = map[string]events.SQSMessageAttribute{}
			}
			rec.MessageAttributes[name] = events.SQSMessageAttribute{DataType: aws.ToString(a.DataType), StringValue: a.StringValue}
		}
		resp, err := c.h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{rec}})
		if err != nil {
			c.w.t.Fatal(err)
		}
		if len(resp.BatchItemFailures) > 0 { // dead-lettered, with its attributes
			in := &sqs.SendMessageInput{QueueUrl: aws.String(c.w.dlq), MessageBody: m.Body}
			if len(m.MessageAttributes) > 0 {
				in.MessageAttributes = m.MessageAttributes
			}
			if _, err := c.w.sqs.SendMessage(context.Background(), in); err != nil {
				c.w.t.Fatal(err)
			}
		}
		if _, err := c.w.sqs.DeleteMessage(context.Background(), &sqs.DeleteMessageInput{QueueUrl: aws.String(c.w.queue), ReceiptHandle: m.ReceiptHandle}); err != nil {
			c.w.t.Fatal(err)
		}
	}
	c.w.t.Logf("consumer's log:\n%s", c.logs.String())
	return jsonLines(c.w.t, c.logs.String())
}

func jsonLines(t *testing.T, s string) []map[string]any {
	t.Helper()
	var lines []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("not a JSON line: %v: %s", err, l)
		}
		lines = append(lines, m)
	}
	return lines
}

// outcomes is "key outcome" of each record line.
func outcomes(lines []map[string]any) []string {
	var out []string
	for _, l := range lines {
		if l["msg"] == "record" {
			out = append(out, fmt.Sprintf("%v %v", l["key"], l["outcome"]))
		}
	}
	return out
}

// TestReplayExpiredRunsOnce: an archived EventBridge event older than the
// window is dead-lettered as expired; a plain redrive expires it again; the
// operator's replay runs it once, audited in the command's line, the
// consumer's line and the record; a second replay of it is a duplicate; a
// message that is not expired is left in the dead-letter queue, and says
// why; --message-id replays the one chosen.
func TestReplayExpiredRunsOnce(t *testing.T) {
	w := newWorld(t, false)
	c := newConsumer(w)
	old := archivedEvent("o-7", time.Now().Add(-48*time.Hour))
	eb := []string{"--env", "MESSAGE_DELIVERY=eventbridge", "--queue-url", w.queue, "--dlq-url", w.dlq}

	send := func(url, body string) {
		t.Helper()
		if _, err := w.sqs.SendMessage(context.Background(), &sqs.SendMessageInput{QueueUrl: aws.String(url), MessageBody: aws.String(body)}); err != nil {
			t.Fatal(err)
		}
	}
	send(w.queue, old)
	if got := outcomes(c.consume()); len(got) != 1 || got[0] != "charge#o-7 expired" || c.ran("o-7") != 0 {
		t.Fatalf("the archived event: %v, ran %d times; want expired", got, c.ran("o-7"))
	}

	// A plain redrive: the event keeps its time, and expires again.
	if status, _, _ := w.run(append([]string{"redrive", "--method", "copy"}, eb...)...); status != ops.ExitOK {
		t.Fatalf("plain redrive: exit %d", status)
	}
	if got := outcomes(c.consume()); len(got) != 1 || got[0] != "charge#o-7 expired" || c.ran("o-7") != 0 {
		t.Fatalf("after a plain redrive: %v, want expired again", got)
	}

	// The operator's replay.
	const reason = "INC-12: archive replay of 29 Nov, checked: not charged"
	status, out, errOut := w.run(append([]string{"redrive", "--replay-expired", "--reason", reason}, eb...)...)
	audit := jsonLines(t, out)
	if status != ops.ExitOK || len(audit) != 1 || !strings.Contains(errOut, "replayed: 1 expired messages") {
		t.Fatalf("replay: exit %d, %d lines, %q", status, len(audit), errOut)
	}
	a := audit[0]
	if a["level"] != "INFO" || a["msg"] != "replay" || a["key"] != "charge#o-7" || a["reason"] != reason || a["verdict"] != "expired" ||
		a["operator"] == "" || a["consumer"] != "Shop/Charge" || a["message_id"] == "" || !strings.Contains(fmt.Sprint(a["result"]), "replayed: sent to the queue with the idempotency-replay attribute") {
		t.Errorf("the replay's audit line: %v", a)
	}
	lines := c.consume()
	if got := outcomes(lines); len(got) != 1 || got[0] != "charge#o-7 processed" || c.ran("o-7") != 1 {
		t.Fatalf("the replay: %v, ran %d times; want processed once", got, c.ran("o-7"))
	}
	r, _ := lines[0]["replay"].(map[string]any)
	if lines[0]["level"] != "WARN" || r["by"] != a["operator"] || r["reason"] != reason || r["message_id"] != a["message_id"] {
		t.Errorf("the consumer's line of the replay: %v", lines[0])
	}
	if rec := w.record("o-7"); rec == nil || !strings.Contains(rec.Replay, `"reason":"`+reason+`"`) || !strings.Contains(rec.Replay, fmt.Sprint(a["operator"])) {
		t.Errorf("the record's replay: %+v", rec)
	}
	if status, out, _ := w.run("show", "o-7"); status != ops.ExitOK || !strings.Contains(out, "replay") || !strings.Contains(out, reason) {
		t.Errorf("show of the replayed fact: exit %d\n%s", status, out)
	}

	// The archive replayed twice, beside a young event: the second replay
	// of o-7 is a duplicate; o-8 is not expired, and stays.
	send(w.dlq, old)
	send(w.dlq, archivedEvent("o-8", time.Now()))
	status, out, errOut = w.run(append([]string{"redrive", "--replay-expired", "--reason", reason}, eb...)...)
	audit = jsonLines(t, out)
	if status != ops.ExitOK || len(audit) != 2 || !strings.Contains(errOut, "replayed: 1 expired messages") || !strings.Contains(errOut, "1 left in the dead-letter queue (not expired)") {
		t.Fatalf("second replay: exit %d, %d lines, %q", status, len(audit), errOut)
	}
	for _, a := range audit {
		if a["key"] == "charge#o-8" && (a["level"] != "WARN" || a["verdict"] != "processed" || !strings.Contains(fmt.Sprint(a["refused"]), "a plain redrive would not expire it")) {
			t.Errorf("the young event's line: %v", a)
		}
	}
	if got := outcomes(c.consume()); len(got) != 1 || got[0] != "charge#o-7 duplicate" || c.ran("o-7") != 1 {
		t.Fatalf("the second replay: %v, ran %d times; want a duplicate", got, c.ran("o-7"))
	}

	// --message-id: the one message chosen, of two expired ones.
	send(w.dlq, archivedEvent("o-9", time.Now().Add(-48*time.Hour)))
	send(w.dlq, archivedEvent("o-10", time.Now().Add(-48*time.Hour)))
	status, out, _ = w.run(append([]string{"redrive", "--dry-run", "--json"}, eb...)...)
	var dry struct{ Messages []ops.JudgedMessage }
	if err := json.Unmarshal([]byte(out), &dry); err != nil || status != ops.ExitOK {
		t.Fatalf("dry run: exit %d, %v", status, err)
	}
	chosen := ""
	for _, m := range dry.Messages {
		if m.Key == "charge#o-9" {
			chosen = m.MessageID
		}
	}
	status, out, errOut = w.run(append([]string{"redrive", "--replay-expired", "--reason", reason, "--message-id", chosen}, eb...)...)
	if audit = jsonLines(t, out); status != ops.ExitOK || len(audit) != 1 || audit[0]["message_id"] != chosen || audit[0]["key"] != "charge#o-9" || !strings.Contains(errOut, "2 not chosen") {
		t.Fatalf("--message-id %s: exit %d, %v, %q", chosen, status, audit, errOut)
	}
	if got := outcomes(c.consume()); len(got) != 1 || got[0] != "charge#o-9 processed" || c.ran("o-10") != 0 {
		t.Fatalf("the chosen replay: %v, want o-9 processed alone", got)
	}
	left := map[string]bool{}
	for _, m := range w.drain(w.dlq) {
		var ev struct{ Detail order }
		_ = json.Unmarshal([]byte(aws.ToString(m.Body)), &ev)
		left[ev.Detail.OrderID] = true
	}
	if len(left) != 2 || !left["o-8"] || !left["o-10"] {
		t.Errorf("the dead-letter queue holds %v, want o-8 and o-10", left)
	}

	// No reason, or a move task: refused before anything moves.
	for _, args := range [][]string{{"redrive", "--replay-expired"}, {"redrive", "--replay-expired", "--reason", "x", "--method", "move"}} {
		if status, _, errOut := w.run(append(args, eb...)...); status != ops.ExitUsage || !strings.Contains(errOut, "--replay-expired") {
			t.Errorf("%v: exit %d, %q", args, status, errOut)
		}
	}
}
