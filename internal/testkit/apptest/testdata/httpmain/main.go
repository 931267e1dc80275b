// Command httpmain is the HTTP handler that TestHTTPUnderTheRuntimeEmulator
// (internal/testkit/apptest)
// runs under aws-lambda-rie: endpoint.Start over an effect that counts
// its runs in this execution environment.
package main

import (
	"fmt"
	"net/http"
	"sync/atomic"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/endpoint"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/httpkey"
)

func main() {
	var runs atomic.Int64
	endpoint.Start(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		res, _ := httpkey.ReservationFrom(r.Context())
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusAccepted)
		fmt.Fprintf(w, `{"run":%d,"key":%q}`, runs.Add(1), res.Key)
	}))
}
