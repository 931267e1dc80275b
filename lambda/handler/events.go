package handler

import (
	"fmt"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/contract"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/sqsbatch"
)

// Event is an EventBridge event as a rule delivers it to the consumer's
// queue, its detail decoded into T: what StartEvents hands to the key
// function and the effect. Only the detail is the fact (and hashed); the
// id is new on every PutEvents call, so a key never reads it. See
// sqsbatch.Event.
type Event[T any] = sqsbatch.Event[T]

// NewEvents is New for a consumer whose source is an EventBridge rule (the
// contract's MESSAGE_DELIVERY is "eventbridge", as the construct writes it
// for a bus source): key and effect get each event with its detail decoded
// into T, and the detail alone is the fact, so that a producer's retry (a
// new event id, the same detail) runs once. Any other delivery is an error
// at init: the source is the contract's, never guessed from a body.
func NewEvents[T any](key sqsbatch.KeyFunc[Event[T]], effect sqsbatch.Func[Event[T]], opts ...Option) (*sqsbatch.Handler[Event[T]], error) {
	guard, cfg, err := build(opts, nil)
	if err != nil {
		return nil, err
	}
	if err := delivery(cfg, contract.EventBridge, "NewEvents and StartEvents"); err != nil {
		return nil, err
	}
	return sqsbatch.NewEvents(guard, key, effect, cfg), nil
}

// StartEvents builds the handler with NewEvents and runs it under the
// Lambda runtime, as Start does:
//
//	func main() {
//		handler.StartEvents(func(e handler.Event[Order]) (string, error) {
//			return e.Source + "/" + e.Detail.OrderID, nil
//		}, charge)
//	}
func StartEvents[T any](key sqsbatch.KeyFunc[Event[T]], effect sqsbatch.Func[Event[T]], opts ...Option) {
	tuneGC(resolve(opts).getenv)
	h, err := NewEvents(key, effect, opts...)
	if err != nil {
		exit(opts, err)
	}
	lambda.Start(h.Handle)
}

// delivery refuses a contract whose delivery is not the one an entry point
// reads.
func delivery(cfg sqsbatch.Config, want contract.Delivery, entry string) error {
	if cfg.Delivery != want {
		return fmt.Errorf("configuration: %s: %s read bodies of delivery %q, and the contract's is %q: use the entry point of the consumer's source (New or Start for an SNS topic or direct producers, NewEvents for an EventBridge rule, NewObjects for an S3 bucket)",
			contract.DeliveryVar, entry, want, cfg.Delivery)
	}
	return nil
}
