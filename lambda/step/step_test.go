package step_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idempotent-consumer/idempotent-consumer/internal/steptask"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/step/states"

	"github.com/idempotent-consumer/idempotent-consumer/internal/dynalite"
	"github.com/idempotent-consumer/idempotent-consumer/internal/fakeclock"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/dynamostore"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/step"
)

var quiet = step.Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}

// newStore returns a store over a table of a real DynamoDB-compatible
// server (dynalite) started on a loopback port for the test.
func newStore(t *testing.T) idempotency.Store {
	t.Helper()
	srv := dynalite.Start(t)
	return dynamostore.New(srv.Client(), srv.NewTable(t))
}

func newGuard(t *testing.T, store idempotency.Store) *idempotency.Guard {
	t.Helper()
	return newGuardAt(t, store, time.Now)
}

// newGuardAt returns a guard on the clock now.
func newGuardAt(t *testing.T, store idempotency.Store, now func() time.Time) *idempotency.Guard {
	t.Helper()
	// A finishing budget that a loaded machine's dynalite meets: 200 ms failed
	// a complete once under load (Step.StoreFailed).
	g, err := idempotency.NewGuard(store, idempotency.Config{Namespace: "saga", MaxResultBytes: step.MaxOutputBytes, FinishBudget: 2 * time.Second, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// charge is an effect that counts its runs and returns an output that
// differs between runs, so that a replayed output is told from a new one.
type charge struct {
	runs atomic.Int64
	keys sync.Map // reservation keys seen
	gate chan struct{}
}

func (c *charge) effect(ctx context.Context, input json.RawMessage, r idempotency.Reservation) (json.RawMessage, error) {
	n := c.runs.Add(1)
	c.keys.Store(r.Key, true)
	if c.gate != nil {
		<-c.gate
	}
	return json.RawMessage(fmt.Sprintf(`{"chargeId":"ch_%d","at":%d}`, n, time.Now().UnixNano())), nil
}

func newStep(t *testing.T, g *idempotency.Guard, name string, effect step.Effect) step.Handler {
	t.Helper()
	h, err := step.New(g, name, step.Field("order.id"), effect, quiet)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

const order42 = `{"order":{"id":"o-42","amount":50}}`

func invoke(t *testing.T, h step.Handler, input string) (string, string) {
	t.Helper()
	return invokeBy(t, h, input, time.Now().Add(10*time.Second))
}

// invokeBy invokes h with a context whose deadline is deadline, as Lambda
// gives an invocation, and returns its output and error name.
func invokeBy(t *testing.T, h step.Handler, input string, deadline time.Time) (string, string) {
	t.Helper()
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	out, err := h(ctx, json.RawMessage(input))
	return string(out), step.ErrorName(err)
}

// TestRetryAfterEffectReturnsSameOutput: a Task retry after the effect (the
// first attempt's answer lost to a timeout), a redrive, and another
// execution of the same fact all get the first output verbatim, and the
// effect ran once.
func TestRetryAfterEffectReturnsSameOutput(t *testing.T) {
	c := &charge{}
	h := newStep(t, newGuard(t, newStore(t)), "charge", c.effect)
	first, name := invoke(t, h, order42)
	if name != "" {
		t.Fatalf("first attempt: error %s", name)
	}
	for _, attempt := range []string{"retry", "redrive", "second execution"} {
		out, name := invoke(t, h, order42)
		if name != "" || out != first {
			t.Fatalf("%s: got %s (error %q), want the first output %s", attempt, out, name, first)
		}
	}
	if n := c.runs.Load(); n != 1 {
		t.Fatalf("the effect ran %d times, want 1", n)
	}
}

// TestConcurrentExecutionsOneEffect: two executions of one fact (an Express
// workflow started twice) run the step at once: one effect; the other is
// told Step.InProgress, a name the Retry matches, and its retry gets the
// same output.
func TestConcurrentExecutionsOneEffect(t *testing.T) {
	c := &charge{gate: make(chan struct{})}
	h := newStep(t, newGuard(t, newStore(t)), "charge", c.effect)
	const executions = 8
	outs, names := make([]string, executions), make([]string, executions)
	returned := make(chan int, executions)
	var wg sync.WaitGroup
	for i := range executions {
		wg.Go(func() {
			outs[i], names[i] = invoke(t, h, order42)
			returned <- i
		})
	}
	// The gate holds the effect until every other execution has reached
	// the store and been answered: only one can return before it opens.
	timeout := time.After(time.Minute)
	for n := range executions - 1 {
		select {
		case <-returned:
		case <-timeout:
			close(c.gate)
			t.Fatalf("%d executions answered, %d effects running: want all but one answered while one effect runs", n, c.runs.Load())
		}
	}
	close(c.gate)
	wg.Wait()
	var first string
	for i := range executions {
		switch names[i] {
		case "":
			first = outs[i]
		case states.ErrorInProgress:
			if !slices.Contains(states.Retryable(), names[i]) {
				t.Fatalf("%s is not retryable", names[i])
			}
		default:
			t.Fatalf("execution %d: error %s", i, names[i])
		}
	}
	for i := range executions {
		if names[i] == states.ErrorInProgress {
			if outs[i], names[i] = invoke(t, h, order42); names[i] != "" {
				t.Fatalf("retry of execution %d: %s", i, names[i])
			}
		}
		if outs[i] != first {
			t.Fatalf("execution %d got %s, want %s", i, outs[i], first)
		}
	}
	if n := c.runs.Load(); n != 1 {
		t.Fatalf("the effect ran %d times, want 1", n)
	}
}

// TestCompensationIsAnotherStep: the refund of a charge is the same fact
// under another step name: its own record, run once, with its own
// reservation key to pass downstream.
func TestCompensationIsAnotherStep(t *testing.T) {
	g := newGuard(t, newStore(t))
	chargeFx, refundFx := &charge{}, &charge{}
	chargeStep, refund := newStep(t, g, "charge", chargeFx.effect), newStep(t, g, "refund", refundFx.effect)
	charged, _ := invoke(t, chargeStep, order42)
	refunded, name := invoke(t, refund, order42)
	if name != "" || refunded == charged {
		t.Fatalf("refund: %s (error %q); the charge's output was %s", refunded, name, charged)
	}
	again, _ := invoke(t, refund, order42)
	if again != refunded || refundFx.runs.Load() != 1 || chargeFx.runs.Load() != 1 {
		t.Fatalf("refund again: %s; runs: charge %d refund %d", again, chargeFx.runs.Load(), refundFx.runs.Load())
	}
	var keys []string
	for _, fx := range []*charge{chargeFx, refundFx} {
		fx.keys.Range(func(k, _ any) bool { keys = append(keys, k.(string)); return true })
	}
	if len(keys) != 2 || keys[0] == keys[1] || !strings.Contains(keys[0], "charge#o-42") || !strings.Contains(keys[1], "refund#o-42") {
		t.Fatalf("reservation keys %q: want the fact under each step's name", keys)
	}
}

// TestPermanentErrorsAreNamed: bad input and a payload mismatch are named
// errors that no Retry of Retriers matches, and the effect does not run.
func TestPermanentErrorsAreNamed(t *testing.T) {
	c := &charge{}
	h := newStep(t, newGuard(t, newStore(t)), "charge", c.effect)
	if _, name := invoke(t, h, order42); name != "" {
		t.Fatal(name)
	}
	for _, tc := range []struct{ input, want string }{
		{`{"order":`, states.ErrorBadInput},
		{`{"order":{"amount":50}}`, states.ErrorBadInput},
		{`{"order":{"id":""}}`, states.ErrorBadInput},
		{`{"order":{"id":true}}`, states.ErrorBadInput},
		{`{"order":"o-42"}`, states.ErrorBadInput},
		{`{"order":{"id":"o-42","amount":60}}`, states.ErrorMismatch},
	} {
		out, name := invoke(t, h, tc.input)
		if name != tc.want || out != "" {
			t.Errorf("%s: got %q and error %q, want %s", tc.input, out, name, tc.want)
		}
		for _, r := range steptask.Retriers(time.Minute) {
			if slices.Contains(r.ErrorEquals, name) {
				t.Errorf("%s is retried by %v", name, r.ErrorEquals)
			}
		}
		if !slices.Contains(states.Permanent(), name) {
			t.Errorf("%s is not in Permanent()", name)
		}
	}
	if n := c.runs.Load(); n != 1 {
		t.Fatalf("the effect ran %d times, want 1", n)
	}
}

// TestEffectFailures: a failure the effect names is reported under its name
// (for a Catch) and a plain error or a panic as Step.EffectFailed (for a
// Retry); either way the reservation is released, and the next attempt runs
// the effect.
func TestEffectFailures(t *testing.T) {
	g := newGuard(t, newStore(t))
	var runs atomic.Int64
	h := newStep(t, g, "reserve", func(ctx context.Context, input json.RawMessage, r idempotency.Reservation) (json.RawMessage, error) {
		switch runs.Add(1) {
		case 1:
			return nil, step.Fail("OutOfStock", errors.New("no widgets left"))
		case 2:
			return nil, errors.New("warehouse API unavailable")
		case 3:
			panic("the effect broke")
		case 4:
			return nil, step.Fail("States.Custom", errors.New("a reserved name"))
		case 5:
			return nil, step.Fail("Backordered", nil)
		}
		return nil, nil
	})
	for _, want := range []string{"OutOfStock", states.ErrorEffect, states.ErrorEffect, states.ErrorEffect, "Backordered", ""} {
		out, name := invoke(t, h, order42)
		if name != want {
			t.Fatalf("run %d: error %q, want %q", runs.Load(), name, want)
		}
		if want == "" && out != "null" {
			t.Fatalf("an empty output is %q, want null", out)
		}
	}
	if out, name := invoke(t, h, order42); out != "null" || name != "" || runs.Load() != 6 {
		t.Fatalf("duplicate: %q %q after %d runs", out, name, runs.Load())
	}
}

// TestInvalidOutputRunsOnce: an effect that ran but returned an output
// that is not JSON is Step.InvalidOutput, and its fact is completed: a
// retry, a redrive or a second execution gets Step.OutputNotStored and
// never runs the effect again.
func TestInvalidOutputRunsOnce(t *testing.T) {
	var runs atomic.Int64
	h := newStep(t, newGuard(t, newStore(t)), "hold", func(context.Context, json.RawMessage, idempotency.Reservation) (json.RawMessage, error) {
		runs.Add(1)
		return json.RawMessage(`{not json`), nil
	})
	for _, want := range []string{states.ErrorInvalidOutput, states.ErrorOutputNotStored, states.ErrorOutputNotStored} {
		if _, name := invoke(t, h, order42); name != want {
			t.Fatalf("error %q, want %q", name, want)
		}
	}
	if runs.Load() != 1 {
		t.Fatalf("the effect ran %d times, want once", runs.Load())
	}
}

// TestLeaseEndsAtTheDeadline: an invocation that crashed after its effect
// (nothing completed, nothing released) holds the fact until its Lambda
// deadline: a retry before is Step.InProgress, one after takes the fact
// over under the same reservation key.
func TestLeaseEndsAtTheDeadline(t *testing.T) {
	store := newStore(t)
	c := &charge{}
	// The guards read a clock the test moves: the lease ends when the test
	// says, not after a wait. Deadlines are set on that clock.
	clock := fakeclock.New()
	crashed := newStep(t, newGuardAt(t, crashingStore{store}, clock.Now), "charge", c.effect)
	h := newStep(t, newGuardAt(t, store, clock.Now), "charge", c.effect)
	const timeout = time.Minute
	deadline := clock.Now().Add(timeout)
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	if _, err := crashed(ctx, json.RawMessage(order42)); step.ErrorName(err) != states.ErrorStore {
		t.Fatalf("crashed invocation: %v", err)
	}
	clock.Advance(timeout - time.Second)
	if _, name := invokeBy(t, h, order42, clock.Now().Add(timeout)); name != states.ErrorInProgress {
		t.Fatalf("retry within the lease: %q, want %s", name, states.ErrorInProgress)
	}
	clock.Advance(2 * time.Second)
	if out, name := invokeBy(t, h, order42, clock.Now().Add(timeout)); name != "" || !strings.Contains(out, "ch_2") {
		t.Fatalf("retry after the lease: %s %q", out, name)
	}
	n := 0
	c.keys.Range(func(any, any) bool { n++; return true })
	if c.runs.Load() != 2 || n != 1 {
		t.Fatalf("runs %d, reservation keys %d: want the takeover to run under the same key", c.runs.Load(), n)
	}
}

// crashingStore loses every write that would end a reservation, as an
// invocation that died after its effect would.
type crashingStore struct{ idempotency.Store }

func (crashingStore) Complete(context.Context, idempotency.Record) error {
	return errors.New("the invocation died")
}

func (crashingStore) Release(context.Context, string, string) error {
	return errors.New("the invocation died")
}

// TestNewRefuses lists every problem at once.
func TestNewRefuses(t *testing.T) {
	small, err := idempotency.NewGuard(idempotency.Store(nil), idempotency.Config{Namespace: "saga"})
	if err == nil || small != nil {
		t.Fatal("a nil store was accepted")
	}
	g, _ := idempotency.NewGuard(crashingStore{}, idempotency.Config{Namespace: "saga"})
	_, err = step.New(g, "charge#1", nil, nil, quiet)
	if err == nil {
		t.Fatal("accepted")
	}
	for _, want := range []string{"'#'", "key function is nil", "effect is nil"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%v: does not say %q", err, want)
		}
	}
	if _, err := step.New(nil, strings.Repeat("x", 81), step.Field("id"), (&charge{}).effect, quiet); err == nil || !strings.Contains(err.Error(), "guard is nil") || !strings.Contains(err.Error(), "81 bytes") {
		t.Errorf("%v", err)
	}
}

// TestRetriers: the policy's waits for a lease add up to twice the
// function's timeout, none longer than half of it, and the transient group
// holds Lambda's errors and the step's transient names.
func TestRetriers(t *testing.T) {
	for _, timeout := range []time.Duration{3 * time.Second, 30 * time.Second, 15 * time.Minute} {
		rs := steptask.Retriers(timeout)
		if len(rs) != 2 || !slices.Contains(rs[0].ErrorEquals, "Lambda.ServiceException") || !slices.Contains(rs[0].ErrorEquals, states.ErrorEffect) {
			t.Fatalf("%v: %+v", timeout, rs)
		}
		lease := rs[1]
		if !slices.Contains(lease.ErrorEquals, "States.Timeout") || !slices.Contains(lease.ErrorEquals, states.ErrorInProgress) {
			t.Fatalf("%v: %+v", timeout, lease)
		}
		var waited time.Duration
		for a := 1; a <= lease.MaxAttempts; a++ {
			d := lease.Delay(a)
			if d > timeout/2+time.Second {
				t.Fatalf("%v: wait %d is %v", timeout, a, d)
			}
			waited += d
		}
		if waited < 2*timeout || waited > 2*timeout+timeout/2+time.Second {
			t.Fatalf("%v: the waits add up to %v (%d attempts)", timeout, waited, lease.MaxAttempts)
		}
		for _, name := range states.Retryable() {
			if !slices.Contains(rs[0].ErrorEquals, name) && !slices.Contains(lease.ErrorEquals, name) {
				t.Fatalf("%s is not retried", name)
			}
		}
	}
}

// TestMaxOutputBytesIsTheTasks: the public bound is the one the step
// applies (steptask's, which the construct's Task shares).
func TestMaxOutputBytesIsTheTasks(t *testing.T) {
	if step.MaxOutputBytes != steptask.MaxOutputBytes {
		t.Fatalf("step.MaxOutputBytes = %d, steptask.MaxOutputBytes = %d", step.MaxOutputBytes, steptask.MaxOutputBytes)
	}
}
