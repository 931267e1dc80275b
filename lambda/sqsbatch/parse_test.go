package sqsbatch_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/events"

	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/internal/limits"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/handler"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency/storetest"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/internal/verdict"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/outcome"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/sqsbatch"
)

func TestParse(t *testing.T) {
	env := `{"Type":"Notification","MessageId":"m","TopicArn":"arn:aws:sns:us-east-1:1:orders","Message":"{\"orderId\":\"1\"}"}`
	cases := []struct {
		name, body string
		d          contract.Delivery
		want       string // "" means bad input
	}{
		{"raw", `{"orderId":"1"}`, contract.Auto, `{"orderId":"1"}`},
		{"envelope auto", env, contract.Auto, `{"orderId":"1"}`},
		{"envelope forced", env, contract.Envelope, `{"orderId":"1"}`},
		{"envelope read raw", env, contract.Raw, env},
		{"raw where an envelope is required", `{"orderId":"1"}`, contract.Envelope, ""},
		{"business message with a Type field", `{"Type":"Notification","orderId":"1"}`, contract.Auto, `{"Type":"Notification","orderId":"1"}`},
		{"not JSON", `orderId=1`, contract.Auto, ""},
		{"envelope with non-JSON message", `{"Type":"Notification","TopicArn":"a","Message":"hello"}`, contract.Auto, ""},
		{"envelope with numeric message", `{"Type":"Notification","TopicArn":"a","Message":1}`, contract.Auto, ""},
		{"envelope with null message", `{"Type":"Notification","TopicArn":"a","Message":null}`, contract.Auto, ""},
		{"invalid UTF-8", "{\"orderId\":\"\xff\"}", contract.Auto, ""},
		{"empty", ``, contract.Auto, ""},
		{"array", `[1,2]`, contract.Auto, `[1,2]`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := sqsbatch.Parse([]byte(c.body), c.d)
			if c.want == "" {
				if !errors.Is(err, outcome.ErrBadInput) {
					t.Fatalf("Parse = %q, %v; want ErrBadInput", got, err)
				}
				return
			}
			if err != nil || string(got) != c.want {
				t.Fatalf("Parse = %q, %v; want %q", got, err, c.want)
			}
		})
	}
}

// FuzzParse: whatever the body, parsing and key extraction never panic, and
// either yield a valid JSON message with a valid key or fail with a reason.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`{"orderId":"1","amount":5}`,
		`{"Type":"Notification","TopicArn":"a","Message":"{\"orderId\":\"1\"}"}`,
		`{"Type":"Notification","TopicArn":"a","Message":5}`,
		`{"orderId":"a#b\u0001"}`,
		`[[[[[[[[[[]]]]]]]]]]`,
		"{\"orderId\":\"\xff\"}",
		`{"orderId":"` + strings.Repeat("k", 2100) + `"}`,
	} {
		f.Add(s)
	}
	store := storetest.NewMemoryStore()
	g, err := idempotency.NewGuard(store, idempotency.Config{Namespace: "fuzz"})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body string) {
		msg, err := sqsbatch.Parse([]byte(body), contract.Auto)
		if err != nil {
			if !errors.Is(err, outcome.ErrBadInput) {
				t.Fatalf("error without ErrBadInput: %v", err)
			}
			return
		}
		if !json.Valid(msg) || !utf8.Valid(msg) {
			t.Fatalf("Parse returned %q, not valid UTF-8 JSON", msg)
		}
		var o order
		if json.Unmarshal(msg, &o) != nil {
			return
		}
		fact, err := g.Fact(o.OrderID, msg)
		if err != nil {
			if !errors.Is(err, idempotency.ErrInvalidKey) && !errors.Is(err, idempotency.ErrInvalidPayload) {
				t.Fatalf("Fact: %v", err)
			}
			return
		}
		if len(fact.Key) > limits.MaxKeyBytes || !strings.HasPrefix(fact.Key, "fuzz#") || fact.Hash == "" {
			t.Fatalf("bad fact %+v", fact)
		}
		// The whole adapter, on the same body: one record, never a panic,
		// always one outcome.
		h := sqsbatch.New(g, orderKey, func(context.Context, order, idempotency.Reservation) (string, error) { return "", nil }, sqsbatch.Config{Batch: handler.Batch{Logger: discardLogger, Metrics: discard{}}})
		resp, herr := h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{{MessageId: "m", Body: body}}})
		if herr != nil || len(resp.BatchItemFailures) > 1 {
			t.Fatalf("Handle: %v, %v", resp, herr)
		}
	})
}

// A key function's refusal reads "bad input: key: <reason>", whether or not
// the function wrapped ErrBadInput itself (as the README's example does):
// never "bad input: key: bad input: …".
func TestKeyRefusalSaysBadInputOnce(t *testing.T) {
	for _, err := range []error{
		fmt.Errorf("%w: amount -1 must be positive", outcome.ErrBadInput),
		errors.New("amount -1 must be positive"),
	} {
		got := verdict.KeyRefusal(err)
		if got.Error() != "bad input: key: amount -1 must be positive" || !errors.Is(got, outcome.ErrBadInput) {
			t.Errorf("KeyRefusal(%q) = %q", err, got)
		}
	}
}
