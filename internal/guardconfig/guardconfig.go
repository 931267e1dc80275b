// Package guardconfig maps the runtime contract's settings onto the
// guard's configuration: the one place where contract.Settings become
// idempotency.Config, for the handler's entry points (lambda/internal/build)
// and the tools that build a consumer's guard from its environment (ops,
// test/cmd/inprogress). It is above both, so that the contract imports no
// runtime package.
package guardconfig

import (
	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
)

// Of is the guard's configuration for s. MaxResultBytes is left to its
// default: an adapter whose results are its answers (httpkey, step) gives
// its guard the bound it needs itself (Guard.WithLargestResults).
func Of(s contract.Settings) idempotency.Config {
	var secret []byte
	if s.KeySecret != "" {
		secret = []byte(s.KeySecret)
	}
	return idempotency.Config{
		Namespace:      s.Namespace,
		Window:         s.Window,
		TTLAfterWindow: s.TTLAfterWindow,
		LeaseMax:       s.LeaseMax,
		FinishBudget:   s.FinishBudget,
		PayloadIgnore:  s.PayloadIgnore,
		CacheSize:      s.CacheSize,
		KeySecret:      secret,
	}
}
