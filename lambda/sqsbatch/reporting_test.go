package sqsbatch_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/internal/limits"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/internal/queue/queuetest"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/outcome"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/sqsbatch"
)

// TestSameMessageTwiceInABatch: one SQS message (one message id) delivered
// twice in one batch is one batchItemFailures entry and one count, whatever
// its outcome, in a batch of SQS's usual size and in a large one.
func TestSameMessageTwiceInABatch(t *testing.T) {
	for _, c := range []struct {
		name, body, metric string
		age                time.Duration
		failed             bool
	}{
		{"processed", `{"orderId":"p","amount":1}`, "Processed", 0, false},
		{"failed", `{"orderId":"f","amount":1,"mode":"fail"}`, "Failed", 0, true},
		{"bad input", `not json`, "BadInput", 0, true},
		{"expired", `{"orderId":"e","amount":1}`, "Expired", 2 * limits.DefaultWindow, true},
	} {
		for _, size := range []int{2, 40} {
			t.Run(fmt.Sprintf("%s/%d records", c.name, size), func(t *testing.T) {
				f := newFixture(t)
				rec := messageAt(c.body, contract.Raw, time.Now().Add(-c.age))
				recs := []events.SQSMessage{rec}
				for i := 1; i < size-1; i++ {
					recs = append(recs, message(fmt.Sprintf(`{"orderId":"other-%d","amount":1}`, i), contract.Raw))
				}
				recs = append(recs, rec) // the same message again, last
				resp, err := f.Handler(contract.Raw).Handle(context.Background(), events.SQSEvent{Records: recs})
				if err != nil {
					t.Fatal(err)
				}
				want := 0
				if c.failed {
					want = 1
				}
				if len(resp.BatchItemFailures) != want || (c.failed && resp.BatchItemFailures[0].ItemIdentifier != rec.MessageId) {
					t.Errorf("failures %v, want %d entry for %s", resp.BatchItemFailures, want, rec.MessageId)
				}
				count := 1.0 // the message
				if c.metric == "Processed" {
					count += float64(size - 2) // and the others
				}
				if got := f.Metric(t, c.metric); got != count {
					t.Errorf("%s = %v, want %v: the message counted once", c.metric, got, count)
				}
				if got := f.Metric(t, "Duplicate"); got != 0 {
					t.Errorf("Duplicate = %v: the copy of the message was counted", got)
				}
				if c.metric == "Processed" && f.EffectCount("p") != 1 {
					t.Errorf("effect ran %d times", f.EffectCount("p"))
				}
				if !strings.Contains(f.Logs.String(), `"msg":"duplicate_message_id"`) || strings.Count(f.Logs.String(), `"message_id":"`+rec.MessageId+`"`) != 1 {
					t.Errorf("want one record line for the message and one duplicate_message_id warning:\n%s", f.Logs.String())
				}
			})
		}
	}
}

// TestEmptyKeyLine: the line of a key function that returned an empty key
// says so, and that keys come from the business message, never from the
// transport's ids (the mistake that gives an empty key: reading a message
// id field the business message does not carry).
func TestEmptyKeyLine(t *testing.T) {
	f := newFixture(t)
	type withID struct {
		MessageID string `json:"messageId"`
	}
	h := sqsbatch.New(f.Guard, func(m withID) (string, error) { return m.MessageID, nil },
		func(context.Context, withID, idempotency.Reservation) (string, error) { return "", nil }, f.Config(contract.Raw))
	rec := message(`{"orderId":"o1","amount":1}`, contract.Raw)
	if _, err := h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{rec}}); err != nil {
		t.Fatal(err)
	}
	line := f.LogLine(t, rec.MessageId)
	reason, _ := line["reason"].(string)
	for _, want := range []string{"the key function returned an empty key", "Keys come from the business message", "never from the transport's ids", "a message id field the business message does not carry"} {
		if !strings.Contains(reason, want) {
			t.Errorf("reason %q does not say %q", reason, want)
		}
	}
	if line["outcome"] != "bad_input" || f.Store.Requests() != 0 {
		t.Errorf("outcome %v, %d store calls: want bad_input and none", line["outcome"], f.Store.Requests())
	}
}

// TestNotStartedOnTheLastReceive: on a FIFO queue the records behind a
// failing message of their group are not started and reach the DLQ with it.
// On the last receive (ApproximateReceiveCount ≥ MaxReceiveCount) they are
// counted in DeadLetteredUnstarted and logged at ERROR; before it, they are
// a WARN and not counted.
func TestNotStartedOnTheLastReceive(t *testing.T) {
	for _, c := range []struct {
		name            string
		maxReceiveCount int
		receiveCount    string
		counted         float64
		level           string
	}{
		{"last receive", 5, "5", 1, "ERROR"},
		{"past the last receive (a count SQS did not update)", 5, "6", 1, "ERROR"},
		{"an earlier receive", 5, "4", 0, "WARN"},
		{"maxReceiveCount unknown", 0, "5", 0, "WARN"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t)
			cfg := f.Config(contract.Raw)
			cfg.FIFO = true
			cfg.MaxReceiveCount = c.maxReceiveCount
			recs := []events.SQSMessage{message(`{"orderId":"a1","amount":1,"mode":"fail"}`, contract.Raw), message(`{"orderId":"a2","amount":1}`, contract.Raw)}
			for i := range recs {
				recs[i].Attributes["MessageGroupId"] = "A"
				recs[i].Attributes["ApproximateReceiveCount"] = c.receiveCount
			}
			if _, err := sqsbatch.New(f.Guard, orderKey, f.Effect, cfg).Handle(context.Background(), events.SQSEvent{Records: recs}); err != nil {
				t.Fatal(err)
			}
			line := f.LogLine(t, recs[1].MessageId)
			if line["outcome"] != "not_started" || line["level"] != c.level {
				t.Fatalf("line %v, want not_started at %s", line, c.level)
			}
			if got := f.Metric(t, outcome.MetricDeadLetteredUnstarted); got != c.counted {
				t.Errorf("%s = %v, want %v", outcome.MetricDeadLetteredUnstarted, got, c.counted)
			}
			if reason, _ := line["reason"].(string); (c.counted > 0) != strings.Contains(reason, "without its effect ever having run") {
				t.Errorf("reason %q", reason)
			}
		})
	}
}

// leaseLosingStore is a store on which every complete finds the record
// taken over by a newer reservation.
type leaseLosingStore struct{ *queuetest.CountingStore }

func (s leaseLosingStore) Complete(context.Context, idempotency.Record) error {
	return idempotency.ErrLeaseLost
}

// TestLeaseLostIsAnError: a lost lease means the effect ran after its lease
// ended while another worker held the fact: it is logged at ERROR, so that
// it survives LogLevel ERROR.
func TestLeaseLostIsAnError(t *testing.T) {
	f := newFixture(t)
	g, err := idempotency.NewGuard(leaseLosingStore{f.Store}, idempotency.Config{Namespace: "charge"})
	if err != nil {
		t.Fatal(err)
	}
	rec := message(`{"orderId":"o1","amount":1}`, contract.Raw)
	if _, err := sqsbatch.New(g, orderKey, f.Effect, f.Config(contract.Raw)).Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{rec}}); err != nil {
		t.Fatal(err)
	}
	if line := f.LogLine(t, rec.MessageId); line["outcome"] != "lease_lost" || line["level"] != "ERROR" {
		t.Fatalf("line %v, want lease_lost at ERROR", line)
	}
}

// lambdaLevel is the level Lambda's log-level filtering gives a line of the
// function's output, by the documented rule (Lambda Developer Guide,
// "Log-level filtering"): a JSON object's "level" is used when it is a valid
// level and the line has a "timestamp" in valid RFC 3339; any other line is
// assigned INFO.
func lambdaLevel(line []byte) string {
	var m map[string]any
	if json.Unmarshal(line, &m) != nil {
		return "INFO"
	}
	level, _ := m["level"].(string)
	level = strings.ToUpper(level)
	ts, _ := m["timestamp"].(string)
	if _, err := time.Parse(time.RFC3339Nano, ts); err != nil {
		return "INFO"
	}
	switch level {
	case "TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL":
		return level
	}
	return "INFO"
}

// TestMetricsLineSurvivesLogLevelFiltering: the metrics line carries the
// function's own level and an RFC 3339 timestamp, so that Lambda reads it at
// that level and keeps it at any application log level; a line with the
// level alone would be INFO, and dropped at WARN.
func TestMetricsLineSurvivesLogLevelFiltering(t *testing.T) {
	if got := lambdaLevel([]byte(`{"level":"ERROR","msg":"x"}`)); got != "INFO" {
		t.Fatalf("the rule: a line without a timestamp is %s, want INFO", got)
	}
	for _, level := range []string{"DEBUG", "INFO", "WARN", "ERROR", "FATAL"} {
		f := newFixture(t)
		cfg := f.Config(contract.Raw)
		cfg.MetricsLevel = level
		before := time.Now().Truncate(time.Millisecond)
		if _, err := sqsbatch.New(f.Guard, orderKey, f.Effect, cfg).Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{message(`{"orderId":"o1","amount":1}`, contract.Raw)}}); err != nil {
			t.Fatal(err)
		}
		line := []byte(strings.TrimSpace(f.Metrics.String()))
		if got := lambdaLevel(line); got != level {
			t.Errorf("MetricsLevel %s: Lambda reads the metrics line as %s: %s", level, got, line)
		}
		var m struct {
			Timestamp string                    `json:"timestamp"`
			AWS       struct{ Timestamp int64 } `json:"_aws"`
		}
		_ = json.Unmarshal(line, &m)
		ts, err := time.Parse(time.RFC3339Nano, m.Timestamp)
		if err != nil || ts.Before(before) || ts.After(time.Now()) || ts.UnixMilli() != m.AWS.Timestamp {
			t.Errorf("timestamp %q (%v), want the batch's time, the EMF Timestamp %d", m.Timestamp, err, m.AWS.Timestamp)
		}
	}
}
