// Command reserve is the order saga's first step, reserve-stock: it
// reserves the order's items with the stock service (STOCK_API_URL, POST
// /reservations; sandbox mode when empty), once per order whatever Step
// Functions retries, redrives or starts twice. OutOfStock rejects the
// order.
package main

import (
	"os"

	"github.com/idempotent-consumer/idempotent-consumer/app/cmd/saga/internal/saga"
	"github.com/idempotent-consumer/idempotent-consumer/app/cmd/saga/names"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/step"
)

// service is the step's service at url.
func service(url string) *saga.Service {
	return saga.NewService(url, "/reservations", names.OutOfStock)
}

func main() { step.Start(saga.Key, service(os.Getenv("STOCK_API_URL")).Effect) }
