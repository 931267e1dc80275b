package stream

import (
	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/handler"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/internal/batch"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/internal/build"
)

// Load is what a stream source's FromEnv builds on: the contract, store,
// guard, logger and metrics that every entry point builds (package
// handler's options change how), and the core's settings (batch.Of, with
// the handler's logger and metrics). It refuses at init, in one line that
// names the fix, a contract of another source than the entry point's
// (source, entry: a queue consumer's function started with kinesis.Start):
// contract.Settings.CheckSource. checkTx, for a transactional effect, is
// build.AcceptsWrites of its writes' type.
func Load(opts []handler.Option, source contract.Source, entry string, checkTx func(idempotency.TxStore) error) (*build.Env, handler.Batch, error) {
	env, err := build.Load(build.Resolve(opts), source, entry, checkTx)
	if err != nil {
		return nil, handler.Batch{}, err
	}
	o := batch.Of(env.Settings)
	o.Logger, o.Metrics, o.MetricsLevel, o.Region = env.Logger, env.Metrics, env.MetricsLevel, env.Region
	return env, o, nil
}
