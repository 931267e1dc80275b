package main

import (
	"context"
	"io"
	"log/slog"
	"strings"
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

// TestOneKeyPerCaller: a client's retry under its key (from a new session
// of its role) gets the stored 201 and books nothing; another role's order
// under the same key is booked on its own; the key reused for another
// order is 422; an invalid order is 422 before any booking.
func TestOneKeyPerCaller(t *testing.T) {
	book := orderstest.NewAPI(t)
	s := contract.Defaults(10 * time.Second)
	s.Table, s.Namespace, s.Consumer, s.Source = "example", "orders", "OrdersPlatform/OrdersApi", contract.SourceHTTP
	env := s.Encode() // ClientAttribute: the default behind IAM, "iam"
	h, err := endpoint.FromEnv(&api{provider.NewEffect(book.URL, "/bookings", slog.Default())},
		handler.WithStore(storetest.NewMemoryStore()), handler.WithGetenv(func(k string) string { return env[k] }),
		handler.WithLogger(slog.New(slog.DiscardHandler)), handler.WithMetrics(io.Discard))
	if err != nil {
		t.Fatal(err)
	}
	post := func(caller, key, body string) events.APIGatewayV2HTTPResponse {
		t.Helper()
		res, err := h.HTTPAPI(context.Background(), events.APIGatewayV2HTTPRequest{Version: "2.0", RouteKey: "POST /orders", RawPath: "/orders", Body: body,
			Headers: map[string]string{"idempotency-key": `"` + key + `"`, "content-type": "application/json"},
			RequestContext: events.APIGatewayV2HTTPRequestContext{
				Authorizer: &events.APIGatewayV2HTTPRequestContextAuthorizerDescription{IAM: &events.APIGatewayV2HTTPRequestContextAuthorizerIAMDescription{UserARN: caller}},
				HTTP:       events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: "POST", Path: "/orders"}}})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	const checkout, refreshed, partner = "arn:aws:sts::111122223333:assumed-role/Checkout/s1", "arn:aws:sts::111122223333:assumed-role/Checkout/s2", "arn:aws:sts::444455556666:assumed-role/Partner/p1"
	mine := `{"orderId":"o-1","customerId":"c1","amount":5000,"currency":"EUR"}`
	first, again := post(checkout, "k-1", mine), post(refreshed, "k-1", mine)
	if first.StatusCode != 201 || again.StatusCode != 201 || again.Body != first.Body || again.Headers[httpkey.HeaderReplayed] != "true" {
		t.Fatalf("first %+v, retry %+v: want 201 and the retry replayed", first, again)
	}
	theirs := post(partner, "k-1", `{"orderId":"o-2","customerId":"c2","amount":700,"currency":"EUR"}`)
	if theirs.StatusCode != 201 || theirs.Headers[httpkey.HeaderReplayed] != "" || !strings.Contains(theirs.Body, "o-2") {
		t.Errorf("another caller under the same key: %+v, want its own 201", theirs)
	}
	if reused := post(checkout, "k-1", `{"orderId":"o-3","customerId":"c1","amount":1,"currency":"EUR"}`); reused.StatusCode != 422 {
		t.Errorf("the key reused for another order: %+v, want 422", reused)
	}
	if invalid := post(checkout, "k-2", `{"orderId":"o-4","customerId":"c1","amount":-1,"currency":"EUR"}`); invalid.StatusCode != 422 {
		t.Errorf("an invalid order: %+v, want 422", invalid)
	}
	if got := book.Effects(); len(got) != 2 {
		t.Errorf("bookings by key %v, want two: the checkout's and the partner's", got)
	}
}
