// Command stripehook is the example platform's Stripe webhook receiver, on
// a function URL (auth NONE: every request must carry Stripe's signature,
// which endpoint.Start verifies with the signing secret it reads at init
// from Secrets Manager). For each payment_intent.succeeded event it
// releases the paid order to fulfilment (POST /fulfilments), once per event
// id however often Stripe delivers it: Stripe retries an event it saw no
// 2xx for, for up to three days, each time with a new timestamp in its
// Stripe-Signature header and the same event id.
//
// Another event type is acknowledged (200) and does nothing: Stripe sends
// every type the endpoint subscribes to.
//
// FULFILMENT_API_URL is the fulfilment API; empty, the handler runs in
// sandbox mode and logs the release it would make.
package main

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"os"

	"github.com/idempotent-consumer/idempotent-consumer/app/cmd/internal/provider"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/endpoint"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/httpkey"
)

func main() {
	endpoint.Start(&receiver{provider.NewEffect(os.Getenv("FULFILMENT_API_URL"), "/fulfilments", slog.Default())})
}

// event is what the receiver reads of a Stripe event.
type event struct {
	ID   string `json:"id"`
	Type string `json:"type"`
	Data struct {
		Object struct {
			ID       string            `json:"id"`
			Amount   int64             `json:"amount"`
			Currency string            `json:"currency"`
			Metadata map[string]string `json:"metadata"`
		} `json:"object"`
	} `json:"data"`
}

type receiver struct{ effect *provider.Effect }

// ServeHTTP runs once per event id (the webhook's key): a retry of the
// event gets the stored answer back.
func (h *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var e event
	if err := json.NewDecoder(r.Body).Decode(&e); err != nil || e.ID == "" {
		http.Error(w, "not a Stripe event", http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	order := e.Data.Object.Metadata["orderId"]
	if e.Type != "payment_intent.succeeded" || order == "" {
		_ = json.NewEncoder(w).Encode(map[string]string{"event": e.ID, "ignored": e.Type})
		return
	}
	res, _ := httpkey.ReservationFrom(r.Context())
	id, err := h.effect.Do(r.Context(), res.Key, map[string]any{"orderId": order, "event": e.ID, "paymentIntent": e.Data.Object.ID, "amount": e.Data.Object.Amount})
	if err != nil {
		// A 5xx releases the key: Stripe's retry runs the release again,
		// with the same key downstream.
		slog.ErrorContext(r.Context(), "fulfilment", slog.String("event", e.ID), slog.Any("error", err))
		http.Error(w, "fulfilment unavailable", http.StatusBadGateway)
		return
	}
	_ = json.NewEncoder(w).Encode(map[string]string{"event": e.ID, "orderId": order, "fulfilment": id})
}
