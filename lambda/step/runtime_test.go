package step_test

import (
	"context"
	"encoding/json"
	"errors"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/step/states"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency/storetest"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/step"
)

// TestMain runs the test binary as a Lambda function under aws-lambda-go's
// own runtime loop when TestErrorTypeOnTheWire starts it so.
func TestMain(m *testing.M) {
	if os.Getenv("STEP_TEST_FUNCTION") == "1" {
		guard, err := idempotency.NewGuard(storetest.NewMemoryStore(), idempotency.Config{Namespace: "orders", MaxResultBytes: step.MaxOutputBytes})
		if err != nil {
			panic(err)
		}
		h, err := step.New(guard, "reserve-stock", step.Field("orderId"), func(_ context.Context, input json.RawMessage, _ idempotency.Reservation) (json.RawMessage, error) {
			if strings.Contains(string(input), "out-of-stock") {
				return nil, step.Fail("OutOfStock", errors.New("no widgets left"))
			}
			return json.RawMessage(`{"reservation":"r-1"}`), nil
		}, quiet)
		if err != nil {
			panic(err)
		}
		lambda.Start(h)
		return
	}
	os.Exit(m.Run())
}

// TestErrorTypeOnTheWire runs a step under aws-lambda-go's runtime loop
// against a Runtime API and reads what the function reports: a step's
// errors arrive with the errorType Step Functions matches (its Error), and
// its output as the response.
func TestErrorTypeOnTheWire(t *testing.T) {
	events := []string{`{"orderId":"o-1"}`, `{"orderId":"o-1"}`, `{"order":"o-2"}`, `not json`, `{"orderId":"o-1","sku":"other"}`, `{"orderId":"o-3","sku":"out-of-stock"}`}
	type answer struct{ kind, body string }
	answers := make(chan answer, len(events))
	next := make(chan string, len(events))
	for _, e := range events {
		next <- e
	}
	n := 0
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasSuffix(r.URL.Path, "/invocation/next"):
			select {
			case e := <-next:
				n++
				w.Header().Set("Lambda-Runtime-Aws-Request-Id", "req-"+strconv.Itoa(n))
				w.Header().Set("Lambda-Runtime-Deadline-Ms", strconv.FormatInt(time.Now().Add(30*time.Second).UnixMilli(), 10))
				w.Header().Set("Lambda-Runtime-Invoked-Function-Arn", "arn:aws:lambda:us-east-1:123456789012:function:reserve-stock")
				_, _ = io.WriteString(w, e)
			case <-r.Context().Done():
			}
		case strings.HasSuffix(r.URL.Path, "/response"), strings.HasSuffix(r.URL.Path, "/error"):
			body, _ := io.ReadAll(r.Body)
			kind := "response"
			if strings.HasSuffix(r.URL.Path, "/error") {
				kind = "error"
			}
			answers <- answer{kind, string(body)}
			w.WriteHeader(http.StatusAccepted)
		default:
			http.NotFound(w, r)
		}
	}))
	defer api.Close()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "STEP_TEST_FUNCTION=1", "AWS_LAMBDA_RUNTIME_API="+strings.TrimPrefix(api.URL, "http://"))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	want := []answer{
		{"response", `{"reservation":"r-1"}`},
		{"response", `{"reservation":"r-1"}`},
		{"error", states.ErrorBadInput},
		// A payload that is not JSON never reaches the handler:
		// aws-lambda-go fails to decode it and reports its decoder's
		// error type. Step Functions only sends JSON; no Retry of
		// Retriers matches this name either.
		{"error", "SyntaxError"},
		{"error", states.ErrorMismatch},
		{"error", "OutOfStock"},
	}
	for i, w := range want {
		select {
		case got := <-answers:
			if got.kind != w.kind {
				t.Fatalf("event %d: %s %s, want a %s", i, got.kind, got.body, w.kind)
			}
			if w.kind == "response" && got.body != w.body {
				t.Fatalf("event %d: response %s, want %s", i, got.body, w.body)
			}
			if w.kind == "error" {
				var e struct {
					Type    string `json:"errorType"`
					Message string `json:"errorMessage"`
				}
				if err := json.Unmarshal([]byte(got.body), &e); err != nil || e.Type != w.body || e.Message == "" {
					t.Fatalf("event %d: error %s, want errorType %s with a message", i, got.body, w.body)
				}
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("event %d: no answer from the function", i)
		}
	}
}
