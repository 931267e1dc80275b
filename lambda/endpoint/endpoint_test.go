package endpoint_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/internal/limits"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/endpoint"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/handler"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/httpkey"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency/storetest"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/sqsbatch"
)

const secretARN = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:github-AbCdEf"

// endpointSettings are an HTTP endpoint's settings: a GitHub webhook
// receiver whose replayed headers are named.
func endpointSettings() contract.Settings {
	s := contract.Defaults(30 * time.Second)
	s.Table, s.Namespace, s.Consumer = "idempotency", "hooks", "Shop/GitHubHooks"
	s.Source, s.WebhookProvider, s.WebhookSecret = contract.SourceHTTP, "github", secretARN
	s.Window = contract.ProviderWindow("github")
	s.ReplayHeaders = []string{"Content-Type", "X-Receipt"}
	return s
}

func secrets(values map[string]string) handler.Option {
	return endpoint.WithSecrets(func(_ context.Context, arn string) (string, error) {
		v, ok := values[arn]
		if !ok {
			return "", errors.New("ResourceNotFoundException: Secrets Manager can't find the specified secret")
		}
		return v, nil
	})
}

func githubEvent(secret, body string) events.LambdaFunctionURLRequest {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(body))
	return events.LambdaFunctionURLRequest{
		Version: "2.0", RawPath: "/", Body: body,
		Headers:        map[string]string{"x-hub-signature-256": fmt.Sprintf("sha256=%x", mac.Sum(nil)), "x-github-delivery": "d-1", "content-type": "application/json"},
		RequestContext: events.LambdaFunctionURLRequestContext{RequestID: "r-1", HTTP: events.LambdaFunctionURLRequestContextHTTPDescription{Method: "POST", Path: "/"}},
	}
}

// TestNewHTTPRunsTheContractsEndpoint: from the endpoint's encoded contract
// and its secret (a rotation: two of them), the handler verifies GitHub's
// signature, runs the effect once and replays it with the named headers;
// a forged delivery is 401.
func TestNewHTTPRunsTheContractsEndpoint(t *testing.T) {
	runs := 0
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		runs++
		w.Header().Set("X-Receipt", "rc-1")
		w.WriteHeader(http.StatusAccepted)
	})
	var metrics strings.Builder
	h, err := endpoint.FromEnv(next, getenv(endpointSettings().Encode()), handler.WithStore(storetest.NewMemoryStore()),
		secrets(map[string]string{secretARN: `["new-secret","old-secret"]`}), handler.WithLogger(slog.New(slog.DiscardHandler)), handler.WithMetrics(&metrics))
	if err != nil {
		t.Fatal(err)
	}
	body := `{"action":"opened","number":1}`
	for i, want := range []string{"", "true"} {
		res, err := h.FunctionURL(context.Background(), githubEvent("old-secret", body))
		if err != nil || res.StatusCode != 202 || res.Headers[httpkey.HeaderReplayed] != want || res.Headers["X-Receipt"] != "rc-1" {
			t.Fatalf("delivery %d: %+v, %v", i, res, err)
		}
	}
	if res, _ := h.FunctionURL(context.Background(), githubEvent("guessed", body)); res.StatusCode != 401 || runs != 1 {
		t.Fatalf("forged: %d, runs %d", res.StatusCode, runs)
	}
	if !strings.Contains(metrics.String(), `"Consumer":"Shop/GitHubHooks"`) {
		t.Errorf("metrics: %s", metrics.String())
	}
}

// TestNewHTTPRefuses: what NewHTTP cannot run with fails the init with the
// variable named: a queue consumer's contract, a secret it cannot read, a
// secret that holds none.
func TestNewHTTPRefuses(t *testing.T) {
	queue := settings().Encode()
	for _, tc := range []struct {
		name    string
		env     map[string]string
		secrets map[string]string
		want    string
	}{
		{"a queue consumer's contract", queue, nil, "CONSUMER_SOURCE=queue"},
		{"an unreadable secret", endpointSettings().Encode(), map[string]string{}, "HTTP_WEBHOOK_SECRET_ARN: the webhook's secret: ResourceNotFoundException"},
		{"an empty secret", endpointSettings().Encode(), map[string]string{secretARN: `[""]`}, "secret 1 of 1 is empty"},
		{"a provider without a secret", func() map[string]string {
			env := endpointSettings().Encode()
			delete(env, contract.WebhookSecretVar)
			return env
		}(), nil, "HTTP_WEBHOOK_PROVIDER: WebhookProvider \"github\" needs WebhookSecret"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := endpoint.FromEnv(http.NotFoundHandler(), getenv(tc.env), handler.WithStore(storetest.NewMemoryStore()), secrets(tc.secrets))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q in it", err, tc.want)
			}
			if strings.Contains(fmt.Sprint(err), "old-secret") {
				t.Fatalf("the error quotes the secret: %v", err)
			}
		})
	}
}

// TestGetSecretValue: the request is Secrets Manager's GetSecretValue (the
// SDK's client), signed with Signature Version 4 for the service and the
// ARN's region; the answer's SecretString is the value, and an error answer
// names its type.
func TestGetSecretValue(t *testing.T) {
	var got *http.Request
	var gotBody string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got, gotBody = r, string(b)
		var in struct{ SecretId string }
		_ = json.Unmarshal(b, &in)
		if in.SecretId != secretARN {
			w.WriteHeader(400)
			_, _ = w.Write([]byte(`{"__type":"com.amazonaws.secretsmanager#ResourceNotFoundException","message":"Secrets Manager can't find the specified secret."}`))
			return
		}
		_, _ = w.Write([]byte(`{"ARN":"` + secretARN + `","SecretString":"[\"s1\",\"s2\"]"}`))
	}))
	defer srv.Close()
	cfg := aws.Config{Region: "us-east-1", BaseEndpoint: aws.String(srv.URL), Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
		return aws.Credentials{AccessKeyID: "AKIDEXAMPLE", SecretAccessKey: "secret", Source: "test"}, nil
	})}
	v, err := endpoint.GetSecretValue(context.Background(), cfg, secretARN)
	if err != nil || v != `["s1","s2"]` {
		t.Fatalf("GetSecretValue = %q, %v", v, err)
	}
	auth := got.Header.Get("Authorization")
	if got.Method != "POST" || got.Header.Get("X-Amz-Target") != "secretsmanager.GetSecretValue" || got.Header.Get("Content-Type") != "application/x-amz-json-1.1" ||
		!strings.HasPrefix(auth, "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/") || !strings.Contains(auth, "/eu-west-1/secretsmanager/aws4_request") || gotBody != `{"SecretId":"`+secretARN+`"}` {
		t.Fatalf("request %s %v %q", got.Method, got.Header, gotBody)
	}
	_, err = endpoint.GetSecretValue(context.Background(), cfg, strings.Replace(secretARN, "github", "gone", 1))
	if err == nil || !strings.Contains(err.Error(), "StatusCode: 400") || !strings.Contains(err.Error(), "ResourceNotFoundException: Secrets Manager can't find") {
		t.Fatalf("error answer: %v", err)
	}
	if _, err := endpoint.GetSecretValue(context.Background(), cfg, "whsec_plain"); err == nil || strings.Contains(err.Error(), "whsec") {
		t.Fatalf("not an ARN: %v", err)
	}
}

// The queue entry points refuse an HTTP endpoint's contract at init: a
// function URL event read as an SQS batch would answer 200 with no work done.
func TestQueueHandlerRefusesAnEndpointsContract(t *testing.T) {
	_, err := sqsbatch.FromEnv(orderKey, func(context.Context, order, idempotency.Reservation) (string, error) { return "", nil },
		getenv(endpointSettings().Encode()), handler.WithStore(storetest.NewMemoryStore()))
	if err == nil || !strings.Contains(err.Error(), "CONSUMER_SOURCE=http") || !strings.Contains(err.Error(), "endpoint.Start") {
		t.Fatalf("err = %v", err)
	}
}

// An endpoint deployed with no word of its client attribute scopes its keys
// to the caller's IAM identity: caller B sending caller A's key and body
// runs its own effect and never receives A's response; a request without an
// identity is 401. Only ClientAttribute "none", chosen by name, shares keys.
func TestNewHTTPScopesKeysToTheCallerByDefault(t *testing.T) {
	call := func(h *httpkey.Handler, arn string) events.LambdaFunctionURLResponse {
		e := events.LambdaFunctionURLRequest{RawPath: "/orders", Body: `{"sku":"a"}`, Headers: map[string]string{"idempotency-key": "order-1"},
			RequestContext: events.LambdaFunctionURLRequestContext{HTTP: events.LambdaFunctionURLRequestContextHTTPDescription{Method: "POST"}}}
		if arn != "" {
			e.RequestContext.Authorizer = &events.LambdaFunctionURLRequestContextAuthorizerDescription{IAM: &events.LambdaFunctionURLRequestContextAuthorizerIAMDescription{UserARN: arn}}
		}
		res, err := h.FunctionURL(context.Background(), e)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	for _, tc := range []struct {
		client      string // HTTP_CLIENT_ATTRIBUTE, "" absent
		statuses    []int
		bodies      []string
		runs        int
		anonymousOK bool
	}{
		{client: "", runs: 2, bodies: []string{"for arn:aws:sts::111122223333:assumed-role/A", "for arn:aws:sts::111122223333:assumed-role/B"}},
		{client: "none", runs: 1, bodies: []string{"for arn:aws:sts::111122223333:assumed-role/A", "for arn:aws:sts::111122223333:assumed-role/A"}, anonymousOK: true},
	} {
		runs := 0
		next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			runs++
			w.WriteHeader(http.StatusCreated)
			_, _ = fmt.Fprintf(w, "for %s", r.Header.Get("X-Caller"))
		})
		env := map[string]string{contract.TableVar: "t", contract.NamespaceVar: "api", contract.SourceVar: "http"}
		if tc.client != "" {
			env[contract.ClientAttributeVar] = tc.client
		}
		h, err := endpoint.FromEnv(callerHeader(next), getenv(env), handler.WithStore(storetest.NewMemoryStore()), handler.WithLogger(slog.New(slog.DiscardHandler)), handler.WithMetrics(io.Discard))
		if err != nil {
			t.Fatal(err)
		}
		for i, role := range []string{"A", "B"} {
			res := call(h, "arn:aws:sts::111122223333:assumed-role/"+role+"/session-"+role)
			if res.StatusCode != 201 || res.Body != tc.bodies[i] {
				t.Errorf("%q: caller %s got %d %q, want 201 %q", tc.client, role, res.StatusCode, res.Body, tc.bodies[i])
			}
		}
		if runs != tc.runs {
			t.Errorf("%q: %d runs, want %d", tc.client, runs, tc.runs)
		}
		if res := call(h, ""); (res.StatusCode == 401) == tc.anonymousOK {
			t.Errorf("%q: a request without an IAM identity got %d", tc.client, res.StatusCode)
		}
	}
}

// callerHeader hands next the caller's stable IAM identity as X-Caller, so
// that each response names whose it is.
func callerHeader(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, _ := httpkey.ClientIAM()(r)
		r.Header.Set("X-Caller", id)
		next.ServeHTTP(w, r)
	})
}

// TestTheEndpointReplaysUpToTheHTTPBound: the Lambda path agrees with the
// net/http one (httpkey's TestAPlainGuardKeepsTheHTTPBound): an endpoint
// built from its contract replays a 64 KiB response whole to a function
// URL request, and one over limits.LargestResultBytes as its status with
// Idempotency-Body-Dropped, the handler run once each.
func TestTheEndpointReplaysUpToTheHTTPBound(t *testing.T) {
	sizes := map[string]int{"/report": 64 << 10, "/huge": limits.LargestResultBytes + 1}
	runs := map[string]int{}
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		runs[r.URL.Path]++
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write(bytes.Repeat([]byte("r"), sizes[r.URL.Path]))
	})
	env := map[string]string{contract.TableVar: "t", contract.NamespaceVar: "api", contract.SourceVar: "http", contract.ClientAttributeVar: contract.ClientNone}
	h, err := endpoint.FromEnv(next, getenv(env), handler.WithStore(storetest.NewMemoryStore()), handler.WithLogger(slog.New(slog.DiscardHandler)), handler.WithMetrics(io.Discard))
	if err != nil {
		t.Fatal(err)
	}
	call := func(path string) events.LambdaFunctionURLResponse {
		res, err := h.FunctionURL(context.Background(), events.LambdaFunctionURLRequest{RawPath: path, Body: `{}`, Headers: map[string]string{"idempotency-key": "k" + path},
			RequestContext: events.LambdaFunctionURLRequestContext{HTTP: events.LambdaFunctionURLRequestContextHTTPDescription{Method: "POST", Path: path}}})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	for path, size := range sizes {
		if res := call(path); res.StatusCode != 201 || len(res.Body) != size {
			t.Fatalf("%s, first: %d, %d bytes", path, res.StatusCode, len(res.Body))
		}
	}
	if res := call("/report"); res.StatusCode != 201 || res.Headers[httpkey.HeaderReplayed] != "true" || res.Headers["Idempotency-Body-Dropped"] != "" || len(res.Body) != 64<<10 {
		t.Fatalf("replay of 64 KiB: %d, %d bytes, %v", res.StatusCode, len(res.Body), res.Headers)
	}
	if res := call("/huge"); res.StatusCode != 201 || res.Headers["Idempotency-Body-Dropped"] != strconv.Itoa(limits.LargestResultBytes+1) {
		t.Fatalf("replay of a response over the bound: %d, %v", res.StatusCode, res.Headers)
	}
	if runs["/report"] != 1 || runs["/huge"] != 1 {
		t.Fatalf("runs %v, want one each", runs)
	}
}
