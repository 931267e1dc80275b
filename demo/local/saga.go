package local

// The example app's saga (issue 34): the template's state machines
// (AWS::StepFunctions::StateMachine), run on kumo's Step Functions, each
// Task state's function a step handler under the runtime interface emulator.
//
// What kumo v0.33.1 models (pinned in test/kumo/stepfunctions_test.go):
// Task states of lambda:invoke and of a function's ARN, given the state
// input; Retry and Catch by error name, with their real waits; a Task's
// TimeoutSeconds (States.Timeout, per attempt); .waitForTaskToken with
// SendTaskSuccess and SendTaskFailure, whose error name flows through Retry
// and Catch. What it does not model, and how the demo bridges it:
//
//   - A function error (a 200 with X-Amz-Function-Error) is taken as the
//     task's successful result, and an invoke that fails is always
//     States.TaskFailed, its Cause the body: no Retry or Catch on a step's
//     error name (Step.InProgress, an effect's named failure) would ever
//     run. The demo runs every Lambda Task state as
//     lambda:invoke.waitForTaskToken instead: its bridge (sagabridge.go)
//     invokes the function with the state input, as Lambda would, and
//     reports the answer with SendTaskSuccess (the payload, wrapped as
//     lambda:invoke wraps it when the state was one) or SendTaskFailure
//     (the function error's errorType and errorMessage as Error and Cause),
//     so that Retry and Catch see the names they see on AWS. A side effect
//     is faithful too: at a Task's TimeoutSeconds the invocation runs on
//     (kumo cancels a plain invoke's request).
//   - The Context object's $$.Execution is not modelled: the bridge's
//     payload names the execution and the state with literals, and each
//     execution runs on its own copy of the definition.
//   - RedriveExecution is not modelled (400): a redrive is a new execution
//     of a copy of the definition whose StartAt is the state that failed,
//     given that state's input, which is what a redrive runs (the states
//     that succeeded are not run again).
//   - A Standard execution started twice under one name is refused
//     (ExecutionAlreadyExists), and an Express workflow's at-least-once
//     start is not modelled: the duplicated start is a second execution
//     of the same input under another name, run at the same time.
//
// Durations of the definition (TimeoutSeconds, a Retry's IntervalSeconds and
// MaxDelaySeconds) are divided by the run's time scale, at least a second,
// as every other duration of the template; kumo's retries wait for real.

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"
)

// StateMachine is an AWS::StepFunctions::StateMachine.
type StateMachine struct {
	ID   string
	Type string // STANDARD or EXPRESS
	// Definition is the DefinitionString as the template writes it: a
	// string, or an Fn::Join of strings and references (the functions'
	// ARNs), resolved when provisioned.
	Definition any
}

func (s *Stack) addStateMachine(id string, r resource) error {
	var p struct {
		DefinitionString any    `json:"DefinitionString"`
		StateMachineType string `json:"StateMachineType"`
	}
	if err := json.Unmarshal(r.Properties, &p); err != nil {
		return err
	}
	if p.DefinitionString == nil {
		return fmt.Errorf("no DefinitionString: the local run reads the definition the template carries")
	}
	if p.StateMachineType == "" {
		p.StateMachineType = "STANDARD"
	}
	s.StateMachines = append(s.StateMachines, &StateMachine{ID: id, Type: p.StateMachineType, Definition: p.DefinitionString})
	return nil
}

// lambdaInvoke is the lambda:invoke integration's resource, and the
// callback one the bridge runs every Lambda Task state as.
const (
	lambdaInvoke         = "arn:aws:states:::lambda:invoke"
	lambdaInvokeCallback = lambdaInvoke + ".waitForTaskToken"
)

// bridgePayload is what the bridge receives for one attempt of a Task
// state: the state's input for the function, the task token to answer
// with, the state and the execution (literals of the execution's copy of
// the definition), and whether the state was a lambda:invoke (whose result
// wraps the payload) or a function's ARN (whose result is the payload).
type bridgePayload struct {
	Input      json.RawMessage `json:"input"`
	StateInput json.RawMessage `json:"stateInput"` // the state's own input, which a redrive gives it again
	Token      string          `json:"token"`
	State      string          `json:"state"`
	Execution  string          `json:"execution"`
	Wrap       bool            `json:"wrap"`
}

// taskState is what the demo knows of a Lambda Task state of a definition.
type taskState struct {
	Name     string
	Function string // the function's name (its logical id, locally)
	// Compensation: reached only through a Catch, not on the forward path.
	Compensation bool
	// TimeoutSeconds after scaling; 0 when the state has none.
	TimeoutSeconds int
	// RetriesTimeout: a Retry of the state matches States.Timeout.
	RetriesTimeout bool
	place          int // on the forward path, from 1; 0 for a compensation
}

// definition is a state machine's definition, decoded.
type definition map[string]any

// parseDefinition decodes a resolved definition.
func parseDefinition(text string) (definition, error) {
	var d definition
	if err := json.Unmarshal([]byte(text), &d); err != nil {
		return nil, fmt.Errorf("the state machine's definition is not JSON: %w", err)
	}
	if _, ok := d["States"].(map[string]any); !ok {
		return nil, fmt.Errorf("the state machine's definition has no States")
	}
	return d, nil
}

// tasks lists the definition's Lambda Task states (top level): those of the
// forward path (StartAt, then each Next) in its order, then the
// compensations (reached through a Catch) by name.
func (d definition) tasks() ([]taskState, error) {
	states := d["States"].(map[string]any)
	forward := map[string]int{} // state → its place on the forward path, from 1
	for name, _ := d["StartAt"].(string); name != "" && forward[name] == 0; {
		forward[name] = len(forward) + 1
		st, _ := states[name].(map[string]any)
		name, _ = st["Next"].(string)
	}
	var out []taskState
	for name, v := range states {
		st, _ := v.(map[string]any)
		if st["Type"] != "Task" {
			continue
		}
		fn, _, ok := lambdaTarget(st)
		if !ok {
			continue
		}
		t := taskState{Name: name, Function: fn, Compensation: forward[name] == 0, place: forward[name]}
		if ts, ok := st["TimeoutSeconds"].(float64); ok {
			t.TimeoutSeconds = int(ts)
		}
		retries, _ := st["Retry"].([]any)
		for _, r := range retries {
			rm, _ := r.(map[string]any)
			for _, e := range asStrings(rm["ErrorEquals"]) {
				t.RetriesTimeout = t.RetriesTimeout || e == "States.Timeout" || e == "States.ALL"
			}
		}
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { // the forward path in order, then the compensations by name
		if out[i].Compensation != out[j].Compensation {
			return !out[i].Compensation
		}
		if out[i].place != out[j].place {
			return out[i].place < out[j].place
		}
		return out[i].Name < out[j].Name
	})
	if len(out) == 0 {
		return nil, fmt.Errorf("the state machine has no Lambda Task state")
	}
	return out, nil
}

// lambdaTarget returns the function a Lambda Task state invokes (its name:
// the last part of its ARN), whether it is a lambda:invoke (wrap), and
// false when the state is no Lambda Task.
func lambdaTarget(st map[string]any) (fn string, wrap, ok bool) {
	res, _ := st["Resource"].(string)
	switch {
	case res == lambdaInvoke:
		params, _ := st["Parameters"].(map[string]any)
		name, _ := params["FunctionName"].(string)
		return functionName(name), true, name != ""
	case strings.HasPrefix(res, "arn:aws:lambda:"):
		return functionName(res), false, true
	}
	return "", false, false
}

// functionName is the name in a function's ARN (without a qualifier), or
// the name itself.
func functionName(nameOrARN string) string {
	parts := strings.Split(nameOrARN, ":")
	if len(parts) >= 7 && parts[0] == "arn" {
		return parts[6]
	}
	return nameOrARN
}

func asStrings(v any) []string {
	list, _ := v.([]any)
	out := make([]string, 0, len(list))
	for _, x := range list {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// bridged returns the definition as the demo runs it for one execution on
// kumo: every Lambda Task state as lambda:invoke.waitForTaskToken on the
// same function, its payload the bridgePayload (the state's input where the
// state gave it to the function, the state's own input, the token, the
// state's and the execution's names); TimeoutSeconds and the Retry's waits divided by
// scale, at least a second; StartAt replaced when startAt is not "" (a
// redrive from that state). Any other Task state is refused: the local run
// executes Lambda tasks only.
func (d definition) bridged(execution, startAt string, scale float64) (string, error) {
	raw, err := json.Marshal(d)
	if err != nil {
		return "", err
	}
	var out definition // a deep copy
	if err := json.Unmarshal(raw, &out); err != nil {
		return "", err
	}
	states := out["States"].(map[string]any)
	if startAt != "" {
		if _, ok := states[startAt]; !ok {
			return "", fmt.Errorf("redrive from %q: no such state", startAt)
		}
		out["StartAt"] = startAt
	}
	for name, v := range states {
		st, _ := v.(map[string]any)
		if st["Type"] != "Task" {
			continue
		}
		fn, wrap, ok := lambdaTarget(st)
		if !ok {
			return "", fmt.Errorf("state %s: resource %v: the local run executes Lambda Task states only", name, st["Resource"])
		}
		payload := map[string]any{"token.$": "$$.Task.Token", "stateInput.$": "$", "state": name, "execution": execution, "wrap": wrap}
		params, _ := st["Parameters"].(map[string]any)
		switch {
		case wrap && params["Payload.$"] != nil:
			payload["input.$"] = params["Payload.$"]
		case wrap && params["Payload"] != nil:
			payload["input"] = params["Payload"]
		case wrap:
			payload["input"] = map[string]any{} // lambda:invoke without a payload sends {}
		case params != nil:
			payload["input"] = params
		default:
			payload["input.$"] = "$"
		}
		st["Resource"] = lambdaInvokeCallback
		st["Parameters"] = map[string]any{"FunctionName": fn, "Payload": payload}
		scaleSeconds(st, "TimeoutSeconds", scale)
		retries, _ := st["Retry"].([]any)
		for _, r := range retries {
			rm, _ := r.(map[string]any)
			scaleSeconds(rm, "IntervalSeconds", scale)
			scaleSeconds(rm, "MaxDelaySeconds", scale)
		}
	}
	text, err := json.Marshal(out)
	return string(text), err
}

// scaleSeconds divides the number of seconds m[field] by scale, rounding
// up, at least 1; a missing field stays missing.
func scaleSeconds(m map[string]any, field string, scale float64) {
	if v, ok := m[field].(float64); ok && v > 0 {
		m[field] = max(1, math.Ceil(v/scale))
	}
}

// SagaReport is what happened in the saga's executions.
type SagaReport struct {
	Machine string
	// Executions are the executions started: the sagas, the duplicated
	// start, the redrives.
	Executions int
	// Steps are the invocations of the steps' functions (every attempt);
	// Retries the attempts Step Functions made again after a timeout or an
	// error a Retry matched; Redrives the redrives of failed executions.
	Steps, Retries, Redrives int
	// Compensations are the compensations' effects seen downstream.
	Compensations int
	// Doubles are the reservations whose effect happened more than once
	// downstream; Lost the sagas that ended neither complete nor fully
	// compensated; Unexpected the executions that ended otherwise than
	// the scenario says (an injected fault that did not happen, a saga
	// that did not end).
	Doubles, Lost, Unexpected int
	// Injected counts the faults injected by name.
	Injected map[string]int
}

// OK says whether every saga ended as it should with each effect once.
func (s *SagaReport) OK() bool { return s.Doubles == 0 && s.Lost == 0 && s.Unexpected == 0 }

// line is the saga's part of the last line.
func (s *SagaReport) line() string {
	return fmt.Sprintf("saga: executions=%d steps=%d retries=%d redrives=%d compensations=%d double_effects=%d lost=%d",
		s.Executions, s.Steps, s.Retries, s.Redrives, s.Compensations, s.Doubles, s.Lost)
}
