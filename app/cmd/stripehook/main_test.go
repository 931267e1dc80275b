package main

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/idempotent-consumer/idempotent-consumer/app/cmd/internal/orderstest"
	"github.com/idempotent-consumer/idempotent-consumer/app/cmd/internal/provider"
	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/endpoint"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/handler"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/httpkey"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency/storetest"
)

const secretARN = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:stripe-AbCdEf"

// TestStripesRetryReleasesTheOrderOnce: Stripe's retry of an event (the
// same event, a new timestamp, signed again) gets the stored answer and
// releases nothing; another event type is acknowledged and does nothing; a
// delivery signed with another secret is 401.
func TestStripesRetryReleasesTheOrderOnce(t *testing.T) {
	api := orderstest.NewAPI(t)
	s := contract.Defaults(10 * time.Second)
	s.Table, s.Namespace, s.Consumer = "example", "stripe", "OrdersPlatform/StripeHooks"
	s.Source, s.WebhookProvider, s.WebhookSecret, s.ClientAttribute = contract.SourceHTTP, "stripe", secretARN, "none"
	s.Window = contract.ProviderWindow("stripe") // Stripe retries for 3 days
	env := s.Encode()
	h, err := endpoint.FromEnv(&receiver{provider.NewEffect(api.URL, "/fulfilments", slog.Default())},
		handler.WithStore(storetest.NewMemoryStore()), handler.WithGetenv(func(k string) string { return env[k] }),
		endpoint.WithSecrets(func(_ context.Context, arn string) (string, error) {
			if arn != secretARN {
				return "", fmt.Errorf("unknown secret %s", arn)
			}
			return "whsec_test", nil
		}),
		handler.WithLogger(slog.New(slog.DiscardHandler)), handler.WithMetrics(io.Discard))
	if err != nil {
		t.Fatal(err)
	}
	deliver := func(secret, body string, at int64) events.APIGatewayV2HTTPResponse {
		t.Helper()
		m := hmac.New(sha256.New, []byte(secret))
		fmt.Fprintf(m, "%d.%s", at, body)
		res, err := h.HTTPAPI(context.Background(), events.APIGatewayV2HTTPRequest{Version: "2.0", RawPath: "/", Body: body,
			Headers:        map[string]string{"stripe-signature": fmt.Sprintf("t=%d,v1=%s", at, hex.EncodeToString(m.Sum(nil)))},
			RequestContext: events.APIGatewayV2HTTPRequestContext{HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: "POST", Path: "/"}}})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	paid := `{"id":"evt_1","type":"payment_intent.succeeded","data":{"object":{"id":"pi_1","amount":5000,"currency":"eur","metadata":{"orderId":"o-1"}}}}`
	now := time.Now().Unix()
	first, retry := deliver("whsec_test", paid, now-120), deliver("whsec_test", paid, now)
	if first.StatusCode != 200 || retry.StatusCode != 200 || retry.Body != first.Body || retry.Headers[httpkey.HeaderReplayed] != "true" {
		t.Fatalf("delivery %+v, retry %+v: want 200 and the retry replayed", first, retry)
	}
	if other := deliver("whsec_test", `{"id":"evt_2","type":"customer.created","data":{"object":{"id":"cus_1"}}}`, now); other.StatusCode != 200 {
		t.Errorf("another event type: %+v, want 200", other)
	}
	if forged := deliver("whsec_guessed", `{"id":"evt_3","type":"payment_intent.succeeded","data":{"object":{"metadata":{"orderId":"o-3"}}}}`, now); forged.StatusCode != 401 {
		t.Errorf("forged: %+v, want 401", forged)
	}
	if got := api.Effects(); len(got) != 1 {
		t.Errorf("fulfilments by key %v, want one", got)
	}
}
