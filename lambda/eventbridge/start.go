package eventbridge

import (
	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/handler"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/internal/build"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/internal/queue"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/sqsbatch"
)

// FromEnv returns the Handler of a consumer whose source is an EventBridge
// rule (the contract's MESSAGE_DELIVERY is "eventbridge", as the
// IdempotentConsumer construct writes it for a bus source), configured from
// the function's environment: key and effect get each event with its
// detail decoded into T, and the detail alone is the fact. A contract of
// another delivery or source refuses to start.
func FromEnv[T any](key handler.KeyFunc[Event[T]], effect handler.Func[Event[T]], opts ...handler.Option) (*sqsbatch.Handler[Event[T]], error) {
	guard, cfg, err := queue.Load(build.Resolve(opts), nil, "eventbridge.FromEnv", contract.EventBridge)
	if err != nil {
		return nil, err
	}
	return New(guard, key, effect, sqsbatch.Config(cfg)), nil
}

// Start builds the handler with FromEnv and runs it under the Lambda
// runtime; it does not return:
//
//	func main() {
//		eventbridge.Start(func(e eventbridge.Event[Order]) (string, error) {
//			return e.Source + "/" + e.Detail.OrderID, nil
//		}, charge)
//	}
func Start[T any](key handler.KeyFunc[Event[T]], effect handler.Func[Event[T]], opts ...handler.Option) {
	build.Run(build.Resolve(opts), func() (any, error) {
		h, err := FromEnv(key, effect, opts...)
		if err != nil {
			return nil, err
		}
		return h.Handle, nil
	})
}
