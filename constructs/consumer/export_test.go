package consumer

import "github.com/idempotent-consumer/idempotent-consumer/constructs/internal/bundle"

// BuildBootstrap builds entry without the per-process memo, so that a test
// can build twice.
var BuildBootstrap = bundle.Build

// ForgetBuilds empties the per-process memo of built entries.
var ForgetBuilds = bundle.Forget

// Validate reports every problem of the props for a consumer with the
// given construct id, in one error, or nil: what NewIdempotentConsumer
// panics with, without building Entry.
func (p *IdempotentConsumerProps) Validate(id *string) error {
	_, err := p.resolve(id)
	return err
}
