package sqsbatch_test

import (
	"strings"
	"testing"

	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/internal/queue/queuetest"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/sqsbatch"
)

var sized = queuetest.Sized

// TestMessageSizeLimitIgnoresTheEnvelope: the limit is about the business
// message, whatever its delivery wraps around it. With the default limit
// (256 KiB, what an SNS topic accepts by default) a message of exactly that
// size goes through raw and in an SNS envelope, even when JSON escaping
// doubles the body; one byte more is bad input in both modes.
func TestMessageSizeLimitIgnoresTheEnvelope(t *testing.T) {
	const limit = 262144 // the documented default
	for _, c := range []struct {
		name    string
		size    int
		d       contract.Delivery
		outcome string
	}{
		{"raw at the limit", limit, contract.Raw, "processed"},
		{"raw one byte over", limit + 1, contract.Raw, "bad_input"},
		{"the issue's 204803-byte message in an envelope", 204803, contract.Envelope, "processed"},
		{"envelope at the limit", limit, contract.Envelope, "processed"},
		{"envelope one byte over", limit + 1, contract.Envelope, "bad_input"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t)
			rec := message(sized(t, "big", c.size), c.d)
			line := handle(t, f, f.Handler(contract.Auto), rec)
			reason, _ := line["reason"].(string)
			if line["outcome"] != c.outcome {
				t.Fatalf("message of %d bytes in a body of %d: outcome %v (%s), want %s", c.size, len(rec.Body), line["outcome"], reason, c.outcome)
			}
			if c.outcome == "bad_input" && !strings.Contains(reason, "message of 262145 bytes") {
				t.Errorf("reason %q: want it to name the message's size", reason)
			}
			t.Logf("%s: message %d bytes, body %d bytes: %v", c.d, c.size, len(rec.Body), line["outcome"])
		})
	}
}

// TestLargestMessagePerDelivery measures, through the adapter, the largest
// message of each delivery mode at the largest limit the construct allows
// for it: 1 MiB raw (the body is the message), and
// contract.MaxEnvelopedMessageBytes in an SNS envelope, of the worst content for
// escaping, whose body still fits SQS's 1 MiB. One byte more is bad input.
func TestLargestMessagePerDelivery(t *testing.T) {
	for _, c := range []struct {
		d     contract.Delivery
		limit int
	}{
		{contract.Raw, contract.MaxQueueBodyBytes},
		{contract.Envelope, contract.MaxEnvelopedMessageBytes},
	} {
		t.Run(string(c.d), func(t *testing.T) {
			for _, size := range []int{c.limit, c.limit + 1} {
				f := newFixture(t)
				cfg := f.Config(contract.Auto)
				cfg.MaxMessageBytes = c.limit
				rec := message(sized(t, "largest", size), c.d)
				line := handle(t, f, sqsbatch.New(f.Guard, orderKey, f.Effect, cfg), rec)
				want := map[bool]string{true: "processed", false: "bad_input"}[size == c.limit]
				if line["outcome"] != want {
					t.Fatalf("message of %d bytes in a body of %d: %v (%v), want %s", size, len(rec.Body), line["outcome"], line["reason"], want)
				}
				if size == c.limit && len(rec.Body) > contract.MaxQueueBodyBytes {
					t.Fatalf("the largest message's body is %d bytes, more than SQS takes (%d)", len(rec.Body), contract.MaxQueueBodyBytes)
				}
				t.Logf("%s: message %d bytes, body %d bytes: %v", c.d, size, len(rec.Body), line["outcome"])
			}
		})
	}
}
