package build_test

import (
	"github.com/idempotent-consumer/idempotent-consumer/lambda/internal/contracttest"
)

// The entry points' tests' contract (contracttest).
var (
	settings = contracttest.Settings
	getenv   = contracttest.Getenv
)

type order struct {
	OrderID string `json:"orderId"`
	Amount  int    `json:"amount"`
}

func orderKey(o order) (string, error) { return o.OrderID, nil }
