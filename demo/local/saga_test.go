package local

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/sivchari/kumo"

	"github.com/idempotent-consumer/idempotent-consumer/internal/schema"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/dynamostore"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/step"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/step/states"
)

// sagaDefinition is an order saga of the shape the app's (reserve → charge
// → ship; refund and release when shipping is refused), each Task state a
// lambda:invoke (the compensations the function's ARN, as the app's steps
// are) with a Retry on the lease's errors and a timeout, and on a step's
// effect failing once more.
func sagaDefinition(prefix string) string {
	task := func(fn, next string, extra map[string]any) map[string]any {
		st := map[string]any{"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke",
			"Parameters":     map[string]any{"FunctionName": "arn:aws:lambda:us-east-1:000000000000:function:" + prefix + fn, "Payload.$": "$"},
			"ResultSelector": map[string]any{"value.$": "$.Payload"}, "ResultPath": "$." + fn, "TimeoutSeconds": 60, "Next": next,
			"Retry": []any{
				map[string]any{"ErrorEquals": []string{"States.Timeout", states.ErrorInProgress}, "IntervalSeconds": 60, "MaxAttempts": 3, "BackoffRate": 2},
				map[string]any{"ErrorEquals": []string{states.ErrorEffect}, "IntervalSeconds": 60, "MaxAttempts": 1},
			}}
		for k, v := range extra {
			st[k] = v
		}
		return st
	}
	direct := func(st map[string]any) map[string]any { // the function's ARN as the resource (PayloadResponseOnly)
		st["Resource"] = st["Parameters"].(map[string]any)["FunctionName"]
		delete(st, "Parameters")
		delete(st, "ResultSelector")
		return st
	}
	def := map[string]any{"StartAt": "Reserve", "States": map[string]any{
		"Reserve": task("reserve", "Charge", nil),
		"Charge":  task("charge", "Ship", nil),
		"Ship": task("ship", "Done", map[string]any{"Catch": []any{
			map[string]any{"ErrorEquals": []string{"Refused"}, "ResultPath": "$.error", "Next": "Refund"}}}),
		"Refund":  direct(task("refund", "Release", nil)),
		"Release": direct(task("release", "Failed", nil)),
		"Done":    map[string]any{"Type": "Succeed"},
		"Failed":  map[string]any{"Type": "Fail", "Error": "OrderFailed", "Cause": "shipping refused the order"},
	}}
	text, _ := json.Marshal(def)
	return string(text)
}

// inProcessStep is a step of package step run in the test's process, as
// the runtime runs it: its answer, or its error as a function error's body.
type inProcessStep struct{ h step.Handler }

func (f inProcessStep) invoke(ctx context.Context, payload []byte) (invocation, error) {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second) // the function's timeout
	defer cancel()
	out, err := f.h(ctx, payload)
	if err != nil {
		body, _ := json.Marshal(map[string]string{"errorType": step.ErrorName(err), "errorMessage": step.ErrorMessage(err)})
		return invocation{body: body, funcErr: errorType(body)}, nil
	}
	return invocation{body: out}, nil
}

// newTestSaga is the saga of sagaDefinition on kumo, each step a step of
// package step over a table of kumo's DynamoDB, its effect a POST to the
// saga's downstream (a 422 the named failure Refused). A sabotaged step
// keys each invocation apart (as by the attempt or the execution).
func newTestSaga(t *testing.T, ctx context.Context, srv *kumo.Server, prefix string, sabotage bool) *sagaRun {
	t.Helper()
	c := newClients(srv.URL)
	table := prefix + "steps"
	if _, err := c.ddb.CreateTable(ctx, &dynamodb.CreateTableInput{TableName: aws.String(table), BillingMode: ddbtypes.BillingModePayPerRequest,
		AttributeDefinitions: []ddbtypes.AttributeDefinition{{AttributeName: aws.String(schema.Key), AttributeType: ddbtypes.ScalarAttributeTypeS}},
		KeySchema:            []ddbtypes.KeySchemaElement{{AttributeName: aws.String(schema.Key), KeyType: ddbtypes.KeyTypeHash}}}); err != nil {
		t.Fatal(err)
	}
	guard, err := idempotency.NewGuard(dynamostore.New(c.ddb, table), idempotency.Config{Namespace: "orders", MaxResultBytes: step.MaxOutputBytes})
	if err != nil {
		t.Fatal(err)
	}
	var progress strings.Builder
	t.Cleanup(func() { t.Log(progress.String()) })
	s, err := newSagaRun(ctx, &StateMachine{ID: prefix + "Saga", Type: "STANDARD"}, sagaDefinition(prefix), srv.URL, 60, &progress)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.stop)
	var attempt atomic.Int64
	key := step.Field("orderId")
	if sabotage {
		key = func(json.RawMessage) (string, error) { return fmt.Sprintf("attempt-%d", attempt.Add(1)), nil }
	}
	for _, name := range []string{"reserve", "charge", "ship", "refund", "release"} {
		fn := prefix + name
		api := s.apiURL(fn)
		h, err := step.New(guard, name, key, func(ctx context.Context, input json.RawMessage, r idempotency.Reservation) (json.RawMessage, error) {
			return postEffect(ctx, api+"/"+name, input, r.Key)
		}, step.Config{Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.addFunction(ctx, fn, inProcessStep{h}); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// postEffect makes a step's effect downstream, as the app's steps do: a
// 422 {"error": name} is the failure name, any other refusal an error that
// a retry may fix.
func postEffect(ctx context.Context, url string, input json.RawMessage, key string) (json.RawMessage, error) {
	var o struct {
		OrderID string `json:"orderId"`
	}
	_ = json.Unmarshal(input, &o)
	body, _ := json.Marshal(map[string]string{"orderId": o.OrderID})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Idempotency-Key", key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	var f struct{ Error, Message string }
	switch {
	case resp.StatusCode == http.StatusUnprocessableEntity && json.Unmarshal(out, &f) == nil && f.Error != "":
		return nil, step.Fail(f.Error, errors.New(f.Message))
	case resp.StatusCode != http.StatusOK:
		return nil, fmt.Errorf("%s: %s", resp.Status, out)
	}
	return out, nil
}

// TestSagaOnKumo runs the demo's saga scenario on kumo's Step Functions
// through the bridge, each step a step of package step in process (make
// demo runs the template's, under the emulator): the timeout after
// Charge's effect is retried and gets Charge's stored output; Ship's
// refusal is caught by name (Refused, as SendTaskFailure reports it) and
// each compensation runs once, Refund's answer lost once too; the outage
// fails the execution at Reserve after its retry, and the redrive from
// Reserve completes the saga; the duplicated start runs each effect once.
// A sabotaged saga, its steps keyed by the attempt, shows the double
// effects and fails the check.
func TestSagaOnKumo(t *testing.T) {
	srv := kumo.NewServer()
	defer srv.Close()
	restore, err := redirectEventDeliveries(srv.URL) // kumo's Step Functions calls Lambda at localhost:4566
	if err != nil {
		t.Fatal(err)
	}
	defer restore()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	rep, err := newTestSaga(t, ctx, srv, "Good", false).run(ctx, 6)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s %v", rep.line(), rep.Injected)
	// 6 sagas: 5 executions, the duplicated start's second and the redrive.
	if !rep.OK() || rep.Executions != 8 || rep.Redrives != 1 || rep.Compensations != 2 || rep.Retries < 3 {
		t.Errorf("%s (unexpected %d): want OK, 8 executions, 1 redrive, 2 compensations (refund and release, once each), 3 retries at least", rep.line(), rep.Unexpected)
	}
	if rep.Injected["timeout_after_effect"] != 2 || rep.Injected["replayed_after_timeout"] != 2 || rep.Injected["refused"] != 1 || rep.Injected["outage_failures"] != 2 {
		t.Errorf("injected %v: want 2 answers dropped (Charge's, Refund's) and both retries given the stored output, 1 refusal, 2 outage failures (Reserve and its retry)", rep.Injected)
	}
	if !strings.HasPrefix(rep.line(), "saga: executions=8 ") || !strings.HasSuffix(rep.line(), " compensations=2 double_effects=0 lost=0") {
		t.Errorf("line %q", rep.line())
	}

	bad, err := newTestSaga(t, ctx, srv, "Sabotaged", true).run(ctx, 6)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("sabotaged: %s", bad.line())
	if bad.OK() || bad.Doubles == 0 || !strings.Contains(bad.line(), fmt.Sprintf(" double_effects=%d ", bad.Doubles)) || (&Report{Saga: bad}).OK() {
		t.Errorf("the sabotaged saga passed: %s", bad.line())
	}
}

// TestSagaCheckCanFail: a double effect, a lost saga and an unexpected end
// each fail the run, and the first two show in the last line.
func TestSagaCheckCanFail(t *testing.T) {
	ok := &SagaReport{Executions: 8, Steps: 30, Retries: 3, Redrives: 1, Compensations: 2}
	if !ok.OK() || !(&Report{Saga: ok}).OK() || !strings.HasSuffix((&Report{Saga: ok}).Line(), " saga: executions=8 steps=30 retries=3 redrives=1 compensations=2 double_effects=0 lost=0") {
		t.Fatalf("a clean saga fails: %s", (&Report{Saga: ok}).Line())
	}
	for name, c := range map[string]struct {
		rep  SagaReport
		want string
	}{
		"double effect": {SagaReport{Doubles: 1}, "double_effects=1 lost=0"},
		"lost":          {SagaReport{Lost: 1}, "double_effects=0 lost=1"},
		"unexpected":    {SagaReport{Unexpected: 1}, "saga: "},
	} {
		if c.rep.OK() || (&Report{Saga: &c.rep}).OK() || !strings.Contains(c.rep.line(), c.want) {
			t.Errorf("%s: OK %v, line %q (want %q)", name, c.rep.OK(), c.rep.line(), c.want)
		}
	}
}

// TestBridgedDefinition: every Lambda Task state runs as a callback task on
// the same function, given the state's input, naming its state and
// execution; times are scaled, at least a second; a redrive starts at the
// failed state; any other task is refused.
func TestBridgedDefinition(t *testing.T) {
	def, err := parseDefinition(sagaDefinition("X"))
	if err != nil {
		t.Fatal(err)
	}
	tasks, err := def.tasks()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, ts := range tasks {
		names = append(names, fmt.Sprintf("%s:%s:%v:%d:%v", ts.Name, ts.Function, ts.Compensation, ts.TimeoutSeconds, ts.RetriesTimeout))
	}
	if got := strings.Join(names, " "); got != "Reserve:Xreserve:false:60:true Charge:Xcharge:false:60:true Ship:Xship:false:60:true Refund:Xrefund:true:60:true Release:Xrelease:true:60:true" {
		t.Fatalf("tasks %s", got)
	}
	text, err := def.bridged("o-1", "Charge", 60)
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		StartAt string
		States  map[string]struct {
			Resource       string
			TimeoutSeconds int
			Parameters     struct {
				FunctionName string
				Payload      map[string]any
			}
			Retry []struct{ IntervalSeconds int }
		}
	}
	if err := json.Unmarshal([]byte(text), &out); err != nil {
		t.Fatal(err)
	}
	ch := out.States["Charge"]
	if out.StartAt != "Charge" || ch.Resource != lambdaInvokeCallback || ch.Parameters.FunctionName != "Xcharge" || ch.TimeoutSeconds != 1 || ch.Retry[0].IntervalSeconds != 1 ||
		fmt.Sprint(ch.Parameters.Payload) != "map[execution:o-1 input.$:$ state:Charge stateInput.$:$ token.$:$$.Task.Token wrap:true]" {
		t.Fatalf("bridged %s", text)
	}
	if _, err := def.bridged("o-1", "Nowhere", 60); err == nil {
		t.Fatal("a redrive from a state that does not exist was accepted")
	}
	def["States"].(map[string]any)["Queue"] = map[string]any{"Type": "Task", "Resource": "arn:aws:states:::sqs:sendMessage", "End": true}
	if _, err := def.bridged("o-1", "", 60); err == nil || !strings.Contains(err.Error(), "Lambda Task states only") {
		t.Fatalf("an SQS task: %v", err)
	}
}

// checkSaga checks the saga's part of TestDemoEndToEnd: the template's
// state machine (the app's order saga) ran its sagas with every fault injected, each effect once,
// every saga complete or compensated, and the last line ends with the
// saga's counts.
func checkSaga(t *testing.T, root string, rep *Report) {
	t.Helper()
	stack, err := LoadStack(filepath.Join(root, "cdk.out"), "OrdersPlatform")
	if err != nil {
		t.Fatal(err)
	}
	s := rep.Saga
	if len(stack.StateMachines) != 1 || s == nil {
		t.Fatalf("the template has %d state machines, the run's saga is %v: want the order saga, run", len(stack.StateMachines), s)
	}
	t.Logf("%s %v", s.line(), s.Injected)
	// 6 sagas: 5 executions, the duplicated start's second and the redrive;
	// the retries of the timeout and of the outage at least; a compensation
	// at least for the refused last step.
	if !s.OK() || s.Executions != 8 || s.Redrives != 1 || s.Retries < 2 || s.Compensations < 1 || s.Steps < 6*2 {
		t.Errorf("saga: %s (unexpected %d): want OK, 8 executions, 1 redrive, 2 retries and a compensation at least", s.line(), s.Unexpected)
	}
	if s.Injected["timeout_after_effect"] == 0 || s.Injected["replayed_after_timeout"] != s.Injected["timeout_after_effect"] || s.Injected["refused"] == 0 || s.Injected["outage_failures"] == 0 {
		t.Errorf("saga: injected %v: want every fault, and each retry after a lost answer given the step's stored output", s.Injected)
	}
	if !strings.HasSuffix(rep.Line(), " "+s.line()) || !strings.HasSuffix(s.line(), " double_effects=0 lost=0") {
		t.Errorf("last line %q: want the saga's part last", rep.Line())
	}
}

// TestStateMachineFromTemplate: a state machine as CDK writes it (its
// DefinitionString an Fn::Join of the partition and the functions' ARNs)
// is read from the template and resolved to the functions' names on kumo;
// a state machine with no definition is refused by name.
func TestStateMachineFromTemplate(t *testing.T) {
	join := map[string]any{"Fn::Join": []any{"", []any{
		`{"StartAt":"Reserve","States":{"Reserve":{"Type":"Task","Resource":"arn:`, map[string]any{"Ref": "AWS::Partition"},
		`:states:::lambda:invoke","Parameters":{"FunctionName":"`, map[string]any{"Fn::GetAtt": []any{"ReserveFn", "Arn"}},
		`","Payload.$":"$"},"Next":"Undo"},"Undo":{"Type":"Task","Resource":"`, map[string]any{"Fn::GetAtt": []any{"UndoFn", "Arn"}}, `","End":true}}}`,
	}}}
	raw, _ := json.Marshal(map[string]any{"DefinitionString": join, "StateMachineType": "STANDARD"})
	s := &Stack{Functions: map[string]*Function{"ReserveFn": {ID: "ReserveFn"}, "UndoFn": {ID: "UndoFn"}}}
	if err := s.addStateMachine("OrderSaga", resource{Type: "AWS::StepFunctions::StateMachine", Properties: raw}); err != nil {
		t.Fatal(err)
	}
	d := &deployment{functionARN: map[string]string{}}
	for id := range s.Functions {
		d.functionARN[id] = "arn:aws:lambda:" + Region + ":" + localAccount + ":function:" + id
	}
	text, err := d.value(s.StateMachines[0].Definition)
	if err != nil {
		t.Fatal(err)
	}
	def, err := parseDefinition(text)
	if err != nil {
		t.Fatal(err)
	}
	tasks, err := def.tasks()
	if err != nil || len(tasks) != 2 || tasks[0].Function != "ReserveFn" || tasks[1].Function != "UndoFn" || tasks[0].Compensation || tasks[1].Compensation {
		t.Fatalf("tasks %+v, %v (definition %s)", tasks, err, text)
	}
	if err := s.addStateMachine("Empty", resource{Properties: []byte(`{"StateMachineType":"EXPRESS"}`)}); err == nil || !strings.Contains(err.Error(), "DefinitionString") {
		t.Fatalf("a state machine without a definition: %v", err)
	}
}

// TestSagaAPI: the saga's downstream counts effects per step and order
// (the order from the body, or from the reservation's key), refuses or
// fails what the scenario says, and counts a second effect of one
// reservation as a double.
func TestSagaAPI(t *testing.T) {
	a := newSagaAPI()
	post := func(path, body, key string) int {
		w := httptest.NewRecorder()
		r := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
		if key != "" {
			r.Header.Set("Idempotency-Key", key)
		}
		a.ServeHTTP(w, r)
		return w.Code
	}
	a.setRefused("Ship", "o-2", "Undeliverable")
	a.setDown("Charge", "o-3", true)
	for _, c := range []struct {
		path, body, key string
		want            int
	}{
		{"/Reserve/reservations", `{"orderId":"o-1"}`, "orders#reserve#o-1", 200},
		{"/Charge/charges", `{"amount":5}`, "orders#charge#o-1", 200}, // the order from the key
		{"/Ship/shipments", `{"orderId":"o-2"}`, "", 422},
		{"/Charge/charges", `{"orderId":"o-3"}`, "", 503},
		{"/Charge/charges", `{"amount":5}`, "no-order", 400},
		{"/Charge/charges", `not json`, "", 400},
	} {
		if got := post(c.path, c.body, c.key); got != c.want {
			t.Errorf("POST %s %s: %d, want %d", c.path, c.body, got, c.want)
		}
	}
	if a.effects("Reserve", "o-1") != 1 || a.effects("Charge", "o-1") != 1 || a.effects("Ship", "o-2") != 0 || a.refused != 1 || a.failed != 1 || a.doubles() != 0 {
		t.Fatalf("effects %v, refused %d, failed %d", a.byOrder, a.refused, a.failed)
	}
	a.setDown("Charge", "o-3", false)
	post("/Charge/charges", `{"orderId":"o-3"}`, "")
	post("/Charge/charges", `{"orderId":"o-3"}`, "")
	if a.doubles() != 1 {
		t.Fatalf("a second charge of o-3: %d doubles, want 1", a.doubles())
	}
}

// TestRuleStartingTheSaga: a rule whose target is a state machine of the
// template (the saga's start) keeps it apart from its queue targets, which
// are provisioned; a target that is neither is refused.
func TestRuleStartingTheSaga(t *testing.T) {
	s := &Stack{Queues: map[string]*Queue{"ShipQ": {ID: "ShipQ"}, "SagaDLQ": {ID: "SagaDLQ"}}, StateMachines: []*StateMachine{{ID: "OrderSaga"}},
		Rules: []*Rule{{ID: "OrderSagaRule", Targets: []RuleTarget{{ID: "T0", Queue: "OrderSaga", DeadLetter: "SagaDLQ"}, {ID: "T1", Queue: "ShipQ"}}}}}
	if err := s.checkRules(); err != nil {
		t.Fatal(err)
	}
	if r := s.Rules[0]; len(r.Targets) != 1 || r.Targets[0].Queue != "ShipQ" || fmt.Sprint(r.StateMachines) != "[OrderSaga]" {
		t.Fatalf("rule %+v", r)
	}
	s.Rules = append(s.Rules, &Rule{ID: "Other", Targets: []RuleTarget{{ID: "T0", Queue: "SomeTopic"}}})
	if err := s.checkRules(); err == nil || !strings.Contains(err.Error(), "not a queue of the template") {
		t.Fatalf("a rule targeting a topic: %v", err)
	}
}

// TestLoadStackReadsTheSaga: the app's synthesized state machine is read and
// resolved as the demo runs it, and the scenario finds its places: the
// timeout after Charge's effect, Ship refused as Undeliverable (caught:
// Refund and ReleaseStock run), the outage at ReserveStock (which catches
// only OutOfStock, so that its retries spent fail the execution); the rule
// that starts it from the bus is the demo's to play.
func TestLoadStackReadsTheSaga(t *testing.T) {
	dir := filepath.Join("..", "..", "cdk.out")
	stack, err := LoadStack(dir, "OrdersPlatform")
	if err != nil {
		t.Fatalf("%v (run `make synth` first)", err)
	}
	if len(stack.StateMachines) != 1 {
		t.Fatalf("state machines %v, want the order saga", stack.StateMachines)
	}
	sm := stack.StateMachines[0]
	started := 0
	for _, r := range stack.Rules {
		if fmt.Sprint(r.StateMachines) == "["+sm.ID+"]" {
			started++
		}
	}
	d := &deployment{functionARN: map[string]string{}}
	for id := range stack.Functions {
		d.functionARN[id] = "arn:aws:lambda:" + Region + ":" + localAccount + ":function:" + id
	}
	text, err := d.value(sm.Definition)
	if err != nil {
		t.Fatal(err)
	}
	def, err := parseDefinition(text)
	if err != nil {
		t.Fatal(err)
	}
	tasks, err := def.tasks()
	if err != nil {
		t.Fatal(err)
	}
	s := &sagaRun{sm: sm, def: def, tasks: tasks}
	p, err := s.plan()
	if err != nil {
		t.Fatal(err)
	}
	var comps []string
	for _, c := range p.compensations {
		comps = append(comps, c.Name)
		if stack.Functions[c.Function] == nil {
			t.Errorf("compensation %s: function %s is not in the template", c.Name, c.Function)
		}
	}
	got := fmt.Sprintf("sm=%s forward=%d timeout=%s fail=%s/%s outage=%s compensations=%v started_by_rules=%d", sm.Type, len(p.forward), p.timeoutAt.Name, p.failAt.Name, p.failName, p.outageAt.Name, comps, started)
	if got != "sm=STANDARD forward=3 timeout=Charge fail=Ship/Undeliverable outage=ReserveStock compensations=[Refund ReleaseStock] started_by_rules=1" {
		t.Errorf("saga read as %s", got)
	}
	if _, err := def.bridged("saga-001", "", 60); err != nil {
		t.Fatal(err)
	}
}
