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
			h := sqsbatch.New(f.guard, orderKey, f.effect, f.config(contract.Auto))
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
			if err := json.Unmarshal([]byte(strings.Split(strings.TrimSpace(f.logs.String()), "\n")[0]), &line); err != nil {
				t.Fatalf("%v: %s", err, f.logs.String())
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

// TestInspectReadsEachRecordOfAnS3Message: an S3 notification's facts are
// its records', each with the key the handler stores (ObjectKey, URL-decoded),
// and S3's test event has none.
func TestInspectReadsEachRecordOfAnS3Message(t *testing.T) {
	f := newFixture(t)
	h := f.objectsHandler(&objects{})
	rec := events.SQSMessage{MessageId: "m-1", Attributes: map[string]string{"SentTimestamp": strconv.FormatInt(time.Now().UnixMilli(), 10)},
		Body: s3Body(s3Rec{bucket: "uploads", key: "invoices/a+b.pdf", eTag: "e1", version: "v1", size: 3}, s3Rec{bucket: "uploads", key: "invoices/c.pdf", eTag: "e2", version: "v2", size: 4})}
	facts, err := h.Inspect(&rec)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, fact := range facts {
		keys = append(keys, fact.Key)
	}
	want := []string{"charge#uploads/invoices/a b.pdf@v1", "charge#uploads/invoices/c.pdf@v2"}
	if strings.Join(keys, "|") != strings.Join(want, "|") {
		t.Errorf("Inspect = keys %q, want %q", keys, want)
	}
	rec.Body = s3TestEvent
	if facts, err := h.Inspect(&rec); err != nil || len(facts) != 0 {
		t.Errorf("the test event: %d facts, %v; want none", len(facts), err)
	}
}
