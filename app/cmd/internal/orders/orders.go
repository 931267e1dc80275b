// Package orders is the business event of the example platform: an order
// placed, published once on the orders topic and consumed by the charge,
// receipt and wallet handlers.
package orders

import (
	"fmt"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/outcome"
)

// Order is an order placed. Amounts are in minor units (cents).
type Order struct {
	OrderID    string `json:"orderId"`
	CustomerID string `json:"customerId"`
	Amount     int64  `json:"amount"`
	Currency   string `json:"currency"`
	Email      string `json:"email,omitempty"`
	// PlacedAt changes when a producer retries with a fresh timestamp; the
	// construct leaves it out of the payload hash.
	PlacedAt string `json:"placedAt,omitempty"`
}

// Key is the idempotency key of everything done for an order: its id, the
// business fact; never the SQS message id. It refuses an order that no retry
// can fix (see Validate): the key function runs before the idempotency
// store, so such an order costs no store request on any of its deliveries,
// where a refusal inside the effect costs a reservation and its release on
// each one until the dead-letter queue takes it.
func Key(o Order) (string, error) {
	if err := o.Validate(); err != nil {
		return "", err
	}
	return o.OrderID, nil
}

// Validate reports an order that no retry can fix, as bad input.
func (o Order) Validate() error {
	switch {
	case o.Amount <= 0:
		return fmt.Errorf("%w: order %s: amount %d must be positive", outcome.ErrBadInput, o.OrderID, o.Amount)
	case len(o.Currency) != 3:
		return fmt.Errorf("%w: order %s: currency %q is not an ISO 4217 code", outcome.ErrBadInput, o.OrderID, o.Currency)
	case o.CustomerID == "":
		return fmt.Errorf("%w: order %s: no customerId", outcome.ErrBadInput, o.OrderID)
	}
	return nil
}
