// Command release is the order saga's compensation release-stock: it
// releases the order's reservation with the stock service (STOCK_API_URL,
// POST /releases; sandbox mode when empty), once per order, after a
// declined charge or a refund.
package main

import (
	"os"

	"github.com/idempotent-consumer/idempotent-consumer/app/cmd/saga/internal/saga"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/step"
)

// service is the step's service at url.
func service(url string) *saga.Service {
	return saga.NewService(url, "/releases")
}

func main() { step.Start(saga.Key, service(os.Getenv("STOCK_API_URL")).Effect) }
