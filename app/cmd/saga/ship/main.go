// Command ship is the order saga's last step, ship: it books the order's
// shipment with the carrier (SHIPPING_API_URL, POST /shipments; sandbox
// mode when empty), once per order. Undeliverable refunds the charge and
// releases the stock.
package main

import (
	"os"

	"github.com/idempotent-consumer/idempotent-consumer/app/cmd/saga/internal/saga"
	"github.com/idempotent-consumer/idempotent-consumer/app/cmd/saga/names"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/step"
)

// service is the step's service at url.
func service(url string) *saga.Service {
	return saga.NewService(url, "/shipments", names.Undeliverable)
}

func main() { step.Start(saga.Key, service(os.Getenv("SHIPPING_API_URL")).Effect) }
