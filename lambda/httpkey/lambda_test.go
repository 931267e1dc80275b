package httpkey_test

import (
	"context"
	"encoding/base64"
	"io"
	"log/slog"
	"net/http"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/httpkey"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency/storetest"
)

func lambdaHandler(t *testing.T, cfg httpkey.Config) (*httpkey.Handler, *int) {
	t.Helper()
	g, err := idempotency.NewGuard(storetest.NewMemoryStore(), idempotency.Config{Namespace: "hooks"})
	if err != nil {
		t.Fatal(err)
	}
	runs := new(int)
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		*runs++
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Add("Set-Cookie", "a=1")
		w.Header().Add("Set-Cookie", "b=2")
		w.WriteHeader(http.StatusAccepted)
		_, _ = w.Write(append([]byte(r.Method+" "+r.URL.RequestURI()+" "), b...))
	})
	cfg.Logger, cfg.Metrics = slog.New(slog.DiscardHandler), io.Discard
	return httpkey.New(g, next, cfg), runs
}

// A function URL event is served as the request it describes: method, raw
// path and query, headers, a base64 body; the response carries cookies apart
// and a binary body in base64. Its duplicate is the replay.
func TestFunctionURL(t *testing.T) {
	h, runs := lambdaHandler(t, httpkey.Config{})
	e := events.LambdaFunctionURLRequest{
		Version: "2.0", RawPath: "/hooks/a%20b", RawQueryString: "x=1",
		Headers:         map[string]string{"idempotency-key": `"k-1"`, "content-type": "application/octet-stream"},
		Body:            base64.StdEncoding.EncodeToString([]byte{0xff, 0x01}),
		IsBase64Encoded: true,
		RequestContext:  events.LambdaFunctionURLRequestContext{RequestID: "r-1", HTTP: events.LambdaFunctionURLRequestContextHTTPDescription{Method: "POST", Path: "/hooks/a b"}},
	}
	res, err := h.FunctionURL(context.Background(), e)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := base64.StdEncoding.DecodeString(res.Body)
	if res.StatusCode != 202 || !res.IsBase64Encoded || string(body) != "POST /hooks/a%20b?x=1 \xff\x01" || len(res.Cookies) != 2 || res.Headers["Set-Cookie"] != "" {
		t.Fatalf("response %+v (body %q)", res, body)
	}
	again, _ := h.FunctionURL(context.Background(), e)
	if again.StatusCode != 202 || again.Headers[httpkey.HeaderReplayed] != "true" || again.Body != res.Body || *runs != 1 {
		t.Fatalf("duplicate %+v, runs %d", again, *runs)
	}
	e.IsBase64Encoded, e.Body = true, "not base64!"
	bad, _ := h.FunctionURL(context.Background(), e)
	if bad.StatusCode != 400 || *runs != 1 {
		t.Fatalf("bad body: %+v", bad)
	}
}

// An HTTP API event scoped to the caller's IAM identity: one key, two
// callers, two facts; no identity, 401.
func TestHTTPAPIWithIAMClient(t *testing.T) {
	h, runs := lambdaHandler(t, httpkey.Config{Client: httpkey.ClientIAM()})
	event := func(arn string) events.APIGatewayV2HTTPRequest {
		e := events.APIGatewayV2HTTPRequest{Version: "2.0", RouteKey: "POST /pay", RawPath: "/pay", Body: `{"a":1}`,
			Headers:        map[string]string{"idempotency-key": "k"},
			RequestContext: events.APIGatewayV2HTTPRequestContext{HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: "POST"}}}
		if arn != "" {
			e.RequestContext.Authorizer = &events.APIGatewayV2HTTPRequestContextAuthorizerDescription{IAM: &events.APIGatewayV2HTTPRequestContextAuthorizerIAMDescription{UserARN: arn}}
		}
		return e
	}
	for i, c := range []struct {
		arn      string
		status   int
		replayed string
	}{
		{"", 401, ""},
		{"arn:aws:iam::1:user/a", 202, ""},
		{"arn:aws:iam::1:user/b", 202, ""},
		{"arn:aws:iam::1:user/a", 202, "true"},
	} {
		res, err := h.HTTPAPI(context.Background(), event(c.arn))
		if err != nil || res.StatusCode != c.status || res.Headers[httpkey.HeaderReplayed] != c.replayed {
			t.Fatalf("request %d: %+v, %v", i, res, err)
		}
	}
	if *runs != 2 {
		t.Fatalf("runs %d", *runs)
	}
}

// A role's sessions are one client: the session name changes when the
// caller's credentials are refreshed (the Go SDK names them
// aws-go-sdk-<UnixNano>), and its retry must find its first request. Two
// roles, or a role of another account, are other clients.
func TestIAMClientIsTheRoleNotTheSession(t *testing.T) {
	h, runs := lambdaHandler(t, httpkey.Config{Client: httpkey.ClientIAM()})
	event := func(arn string) events.LambdaFunctionURLRequest {
		return events.LambdaFunctionURLRequest{RawPath: "/pay", Body: `{"a":1}`, Headers: map[string]string{"idempotency-key": "k"},
			RequestContext: events.LambdaFunctionURLRequestContext{HTTP: events.LambdaFunctionURLRequestContextHTTPDescription{Method: "POST"},
				Authorizer: &events.LambdaFunctionURLRequestContextAuthorizerDescription{IAM: &events.LambdaFunctionURLRequestContextAuthorizerIAMDescription{UserARN: arn}}}}
	}
	for i, c := range []struct {
		arn      string
		replayed string
	}{
		{"arn:aws:sts::111122223333:assumed-role/Checkout/aws-go-sdk-1764590400000000000", ""},
		{"arn:aws:sts::111122223333:assumed-role/Checkout/aws-go-sdk-1764594000000000000", "true"}, // refreshed credentials
		{"arn:aws:sts::111122223333:assumed-role/Refunds/aws-go-sdk-1764590400000000000", ""},
		{"arn:aws:sts::444455556666:assumed-role/Checkout/aws-go-sdk-1764590400000000000", ""},
	} {
		res, err := h.FunctionURL(context.Background(), event(c.arn))
		if err != nil || res.StatusCode != 202 || res.Headers[httpkey.HeaderReplayed] != c.replayed {
			t.Fatalf("request %d (%s): %+v, %v; want 202, replayed %q", i, c.arn, res, err, c.replayed)
		}
	}
	if *runs != 3 {
		t.Fatalf("runs %d, want 3 (one per role and account)", *runs)
	}
}

func TestStableIAM(t *testing.T) {
	for in, want := range map[string]string{
		"arn:aws:sts::111122223333:assumed-role/Checkout/session-1":    "arn:aws:sts::111122223333:assumed-role/Checkout",
		"arn:aws-cn:sts::111122223333:assumed-role/Checkout/i-0abc123": "arn:aws-cn:sts::111122223333:assumed-role/Checkout",
		"arn:aws:iam::111122223333:user/ops/alice":                     "arn:aws:iam::111122223333:user/ops/alice",
		"arn:aws:iam::111122223333:root":                               "arn:aws:iam::111122223333:root",
		"arn:aws:sts::111122223333:federated-user/bob":                 "arn:aws:sts::111122223333:federated-user/bob",
	} {
		if got := httpkey.StableIAM(in); got != want {
			t.Errorf("StableIAM(%q) = %q, want %q", in, got, want)
		}
	}
}
