package step_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/step/states"

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
		if _, name := invoke(t, h, `{"id":1}`); name != states.ErrorOutputNotStored {
			t.Fatalf("error %q, want %s", name, states.ErrorOutputNotStored)
		}
	}
	if runs != 1 {
		t.Fatalf("the effect ran %d times", runs)
	}
}

// TestAStepKeepsItsOutputsWhateverItsGuard: the bound of a step's stored
// output comes with the step, not with its guard: over a guard with the
// default MaxResultBytes (4,096), a 100,000-byte output is returned whole
// to its duplicate.
func TestAStepKeepsItsOutputsWhateverItsGuard(t *testing.T) {
	g, err := idempotency.NewGuard(storetest.NewMemoryStore(), idempotency.Config{Namespace: "saga"})
	if err != nil {
		t.Fatal(err)
	}
	output := `"` + strings.Repeat("x", 100_000) + `"`
	h, err := step.New(g, "report", step.Field("id"), func(context.Context, json.RawMessage, idempotency.Reservation) (json.RawMessage, error) {
		return json.RawMessage(output), nil
	}, quiet)
	if err != nil {
		t.Fatal(err)
	}
	for _, call := range []string{"first call", "duplicate"} {
		if out, name := invoke(t, h, `{"id":1}`); name != "" || out != output {
			t.Fatalf("%s: %d bytes, error %q; want the output whole", call, len(out), name)
		}
	}
}

// TestHashedKeysStayHidden: with the guard's KeySecret, neither the log
// lines nor the errors (which Step Functions keeps as the Cause in the
// execution's history) nor the store hold the fact's key, whatever the
// answer.
func TestHashedKeysStayHidden(t *testing.T) {
	store := storetest.NewMemoryStore()
	g, err := idempotency.NewGuard(store, idempotency.Config{Namespace: "saga", MaxResultBytes: step.MaxOutputBytes, KeySecret: []byte(strings.Repeat("s", 32))})
	if err != nil {
		t.Fatal(err)
	}
	var logs strings.Builder
	gate, entered := make(chan struct{}), make(chan struct{})
	h, err := step.New(g, "charge", step.Field("customer"), func(ctx context.Context, input json.RawMessage, r idempotency.Reservation) (json.RawMessage, error) {
		if strings.Contains(string(input), "slow") {
			close(entered)
			<-gate
		}
		return json.RawMessage(`{"charged":true}`), nil
	}, step.Config{Logger: slog.New(slog.NewJSONHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	const secret = "alice@example.com"
	var errs []string
	for _, in := range []string{`{"customer":"alice@example.com","amount":1}`, `{"customer":"alice@example.com","amount":1}`, `{"customer":"alice@example.com","amount":2}`} {
		if _, err := h(context.Background(), json.RawMessage(in)); err != nil {
			errs = append(errs, step.ErrorName(err)+": "+step.ErrorMessage(err))
		}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = h(context.Background(), json.RawMessage(`{"customer":"bob@example.com","slow":1}`))
	}()
	<-entered
	if _, err := h(context.Background(), json.RawMessage(`{"customer":"bob@example.com","slow":1}`)); step.ErrorName(err) == states.ErrorInProgress {
		errs = append(errs, step.ErrorMessage(err))
	}
	close(gate)
	<-done
	if len(errs) != 2 || !strings.HasPrefix(errs[0], states.ErrorMismatch) {
		t.Fatalf("errors %q: want a mismatch and an in-progress answer", errs)
	}
	recs := store.Records()
	if len(recs) != 2 {
		t.Fatalf("%d records", len(recs))
	}
	everything := logs.String() + strings.Join(errs, "\n") + fmt.Sprint(recs)
	for _, key := range []string{secret, "bob@example.com", "alice", "bob"} {
		if strings.Contains(everything, key) {
			t.Fatalf("%q is in the logs, errors or records:\n%s", key, everything)
		}
	}
}
