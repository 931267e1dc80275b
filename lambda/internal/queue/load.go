package queue

import (
	"fmt"

	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/internal/build"
)

// Load reads a queue consumer's contract and builds the guard and the
// handler's configuration, for the entry point named entry; want, when set,
// is the delivery the entry point reads, and a contract of another is
// refused.
func Load(o *build.Options, checkTx func(idempotency.TxStore) error, entry string, want contract.Delivery) (*idempotency.Guard, Config, error) {
	env, err := build.Load(o, contract.SourceQueue, entry, checkTx)
	if err != nil {
		return nil, Config{}, err
	}
	cfg := ConfigOf(env.Settings)
	if want != "" && cfg.Delivery != want {
		return nil, Config{}, fmt.Errorf("configuration: %s: this entry point reads bodies of delivery %q, and the contract's is %q: use the entry point of the consumer's source (sqsbatch.Start for an SNS topic or direct producers, eventbridge.Start for an EventBridge rule, s3event.Start for an S3 bucket)",
			contract.DeliveryVar, want, cfg.Delivery)
	}
	cfg.Logger, cfg.Metrics, cfg.MetricsLevel, cfg.Region = env.Logger, env.Metrics, env.MetricsLevel, env.Region
	cfg.Visibility = visibilityOf(env) // in-progress records come back when the lease can end
	return env.Guard, cfg, nil
}
