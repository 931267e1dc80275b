package kumo_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/dynamostore"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	sfnstep "github.com/idempotent-consumer/idempotent-consumer/lambda/step"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/step/states"
	"github.com/idempotent-consumer/idempotent-consumer/test/internal/kumotest"
)

// What kumo v0.33.1's Step Functions models, pinned so that the demo's saga
// (issue 34) knows what it can lean on, and so that an upgrade that changes
// any of it fails here. Lambda functions are kumo functions whose
// InvokeEndpoint is a handler of the test, answering as Lambda does (a
// function error is a 200 with X-Amz-Function-Error and the errorType in
// the body, as kumo's Runtime API path answers too).

// sfn is a kumo server for Step Functions, whose executor calls Lambda at
// localhost:4566 (fixed when kumo's package loads): the test routes that
// address to the server, through http.DefaultTransport, which the
// executor's client uses.
type sfn struct {
	clients kumotest.Clients
}

var sfnSeq atomic.Int64 // kumo servers of one process share their state: every name is new

func startSFN(t *testing.T) *sfn {
	t.Helper()
	c, stop := kumotest.Start()
	t.Cleanup(stop)
	kumotest.RouteDefaultAddress(t, c.URL)
	return &sfn{clients: c}
}

func (k *sfn) name(prefix string) string { return fmt.Sprintf("%s-%d", prefix, sfnSeq.Add(1)) }

// call calls a Step Functions action (JSON 1.0) and returns the status and
// the decoded answer.
func (k *sfn) call(t *testing.T, action string, in any) (int, map[string]any) {
	t.Helper()
	body, _ := json.Marshal(in)
	req, _ := http.NewRequest(http.MethodPost, k.clients.URL+"/", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/x-amz-json-1.0")
	req.Header.Set("X-Amz-Target", "AWSStepFunctions."+action)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	out := map[string]any{}
	_ = json.Unmarshal(raw, &out)
	return resp.StatusCode, out
}

func (k *sfn) mustCall(t *testing.T, action string, in any) map[string]any {
	t.Helper()
	status, out := k.call(t, action, in)
	if status != http.StatusOK {
		t.Fatalf("%s: %d %v", action, status, out)
	}
	return out
}

// function creates a Lambda function served by h and returns its name and
// the count of its invocations. An error of h is answered as Lambda answers
// a function error.
func (k *sfn) function(t *testing.T, h func(ctx context.Context, payload []byte) ([]byte, error)) (string, *atomic.Int64) {
	t.Helper()
	calls := &atomic.Int64{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		payload, _ := io.ReadAll(r.Body)
		out, err := h(r.Context(), payload)
		if err != nil {
			w.Header().Set("X-Amz-Function-Error", "Unhandled")
			out, _ = json.Marshal(map[string]string{"errorType": sfnstep.ErrorName(err), "errorMessage": sfnstep.ErrorMessage(err)})
		}
		_, _ = w.Write(out)
	}))
	t.Cleanup(srv.Close)
	name := k.name("fn")
	k.createFunction(t, name, srv.URL)
	return name, calls
}

// createFunction creates a kumo function whose invocations go to endpoint,
// or with endpoint "", to a runtime polling kumo's Runtime API.
func (k *sfn) createFunction(t *testing.T, name, endpoint string) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"FunctionName": name, "Runtime": "provided.al2023", "Role": "arn:aws:iam::123456789012:role/step",
		"Handler": "bootstrap", "Code": map[string]string{"ZipFile": "UEsFBgAAAAAAAAAAAAAAAAAAAAAAAA=="}, "Timeout": 3, "InvokeEndpoint": endpoint})
	req, _ := http.NewRequest(http.MethodPost, k.clients.URL+"/2015-03-31/functions", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", lambdaAuthorization())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		raw, _ := io.ReadAll(resp.Body)
		t.Fatalf("CreateFunction: %s %s", resp.Status, raw)
	}
}

// lambdaAuthorization is an Authorization header scoped to Lambda: kumo
// routes a request by the service of its signature's scope.
func lambdaAuthorization() string {
	scope := strings.Join([]string{"test", "20260101", "us-east-1", "lambda", "aws4_request"}, "/")
	return "AWS4-HMAC-SHA256 Credential=" + scope + ", SignedHeaders=host, Signature=test"
}

// machine creates a state machine of type typ (STANDARD or EXPRESS).
func (k *sfn) machine(t *testing.T, typ string, definition map[string]any) string {
	t.Helper()
	def, _ := json.Marshal(definition)
	out := k.mustCall(t, "CreateStateMachine", map[string]any{"name": k.name("sm"), "definition": string(def), "roleArn": "arn:aws:iam::123456789012:role/sfn", "type": typ})
	return out["stateMachineArn"].(string)
}

// execution is what DescribeExecution says of an execution that ended.
type execution struct {
	Status, Output, Error, Cause string
}

// run starts an execution named name and waits for it to end.
func (k *sfn) run(t *testing.T, machine, name, input string) execution {
	t.Helper()
	arn := k.mustCall(t, "StartExecution", map[string]any{"stateMachineArn": machine, "name": name, "input": input})["executionArn"].(string)
	return k.wait(t, arn)
}

func (k *sfn) wait(t *testing.T, arn string) execution {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		d := k.mustCall(t, "DescribeExecution", map[string]any{"executionArn": arn})
		if s, _ := d["status"].(string); s != "RUNNING" {
			e := execution{Status: s}
			e.Output, _ = d["output"].(string)
			e.Error, _ = d["error"].(string)
			e.Cause, _ = d["cause"].(string)
			return e
		}
	}
	t.Fatalf("%s still running after 30s", arn)
	return execution{}
}

// task is a Task state invoking fn through lambda:invoke, its result the
// function's payload under "value" (ResultSelector), with the given extra
// fields (ResultPath, Retry, Catch, …).
func task(fn string, fields map[string]any) map[string]any {
	s := map[string]any{"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke",
		"Parameters": map[string]any{"FunctionName": fn, "Payload.$": "$"}, "ResultSelector": map[string]any{"value.$": "$.Payload"}}
	for k, v := range fields {
		s[k] = v
	}
	return s
}

// newStep returns a step of package step over a table of kumo's DynamoDB,
// and the count of its effect's runs.
func newStep(t *testing.T, k *sfn, name string, effect func(input json.RawMessage) (json.RawMessage, error)) (func(context.Context, []byte) ([]byte, error), *atomic.Int64) {
	t.Helper()
	table, err := kumotest.NewTable(context.Background(), k.clients.DynamoDB, "steps")
	if err != nil {
		t.Fatal(err)
	}
	guard, err := idempotency.NewGuard(dynamostore.New(k.clients.DynamoDB, table), idempotency.Config{Namespace: "orders", MaxResultBytes: sfnstep.MaxOutputBytes})
	if err != nil {
		t.Fatal(err)
	}
	runs := &atomic.Int64{}
	h, err := sfnstep.New(guard, name, sfnstep.Field("orderId"), func(_ context.Context, input json.RawMessage, _ idempotency.Reservation) (json.RawMessage, error) {
		runs.Add(1)
		return effect(input)
	}, sfnstep.Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	return func(ctx context.Context, payload []byte) ([]byte, error) {
		ctx, cancel := context.WithTimeout(ctx, 3*time.Second) // the function's timeout
		defer cancel()
		return h(ctx, payload)
	}, runs
}

// TestStepFunctionsInvokesSteps: kumo runs Task states of both Lambda
// integrations (arn:aws:states:::lambda:invoke, whose result wraps the
// payload in Payload, and a function's ARN, whose result is the payload),
// passing the state input as the event; two executions of one order run
// each step's effect once and get the same outputs, the first feeding the
// second step's input.
func TestStepFunctionsInvokesSteps(t *testing.T) {
	k := startSFN(t)
	reserveH, reserveRuns := newStep(t, k, "reserve-stock", func(json.RawMessage) (json.RawMessage, error) {
		return json.RawMessage(fmt.Sprintf(`{"reservation":"rs-%d"}`, time.Now().UnixNano())), nil
	})
	chargeH, chargeRuns := newStep(t, k, "charge", func(in json.RawMessage) (json.RawMessage, error) {
		return json.RawMessage(fmt.Sprintf(`{"charge":"ch-%d","input":%s}`, time.Now().UnixNano(), in)), nil
	})
	reserve, reserveCalls := k.function(t, reserveH)
	charge, chargeCalls := k.function(t, chargeH)
	machine := k.machine(t, "STANDARD", map[string]any{"StartAt": "Reserve", "States": map[string]any{
		"Reserve": task(reserve, map[string]any{"ResultPath": "$.reserve", "Next": "Charge"}),
		"Charge":  map[string]any{"Type": "Task", "Resource": "arn:aws:lambda:us-east-1:000000000000:function:" + charge, "ResultPath": "$.charge", "End": true},
	}})
	first := k.run(t, machine, k.name("order-o-1"), `{"orderId":"o-1"}`)
	second := k.run(t, machine, k.name("order-o-1-again"), `{"orderId":"o-1"}`)
	if first.Status != "SUCCEEDED" || second.Status != "SUCCEEDED" || first.Output != second.Output {
		t.Fatalf("executions: %+v and %+v; want both SUCCEEDED with the same output", first, second)
	}
	type reserved struct{ Value struct{ Reservation string } }
	var out struct {
		Reserve reserved
		Charge  struct {
			Charge string
			Input  struct{ Reserve reserved }
		}
	}
	if err := json.Unmarshal([]byte(first.Output), &out); err != nil || out.Reserve.Value.Reservation == "" || out.Charge.Input.Reserve.Value.Reservation != out.Reserve.Value.Reservation {
		t.Fatalf("output %s: want the reservation in $.reserve and in the charge's input", first.Output)
	}
	if reserveCalls.Load() != 2 || chargeCalls.Load() != 2 || reserveRuns.Load() != 1 || chargeRuns.Load() != 1 {
		t.Fatalf("invocations reserve %d charge %d, effects reserve %d charge %d; want 2, 2, 1, 1",
			reserveCalls.Load(), chargeCalls.Load(), reserveRuns.Load(), chargeRuns.Load())
	}
}

// TestStepFunctionsFunctionErrorIsNotAnError pins kumo's largest gap: a
// function error (a 200 with X-Amz-Function-Error) is taken as the task's
// result. Neither a Retry nor a Catch on the error's name (a step's
// Step.InProgress, an effect's OutOfStock, or States.ALL) runs: the execution
// SUCCEEDS with the error's body as its output. On AWS the state fails with
// Error = errorType. A demo on kumo must read a step's errors from the
// output.
func TestStepFunctionsFunctionErrorIsNotAnError(t *testing.T) {
	k := startSFN(t)
	h, runs := newStep(t, k, "reserve-stock", func(json.RawMessage) (json.RawMessage, error) {
		return nil, sfnstep.Fail("OutOfStock", fmt.Errorf("no widgets left"))
	})
	fn, calls := k.function(t, h)
	machine := k.machine(t, "STANDARD", map[string]any{"StartAt": "Reserve", "States": map[string]any{
		"Reserve": task(fn, map[string]any{"End": true,
			"Retry": []any{map[string]any{"ErrorEquals": []string{"OutOfStock", states.ErrorInProgress}, "IntervalSeconds": 1, "MaxAttempts": 2}},
			"Catch": []any{map[string]any{"ErrorEquals": []string{"States.ALL"}, "Next": "Caught"}}}),
		"Caught": map[string]any{"Type": "Pass", "Result": "caught", "End": true},
	}})
	got := k.run(t, machine, k.name("order-o-2"), `{"orderId":"o-2"}`)
	var out struct{ Value struct{ ErrorType string } }
	_ = json.Unmarshal([]byte(got.Output), &out)
	if got.Status != "SUCCEEDED" || out.Value.ErrorType != "OutOfStock" || calls.Load() != 1 || runs.Load() != 1 {
		t.Fatalf("got %+v after %d invocations; kumo's handling of function errors changed (it took them as results): revisit the saga demo", got, calls.Load())
	}
}

// TestStepFunctionsRetryAndCatchTaskFailed: the errors kumo does raise from a
// Lambda task are the invoke's own failures (kumo's Lambda answering other
// than 200: an endpoint it cannot reach, a function that does not exist),
// all named States.TaskFailed, never Lambda.ServiceException. Retry and
// Catch match that name: a Retry on Lambda.ServiceException alone fails the
// execution, one on States.TaskFailed retries until the endpoint answers,
// and a Catch on it goes to its state with {Error, Cause} at its
// ResultPath.
func TestStepFunctionsRetryAndCatchTaskFailed(t *testing.T) {
	k := startSFN(t)
	var drop, calls atomic.Int64
	// A function that drops its first connections: kumo's Lambda answers
	// 500 ServiceException, and its executor fails the task.
	flaky := k.name("flaky")
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if drop.Add(-1) >= 0 {
			conn, _, _ := w.(http.Hijacker).Hijack()
			_ = conn.Close()
			return
		}
		calls.Add(1)
		_, _ = w.Write([]byte(`{"ok":true}`))
	}))
	defer proxy.Close()
	k.createFunction(t, flaky, proxy.URL)
	for _, tc := range []struct {
		name, wantStatus, wantError string
		retry                       []string
		catch                       bool
		drops, wantCalls            int64
	}{
		{"retry on Lambda.ServiceException", "FAILED", "States.TaskFailed", []string{"Lambda.ServiceException"}, false, 1, 0},
		{"retry on States.TaskFailed", "SUCCEEDED", "", []string{"States.TaskFailed"}, false, 2, 1},
		{"catch States.TaskFailed", "SUCCEEDED", "", nil, true, 1, 0},
	} {
		drop.Store(tc.drops)
		calls.Store(0)
		fields := map[string]any{"End": true}
		if tc.retry != nil {
			fields["Retry"] = []any{map[string]any{"ErrorEquals": tc.retry, "IntervalSeconds": 1, "MaxAttempts": 3, "BackoffRate": 1}}
		}
		if tc.catch {
			delete(fields, "End")
			fields["Next"] = "Done"
			fields["Catch"] = []any{map[string]any{"ErrorEquals": []string{"States.TaskFailed"}, "ResultPath": "$.error", "Next": "Caught"}}
		}
		machine := k.machine(t, "STANDARD", map[string]any{"StartAt": "Call", "States": map[string]any{
			"Call": task(flaky, fields), "Done": map[string]any{"Type": "Succeed"}, "Caught": map[string]any{"Type": "Pass", "End": true},
		}})
		got := k.run(t, machine, k.name("exec"), `{"orderId":"o-3"}`)
		if got.Status != tc.wantStatus || got.Error != tc.wantError || calls.Load() != tc.wantCalls {
			t.Fatalf("%s: got %+v after %d answered calls; want %s %q after %d", tc.name, got, calls.Load(), tc.wantStatus, tc.wantError, tc.wantCalls)
		}
		if tc.catch && !strings.Contains(got.Output, `"Error":"States.TaskFailed"`) {
			t.Fatalf("%s: output %s lacks the error at $.error", tc.name, got.Output)
		}
	}
}

// TestStepFunctionsTaskTimeout: a Task's TimeoutSeconds bounds each attempt
// and raises States.Timeout, which a Retry and a Catch match. kumo cancels
// the invocation's request when the attempt times out (its Lambda passes the
// cancellation to the endpoint), where Lambda would let the function run to
// its own timeout: on kumo a step's effect sees its context end at the
// task's timeout, not at the function's deadline.
func TestStepFunctionsTaskTimeout(t *testing.T) {
	k := startSFN(t)
	var slow, canceled atomic.Int64
	fn, calls := k.function(t, func(ctx context.Context, _ []byte) ([]byte, error) {
		if slow.Add(-1) >= 0 {
			select {
			case <-ctx.Done():
				canceled.Add(1)
				return nil, ctx.Err()
			case <-time.After(2500 * time.Millisecond):
			}
		}
		return []byte(`{"done":true}`), nil
	})
	for _, tc := range []struct {
		name, wantStatus, wantError, wantOutput string
		retry, catch                            bool
		slow, wantCalls                         int64
	}{
		{"no retry", "FAILED", "States.Timeout", "", false, false, 1, 1},
		{"retry on States.Timeout", "SUCCEEDED", "", `{"value":{"done":true}}`, true, false, 1, 2},
		{"catch States.Timeout", "SUCCEEDED", "", `"Error":"States.Timeout"`, false, true, 1, 1},
	} {
		slow.Store(tc.slow)
		calls.Store(0)
		fields := map[string]any{"TimeoutSeconds": 1, "End": true}
		if tc.retry {
			fields["Retry"] = []any{map[string]any{"ErrorEquals": []string{"States.Timeout"}, "IntervalSeconds": 1, "MaxAttempts": 2}}
		}
		if tc.catch {
			delete(fields, "End")
			fields["Next"] = "Done"
			fields["Catch"] = []any{map[string]any{"ErrorEquals": []string{"States.Timeout"}, "ResultPath": "$.error", "Next": "Caught"}}
		}
		machine := k.machine(t, "STANDARD", map[string]any{"StartAt": "Call", "States": map[string]any{
			"Call": task(fn, fields), "Done": map[string]any{"Type": "Succeed"}, "Caught": map[string]any{"Type": "Pass", "End": true},
		}})
		got := k.run(t, machine, k.name("exec"), `{"orderId":"o-4"}`)
		if got.Status != tc.wantStatus || got.Error != tc.wantError || calls.Load() != tc.wantCalls || !strings.Contains(got.Output, tc.wantOutput) {
			t.Fatalf("%s: got %+v after %d invocations; want %s %q %s after %d", tc.name, got, calls.Load(), tc.wantStatus, tc.wantError, tc.wantOutput, tc.wantCalls)
		}
	}
	if canceled.Load() != 3 {
		t.Fatalf("%d of the 3 timed-out invocations saw their request canceled", canceled.Load())
	}
}

// TestStepFunctionsRedriveNotModelled: kumo has no RedriveExecution; a
// failed execution stays failed, with redriveCount 0. The demo redrives by
// starting the order's execution again under a new name (the same fact, so
// each step answers from its record).
func TestStepFunctionsRedriveNotModelled(t *testing.T) {
	k := startSFN(t)
	machine := k.machine(t, "STANDARD", map[string]any{"StartAt": "Fail", "States": map[string]any{
		"Fail": map[string]any{"Type": "Fail", "Error": "Boom", "Cause": "on purpose"},
	}})
	name := k.name("exec")
	if got := k.run(t, machine, name, `{}`); got.Status != "FAILED" || got.Error != "Boom" {
		t.Fatalf("got %+v", got)
	}
	arn := strings.Replace(machine, ":stateMachine:", ":execution:", 1) + ":" + name
	status, out := k.call(t, "RedriveExecution", map[string]any{"executionArn": arn})
	if status != http.StatusBadRequest || !strings.Contains(fmt.Sprint(out), "RedriveExecution is not valid") {
		t.Fatalf("RedriveExecution: %d %v; kumo may model it now: pin what it does", status, out)
	}
}

// TestStepFunctionsStartTwice: kumo refuses a second StartExecution of a
// name, Standard or Express, running or ended, with ExecutionAlreadyExists.
// On AWS a Standard start with the same name and input while the first runs
// returns the first execution (idempotent), and an Express workflow started
// twice may run twice: kumo models neither, so a duplicate Express start is
// made under another name (as the chaos simulation does). kumo runs an
// Express machine as it runs a Standard one, and describes its executions
// (which AWS does not for Express).
func TestStepFunctionsStartTwice(t *testing.T) {
	k := startSFN(t)
	for _, typ := range []string{"STANDARD", "EXPRESS"} {
		machine := k.machine(t, typ, map[string]any{"StartAt": "Wait", "States": map[string]any{
			"Wait": map[string]any{"Type": "Wait", "Seconds": 1, "End": true},
		}})
		name := k.name("order-o-5")
		start := map[string]any{"stateMachineArn": machine, "name": name, "input": `{"orderId":"o-5"}`}
		first := k.mustCall(t, "StartExecution", start)["executionArn"].(string)
		status, out := k.call(t, "StartExecution", start)
		if status != http.StatusConflict || !strings.Contains(fmt.Sprint(out), "ExecutionAlreadyExists") {
			t.Fatalf("%s: second start while running: %d %v", typ, status, out)
		}
		if got := k.wait(t, first); got.Status != "SUCCEEDED" {
			t.Fatalf("%s: %+v", typ, got)
		}
		if status, out := k.call(t, "StartExecution", start); status != http.StatusConflict {
			t.Fatalf("%s: start after the end: %d %v", typ, status, out)
		}
	}
}
