// Command refund is the order saga's compensation refund: it refunds the
// order's charge with the payments service (PAYMENTS_API_URL, POST
// /refunds; sandbox mode when empty), once per order, when it cannot be
// shipped.
package main

import (
	"os"

	"github.com/idempotent-consumer/idempotent-consumer/app/cmd/saga/internal/saga"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/step"
)

// service is the step's service at url.
func service(url string) *saga.Service {
	return saga.NewService(url, "/refunds")
}

func main() { step.Start(saga.Key, service(os.Getenv("PAYMENTS_API_URL")).Effect) }
