package kinesis_test

import (
	"time"

	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/handler"
)

// settings are valid queue settings that differ from the defaults.
func settings() contract.Settings {
	s := contract.Defaults(30 * time.Second)
	s.Table, s.Namespace, s.Consumer = "idempotency", "charge", "ChargeOrder"
	s.Delivery = contract.Raw
	s.Window = time.Hour
	s.BackoffBase, s.BackoffCap = 2*time.Minute, 10*time.Minute // a retry horizon (24m) within the hour
	return s
}

func getenv(env map[string]string) handler.Option {
	return handler.WithGetenv(func(k string) string { return env[k] })
}
