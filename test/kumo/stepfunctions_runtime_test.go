package kumo_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/dynamostore"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	sfnstep "github.com/idempotent-consumer/idempotent-consumer/lambda/step"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/step/states"
	"github.com/idempotent-consumer/idempotent-consumer/test/internal/kumotest"
)

// Environment of the test binary run as a step function by
// TestStepFunctionsRuntimeAPI.
const (
	envStepKumo  = "STEP_TEST_KUMO_URL"
	envStepTable = "STEP_TEST_TABLE"
)

// TestMain runs the test binary as a Lambda function (package step's
// handler under aws-lambda-go's runtime loop, on kumo's Runtime API) when
// TestStepFunctionsRuntimeAPI starts it so.
func TestMain(m *testing.M) {
	if u := os.Getenv(envStepKumo); u != "" {
		ddb := dynamodb.New(dynamodb.Options{BaseEndpoint: aws.String(u), Region: "us-east-1", Credentials: aws.AnonymousCredentials{}})
		guard, err := idempotency.NewGuard(dynamostore.New(ddb, os.Getenv(envStepTable)), idempotency.Config{Namespace: "orders", MaxResultBytes: sfnstep.MaxOutputBytes})
		if err != nil {
			panic(err)
		}
		h, err := sfnstep.New(guard, "reserve-stock", sfnstep.Field("orderId"), func(_ context.Context, input json.RawMessage, r idempotency.Reservation) (json.RawMessage, error) {
			if strings.Contains(string(input), "out-of-stock") {
				return nil, sfnstep.Fail("OutOfStock", errors.New("no widgets left"))
			}
			out, _ := json.Marshal(map[string]any{"reservation": r.Key, "at": time.Now().UnixNano()})
			return out, nil
		}, sfnstep.Config{Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			panic(err)
		}
		lambda.Start(h)
		return
	}
	os.Exit(m.Run())
}

// TestStepFunctionsRuntimeAPI: a step run by aws-lambda-go's own runtime
// loop on kumo's Runtime API (AWS_LAMBDA_RUNTIME_API=<kumo>/_runtime/<fn>,
// no InvokeEndpoint), its store a table of the same kumo, behaves under
// kumo's Step Functions as through an endpoint: two executions of one
// order get the first output verbatim, and a function error (here the
// effect's OutOfStock, reported by the runtime with its errorType) is the
// task's result, not an error.
func TestStepFunctionsRuntimeAPI(t *testing.T) {
	k := startSFN(t)
	table, err := kumotest.NewTable(context.Background(), k.clients.DynamoDB, "steps")
	if err != nil {
		t.Fatal(err)
	}
	fn := k.name("runtime")
	k.createFunction(t, fn, "")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envStepKumo+"="+k.clients.URL, envStepTable+"="+table,
		"AWS_LAMBDA_RUNTIME_API="+strings.TrimPrefix(k.clients.URL, "http://")+"/_runtime/"+fn)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	k.awaitRuntime(t, fn)
	machine := k.machine(t, "STANDARD", map[string]any{"StartAt": "Reserve", "States": map[string]any{
		"Reserve": task(fn, map[string]any{"End": true}),
	}})
	first := k.run(t, machine, k.name("order-o-7"), `{"orderId":"o-7"}`)
	second := k.run(t, machine, k.name("order-o-7-again"), `{"orderId":"o-7"}`)
	if first.Status != "SUCCEEDED" || first.Output != second.Output || !strings.Contains(first.Output, "orders#reserve-stock#o-7") {
		t.Fatalf("executions %+v and %+v: want both SUCCEEDED with the first output", first, second)
	}
	failed := k.run(t, machine, k.name("order-o-8"), `{"orderId":"o-8","sku":"out-of-stock"}`)
	if failed.Status != "SUCCEEDED" || !strings.Contains(failed.Output, `"errorType":"OutOfStock"`) {
		t.Fatalf("a function error through the Runtime API: %+v", failed)
	}
}

// awaitRuntime waits until fn's runtime polls kumo: until then kumo's Lambda
// answers an invocation 502 (no runtime handler). The probe is bad input,
// which the step refuses before any store request.
func (k *sfn) awaitRuntime(t *testing.T, fn string) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		req, _ := http.NewRequest(http.MethodPost, k.clients.URL+"/2015-03-31/functions/"+fn+"/invocations", bytes.NewReader([]byte(`{}`)))
		req.Header.Set("Authorization", lambdaAuthorization())
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			if resp.Header.Get("X-Amz-Function-Error") == "" || !strings.Contains(string(body), states.ErrorBadInput) {
				t.Fatalf("probe: %s %s", resp.Status, body)
			}
			return
		}
	}
	t.Fatalf("the runtime of %s never polled kumo", fn)
}
