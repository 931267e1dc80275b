package httpkey_test

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/httpkey"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency/storetest"
)

// An endpoint that charges once per Idempotency-Key: the client's retry of
// a completed request gets the stored response, marked as a replay. In
// Lambda, serve the same Handler with lambda.Start(h.FunctionURL); in a
// container, with http.ListenAndServe(addr, h).
func Example() {
	guard, _ := idempotency.NewGuard(storetest.NewMemoryStore(), idempotency.Config{Namespace: "payments"})
	charges := 0
	charge := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		charges++
		res, _ := httpkey.ReservationFrom(r.Context()) // res.Key: the key to pass to the payment API
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		fmt.Fprintf(w, `{"charge":%d,"key":%q}`, charges, res.Key)
	})
	h := httpkey.New(guard, charge, httpkey.Config{Name: "payments", Logger: slog.New(slog.DiscardHandler), Metrics: io.Discard})

	for range 2 {
		r := httptest.NewRequest("POST", "/charges", strings.NewReader(`{"amount":5000}`))
		r.Header.Set("Idempotency-Key", `"9c6b1a7e-0d2f-4a8e-b1f4-3c5d7e9f0a12"`)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		fmt.Println(w.Code, w.Header().Get("Idempotency-Replayed"), w.Body.String())
	}
	fmt.Println("charges:", charges)
	// Output:
	// 201  {"charge":1,"key":"payments#9c6b1a7e-0d2f-4a8e-b1f4-3c5d7e9f0a12"}
	// 201 true {"charge":1,"key":"payments#9c6b1a7e-0d2f-4a8e-b1f4-3c5d7e9f0a12"}
	// charges: 1
}
