// Command charge is the order saga's second step, charge: it charges the
// order with the payments service (PAYMENTS_API_URL, POST /charges; sandbox
// mode when empty), once per order. PaymentDeclined releases the stock.
package main

import (
	"os"

	"github.com/idempotent-consumer/idempotent-consumer/app/cmd/saga/internal/saga"
	"github.com/idempotent-consumer/idempotent-consumer/app/cmd/saga/names"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/step"
)

// service is the step's service at url.
func service(url string) *saga.Service {
	return saga.NewService(url, "/charges", names.PaymentDeclined)
}

func main() { step.Start(saga.Key, service(os.Getenv("PAYMENTS_API_URL")).Effect) }
