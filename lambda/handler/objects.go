package handler

import (
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/contract"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/sqsbatch"
)

// Object is one record of an S3 event notification, the fact an upload (or
// a delete) is: the bucket, the object key decoded, the version, size,
// ETag and sequencer. What StartObjects hands to the effect. See
// sqsbatch.Object.
type Object = sqsbatch.Object

// NewObjects is New for a consumer whose source is an S3 bucket (the
// contract's MESSAGE_DELIVERY is "s3", as the construct writes it for a
// bucket source): effect runs once per object event, one per record of a
// notification, keyed by sqsbatch.ObjectKey ("<bucket>/<key>@<versionId>"
// on a versioned bucket, "<bucket>/<key>@<sequencer>" without versioning).
// A message is deleted only once all its records are done; S3's
// s3:TestEvent is acknowledged. Any other delivery is an error at init.
//
// For a key of your own, use New with T Object.
func NewObjects(effect sqsbatch.Func[Object], opts ...Option) (*sqsbatch.Handler[Object], error) {
	guard, cfg, err := build(opts, nil)
	if err != nil {
		return nil, err
	}
	if err := delivery(cfg, contract.S3, "NewObjects and StartObjects"); err != nil {
		return nil, err
	}
	return sqsbatch.NewObjects(guard, effect, cfg), nil
}

// StartObjects builds the handler with NewObjects and runs it under the
// Lambda runtime, as Start does:
//
//	func main() {
//		handler.StartObjects(func(ctx context.Context, o handler.Object, r idempotency.Reservation) (string, error) {
//			return "", bookInvoice(ctx, o.Bucket, o.Key, o.VersionID)
//		})
//	}
func StartObjects(effect sqsbatch.Func[Object], opts ...Option) {
	tuneGC(resolve(opts).getenv)
	h, err := NewObjects(effect, opts...)
	if err != nil {
		exit(opts, err)
	}
	lambda.Start(h.Handle)
}
