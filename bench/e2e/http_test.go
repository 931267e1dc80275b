package e2e

import (
	"context"
	"fmt"
	lambdaendpoint "github.com/idempotent-consumer/idempotent-consumer/lambda/endpoint"
	"io"
	"maps"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/handler"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/httpkey"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/webhook/webhooktest"
)

// The HTTP endpoint's cases: a new request (reserve and complete), the
// replay of a completed one (one failed conditional put that returns the
// record), a request while another holds the key (the same, answered 409);
// then a Stripe webhook's (webhookCase): a signed delivery of a new event
// and of a completed one, and what a flood sends, refused 401 before any
// store request: a request without a signature, one signed with a wrong
// secret (the HMAC over the body runs), and the same with a body of 1 MiB,
// the largest the handler reads (contract.DefaultMaxRequestBytes).
var httpCases = []struct {
	name   string
	status int
	want   map[string]int64 // DynamoDB requests of one HTTP request
}{
	{"http-new", 201, map[string]int64{"PutItem": 1, "UpdateItem": 1}},
	{"http-replayed", 201, map[string]int64{"PutItem": 1}},
	{"http-in-progress", 409, map[string]int64{"PutItem": 1}},
	{"webhook-new", 200, map[string]int64{"PutItem": 1, "UpdateItem": 1}},
	{"webhook-replayed", 200, map[string]int64{"PutItem": 1}},
	{"webhook-unsigned", 401, map[string]int64{}},
	{"webhook-forged", 401, map[string]int64{}},
	{"webhook-forged-1MiB", 401, map[string]int64{}},
}

// endpoint is an HTTP handler built as a deployed endpoint builds it
// (endpoint.FromEnv from the contract: the SDK's client, the DynamoDB store),
// on a table of its own; release ends what a case's preparation holds.
type endpoint struct {
	h       *httpkey.Handler
	table   string
	metrics *writeCounter
	release func()
	event   func(key string) events.LambdaFunctionURLRequest
}

// newEndpoint builds the endpoint of the case name: a Stripe webhook for
// the webhook cases (webhookCase), the client's Idempotency-Key otherwise.
func newEndpoint(tb testing.TB, name string) *endpoint {
	tb.Helper()
	table, err := newTable(admin, "idempotency")
	if err != nil {
		tb.Fatal(err)
	}
	e := &endpoint{table: table, metrics: &writeCounter{}, release: func() {}, event: httpEvent}
	if strings.HasPrefix(name, "webhook-") {
		e.h = buildWebhook(tb, table, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusOK)
		}), e.metrics)
		e.event = webhookCase(name)
		return e
	}
	e.h = buildHTTP(tb, table, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		res, _ := httpkey.ReservationFrom(r.Context())
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		fmt.Fprintf(w, `{"charge":"ch_%s"}`, res.Key)
	}), e.metrics)
	return e
}

// stripeSecret is the webhook's signing secret, as the Secrets Manager
// secret that the contract names holds it.
const stripeSecret = "whsec_benchmark"

// buildWebhook builds a Stripe webhook as the endpoint construct deploys
// one (endpoint.FromEnv from the contract: WebhookProvider "stripe", keys
// shared by every caller, the provider's window, the secret read at init).
func buildWebhook(tb testing.TB, table string, next http.Handler, metrics io.Writer) *httpkey.Handler {
	tb.Helper()
	const arn = "arn:aws:secretsmanager:us-east-1:123456789012:secret:stripe-AbCdEf"
	s := contract.Defaults(30 * time.Second)
	s.Table, s.Namespace, s.Consumer, s.Source = table, "stripe", "StripeHooks", contract.SourceHTTP
	s.WebhookProvider, s.WebhookSecret, s.ClientAttribute = "stripe", arn, contract.ClientNone
	s.Window = contract.ProviderWindow("stripe")
	env := s.Encode()
	getenv := func(k string) string {
		if v, ok := env[k]; ok {
			return v
		}
		return os.Getenv(k)
	}
	h, err := lambdaendpoint.FromEnv(next, handler.WithGetenv(getenv), handler.WithMetrics(metrics),
		lambdaendpoint.WithSecrets(func(_ context.Context, got string) (string, error) {
			if got != arn {
				return "", fmt.Errorf("no secret %s", got)
			}
			return stripeSecret, nil
		}))
	if err != nil {
		tb.Fatal(err)
	}
	return h
}

// stripeBody is a Stripe event of the size Stripe sends (about 1 KB), the
// event key.
func stripeBody(key string) string {
	return `{"id":"` + key + `","object":"event","api_version":"2024-06-20","created":1764590400,"data":{"object":{"id":"pi_3NG8Du2eZvKYlo2C0kdlB2Vq","object":"payment_intent","amount":5000,"amount_capturable":0,"amount_received":5000,"capture_method":"automatic","client_secret":"pi_3NG8Du2eZvKYlo2C0kdlB2Vq_secret_redacted","confirmation_method":"automatic","created":1764590390,"currency":"eur","customer":"cus_42","description":"Order 42","latest_charge":"ch_3NG8Du2eZvKYlo2C0V1yMfBn","livemode":false,"metadata":{"orderId":"o-42"},"payment_method":"pm_1NG8Dt2eZvKYlo2CtrU6v7ZS","payment_method_types":["card"],"receipt_email":"a@example.com","status":"succeeded"}},"livemode":false,"pending_webhooks":1,"request":{"id":"req_8Xq3Lf1o2Pj9Ab","idempotency_key":"5b1f6c2e-0d9a-4e43-9c61-2f4a7d1e8b90"},"type":"payment_intent.succeeded"}`
}

// webhookEvent is a function URL event of a Stripe delivery of body, its
// Stripe-Signature under secret ("" for none), as a webhook's URL (auth
// NONE) receives it.
func webhookEvent(body, secret string) events.LambdaFunctionURLRequest {
	headers := map[string]string{"content-type": "application/json; charset=utf-8", "user-agent": "Stripe/1.0 (+https://stripe.com/docs/webhooks)"}
	if secret != "" {
		headers["stripe-signature"] = webhooktest.Stripe([]byte(body), time.Now(), secret).Get("Stripe-Signature")
	}
	return events.LambdaFunctionURLRequest{Version: "2.0", RawPath: "/hooks/stripe", Body: body, Headers: headers,
		RequestContext: events.LambdaFunctionURLRequestContext{RequestID: "r", HTTP: events.LambdaFunctionURLRequestContextHTTPDescription{Method: "POST", Path: "/hooks/stripe"}}}
}

// webhookCase returns the event of a key for the webhook case name: signed
// with the endpoint's secret, with none, or with a wrong one. The refusals'
// events are built once (a flood's requests need no signing).
func webhookCase(name string) func(key string) events.LambdaFunctionURLRequest {
	switch name {
	case "webhook-unsigned":
		ev := webhookEvent(stripeBody("evt_flood"), "")
		return func(string) events.LambdaFunctionURLRequest { return ev }
	case "webhook-forged":
		ev := webhookEvent(stripeBody("evt_flood"), "whsec_guessed")
		return func(string) events.LambdaFunctionURLRequest { return ev }
	case "webhook-forged-1MiB":
		body := stripeBody("evt_flood")
		body = body[:len(body)-1] + `,"pad":"` + strings.Repeat("x", contract.DefaultMaxRequestBytes-len(body)-10) + `"}`
		ev := webhookEvent(body, "whsec_guessed")
		return func(string) events.LambdaFunctionURLRequest { return ev }
	}
	return func(key string) events.LambdaFunctionURLRequest { return webhookEvent(stripeBody(key), stripeSecret) }
}

func buildHTTP(tb testing.TB, table string, next http.Handler, metrics io.Writer) *httpkey.Handler {
	tb.Helper()
	s := contract.Defaults(30 * time.Second)
	s.Table, s.Namespace, s.Consumer, s.Source = table, "charges", "Charges", contract.SourceHTTP
	env := s.Encode()
	getenv := func(k string) string {
		if v, ok := env[k]; ok {
			return v
		}
		return os.Getenv(k)
	}
	h, err := lambdaendpoint.FromEnv(next, handler.WithGetenv(getenv), handler.WithMetrics(metrics))
	if err != nil {
		tb.Fatal(err)
	}
	return h
}

// request sends one function URL event under key and returns its status.
func (e *endpoint) request(key string) int {
	res, _ := e.h.FunctionURL(context.Background(), e.event(key))
	return res.StatusCode
}

// httpEvent is a function URL event with AWS_IAM auth, as the endpoint's
// default deploys it: the caller's role is the scope of its keys.
func httpEvent(key string) events.LambdaFunctionURLRequest {
	return events.LambdaFunctionURLRequest{Version: "2.0", RawPath: "/charges", Body: `{"amount":5000,"currency":"EUR","customerId":"c-42"}`,
		Headers: map[string]string{"idempotency-key": `"` + key + `"`, "content-type": "application/json"},
		RequestContext: events.LambdaFunctionURLRequestContext{RequestID: "r", HTTP: events.LambdaFunctionURLRequestContextHTTPDescription{Method: "POST", Path: "/charges"},
			Authorizer: &events.LambdaFunctionURLRequestContextAuthorizerDescription{IAM: &events.LambdaFunctionURLRequestContextAuthorizerIAMDescription{
				UserARN: "arn:aws:sts::111122223333:assumed-role/Checkout/aws-go-sdk-1764590400000000000"}}}}
}

// keysFor returns the key of the i-th request of a case, after preparing
// the case: the replayed keys completed, the in-progress keys held by
// another handler's running effect (until e.release).
func (e *endpoint) keysFor(tb testing.TB, name string, n int) func(i int) string {
	tb.Helper()
	fresh := func(int) string { return "k-" + strconv.FormatInt(keySeq.Add(1), 10) }
	fixed := make([]string, n)
	for i := range fixed {
		fixed[i] = fresh(i)
	}
	switch name {
	case "http-new", "webhook-new":
		return fresh
	case "http-replayed", "webhook-replayed":
		for _, k := range fixed {
			if st := e.request(k); st != 201 && st != 200 {
				tb.Fatalf("preparing %s: %d", k, st)
			}
		}
	case "http-in-progress":
		block := make(chan struct{})
		var entered, done sync.WaitGroup
		holder := buildHTTP(tb, e.table, http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
			entered.Done()
			<-block
		}), io.Discard)
		for _, k := range fixed {
			entered.Add(1)
			done.Go(func() { _, _ = holder.FunctionURL(context.Background(), httpEvent(k)) })
		}
		entered.Wait()
		e.release = func() { close(block); done.Wait() }
	}
	return func(i int) string { return fixed[i%n] }
}

// TestHTTPCases checks that each HTTP case answers as it says and makes the
// requests it should.
func TestHTTPCases(t *testing.T) {
	for _, c := range httpCases {
		t.Run(c.name, func(t *testing.T) {
			e := newEndpoint(t, c.name)
			keys := e.keysFor(t, c.name, 4)
			defer e.release()
			w0, _ := srv.stats()
			if st := e.request(keys(1)); st != c.status {
				t.Fatalf("status %d, want %d", st, c.status)
			}
			w1, _ := srv.stats()
			if got := w1.minus(w0).Targets; !maps.Equal(got, c.want) {
				t.Errorf("requests %v, want %v", got, c.want)
			}
		})
	}
}

// BenchmarkHTTP is the endpoint's path, one HTTP request per op (a function
// URL event through endpoint.FromEnv's handler, the SDK, TLS, the server in
// another process): CPU, allocations, DynamoDB requests, bytes on the wire,
// log and metrics bytes per request.
func BenchmarkHTTP(b *testing.B) {
	for _, c := range httpCases {
		b.Run("case="+c.name, func(b *testing.B) {
			e := newEndpoint(b, c.name)
			keys := e.keysFor(b, c.name, 64)
			defer e.release()
			if st := e.request(keys(0)); st != c.status { // warm: connections open
				b.Fatalf("status %d, want %d", st, c.status)
			}
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			m0, cpu0, l0, met0 := ms.Mallocs, cpuTime(), logs.n.Load(), e.metrics.n.Load()
			w0, err := srv.stats()
			if err != nil {
				b.Fatal(err)
			}
			n := 0
			for b.Loop() {
				n++
				if st := e.request(keys(n)); st != c.status {
					b.Fatalf("status %d, want %d", st, c.status)
				}
			}
			cpu := cpuTime() - cpu0
			runtime.ReadMemStats(&ms)
			w, err := srv.stats()
			if err != nil {
				b.Fatal(err)
			}
			time.Sleep(10 * time.Millisecond) // let the stderr reader catch up, as report does
			d, f := w.minus(w0), float64(n)
			b.ReportMetric(float64(cpu.Microseconds())/f, "cpu-µs/req")
			b.ReportMetric(float64(ms.Mallocs-m0)/f, "allocs/req")
			b.ReportMetric(float64(d.Requests)/f, "ddb-req/req")
			b.ReportMetric(float64(d.BytesIn+d.BytesOut)/f, "wire-B/req")
			b.ReportMetric(float64(logs.n.Load()-l0)/f, "log-B/req")
			b.ReportMetric(float64(e.metrics.n.Load()-met0)/f, "metric-B/req")
			b.ReportMetric(0, "ns/op")
		})
	}
}
