// Package step makes the steps of a saga on Step Functions idempotent: each
// step's effect happens once per business fact, whatever Step Functions
// retries, redrives or starts twice, and every duplicate gets the step's
// output back, since a step's output feeds the next states.
//
// A step is request-shaped: one invocation is one event, the Task state's
// input. Its record key is the step's name and the fact's key ("<step>#<key>",
// under the guard's namespace), which comes from the business fact (KeyFunc,
// Field), never from the execution's ARN or name, the task token or the
// attempt: two executions of one fact (an Express workflow started twice, a
// redrive, a retry after a timeout) find the same record. A compensation is
// another step over the same fact ("release-stock" for "reserve-stock"), so
// that it too runs once.
//
// The first invocation runs the effect under the guard's conditional write
// and stores its output (JSON) with the completed record; a duplicate gets
// that output verbatim. Failures are Lambda function errors whose errorType
// is a name a state's Retry and Catch match (ErrorInProgress, …): Retryable
// lists the transient ones, Permanent those never retried, and an effect
// names its own business failures with Fail. Retriers is the Retry policy a
// step's Task state should carry.
//
// The reservation's lease ends at the invocation's Lambda deadline (the
// guard's rule): a Task state whose TimeoutSeconds ends the attempt earlier
// (States.Timeout) leaves the invocation running, and the retry is told
// ErrorInProgress until that invocation completes or its lease ends, when a
// retry takes the fact over. A step's output, with its input, is at most
// MaxOutputBytes, what Step Functions accepts less a margin for what the
// Task state adds; a larger one is ErrorOutputNotStored, never
// States.DataLimitExceeded, which no Catch matches. Under a Standard
// workflow the guard of a step keeps each fact for 15 days, the 14-day
// redrive period and a day.
package step

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"

	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/internal/steptask"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/outcome"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/step/states"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
)

// MaxOutputBytes bounds a step's output and its input together: 245,760
// bytes, the 262,144 bytes Step Functions accepts as a task's result or a
// state's output less 16 KiB for what the Task state adds (Lambda's
// envelope, on the optimized integration), since a ResultPath other than
// "$" merges the output into the input. An effect's output over what its
// input leaves is not stored, and the first call and every duplicate get
// ErrorOutputNotStored (a Catch matches it; no Retry does), with a line
// that names the bound; the effect ran and never runs again. Returned, the
// output would fail the execution with States.DataLimitExceeded, which no
// Retry or Catch matches, on every redrive. DESIGN.md, "Steps", says how the
// margin was chosen.
const MaxOutputBytes = 245_760

// Effect is a step's work, done once per fact: it is given the state input
// and the reservation it runs under (pass r.Key downstream as the
// idempotency key of an external call), and returns the step's output, JSON
// that feeds the next states ("null" when empty). An error releases the
// reservation; name a business failure with Fail so that a Catch can match
// it.
type Effect func(ctx context.Context, input json.RawMessage, r idempotency.Reservation) (output json.RawMessage, err error)

// Handler is a step's Lambda handler: lambda.Start(h). Its errors are
// reported by aws-lambda-go under the names Step Functions matches
// (ErrorName).
type Handler func(ctx context.Context, input json.RawMessage) (json.RawMessage, error)

// Config configures a step. The zero value of every field means the
// documented default.
type Config struct {
	// Logger receives one line per invocation. Default: outcome.NewLogger
	// on standard error at INFO.
	Logger *slog.Logger
}

// New returns the handler of the step name, whose effect runs once per
// fact (the key that key reads from the state input) under guard, whose
// records keep every output up to MaxOutputBytes whatever its
// MaxResultBytes (idempotency.Guard.WithLargestResults). It refuses,
// listing every problem, a nil guard, key or effect, and a name that is
// empty, longer than 80 bytes (as Step Functions bounds a state's name),
// not UTF-8 or holding '#' or control characters. The name is part of
// every record key ("<namespace>#<name>#<key>"): renaming a step makes
// every fact new to it, as a new step.
func New(guard *idempotency.Guard, name string, key KeyFunc, effect Effect, cfg Config) (Handler, error) {
	var problems []string
	if guard == nil {
		problems = append(problems, "the guard is nil; give the idempotency.Guard over the step's table")
	}
	if p := contract.StepNameProblem(name); p != "" {
		problems = append(problems, p)
	}
	if key == nil {
		problems = append(problems, "the key function is nil; give one that reads the business fact's key from the state input (step.Field(\"orderId\"))")
	}
	if effect == nil {
		problems = append(problems, "the effect is nil")
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("step %q:\n  - %s", name, strings.Join(problems, "\n  - "))
	}
	if cfg.Logger == nil {
		cfg.Logger = outcome.NewLogger(os.Stderr, slog.LevelInfo)
	}
	s := &step{guard: guard.WithLargestResults(), name: name, key: key, effect: effect, log: cfg.Logger}
	return s.invoke, nil
}

type step struct {
	guard  *idempotency.Guard
	name   string
	key    KeyFunc
	effect Effect
	log    *slog.Logger
}

// invocation is one invocation and what became of it, for its log line.
type invocation struct {
	outcome outcome.Outcome
	key     string // the record key, once known
	err     error  // the error returned, named
	reason  string
	level   slog.Level
}

func (s *step) invoke(ctx context.Context, input json.RawMessage) (json.RawMessage, error) {
	var x invocation
	out, err := s.run(ctx, input, &x)
	x.err = err
	s.report(ctx, &x)
	return out, err
}

func (s *step) run(ctx context.Context, input json.RawMessage, x *invocation) (json.RawMessage, error) {
	if !json.Valid(input) {
		return nil, x.fail(outcome.BadInput, states.ErrorBadInput, "the state input is not JSON")
	}
	k, err := s.key(input)
	if err == nil && k == "" {
		err = errors.New("the key is empty; keys come from the business fact (an order id), never from the execution")
	}
	if err != nil {
		return nil, x.fail(outcome.BadInput, states.ErrorBadInput, "key: "+err.Error())
	}
	fact, err := s.guard.Fact(s.name+"#"+k, input)
	if err != nil {
		return nil, x.fail(outcome.BadInput, states.ErrorBadInput, err.Error())
	}
	x.key = fact.Key
	bound := steptask.OutputBound(len(input))
	invalid, dropped := false, 0
	res, err := s.guard.Run(ctx, fact, func(ctx context.Context, r idempotency.Reservation) (string, error) {
		out, err := s.effect(ctx, input, r)
		if err != nil {
			return "", err
		}
		if len(out) == 0 {
			out = json.RawMessage("null")
		}
		// An output that is not JSON, or that Step Functions would refuse,
		// cannot go on to the next state, but the effect has run: the fact
		// is completed with no output, so that no retry, redrive or second
		// execution runs it again.
		if invalid = !json.Valid(out); invalid {
			return "", nil
		}
		if len(out) > bound {
			dropped = len(out)
			return "", nil
		}
		return string(out), nil
	})
	if err != nil {
		return nil, x.failed(err)
	}
	x.outcome = res.Outcome
	if res.TookOver {
		x.level, x.reason = slog.LevelWarn, "took over the lapsed reservation of another invocation: the effect may have run before, in part or in full"
	}
	if invalid {
		return nil, x.fail(x.outcome, states.ErrorInvalidOutput, "the effect's output is not JSON; the effect ran and will not run again")
	}
	if dropped == 0 && len(res.Value) > bound {
		dropped = len(res.Value) // stored under a larger bound, before this one
	}
	switch {
	case dropped > 0:
		return nil, x.fail(x.outcome, states.ErrorOutputNotStored, fmt.Sprintf("the step's output has %d bytes, more than the %d that its input of %d bytes leaves of the %d a step returns (%s): not returned; the effect ran and will not run again", dropped, bound, len(input), MaxOutputBytes, boundWhy()))
	case res.Value == "":
		// An output is never empty ("null" at least): "" is one that was
		// not stored. Stopping here, and for every duplicate, is what keeps
		// the saga from going on with an output it cannot repeat.
		return nil, x.fail(x.outcome, states.ErrorOutputNotStored, fmt.Sprintf("the step's output was not stored (not JSON, or more than the %d bytes that its input leaves of the %d a step returns: %s); the effect ran and will not run again", bound, MaxOutputBytes, boundWhy()))
	}
	return json.RawMessage(res.Value), nil
}

// boundWhy says where a step's bound comes from, for its log lines.
func boundWhy() string {
	return fmt.Sprintf("Step Functions accepts %d bytes as a task's result or a state's output, less %d for what the Task state adds, and a ResultPath merges the output into the input", steptask.StatePayloadBytes, steptask.TaskMargin)
}

// fail records the outcome and returns the error named name, logged at
// ERROR where an alarm counts it (as the batch adapters log a mismatch, bad
// input or a lost lease), at WARN otherwise.
func (x *invocation) fail(o outcome.Outcome, name, message string) error {
	x.outcome, x.reason = o, message
	level := slog.LevelWarn
	if slices.Contains(alarmed, name) {
		level = slog.LevelError
	}
	x.level = max(x.level, level)
	return invokeError(name, message)
}

// alarmed are the errors the step construct's alarms count from the log.
var alarmed = []string{states.ErrorMismatch, states.ErrorBadInput, states.ErrorLeaseLost, states.ErrorOutputNotStored, states.ErrorInvalidOutput}

// failed names an error of the guard's Run.
func (x *invocation) failed(err error) error {
	var f *failure
	switch {
	case errors.As(err, &f) && f.name != "" && !strings.HasPrefix(f.name, "States."):
		return x.fail(outcome.Failed, f.name, err.Error())
	case errors.Is(err, idempotency.ErrEffect):
		return x.fail(outcome.Failed, states.ErrorEffect, err.Error())
	case errors.Is(err, idempotency.ErrInProgress):
		return x.fail(outcome.InProgress, states.ErrorInProgress, err.Error())
	case errors.Is(err, idempotency.ErrPayloadMismatch):
		return x.fail(outcome.Mismatch, states.ErrorMismatch, err.Error()+": the step's fact was run with another input")
	case errors.Is(err, idempotency.ErrInvalidKey), errors.Is(err, idempotency.ErrInvalidPayload):
		return x.fail(outcome.BadInput, states.ErrorBadInput, err.Error())
	case errors.Is(err, idempotency.ErrNotStarted):
		return x.fail(outcome.NotStarted, states.ErrorNotStarted, err.Error())
	case errors.Is(err, idempotency.ErrLeaseLost):
		return x.fail(outcome.LeaseLost, states.ErrorLeaseLost, err.Error())
	}
	x.level = slog.LevelError
	return x.fail(outcome.Failed, states.ErrorStore, err.Error())
}

// report writes the invocation's log line.
func (s *step) report(ctx context.Context, x *invocation) {
	attrs := []slog.Attr{slog.String("step", s.name), slog.String("outcome", x.outcome.String())}
	if x.key != "" {
		attrs = append(attrs, slog.String("key", x.key))
	}
	if x.err != nil {
		attrs = append(attrs, slog.String("error", ErrorName(x.err)))
	}
	if x.reason != "" {
		attrs = append(attrs, slog.String("reason", x.reason))
	}
	s.log.LogAttrs(ctx, x.level, "step", attrs...)
}
