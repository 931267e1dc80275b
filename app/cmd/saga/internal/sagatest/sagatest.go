// Package sagatest checks the order saga's steps against a real
// DynamoDB-compatible server (dynalite) and a fake downstream service.
package sagatest

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/idempotent-consumer/idempotent-consumer/app/cmd/saga/internal/saga"
	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/internal/dynalite"
	"github.com/idempotent-consumer/idempotent-consumer/internal/steptask"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/dynamostore"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/handler"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/step"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/step/states"
)

// Order is a state input as the saga's rule starts it.
const Order = `{"orderId":"o-1","customerId":"c1","amount":5000,"currency":"EUR","sku":"widget","quantity":1}`

// api is a downstream service that honours nothing: it counts every call
// by its Idempotency-Key and answers each order as told.
type api struct {
	mu      sync.Mutex
	calls   map[string]int
	answers map[string]func(http.ResponseWriter) // by order id
}

func (a *api) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var o struct{ OrderID string }
	_ = json.Unmarshal(body, &o)
	a.mu.Lock()
	a.calls[r.Header.Get("Idempotency-Key")]++
	n := len(a.calls)
	answer := a.answers[o.OrderID]
	a.mu.Unlock()
	if answer != nil {
		answer(w)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"id": n, "at": time.Now().UnixNano()})
}

// CheckStep runs the step name, whose service newService builds for a URL,
// under step.FromEnv with the contract its construct writes, on a table
// of dynalite, and checks that: a Task retry, a redrive or a second
// execution of the order gets the first output verbatim, and the service
// was called once, with the step's record key as its Idempotency-Key;
// another order is another call; a 422 naming the step's failure (when
// failure is not "") is that failure, for a Catch; a failure the step does
// not name, or a 5xx, is Step.EffectFailed, which the Retry retries, and
// a later attempt runs the effect.
func CheckStep(t *testing.T, name string, newService func(url string) *saga.Service, failure string) {
	t.Helper()
	a := &api{calls: map[string]int{}, answers: map[string]func(http.ResponseWriter){}}
	srv := httptest.NewServer(a)
	t.Cleanup(srv.Close)
	db := dynalite.Start(t)
	s := contract.Defaults(30 * time.Second)
	s.Table, s.Namespace, s.Consumer, s.Source, s.StepName, s.Window = db.NewTable(t), name, "OrdersPlatform/"+name, contract.SourceStep, name, steptask.DefaultWindow
	s.PayloadIgnore = []string{"placedAt"}
	env := s.Encode()
	h, err := step.FromEnv(saga.Key, newService(srv.URL).Effect, handler.WithGetenv(func(k string) string { return env[k] }),
		handler.WithStore(dynamostore.New(db.Client(), s.Table)), handler.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	invoke := func(input string) (string, string) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		out, err := h(ctx, json.RawMessage(input))
		return string(out), step.ErrorName(err)
	}
	first, e1 := invoke(Order)
	again, e2 := invoke(strings.Replace(Order, `"quantity":1`, `"quantity":1,"placedAt":"2026-12-01T10:00:01Z"`, 1))
	if e1 != "" || e2 != "" || first == "" || again != first {
		t.Fatalf("two executions of one order: %s (%s), %s (%s); want one output, twice", first, e1, again, e2)
	}
	key := name + "#" + name + "#o-1"
	if a.calls[key] != 1 || len(a.calls) != 1 {
		t.Errorf("calls %v, want one, with the Idempotency-Key %s", a.calls, key)
	}
	if _, e := invoke(strings.Replace(Order, "o-1", "o-2", 1)); e != "" || len(a.calls) != 2 {
		t.Errorf("another order: %s, calls %v", e, a.calls)
	}
	declined := func(name string) func(http.ResponseWriter) {
		return func(w http.ResponseWriter) {
			w.WriteHeader(http.StatusUnprocessableEntity)
			_, _ = io.WriteString(w, `{"error":"`+name+`","message":"no"}`)
		}
	}
	if failure != "" {
		a.answers["o-3"] = declined(failure)
		if _, e := invoke(strings.Replace(Order, "o-1", "o-3", 1)); e != failure {
			t.Errorf("a declined order: %q, want %s", e, failure)
		}
	}
	a.answers["o-4"] = declined("SomethingElse")
	if _, e := invoke(strings.Replace(Order, "o-1", "o-4", 1)); e != states.ErrorEffect {
		t.Errorf("a failure the step does not name: %q, want %s", e, states.ErrorEffect)
	}
	a.mu.Lock()
	delete(a.answers, "o-4")
	a.mu.Unlock()
	if out, e := invoke(strings.Replace(Order, "o-1", "o-4", 1)); e != "" || out == "" {
		t.Errorf("the retry after a failure: %s, %q; want the effect run", out, e)
	}
}
