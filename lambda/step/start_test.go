package step_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/internal/dynalite"
	"github.com/idempotent-consumer/idempotent-consumer/internal/steptask"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/handler"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/step"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/step/states"
)

// stepContract is the environment the step construct writes for a step.
func stepContract(table, name string) map[string]string {
	s := contract.Defaults(30 * time.Second)
	s.Table, s.Namespace, s.Consumer, s.Source, s.StepName, s.Window = table, "orders", "Shop/"+name, contract.SourceStep, name, steptask.DefaultWindow
	return s.Encode()
}

// TestFromEnvRunsTheStepOfTheContract: FromEnv reads the contract as the
// construct writes it and builds the step on the contract's table through
// the default AWS client (a real DynamoDB-compatible server, dynalite,
// named by AWS_ENDPOINT_URL): the effect runs once, a duplicate gets its
// output, and the record key carries the step's name from STEP_NAME.
func TestFromEnvRunsTheStepOfTheContract(t *testing.T) {
	srv := dynalite.Start(t)
	table := srv.NewTable(t)
	t.Setenv("AWS_ENDPOINT_URL", srv.URL)
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	env := stepContract(table, "reserve-stock")
	var runs atomic.Int64
	var keys []string
	h, err := step.FromEnv(step.Field("orderId"), func(_ context.Context, _ json.RawMessage, r idempotency.Reservation) (json.RawMessage, error) {
		runs.Add(1)
		keys = append(keys, r.Key)
		return json.RawMessage(`{"reservation":"r-1"}`), nil
	}, handler.WithGetenv(func(k string) string { return env[k] }), handler.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		out, err := h(ctx, json.RawMessage(`{"orderId":"o-1"}`))
		cancel()
		if err != nil || string(out) != `{"reservation":"r-1"}` {
			t.Fatalf("invocation %d: %s, %v", i+1, out, err)
		}
	}
	if runs.Load() != 1 || len(keys) != 1 || !strings.Contains(keys[0], "reserve-stock#o-1") {
		t.Errorf("%d runs, keys %v; want one run keyed by the step's name and the fact", runs.Load(), keys)
	}
}

// TestFromEnvRefusesAnotherContract: a queue consumer's contract, or a
// step's without a name, is refused at init naming the fix.
func TestFromEnvRefusesAnotherContract(t *testing.T) {
	noop := func(context.Context, json.RawMessage, idempotency.Reservation) (json.RawMessage, error) {
		return nil, nil
	}
	queue := contract.Defaults(30 * time.Second)
	queue.Table, queue.Namespace, queue.Consumer = "t", "orders", "c"
	nameless := stepContract("t", "reserve-stock")
	delete(nameless, contract.StepNameVar)
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{queue.Encode(), "step.Start runs a step consumer"},
		{nameless, "STEP_NAME"},
	} {
		_, err := step.FromEnv(step.Field("orderId"), noop, handler.WithGetenv(func(k string) string { return tc.env[k] }), handler.WithLogger(slog.New(slog.DiscardHandler)))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("FromEnv: %v, want an error with %q", err, tc.want)
		}
	}
}

// TestFromEnvBoundsTheOutputByWhatStepFunctionsAccepts: a step started as
// users start it (FromEnv, over a real DynamoDB-compatible server) returns
// an output that, with its input, fits what Step Functions accepts less the
// Task state's margin (steptask.OutputBound), to its first call and to a
// duplicate; one byte more, or the 300,000 bytes the endpoint's bound once
// let through, is Step.OutputNotStored on the first call and on the
// duplicate, the effect run once, with a line that names the bound.
func TestFromEnvBoundsTheOutputByWhatStepFunctionsAccepts(t *testing.T) {
	srv := dynalite.Start(t)
	table := srv.NewTable(t)
	t.Setenv("AWS_ENDPOINT_URL", srv.URL)
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	env := stepContract(table, "report")
	const inputSize = len(`{"orderId":"o-1"}`)
	bound := steptask.OutputBound(inputSize)
	if bound+inputSize+steptask.TaskMargin != steptask.StatePayloadBytes {
		t.Fatalf("the bound %d with the input %d and the margin %d is not Step Functions' %d", bound, inputSize, steptask.TaskMargin, steptask.StatePayloadBytes)
	}
	sizes := map[string]int{"o-1": bound, "o-2": bound + 1, "o-3": 300_000}
	runs := map[string]int{}
	var logs bytes.Buffer
	h, err := step.FromEnv(step.Field("orderId"), func(_ context.Context, input json.RawMessage, _ idempotency.Reservation) (json.RawMessage, error) {
		var in struct{ OrderID string }
		_ = json.Unmarshal(input, &in)
		runs[in.OrderID]++
		return json.RawMessage(`"` + strings.Repeat("x", sizes[in.OrderID]-2) + `"`), nil
	}, handler.WithGetenv(func(k string) string { return env[k] }), handler.WithLogger(slog.New(slog.NewJSONHandler(&logs, nil))))
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"o-1", "o-2", "o-3"} {
		for _, call := range []string{"first call", "duplicate"} {
			logs.Reset()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			out, err := h(ctx, json.RawMessage(`{"orderId":"`+id+`"}`))
			cancel()
			switch {
			case id == "o-1" && (err != nil || len(out) != bound):
				t.Errorf("%s, an output of %d bytes, the bound: %d bytes, %v; want it whole", call, sizes[id], len(out), err)
			case id != "o-1" && (step.ErrorName(err) != states.ErrorOutputNotStored || out != nil):
				t.Errorf("%s, an output of %d bytes: %d bytes, error %q; want %s", call, sizes[id], len(out), step.ErrorName(err), states.ErrorOutputNotStored)
			case id != "o-1" && !strings.Contains(logs.String(), strconv.Itoa(bound)):
				t.Errorf("%s, an output of %d bytes: the line does not name the bound %d: %s", call, sizes[id], bound, logs.String())
			}
		}
		if runs[id] != 1 {
			t.Errorf("%s: the effect ran %d times, want once", id, runs[id])
		}
	}
}
