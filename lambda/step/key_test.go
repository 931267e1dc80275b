package step_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency/storetest"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/step"
)

func TestField(t *testing.T) {
	for _, tc := range []struct{ path, input, want, err string }{
		{"orderId", `{"orderId":"o-1"}`, "o-1", ""},
		{"orderId", `{"orderId":42}`, "42", ""},
		{"order.id", `{"order":{"id":" o 2 "}}`, " o 2 ", ""},
		{"order.id", `{"order":{"id":null}}`, "", "not a string or a number"},
		{"order.id", `{"order":[1]}`, "", "no object"},
		{"orderId", `{"other":1}`, "", "no field"},
		{"orderId", `[]`, "", "no object"},
	} {
		got, err := step.Field(tc.path)(json.RawMessage(tc.input))
		if got != tc.want || (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("Field(%q)(%s) = %q, %v; want %q, %q", tc.path, tc.input, got, err, tc.want, tc.err)
		}
	}
}

// TestOutputNotStored: an output larger than the guard stores completes the
// fact (the effect never runs again) and fails the step, and every
// duplicate, with a name no Retry matches, rather than go on with an output
// that a duplicate could not repeat.
func TestOutputNotStored(t *testing.T) {
	g, err := idempotency.NewGuard(storetest.NewMemoryStore(), idempotency.Config{Namespace: "saga", MaxResultBytes: step.MaxOutputBytes})
	if err != nil {
		t.Fatal(err)
	}
	runs := 0
	h, err := step.New(g, "report", step.Field("id"), func(context.Context, json.RawMessage, idempotency.Reservation) (json.RawMessage, error) {
		runs++
		return json.RawMessage(`"` + strings.Repeat("x", step.MaxOutputBytes) + `"`), nil
	}, quiet)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, name := invoke(t, h, `{"id":1}`); name != step.ErrorOutputNotStored {
			t.Fatalf("error %q, want %s", name, step.ErrorOutputNotStored)
		}
	}
	if runs != 1 {
		t.Fatalf("the effect ran %d times", runs)
	}
}
