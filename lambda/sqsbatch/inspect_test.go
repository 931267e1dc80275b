package sqsbatch_test

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/outcome"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/sqsbatch"
)

// TestInspectReadsWhatHandleJudges: for each body, Inspect refuses exactly
// the records that Handle ends as bad input, and otherwise returns the key
// Handle logs and the origin Handle judges the age by.
func TestInspectReadsWhatHandleJudges(t *testing.T) {
	published := time.Now().Add(-time.Hour).UTC().Truncate(time.Millisecond)
	sent := time.Now().Add(-time.Minute).Truncate(time.Millisecond)
	withTimestamp := `{"Type":"Notification","MessageId":"sns-1","TopicArn":"arn:aws:sns:eu-west-1:123456789012:orders","Timestamp":"` +
		published.Format(time.RFC3339Nano) + `","Message":` + quoted(`{"orderId":"o-2","amount":5}`) + `}`
	cases := []struct {
		name, body string
		bad        bool
		origin     time.Time
	}{
		{"raw", `{"orderId":"o-1","amount":5}`, false, sent},
		{"envelope with its publish time", withTimestamp, false, published},
		{"not JSON", `{"orderId":`, true, time.Time{}},
		{"no key", `{"amount":5}`, true, time.Time{}},
		{"key with a control character", `{"orderId":"o\u0001","amount":5}`, true, time.Time{}},
		{"a member twice", `{"orderId":"o-3","orderId":"o-4"}`, true, time.Time{}},
		{"too large", `{"orderId":"o-5","pad":"` + strings.Repeat("x", contract.DefaultMaxMessageBytes) + `"}`, true, time.Time{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t)
			h := sqsbatch.New(f.Guard, orderKey, f.Effect, f.Config(contract.Auto))
			rec := events.SQSMessage{MessageId: "m-1", Body: c.body, Attributes: map[string]string{"SentTimestamp": strconv.FormatInt(sent.UnixMilli(), 10), "ApproximateReceiveCount": "1"}}
			facts, err := h.Inspect(&rec)
			var fact idempotency.Fact
			if len(facts) == 1 {
				fact = facts[0]
			} else if err == nil {
				t.Fatalf("Inspect = %d facts of one message", len(facts))
			}
			if _, herr := h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{rec}}); herr != nil {
				t.Fatal(herr)
			}
			var line struct{ Key, Outcome string }
			if err := json.Unmarshal([]byte(strings.Split(strings.TrimSpace(f.Logs.String()), "\n")[0]), &line); err != nil {
				t.Fatalf("%v: %s", err, f.Logs.String())
			}
			switch {
			case c.bad && err == nil:
				t.Errorf("Inspect accepted what Handle ended %s: %+v", line.Outcome, fact)
			case c.bad && line.Outcome != outcome.BadInput.String():
				t.Errorf("Handle ended it %s, want bad input (Inspect: %v)", line.Outcome, err)
			case !c.bad && err != nil:
				t.Errorf("Inspect: %v (Handle: %s)", err, line.Outcome)
			case !c.bad && (fact.Key != line.Key || !fact.Sent.Equal(c.origin)):
				t.Errorf("Inspect = key %q, origin %v; Handle logged key %q, want origin %v", fact.Key, fact.Sent, line.Key, c.origin)
			}
			if c.bad && err != nil && !errors.Is(err, outcome.ErrBadInput) && !strings.Contains(err.Error(), "invalid") {
				t.Errorf("Inspect's refusal %v is not bad input", err)
			}
		})
	}
}
