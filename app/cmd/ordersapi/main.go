// Command ordersapi is the example platform's orders API: POST /orders on
// an HTTP API route with IAM authorization, where a client places an order
// with an Idempotency-Key header. The order is booked once per key and
// client (the caller's IAM role or user: the endpoint's ClientAttribute
// "iam"), however often the client retries: a retry while the first request
// runs is answered 409 with Retry-After, a later one gets the stored 201
// back, and the same key with another order 422. Two clients that happen
// to choose the same key each book their own order.
//
// BOOKING_API_URL is the order book (POST /bookings); empty, the handler
// runs in sandbox mode and logs the booking it would make.
package main

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"os"

	"github.com/idempotent-consumer/idempotent-consumer/app/cmd/internal/orders"
	"github.com/idempotent-consumer/idempotent-consumer/app/cmd/internal/provider"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/endpoint"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/httpkey"
)

func main() {
	endpoint.Start(&api{provider.NewEffect(os.Getenv("BOOKING_API_URL"), "/bookings", slog.Default())})
}

type api struct{ effect *provider.Effect }

// ServeHTTP books the order of the request's body. An order no retry can
// fix is 422, stored: its retries get the same answer.
func (a *api) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "POST an order", http.StatusMethodNotAllowed)
		return
	}
	var o orders.Order
	if err := json.NewDecoder(r.Body).Decode(&o); err != nil || o.OrderID == "" {
		http.Error(w, "the body is not an order (JSON with an orderId)", http.StatusBadRequest)
		return
	}
	if err := o.Validate(); err != nil {
		http.Error(w, err.Error(), http.StatusUnprocessableEntity)
		return
	}
	res, _ := httpkey.ReservationFrom(r.Context())
	id, err := a.effect.Do(r.Context(), res.Key, map[string]any{"orderId": o.OrderID, "customerId": o.CustomerID, "amount": o.Amount, "currency": o.Currency})
	if err != nil {
		// A 5xx releases the key: the client's retry books again, with the
		// same key downstream.
		slog.ErrorContext(r.Context(), "booking", slog.String("order", o.OrderID), slog.Any("error", err))
		http.Error(w, "the order book is unavailable", http.StatusBadGateway)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Location", "/orders/"+o.OrderID)
	w.WriteHeader(http.StatusCreated)
	_ = json.NewEncoder(w).Encode(map[string]string{"orderId": o.OrderID, "booking": id})
}
