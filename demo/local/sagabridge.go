package local

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
)

// sfnAPI calls kumo's Step Functions (JSON 1.0, AWSStepFunctions.<action>).
type sfnAPI struct{ endpoint string }

func (a sfnAPI) call(ctx context.Context, action string, in any) (map[string]any, error) {
	return awsJSON(ctx, a.endpoint+"/", "states", "application/x-amz-json-1.0", "AWSStepFunctions."+action, in)
}

// awsJSON posts in to url as a JSON protocol call (target "" for a REST
// call) signed for service's scope, which kumo routes by, and decodes the
// answer; any status but 2xx is an error with the answer's body.
func awsJSON(ctx context.Context, url, service, contentType, target string, in any) (map[string]any, error) {
	body, err := json.Marshal(in)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", contentType)
	if target != "" {
		req.Header.Set("X-Amz-Target", target)
	}
	req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=local/20261201/"+Region+"/"+service+"/aws4_request, SignedHeaders=host, Signature=0")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		return nil, fmt.Errorf("%s %s: %s %s", service, strings.TrimPrefix(target, "AWSStepFunctions."), resp.Status, bytes.TrimSpace(raw))
	}
	var out map[string]any
	_ = json.Unmarshal(raw, &out)
	return out, nil
}

// createBridgedFunction creates the kumo Lambda function name, whose
// invocations kumo sends to invokeURL (the bridge).
func createBridgedFunction(ctx context.Context, endpoint, name, invokeURL string) error {
	_, err := awsJSON(ctx, endpoint+"/2015-03-31/functions", "lambda", "application/json", "", map[string]any{
		"FunctionName": name, "Runtime": "provided.al2023", "Role": "arn:aws:iam::000000000000:role/" + name, "Handler": "bootstrap",
		"Code": map[string]string{"ZipFile": "UEsFBgAAAAAAAAAAAAAAAAAAAAAAAA=="}, "Timeout": 3, "InvokeEndpoint": invokeURL,
	})
	if err != nil {
		return fmt.Errorf("function %s: %w", name, err)
	}
	return nil
}

// invoker runs one invocation of a step's function: its payload is the
// state's input, its answer the function's (a function error's body holds
// errorType and errorMessage).
type invoker interface {
	invoke(ctx context.Context, payload []byte) (invocation, error)
}

// attempt is one attempt of a Task state, as the bridge saw it.
type attempt struct {
	state      string
	stateInput json.RawMessage
	failed     bool   // answered with a failure (or never answered, when dropped)
	dropped    bool   // its answer was dropped after the function's
	output     string // the payload of an answer that was not a failure
}

// sagaBridge is what the demo puts in front of the steps' functions on
// kumo (saga.go says why): kumo invokes it with a bridgePayload, it answers
// at once, then invokes the function with the state's input as Lambda
// would, and reports the answer to Step Functions with SendTaskSuccess or
// SendTaskFailure (a function error's errorType as the Error that Retry
// and Catch match). It counts every attempt by execution and state.
type sagaBridge struct {
	ctx  context.Context
	sfn  sfnAPI
	fns  map[string]invoker // by function name
	drop func(execution, state string, attempt int) bool
	logf func(string, ...any)
	wg   sync.WaitGroup

	mu       sync.Mutex
	attempts map[string][]attempt // "execution/state" → its attempts in order
	last     map[string]string    // execution → the key of its last attempt
	steps    int
	dropped  int
	replays  int // retries after a dropped answer that got the dropped attempt's output
	diverged int // retries after a dropped answer that got another output
}

func newSagaBridge(ctx context.Context, api sfnAPI, fns map[string]invoker, drop func(string, string, int) bool, logf func(string, ...any)) *sagaBridge {
	return &sagaBridge{ctx: ctx, sfn: api, fns: fns, drop: drop, logf: logf, attempts: map[string][]attempt{}, last: map[string]string{}}
}

func (b *sagaBridge) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	fn := b.fns[strings.Trim(r.URL.Path, "/")]
	var p bridgePayload
	if err := json.NewDecoder(r.Body).Decode(&p); err != nil || fn == nil || p.Token == "" {
		http.Error(w, fmt.Sprintf("the saga bridge: function %q, payload: %v", r.URL.Path, err), http.StatusBadRequest)
		return
	}
	_, _ = w.Write([]byte(`{}`)) // the invoke's answer, which a callback task does not read
	b.wg.Go(func() { b.run(fn, p) })
}

// run is one attempt: the function's invocation, then its answer to Step
// Functions, unless the scenario drops it (the answer lost after the
// effect: Step Functions times the attempt out and retries).
func (b *sagaBridge) run(fn invoker, p bridgePayload) {
	key := p.Execution + "/" + p.State
	b.mu.Lock()
	n := len(b.attempts[key]) + 1
	b.attempts[key] = append(b.attempts[key], attempt{state: p.State, stateInput: p.StateInput, failed: true})
	b.last[p.Execution] = key
	b.steps++
	b.mu.Unlock()

	inv, err := fn.invoke(b.ctx, p.Input)
	errName, cause := "", ""
	switch {
	case err != nil:
		errName, cause = "Lambda.ServiceException", err.Error()
	case inv.timedOut:
		errName, cause = "Sandbox.Timedout", string(inv.body)
	case inv.funcErr != "":
		var fe struct{ ErrorType, ErrorMessage string }
		if json.Unmarshal(inv.body, &fe) != nil || fe.ErrorType == "" {
			fe.ErrorType, fe.ErrorMessage = "Lambda.Unknown", inv.funcErr
		}
		errName, cause = fe.ErrorType, fe.ErrorMessage
	}
	dropped := b.drop(p.Execution, p.State, n)
	b.record(key, n, errName, string(inv.body), dropped)
	var answer error
	switch {
	case dropped:
		return
	case errName != "":
		_, answer = b.sfn.call(b.ctx, "SendTaskFailure", map[string]any{"taskToken": p.Token, "error": errName, "cause": truncate(cause, 32768)})
	default:
		output := string(inv.body)
		if p.Wrap { // lambda:invoke's result, which a ResultSelector reads
			output = fmt.Sprintf(`{"StatusCode":200,"Payload":%s}`, inv.body)
		}
		_, answer = b.sfn.call(b.ctx, "SendTaskSuccess", map[string]any{"taskToken": p.Token, "output": output})
	}
	if answer != nil && !strings.Contains(answer.Error(), "TaskTimedOut") && b.ctx.Err() == nil {
		// TaskTimedOut: the attempt outlived the state's TimeoutSeconds, and
		// its answer comes too late, as on AWS.
		b.logf("saga: %s: %v", key, answer)
	}
}

// record notes an attempt's end; a retry after a dropped answer must get
// the dropped attempt's output (the step's stored one).
func (b *sagaBridge) record(key string, n int, errName, body string, dropped bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	list := b.attempts[key]
	a := &list[n-1]
	a.failed, a.dropped = errName != "" || dropped, dropped
	if errName == "" {
		a.output = body
	}
	if dropped {
		b.dropped++
	}
	if n > 1 && errName == "" && !dropped {
		if prev := list[n-2]; prev.dropped && prev.output != "" { // the previous attempt's answer was lost after the effect
			if prev.output == body {
				b.replays++
			} else {
				b.diverged++
			}
		}
	}
}

// lastAttempt returns the last attempt of an execution.
func (b *sagaBridge) lastAttempt(execution string) (attempt, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	list := b.attempts[b.last[execution]]
	if len(list) == 0 {
		return attempt{}, false
	}
	return list[len(list)-1], true
}

// counts returns the invocations, the retries (attempts of a state after
// its first, in one execution), the answers dropped, and the retries after
// a dropped answer that got its output again, or another.
func (b *sagaBridge) counts() (steps, retries, dropped, replays, diverged int) {
	b.wg.Wait()
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, list := range b.attempts {
		retries += len(list) - 1
	}
	return b.steps, retries, b.dropped, b.replays, b.diverged
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// sagaAPI is the saga's downstream: stock, payments and shipping in one
// fake with no idempotency of its own. Each step's function gets its own
// base path (its name), so that effects are counted per step and order:
// per reservation, whose key is the step's name and the order's (a step
// keyed otherwise, by the attempt or the execution, still shows its double
// effects here). It refuses some orders' effects (422: a business refusal,
// for a step's named failure) and is down for others (503) until told it
// is back.
type sagaAPI struct {
	mu      sync.Mutex
	byOrder map[string]map[string]int // step → order → effects
	refuse  map[string]string         // "step/order" → the business failure's name it is refused with (422)
	down    map[string]bool           // "step/order" unavailable (503)
	refused int
	failed  int
	n       int
}

func newSagaAPI() *sagaAPI {
	return &sagaAPI{byOrder: map[string]map[string]int{}, refuse: map[string]string{}, down: map[string]bool{}}
}

func (a *sagaAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	step, _, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	var req struct {
		OrderID string `json:"orderId"`
	}
	if r.Method != http.MethodPost || json.NewDecoder(r.Body).Decode(&req) != nil {
		http.Error(w, "bad request: POST a JSON body", http.StatusBadRequest)
		return
	}
	if req.OrderID == "" { // the reservation's key ("<namespace>#<step>#<order>") names the order
		if k := r.Header.Get("Idempotency-Key"); strings.Count(k, "#") >= 2 {
			req.OrderID = k[strings.LastIndex(k, "#")+1:]
		}
	}
	if req.OrderID == "" {
		http.Error(w, "bad request: no orderId in the body, nor a reservation's key in Idempotency-Key", http.StatusBadRequest)
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	switch {
	case a.down[step+"/"+req.OrderID]:
		a.failed++
		http.Error(w, "unavailable (the demo's outage)", http.StatusServiceUnavailable)
		return
	case a.refuse[step+"/"+req.OrderID] != "":
		a.refused++
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnprocessableEntity)
		_ = json.NewEncoder(w).Encode(map[string]string{"error": a.refuse[step+"/"+req.OrderID], "message": "the demo refuses this order's effect"})
		return
	}
	if a.byOrder[step] == nil {
		a.byOrder[step] = map[string]int{}
	}
	a.byOrder[step][req.OrderID]++
	a.n++
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]string{"id": fmt.Sprintf("fx_%d", a.n), "orderId": req.OrderID})
}

// setDown marks step/order down (or back, with false).
func (a *sagaAPI) setDown(step, order string, on bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.down[step+"/"+order] = on
}

// setRefused makes the API refuse step/order's effect with the business
// failure name (422 {"error": name}, as the app's services answer).
func (a *sagaAPI) setRefused(step, order, name string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.refuse[step+"/"+order] = name
}

// effects returns the effects of step for order.
func (a *sagaAPI) effects(step, order string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.byOrder[step][order]
}

// doubles counts the reservations (a step and an order) with more than
// one effect.
func (a *sagaAPI) doubles() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := 0
	for _, orders := range a.byOrder {
		for _, v := range orders {
			if v > 1 {
				n++
			}
		}
	}
	return n
}
