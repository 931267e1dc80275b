// Package contracttest is what the entry points' tests share: a contract
// to start a handler from, and the option that hands it to the handler.
package contracttest

import (
	"time"

	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/handler"
)

// Settings are valid queue settings that differ from the defaults:
// namespace "charge", consumer "ChargeOrder", raw delivery, a window of an
// hour, and a retry horizon (24m) within it. A test of another source sets
// its Source.
func Settings() contract.Settings {
	s := contract.Defaults(30 * time.Second)
	s.Table, s.Namespace, s.Consumer = "idempotency", "charge", "ChargeOrder"
	s.Delivery = contract.Raw
	s.Window = time.Hour
	s.BackoffBase, s.BackoffCap = 2*time.Minute, 10*time.Minute
	return s
}

// Getenv reads the handler's environment from env (an encoded contract:
// contract.Settings.Encode).
func Getenv(env map[string]string) handler.Option {
	return handler.WithGetenv(func(k string) string { return env[k] })
}
