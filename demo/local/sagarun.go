package local

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/step/states"
)

// sagaAPIVars are the variables naming the downstream APIs a step's handler
// calls, each pointed at the saga's fake downstream under the step's own
// base path.
// (app/cmd/saga: the stock, payments and shipping services).
var sagaAPIVars = []string{"STOCK_API_URL", "PAYMENTS_API_URL", "SHIPPING_API_URL"}

// pooledFunction is a step's function: execution environments under the
// emulator, each running one invocation at a time.
type pooledFunction struct {
	pool chan *runtime
	all  []*runtime
}

func (f *pooledFunction) invoke(ctx context.Context, payload []byte) (invocation, error) {
	var rt *runtime
	select {
	case rt = <-f.pool:
	case <-ctx.Done():
		return invocation{}, ctx.Err()
	}
	defer func() { f.pool <- rt }()
	return rt.invoke(ctx, payload)
}

func (f *pooledFunction) stop() {
	for _, rt := range f.all {
		rt.stop()
	}
}

// sagaRun is the saga's part of a run: the template's state machine on
// kumo, its steps' functions behind the bridge, and the scenario.
type sagaRun struct {
	sm        *StateMachine
	def       definition
	tasks     []taskState
	sfn       sfnAPI
	fx        *sagaAPI
	bridge    *sagaBridge
	scale     float64
	fns       []*pooledFunction
	fxSrv     *httptest.Server // the fake downstream's
	bridgeSrv *httptest.Server
	dropping  map[string]bool // "execution/state/attempt" whose answer is dropped, set before any start
	logf      func(string, ...any)

	mu         sync.Mutex
	executions int
	redrives   int
}

func (s *sagaRun) stop() {
	if s == nil {
		return
	}
	for _, f := range s.fns {
		f.stop()
	}
	for _, srv := range []*httptest.Server{s.fxSrv, s.bridgeSrv} {
		if srv != nil {
			srv.Close()
		}
	}
}

// startSaga reads the template's state machine, builds and starts each of
// its steps' handlers, and creates their functions on kumo behind the
// bridge. It returns nil when the template has no state machine.
func startSaga(ctx context.Context, stack *Stack, dep *deployment, c *clients, srcDir, rie, binDir, logDir string, opts Options) (*sagaRun, error) {
	if len(stack.StateMachines) == 0 {
		return nil, nil
	}
	if len(stack.StateMachines) > 1 {
		return nil, fmt.Errorf("the template has %d state machines; the local run runs one", len(stack.StateMachines))
	}
	sm := stack.StateMachines[0]
	text, err := dep.value(sm.Definition)
	if err != nil {
		return nil, fmt.Errorf("state machine %s: %w", sm.ID, err)
	}
	s, err := newSagaRun(ctx, sm, text, c.endpoint, opts.TimeScale, opts.Progress)
	if err != nil {
		return s, err
	}
	for _, t := range s.tasks {
		if s.bridge.fns[t.Function] != nil {
			continue
		}
		f, err := s.startFunction(ctx, stack, dep, c, srcDir, rie, binDir, logDir, opts, t.Function)
		if err != nil {
			return s, err
		}
		if err := s.addFunction(ctx, t.Function, f); err != nil {
			return s, err
		}
	}
	return s, nil
}

// newSagaRun reads the state machine's resolved definition and starts the
// fake downstream and the bridge, with no function yet (addFunction).
func newSagaRun(ctx context.Context, sm *StateMachine, text, endpoint string, scale float64, progress io.Writer) (*sagaRun, error) {
	def, err := parseDefinition(text)
	if err != nil {
		return nil, fmt.Errorf("state machine %s: %w", sm.ID, err)
	}
	tasks, err := def.tasks()
	if err != nil {
		return nil, fmt.Errorf("state machine %s: %w", sm.ID, err)
	}
	s := &sagaRun{sm: sm, def: def, tasks: tasks, sfn: sfnAPI{endpoint: endpoint}, fx: newSagaAPI(), scale: scale, dropping: map[string]bool{},
		logf: func(f string, a ...any) { fmt.Fprintf(progress, "demo: "+f+"\n", a...) }}
	s.fxSrv = httptest.NewServer(s.fx)
	s.bridge = newSagaBridge(ctx, s.sfn, map[string]invoker{}, func(execution, state string, n int) bool {
		return s.dropping[fmt.Sprintf("%s/%s/%d", execution, state, n)]
	}, s.logf)
	s.bridgeSrv = httptest.NewServer(s.bridge)
	return s, nil
}

// apiURL is the base URL of a step's downstream APIs: the fake's, under
// the function's name.
func (s *sagaRun) apiURL(function string) string { return s.fxSrv.URL + "/" + function }

// addFunction puts f behind the bridge as the kumo function name. Every
// function is added before the first execution starts.
func (s *sagaRun) addFunction(ctx context.Context, name string, f invoker) error {
	s.bridge.fns[name] = f
	return createBridgedFunction(ctx, s.sfn.endpoint, name, s.bridgeSrv.URL+"/"+name)
}

// startFunction builds a step's handler and starts its execution
// environments, its downstream APIs at api.
func (s *sagaRun) startFunction(ctx context.Context, stack *Stack, dep *deployment, c *clients, srcDir, rie, binDir, logDir string, opts Options, id string) (*pooledFunction, error) {
	fn := stack.Functions[id]
	if fn == nil {
		return nil, fmt.Errorf("state machine %s: its function %s is not a function of the template", s.sm.ID, id)
	}
	fmt.Fprintf(opts.Progress, "demo: %s: building its handler %s for this machine (go build)\n", fn.Name, fn.Package)
	// A directory of the saga's own: its steps' packages are named as the
	// consumers' (app/cmd/saga/charge and app/cmd/charge).
	bin, err := buildHandler(ctx, srcDir, fn.Package, filepath.Join(binDir, "saga"))
	if err != nil {
		return nil, err
	}
	vars, err := dep.environment(fn)
	if err != nil {
		return nil, fmt.Errorf("function %s: %w", id, err)
	}
	extra := map[string]string{}
	for _, v := range sagaAPIVars {
		extra[v] = s.apiURL(id)
	}
	line, err := functionLog(logDir, fn, nil)
	if err != nil {
		return nil, err
	}
	f := &pooledFunction{pool: make(chan *runtime, 2)}
	s.fns = append(s.fns, f)
	for i := range cap(f.pool) {
		rt, err := startRuntime(ctx, rie, bin, fmt.Sprintf("%s-%d", fn.Name, i), handlerEnv(c.endpoint, extra, vars), time.Duration(dep.seconds(fn.Timeout))*time.Second, line)
		if err != nil {
			return f, err
		}
		f.all = append(f.all, rt)
		f.pool <- rt
	}
	fmt.Fprintf(opts.Progress, "demo: %s: %d execution environments started under the Lambda runtime interface emulator, behind the saga's bridge on kumo's Step Functions\n", fn.Name, cap(f.pool))
	return f, nil
}

// The saga's cases: what the scenario does to an order's saga.
const (
	casePlain     = "plain"
	caseTimeout   = "timeout after the effect"
	caseFailLast  = "failure in the last step"
	caseRedrive   = "redrive"
	caseDuplicate = "duplicated start"
)

// sagaCase is one order's saga and its fault.
type sagaCase struct {
	kind  string
	order order
}

// plan chooses where the faults go: the timeout after the effect on the
// second step of the forward path (the first that has a TimeoutSeconds and a
// Retry on States.Timeout, if not), the refusal on the last, the outage
// that fails an execution (its retries spent, with no Catch for it) on the
// first step that has no such Catch.
type plan struct {
	forward, compensations []taskState
	timeoutAt, failAt      taskState
	failName               string // the business failure the last step is refused with: one its Catch matches
	outageAt               taskState
}

func (s *sagaRun) plan() (plan, error) {
	var p plan
	for _, t := range s.tasks {
		if t.Compensation {
			p.compensations = append(p.compensations, t)
		} else {
			p.forward = append(p.forward, t)
		}
	}
	if len(p.forward) < 2 || len(p.compensations) == 0 {
		return p, fmt.Errorf("state machine %s: %d forward steps and %d compensations; the demo's saga needs two steps and a compensation at least", s.sm.ID, len(p.forward), len(p.compensations))
	}
	p.failAt = p.forward[len(p.forward)-1]
	all := s.def["States"].(map[string]any)
	if p.failName = caughtFailure(all[p.failAt.Name]); p.failName == "" {
		return p, fmt.Errorf("state machine %s: the last step, %s, catches no business failure by name, so that no failure can be injected there", s.sm.ID, p.failAt.Name)
	}
	found := false
	for _, t := range append([]taskState{p.forward[1]}, p.forward...) {
		if t.TimeoutSeconds > 0 && t.RetriesTimeout {
			p.timeoutAt, found = t, true
			break
		}
	}
	if !found {
		return p, fmt.Errorf("state machine %s: no step has a TimeoutSeconds and a Retry on States.Timeout, so that no timeout can be injected", s.sm.ID)
	}
	found = false
	for _, t := range append(p.forward, p.compensations...) {
		st, _ := all[t.Name].(map[string]any)
		if !catches(st, states.ErrorEffect) {
			p.outageAt, found = t, true
			break
		}
	}
	if !found {
		return p, fmt.Errorf("state machine %s: every step catches %s, so that no execution fails for a redrive", s.sm.ID, states.ErrorEffect)
	}
	return p, nil
}

// caughtFailure returns the first error name a state's Catch matches that
// is a business failure (not States.* nor a step's own Step.*), or "".
func caughtFailure(state any) string {
	st, _ := state.(map[string]any)
	list, _ := st["Catch"].([]any)
	for _, c := range list {
		cm, _ := c.(map[string]any)
		for _, e := range asStrings(cm["ErrorEquals"]) {
			if !strings.HasPrefix(e, "States.") && !strings.HasPrefix(e, "Step.") {
				return e
			}
		}
	}
	return ""
}

// catches says whether a state's Catch matches the error name.
func catches(st map[string]any, name string) bool {
	list, _ := st["Catch"].([]any)
	for _, c := range list {
		cm, _ := c.(map[string]any)
		for _, e := range asStrings(cm["ErrorEquals"]) {
			if e == name || e == "States.ALL" {
				return true
			}
		}
	}
	return false
}

// start runs an execution of the order on its own copy of the definition
// (saga.go: the bridge's payload names the execution), from startAt when
// it is not "" (a redrive), and waits for it to end: its status.
func (s *sagaRun) start(ctx context.Context, name, startAt string, input []byte) (string, error) {
	text, err := s.def.bridged(name, startAt, s.scale)
	if err != nil {
		return "", err
	}
	typ := s.sm.Type
	m, err := s.sfn.call(ctx, "CreateStateMachine", map[string]any{"name": s.sm.ID + "-" + name, "definition": text, "roleArn": "arn:aws:iam::000000000000:role/saga", "type": typ})
	if err != nil {
		return "", err
	}
	out, err := s.sfn.call(ctx, "StartExecution", map[string]any{"stateMachineArn": m["stateMachineArn"], "name": name, "input": string(input)})
	if err != nil {
		return "", err
	}
	s.mu.Lock()
	s.executions++
	s.mu.Unlock()
	for {
		d, err := s.sfn.call(ctx, "DescribeExecution", map[string]any{"executionArn": out["executionArn"]})
		if err != nil {
			return "", err
		}
		if status, _ := d["status"].(string); status != "RUNNING" {
			if status != "SUCCEEDED" {
				s.logf("saga: execution %s %s: %v %v", name, status, d["error"], d["cause"])
			}
			return status, nil
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("execution %s did not end: %w", name, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// run runs the sagas of n orders (at least one of each case) at once and
// reports.
func (s *sagaRun) run(ctx context.Context, n int) (*SagaReport, error) {
	p, err := s.plan()
	if err != nil {
		return nil, err
	}
	kinds := []string{caseTimeout, caseFailLast, caseRedrive, caseDuplicate}
	for len(kinds) < n {
		kinds = append(kinds, casePlain)
	}
	cases := make([]sagaCase, len(kinds))
	placed := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	for i, k := range kinds {
		cases[i] = sagaCase{kind: k, order: order{OrderID: fmt.Sprintf("saga-%03d", i+1), CustomerID: fmt.Sprintf("c-saga-%03d", i+1), Amount: int64(2000 + 100*i),
			Currency: "EUR", Email: fmt.Sprintf("saga%d@example.com", i+1), PlacedAt: placed.Add(time.Duration(i) * time.Second).Format(time.RFC3339)}}
		id := cases[i].order.OrderID
		switch k {
		case caseTimeout:
			s.dropping[fmt.Sprintf("%s/%s/1", id, p.timeoutAt.Name)] = true
		case caseFailLast:
			s.fx.setRefused(p.failAt.Function, id, p.failName)
			if c := p.compensations[0]; c.TimeoutSeconds > 0 && c.RetriesTimeout { // a compensation's answer lost too
				s.dropping[fmt.Sprintf("%s/%s/1", id, c.Name)] = true
			}
		case caseRedrive:
			s.fx.setDown(p.outageAt.Function, id, true)
			if p.outageAt.Compensation { // the compensation runs after a failure
				s.fx.setRefused(p.failAt.Function, id, p.failName)
			}
		}
	}
	s.logf("saga: %s (%s): %d sagas at once: a timeout after %s's effect, a refusal at %s (%s: the compensations run), an outage at %s until its execution fails, then a redrive; a duplicated start",
		s.sm.ID, s.sm.Type, len(cases), p.timeoutAt.Name, p.failAt.Name, p.failName, p.outageAt.Name)
	rep := &SagaReport{Machine: s.sm.ID, Injected: map[string]int{}}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	unexpected := func(f string, a ...any) {
		mu.Lock()
		rep.Unexpected++
		mu.Unlock()
		s.logf("saga: unexpected: "+f, a...)
	}
	for _, sc := range cases {
		wg.Go(func() {
			if err := s.runCase(ctx, p, sc, rep, unexpected); err != nil {
				mu.Lock()
				firstErr = cmpErr(firstErr, err)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	s.check(p, cases, rep, unexpected)
	return rep, nil
}

func cmpErr(first, err error) error {
	if first != nil {
		return first
	}
	return err
}

// runCase runs one order's saga with its fault.
func (s *sagaRun) runCase(ctx context.Context, p plan, sc sagaCase, rep *SagaReport, unexpected func(string, ...any)) error {
	input, _ := json.Marshal(sc.order)
	id := sc.order.OrderID
	switch sc.kind {
	case caseDuplicate: // two executions of one input at once, as an Express workflow's at-least-once start
		var wg sync.WaitGroup
		statuses := make([]string, 2)
		errs := make([]error, 2)
		for i, name := range []string{id + "-a", id + "-b"} {
			wg.Go(func() { statuses[i], errs[i] = s.start(ctx, name, "", input) })
		}
		wg.Wait()
		for i := range statuses {
			if errs[i] != nil {
				return errs[i]
			}
			if statuses[i] != "SUCCEEDED" {
				unexpected("%s: the duplicated start's execution %d ended %s", id, i+1, statuses[i])
			}
		}
		return nil
	case caseRedrive:
		status, err := s.start(ctx, id, "", input)
		if err != nil {
			return err
		}
		last, ok := s.bridge.lastAttempt(id)
		if status != "FAILED" || !ok || !last.failed {
			unexpected("%s: the execution ended %s (its last step %q failed: %v), want FAILED in a step, to redrive", id, status, last.state, last.failed)
			return nil
		}
		s.fx.setDown(p.outageAt.Function, id, false) // the downstream is back
		s.mu.Lock()
		s.redrives++
		s.mu.Unlock()
		if status, err = s.start(ctx, id+"-redrive", last.state, last.stateInput); err != nil {
			return err
		}
		if status != "SUCCEEDED" && !p.outageAt.Compensation {
			unexpected("%s: the redrive from %s ended %s", id, last.state, status)
		}
		return nil
	}
	status, err := s.start(ctx, id, "", input)
	if err != nil {
		return err
	}
	if sc.kind != caseFailLast && status != "SUCCEEDED" {
		unexpected("%s (%s): the execution ended %s", id, sc.kind, status)
	}
	if sc.kind == caseFailLast && status != "FAILED" {
		unexpected("%s: the execution ended %s, want FAILED: its last step was refused, and its compensations end in a Fail state", id, status)
	}
	return nil
}

// check counts the effects downstream: each reservation's effect once,
// every saga complete (each forward step's effect) or compensated (the
// last step's refused, each compensation's once).
func (s *sagaRun) check(p plan, cases []sagaCase, rep *SagaReport, unexpected func(string, ...any)) {
	steps, retries, dropped, replays, diverged := s.bridge.counts()
	rep.Steps, rep.Retries, rep.Executions, rep.Redrives = steps, retries, s.executions, s.redrives
	rep.Doubles = s.fx.doubles()
	rep.Injected["timeout_after_effect"], rep.Injected["refused"], rep.Injected["outage_failures"] = dropped, s.fx.refused, s.fx.failed
	rep.Injected["replayed_after_timeout"] = replays
	if diverged > 0 {
		unexpected("%d retries after a lost answer got another output than the step's stored one", diverged)
	}
	for _, sc := range cases {
		id := sc.order.OrderID
		compensated := sc.kind == caseFailLast || (sc.kind == caseRedrive && p.outageAt.Compensation)
		lost := false
		for _, t := range p.forward {
			want := 1
			if compensated && t.Name == p.failAt.Name {
				want = 0
			}
			if got := s.fx.effects(t.Function, id); got < want {
				lost = true
			}
		}
		for _, t := range p.compensations {
			got := s.fx.effects(t.Function, id)
			rep.Compensations += got
			switch {
			case compensated && got == 0:
				lost = true
			case !compensated && got > 0:
				unexpected("%s (%s): compensation %s ran for a saga that did not fail", id, sc.kind, t.Name)
			}
		}
		if lost {
			rep.Lost++
		}
	}
	if dropped == 0 || s.fx.refused == 0 || s.fx.failed == 0 {
		unexpected("faults injected: %d answers dropped, %d effects refused, %d outage failures; want each", dropped, s.fx.refused, s.fx.failed)
	}
}

// prepareSaga starts the template's saga (if it has a state machine):
// its functions built and started behind the bridge. begin starts its
// scenario in the background, wait waits for its report (nil without a
// state machine); stop ends its functions. The run begins the scenario
// once its producers are done: the saga's invocations come in its first
// seconds, then its outage's execution waits out its retries (about a
// minute with the construct's policy) beside the drain.
func prepareSaga(ctx context.Context, stack *Stack, dep *deployment, c *clients, srcDir, rie, binDir, logDir string, opts Options) (begin func(), wait func() (*SagaReport, error), stop func(), err error) {
	s, err := startSaga(ctx, stack, dep, c, srcDir, rie, binDir, logDir, opts)
	if err != nil || s == nil {
		return func() {}, func() (*SagaReport, error) { return nil, nil }, s.stop, err
	}
	var (
		rep    *SagaReport
		runErr = errors.New("the saga's scenario was not run")
		done   = make(chan struct{})
		once   sync.Once
	)
	begin = func() {
		once.Do(func() {
			go func() {
				defer close(done)
				t0 := time.Now()
				if rep, runErr = s.run(ctx, opts.Sagas); runErr == nil {
					s.logf("saga: done in %.1fs: %s", time.Since(t0).Seconds(), rep.line())
				}
			}()
		})
	}
	wait = func() (*SagaReport, error) {
		begin() // a run that never began it runs it now
		<-done
		if runErr != nil {
			return nil, fmt.Errorf("saga: %w", runErr)
		}
		return rep, nil
	}
	return begin, wait, s.stop, nil
}
