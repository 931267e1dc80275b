package chaos

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/idempotent-consumer/idempotent-consumer/internal/steptask"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/step"
	stepstates "github.com/idempotent-consumer/idempotent-consumer/lambda/step/states"
)

// SagaConfig configures RunSaga, the simulation of an order saga on Step
// Functions (reserve stock → charge → ship, with release and refund as
// compensations) whose steps are package step's handlers, on the same
// scheduler and store as the other modes.
//
// Step Functions is modelled as the service documents it: a Task state
// invokes its function with the state input, waits at most its
// TimeoutSeconds (States.Timeout), and matches the error's name against its
// Retry (steptask.Retriers) and then its Catch (the business failures, which
// start the compensations); a state whose retries are exhausted fails the
// execution, which is redriven from that state with the same input and
// ARN. Some orders are started twice (an Express workflow's at-least-once
// start, under another execution name), and some executions restart from
// the beginning (a lost internal state). Each attempt may meet a Lambda
// service error before the invocation, a crash of the invocation before
// or after its effect, an effect that outlives the function's timeout,
// a downstream error, an answer lost after the effect (the task times
// out), and store calls that are slow, throttled, fail, or take effect
// while the caller sees an error.
type SagaConfig struct {
	Seed int64
	// Sagas is the number of orders. Default: 1000.
	Sagas int
	// Store is "memory" or "dynamodb" (on the server of DynamoDB), as
	// Config.Store. Default: memory.
	Store    string
	DynamoDB *dynamodb.Client
	// Sabotage "execution-key" keys every step by the execution's ARN
	// instead of the order: two executions of one order then make two
	// effects, which the invariants must see. Sabotage "no-guard" runs the
	// steps over a store that forgets every record, so that every call of
	// a step is new to its guard and runs the effect again, with the same
	// idempotency key: the downstream counts every call, so the invariants
	// must see it too.
	Sabotage string
	// Stall bounds the real time a step of the simulation may take.
	// Default: 1m.
	Stall time.Duration
}

// SagaSummary is what a run of RunSaga did and the invariants' verdict.
type SagaSummary struct {
	Seed            int64
	Store, Sabotage string
	// Executions counts the executions started (DuplicateStarts of them a
	// second start of an order); Restarts the runs begun again from the
	// first state; Redrives the redrives of failed executions.
	Sagas, Executions, DuplicateStarts, Restarts, Redrives int
	// Steps counts the task attempts; Retries those the Retry policy made;
	// Timeouts the attempts whose answer did not arrive; Crashes the
	// invocations that died (CrashPoints, by "<step>/<point>":
	// before-effect, after-effect, after-complete, killed at the
	// deadline); StoreFaults the store calls faulted; InProgress the
	// attempts told Step.InProgress; Replays the attempts answered from a
	// step's record.
	Steps, Retries, Timeouts, Crashes, StoreFaults, InProgress, Replays int
	CrashPoints                                                         map[string]int
	// Succeeded, Compensated and Rejected count the executions by how
	// they ended; Effects and Compensations the forward and compensating
	// effects the downstream services applied (every call of a step's
	// effect, less the KeyAbsorbed re-runs).
	Succeeded, Compensated, Rejected, Effects, Compensations int
	// KeyAbsorbed counts the calls of an effect that the downstream
	// absorbed by its idempotency key: the re-run, under the same key, by
	// the takeover of a lapsed lease after an invocation that ran the
	// effect died (crashed, or killed at its deadline) or had its
	// completion write failed by the store, before the record was
	// completed. At most one re-run per such invocation is absorbed.
	KeyAbsorbed int
	// DoubleEffects counts the effects applied more than once per order
	// and step (every call of the effect but the first and the
	// KeyAbsorbed re-runs); LostCompensations the compensations an
	// order's fate needed that never applied; Stuck the executions that
	// never ended.
	DoubleEffects, LostCompensations, Stuck int
	// Errors counts the error names the state machine saw.
	Errors map[string]int
	// Violations lists the first ten broken invariants.
	Violations      []string
	firstViolations int
}

// OK reports whether every invariant held.
func (s *SagaSummary) OK() bool {
	return s.DoubleEffects == 0 && s.LostCompensations == 0 && s.Stuck == 0 && len(s.Violations) == 0
}

// Report writes the summary; its last line is the verdict.
func (s *SagaSummary) Report(w io.Writer) {
	names := make([]string, 0, len(s.Errors))
	for n := range s.Errors {
		names = append(names, n)
	}
	slices.Sort(names)
	var errs []string
	for _, n := range names {
		errs = append(errs, fmt.Sprintf("%s=%d", n, s.Errors[n]))
	}
	fmt.Fprintf(w, "saga errors seen by the state machine: %s\n", strings.Join(errs, " "))
	fmt.Fprintf(w, "saga crash points: %s\n", counts(s.CrashPoints))
	fmt.Fprintf(w, "saga outcomes: succeeded=%d compensated=%d rejected=%d; effects=%d compensations=%d; task invocations answered from the record=%d, told in progress=%d\n",
		s.Succeeded, s.Compensated, s.Rejected, s.Effects, s.Compensations, s.Replays, s.InProgress)
	for _, v := range s.Violations {
		fmt.Fprintln(w, "  violation:", v)
	}
	if more := s.firstViolations - len(s.Violations); more > 0 {
		fmt.Fprintf(w, "  and %d more violations\n", more)
	}
	sabotage := ""
	if s.Sabotage != "" {
		sabotage = " sabotage=" + s.Sabotage
	}
	fmt.Fprintf(w, "saga: seed=%d store=%s%s sagas=%d executions=%d duplicate_starts=%d restarts=%d steps=%d retries=%d timeouts=%d crashes=%d store_faults=%d redrives=%d compensations=%d key_absorbed=%d double_effects=%d lost=%d stuck=%d\n",
		s.Seed, s.Store, sabotage, s.Sagas, s.Executions, s.DuplicateStarts, s.Restarts, s.Steps, s.Retries, s.Timeouts, s.Crashes, s.StoreFaults, s.Redrives, s.Compensations, s.KeyAbsorbed, s.DoubleEffects, s.LostCompensations, s.Stuck)
}

// The saga's step names: a compensation is the same fact (the order) under
// another step's name.
const (
	stepReserve = "reserve-stock"
	stepCharge  = "charge"
	stepShip    = "ship"
	stepRefund  = "refund"
	stepRelease = "release-stock"
)

// The business failures an effect names with step.Fail, which the states'
// Catch match; each order's fate is fixed when it is drawn, so that every
// execution of it meets the same one.
const (
	failOutOfStock    = "OutOfStock"
	failDeclined      = "PaymentDeclined"
	failUndeliverable = "Undeliverable"
)

// Timing of the simulated service, in virtual time.
const (
	sagaFunctionTimeout = 10 * time.Second
	// sagaTaskTimeout is each Task's TimeoutSeconds: longer than the
	// function's timeout, so that a function that runs out of time is
	// reported as such (Sandbox.Timedout), and States.Timeout means an
	// answer that did not arrive.
	sagaTaskTimeout = sagaFunctionTimeout + 2*time.Second
	sagaPoll        = 50 * time.Millisecond
	sagaMaxRedrives = 40
)

// sagaState is one state of the machine: its step, where it goes on success,
// and the business failure its Catch sends to a compensation ("" none).
type sagaState struct {
	step, next, catch, onCatch string
}

// sagaMachine is the order saga: reserve → charge → ship; a declined charge
// releases the stock, an undeliverable order is refunded and released. Only
// the business failures are caught: a state whose retries run out fails
// the execution, to be redriven, rather than compensate an effect that a
// duplicate execution may still complete.
var sagaMachine = map[string]sagaState{
	stepReserve: {stepReserve, stepCharge, failOutOfStock, "rejected"},
	stepCharge:  {stepCharge, stepShip, failDeclined, stepRelease},
	stepShip:    {stepShip, "succeeded", failUndeliverable, stepRefund},
	stepRefund:  {stepRefund, stepRelease, "", ""},
	stepRelease: {stepRelease, "compensated", "", ""},
}

type sagaOrder struct {
	id   string
	fate string // "" or the business failure its steps meet
	// executions of the order, for the check.
	executions []*sagaExecution
}

type sagaExecution struct {
	arn    string
	order  *sagaOrder
	state  string            // the state to run (redrive resumes here)
	data   map[string]string // outputs of the states that succeeded
	status string            // running, failed, succeeded, compensated, rejected
}

type sagaSim struct {
	cfg      SagaConfig
	sched    *scheduler
	clock    *clock
	rng      *rand.Rand
	sum      *SagaSummary
	handlers map[string]step.Handler
	// calls is the downstream ledger: every call of each step's effect
	// per order, by idempotency key (Reservation.Key) in the order first
	// seen.
	calls  map[string]map[string][]*sagaCalls // step → order → keys
	orders []*sagaOrder
}

// sagaCalls is what the downstream saw of one step of one order under one
// idempotency key: every call of the effect, and how many of the
// invocations that made them then left the record IN_PROGRESS by an
// injected fault (a crash or kill, or a failed completion write), whose
// lease a later call takes over and re-runs the effect under the same key,
// which the downstream absorbs as a payment API honours its key.
type sagaCalls struct {
	key           string
	calls, lapsed int
}

// runs is the number of effects these calls made: every call but the
// re-runs absorbed by the key, one per lapsed invocation.
func (c *sagaCalls) runs() (runs, absorbed int) {
	absorbed = min(c.lapsed, c.calls-1)
	return c.calls - absorbed, absorbed
}

type sagaInvocation struct {
	t        *task
	step     string
	deadline time.Time
	dead     bool
	ran      bool       // the effect ran
	call     *sagaCalls // the downstream's ledger of the effect, once it was called
	crash    string     // where the invocation dies: "", "before-effect", "after-effect", "after-complete", "killed" (at its deadline)
}

type sagaInvocationKey struct{}

func (m *sagaSim) chance(p float64) bool { return m.rng.Float64() < p }

func (m *sagaSim) between(lo, hi time.Duration) time.Duration {
	return lo + time.Duration(m.rng.Int64N(int64(hi-lo)+1))
}

// RunSaga runs the saga simulation and checks its invariants: no step's
// effect applied twice for an order, every compensation an order's fate
// needs applied (and none it does not), and every execution ended.
func RunSaga(ctx context.Context, cfg SagaConfig) (*SagaSummary, error) {
	if cfg.Sagas <= 0 {
		cfg.Sagas = 1000
	}
	if cfg.Store == "" {
		cfg.Store = "memory"
	}
	if cfg.Stall <= 0 {
		cfg.Stall = defaultStall
	}
	c := &clock{now: epoch}
	m := &sagaSim{cfg: cfg, sched: newScheduler(c, cfg.Stall), clock: c, rng: rand.New(rand.NewPCG(uint64(cfg.Seed), 0x5a9a)),
		sum:   &SagaSummary{Seed: cfg.Seed, Store: cfg.Store, Sabotage: cfg.Sabotage, Sagas: cfg.Sagas, Errors: map[string]int{}, CrashPoints: map[string]int{}},
		calls: map[string]map[string][]*sagaCalls{}}
	inner, _, _, err := openStore(ctx, cfg.Store, cfg.Seed, cfg.DynamoDB, "saga")
	if err != nil {
		return nil, err
	}
	var store idempotency.Store = inner
	if cfg.Sabotage == "no-guard" {
		store = forgetfulStore{}
	}
	if err := m.newHandlers(&requestStore{inner: store, rng: m.rng, faults: &m.sum.StoreFaults, spend: m.spend}); err != nil {
		return nil, err
	}
	for i := range cfg.Sagas {
		o := &sagaOrder{id: fmt.Sprintf("o-%d", i)}
		switch x := m.rng.Float64(); {
		case x < 0.05:
			o.fate = failOutOfStock
		case x < 0.10:
			o.fate = failDeclined
		case x < 0.15:
			o.fate = failUndeliverable
		}
		m.orders = append(m.orders, o)
		start := epoch.Add(time.Duration(i) * 200 * time.Millisecond)
		m.start(o, fmt.Sprintf("order-%s", o.id), start)
		if m.chance(0.05) { // an Express-style start twice, under another name
			m.sum.DuplicateStarts++
			m.start(o, fmt.Sprintf("order-%s-again", o.id), start.Add(m.between(0, 3*time.Second)))
		}
	}
	if err := m.sched.run(ctx, epoch.Add(30*24*time.Hour)); err != nil {
		return m.sum, err
	}
	m.check()
	return m.sum, nil
}

// newHandlers builds each step's handler with package step over one guard.
// The state input carries the execution's ARN (as a state machine passes
// $$.Execution.Id for tracing): the guard leaves it out of the payload hash,
// and the key is the order, unless the sabotage keys by the ARN.
func (m *sagaSim) newHandlers(store idempotency.Store) error {
	guard, err := idempotency.NewGuard(store, idempotency.Config{Namespace: "orders", Now: m.clock.Now, LeaseMax: sagaFunctionTimeout,
		FinishBudget: time.Second, Window: steptask.DefaultWindow, MaxResultBytes: step.MaxOutputBytes, PayloadIgnore: []string{"execution"}})
	if err != nil {
		return err
	}
	key := step.Field("order.id")
	switch m.cfg.Sabotage {
	case "", "no-guard": // no-guard: the store (RunSaga)
	case "execution-key":
		key = step.Field("execution")
	default:
		return fmt.Errorf("chaos: unknown saga sabotage %q (execution-key or no-guard)", m.cfg.Sabotage)
	}
	m.handlers = map[string]step.Handler{}
	for _, name := range []string{stepReserve, stepCharge, stepShip, stepRefund, stepRelease} {
		h, err := step.New(guard, name, key, m.effect(name), step.Config{Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			return err
		}
		m.handlers[name] = h
	}
	return nil
}

// start starts an execution of o named name at the virtual time at.
func (m *sagaSim) start(o *sagaOrder, name string, at time.Time) {
	e := &sagaExecution{arn: "arn:aws:states:us-east-1:123456789012:execution:orders:" + name, order: o, state: stepReserve, data: map[string]string{}, status: "running"}
	o.executions = append(o.executions, e)
	m.sched.spawn("execution "+name, at, func(t *task) {
		m.sum.Executions++
		m.run(t, e)
		for redrives := 0; e.status == "failed" && redrives < sagaMaxRedrives; redrives++ {
			// RedriveExecution: the same ARN and input, from the state
			// that failed; the states that succeeded keep their outputs.
			m.sched.park(t, m.between(time.Minute, 10*time.Minute))
			m.sum.Redrives++
			e.status = "running"
			m.run(t, e)
		}
	})
}

// run runs e's states from e.state until it ends or a state fails it. Now
// and then the execution loses its internal state and starts again from the
// beginning, as an Express workflow may.
func (m *sagaSim) run(t *task, e *sagaExecution) {
	for {
		st, ok := sagaMachine[e.state]
		if !ok {
			e.status = e.state // succeeded, compensated, rejected
			return
		}
		if m.chance(0.002) {
			m.sum.Restarts++
			e.state, e.data = stepReserve, map[string]string{}
			continue
		}
		out, name := m.task(t, e, st.step)
		switch {
		case name == "":
			e.data[st.step] = out
			e.state = st.next
		case name == st.catch:
			e.state = st.onCatch
		default:
			e.status = "failed" // retries exhausted, or an error no Retry matches
			return
		}
	}
}

// input is the state input of a step: the order and the execution (as
// $$.Execution.Id), and the outputs of the states before it, as ResultPath
// places them.
func (m *sagaSim) input(e *sagaExecution, stepName string) json.RawMessage {
	in := map[string]json.RawMessage{}
	o, _ := json.Marshal(map[string]any{"id": e.order.id, "fate": e.order.fate})
	in["order"] = o
	in["execution"], _ = json.Marshal(e.arn)
	prior := map[string][]string{
		stepCharge: {stepReserve}, stepShip: {stepReserve, stepCharge},
		stepRefund: {stepReserve, stepCharge}, stepRelease: {stepReserve},
	}[stepName]
	for _, p := range prior {
		in[p] = json.RawMessage(e.data[p])
	}
	b, _ := json.Marshal(in)
	return b
}

// task runs a Task state under its Retry policy and returns its output or
// the name of the error it ended with.
func (m *sagaSim) task(t *task, e *sagaExecution, stepName string) (string, string) {
	retriers := steptask.Retriers(sagaFunctionTimeout)
	used := make([]int, len(retriers))
	input := m.input(e, stepName)
	// Now and then the function becomes unavailable after the first
	// attempt, for longer than the retries last: the state fails the
	// execution, and the redrive finishes it.
	outage := m.chance(0.004)
	for n := 0; ; n++ {
		m.sum.Steps++
		out, name := m.attempt(t, stepName, input, outage && n > 0)
		if outage && n == 0 && name == "" {
			name = "Lambda.ServiceException" // the outage began as the answer was on its way
		}
		if name == "" {
			return out, ""
		}
		m.sum.Errors[name]++
		i := slices.IndexFunc(retriers, func(r steptask.Retrier) bool { return slices.Contains(r.ErrorEquals, name) })
		if i < 0 {
			return "", name
		}
		used[i]++
		if used[i] > retriers[i].MaxAttempts {
			return "", name
		}
		m.sum.Retries++
		m.sched.park(t, retriers[i].Delay(used[i]))
	}
}

// attempt invokes stepName's function once, as a Task state does, and
// returns the output or the error name the state sees. With outage, the
// function is unavailable: the invoke fails before it reaches it.
func (m *sagaSim) attempt(t *task, stepName string, input json.RawMessage, outage bool) (string, string) {
	if outage || m.chance(0.01) {
		return "", "Lambda.ServiceException"
	}
	inv := &sagaInvocation{step: stepName, deadline: m.clock.Now().Add(sagaFunctionTimeout)}
	switch x := m.rng.Float64(); {
	case x < 0.01:
		inv.crash = "before-effect"
	case x < 0.03:
		inv.crash = "after-effect"
	case x < 0.04:
		inv.crash = "after-complete"
	}
	var (
		out  json.RawMessage
		err  error
		done bool
	)
	inv.t = m.sched.spawn("invocation "+stepName, m.clock.Now(), func(st *task) {
		defer func() { done = true }()
		if inv.crash == "before-effect" {
			m.sched.park(st, m.between(time.Millisecond, 100*time.Millisecond))
			m.crash(inv)
			return
		}
		ctx, cancel := context.WithDeadline(context.WithValue(context.Background(), sagaInvocationKey{}, inv), inv.deadline)
		defer cancel()
		out, err = m.handlers[stepName](ctx, input)
		if inv.call != nil && (inv.dead || step.ErrorName(err) == stepstates.ErrorStore) {
			// The effect ran and an injected fault left its record
			// IN_PROGRESS: a crash or kill, or a failed completion write.
			inv.call.lapsed++
		}
		if inv.crash == "after-complete" && !inv.dead {
			m.crash(inv) // the record is written; the answer never leaves
		}
	})
	for waited := time.Duration(0); !done; waited += sagaPoll {
		if waited >= sagaTaskTimeout {
			m.sum.Timeouts++
			return "", "States.Timeout"
		}
		m.sched.park(t, sagaPoll)
	}
	switch {
	case inv.dead && inv.crash == "killed":
		return "", "Sandbox.Timedout"
	case inv.dead:
		return "", "Lambda.Unknown"
	case err != nil:
		if step.ErrorName(err) == stepstates.ErrorInProgress {
			m.sum.InProgress++
		}
		return "", step.ErrorName(err)
	case m.chance(0.02): // the answer arrives after TimeoutSeconds: the effect is done
		m.sum.Timeouts++
		return "", "States.Timeout"
	}
	if !inv.ran {
		m.sum.Replays++
	}
	return string(out), ""
}

func (m *sagaSim) crash(inv *sagaInvocation) {
	inv.dead = true
	m.sum.Crashes++
	m.sum.CrashPoints[inv.step+"/"+inv.crash]++
}

var errSagaDead = errors.New("the invocation is dead")

// effect is the service call of a step: it meets the order's business
// failure (before any change), a downstream error now and then, and
// otherwise calls the downstream (apply); its work may outlive the
// function's timeout, and its invocation may crash after it.
func (m *sagaSim) effect(stepName string) step.Effect {
	return func(ctx context.Context, input json.RawMessage, r idempotency.Reservation) (json.RawMessage, error) {
		inv := ctx.Value(sagaInvocationKey{}).(*sagaInvocation)
		inv.ran = true
		var in struct {
			Order struct{ ID, Fate string } `json:"order"`
		}
		if err := json.Unmarshal(input, &in); err != nil {
			return nil, err
		}
		work := m.between(10*time.Millisecond, time.Second)
		if m.chance(0.02) {
			work = m.between(8*time.Second, 15*time.Second) // may outlive the invocation
		}
		if err := m.work(inv, work/2); err != nil {
			return nil, err
		}
		if fail := map[string]string{stepReserve: failOutOfStock, stepCharge: failDeclined, stepShip: failUndeliverable}[stepName]; fail != "" && in.Order.Fate == fail {
			return nil, step.Fail(fail, fmt.Errorf("order %s", in.Order.ID))
		}
		if m.chance(0.04) {
			return nil, errors.New("the downstream service is unavailable")
		}
		m.apply(inv, stepName, in.Order.ID, r.Key)
		if err := m.work(inv, work/2); err != nil {
			return nil, err
		}
		if inv.crash == "after-effect" {
			m.crash(inv)
			return nil, errSagaDead
		}
		return json.RawMessage(fmt.Sprintf(`{"%s":"%s-%s","at":%q}`, stepName, stepName, in.Order.ID, m.clock.Now().Format(time.RFC3339Nano))), nil
	}
}

// work spends d of the invocation's time; Lambda kills it at its deadline.
func (m *sagaSim) work(inv *sagaInvocation, d time.Duration) error {
	m.sched.park(inv.t, d)
	if inv.dead {
		return errSagaDead
	}
	if m.clock.Now().After(inv.deadline) {
		inv.crash = "killed"
		m.crash(inv)
		return errSagaDead
	}
	return nil
}

// apply is the downstream service: it counts every call of a step for an
// order, by idempotency key, for inv.
func (m *sagaSim) apply(inv *sagaInvocation, stepName, order, key string) {
	byOrder := m.calls[stepName]
	if byOrder == nil {
		byOrder = map[string][]*sagaCalls{}
		m.calls[stepName] = byOrder
	}
	i := slices.IndexFunc(byOrder[order], func(c *sagaCalls) bool { return c.key == key })
	if i < 0 {
		i = len(byOrder[order])
		byOrder[order] = append(byOrder[order], &sagaCalls{key: key})
	}
	inv.call = byOrder[order][i]
	inv.call.calls++
}

// forgetfulStore is the store of the sabotage no-guard: it keeps no
// record, so that every call of a step reserves its fact anew.
type forgetfulStore struct{}

func (forgetfulStore) Reserve(context.Context, idempotency.Record, time.Time) error { return nil }
func (forgetfulStore) Get(context.Context, string) (*idempotency.Record, error)     { return nil, nil }
func (forgetfulStore) Complete(context.Context, idempotency.Record) error           { return nil }
func (forgetfulStore) Release(context.Context, string, string) error                { return nil }

// spend parks the invocation of ctx for d, as work does.
func (m *sagaSim) spend(ctx context.Context, d time.Duration) error {
	return m.work(ctx.Value(sagaInvocationKey{}).(*sagaInvocation), d)
}

// sagaWants is what each step must have applied for an order of each fate:
// the compensations exactly where a later step failed.
var sagaWants = map[string]map[string]int{
	"":                {stepReserve: 1, stepCharge: 1, stepShip: 1},
	failOutOfStock:    {},
	failDeclined:      {stepReserve: 1, stepRelease: 1},
	failUndeliverable: {stepReserve: 1, stepCharge: 1, stepRefund: 1, stepRelease: 1},
}

// sagaEnds is how every execution of an order of each fate ends.
var sagaEnds = map[string]string{"": "succeeded", failOutOfStock: "rejected", failDeclined: "compensated", failUndeliverable: "compensated"}

// check compares the downstream ledger with each order's fate.
func (m *sagaSim) check() {
	s := m.sum
	for _, o := range m.orders {
		want := sagaWants[o.fate]
		for _, name := range []string{stepReserve, stepCharge, stepShip, stepRefund, stepRelease} {
			got, calls := 0, 0
			for _, c := range m.calls[name][o.id] {
				runs, absorbed := c.runs()
				got, calls = got+runs, calls+c.calls
				s.KeyAbsorbed += absorbed
			}
			compensation := name == stepRefund || name == stepRelease
			if compensation {
				s.Compensations += got
			} else {
				s.Effects += got
			}
			switch {
			case got > 1:
				s.DoubleEffects += got - 1
				m.violation("order %s: %s applied %d times (%d calls, %d keys)", o.id, name, got, calls, len(m.calls[name][o.id]))
			case got < want[name] && compensation:
				s.LostCompensations++
				m.violation("order %s (%s): %s never applied", o.id, o.fate, name)
			case got != want[name]:
				m.violation("order %s (%s): %s applied %d times, want %d", o.id, o.fate, name, got, want[name])
			}
		}
		for _, e := range o.executions {
			switch e.status {
			case sagaEnds[o.fate]:
				*map[string]*int{"succeeded": &s.Succeeded, "compensated": &s.Compensated, "rejected": &s.Rejected}[e.status]++
			case "failed", "running":
				s.Stuck++
				m.violation("execution %s is %s at %s after %d redrives", e.arn, e.status, e.state, sagaMaxRedrives)
			default:
				m.violation("execution %s of order %s (%s) ended %s, want %s", e.arn, o.id, o.fate, e.status, sagaEnds[o.fate])
			}
		}
	}
}

// violation records one broken invariant; the first ten are listed.
func (m *sagaSim) violation(format string, args ...any) {
	m.sum.firstViolations++
	if m.sum.firstViolations <= 10 {
		m.sum.Violations = append(m.sum.Violations, fmt.Sprintf(format, args...))
	}
}
