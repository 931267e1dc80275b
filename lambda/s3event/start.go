package s3event

import (
	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/handler"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/internal/build"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/internal/queue"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/sqsbatch"
)

// FromEnv returns the Handler of a consumer whose source is an S3 bucket
// (the contract's MESSAGE_DELIVERY is "s3", as the IdempotentConsumer
// construct writes it for a bucket source), configured from the function's
// environment: effect runs once per object event, one per record of a
// notification, keyed by key (ObjectKey unless the facts need another). A
// contract of another delivery or source refuses to start.
func FromEnv(key handler.KeyFunc[Object], effect handler.Func[Object], opts ...handler.Option) (*sqsbatch.Handler[Object], error) {
	guard, cfg, err := queue.Load(build.Resolve(opts), nil, "s3event.FromEnv", contract.S3)
	if err != nil {
		return nil, err
	}
	return New(guard, key, effect, sqsbatch.Config(cfg)), nil
}

// Start builds the handler with FromEnv and runs it under the Lambda
// runtime; it does not return:
//
//	func main() {
//		s3event.Start(s3event.ObjectKey, index)
//	}
func Start(key handler.KeyFunc[Object], effect handler.Func[Object], opts ...handler.Option) {
	build.Run(build.Resolve(opts), func() (any, error) {
		h, err := FromEnv(key, effect, opts...)
		if err != nil {
			return nil, err
		}
		return h.Handle, nil
	})
}
