package streambatch

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/events"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/handler"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/internal/batch"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/outcome"
)

// Kinesis is a Lambda handler for Kinesis Data Streams batches of messages
// of type T, decoded from each record's data as JSON. It is safe for
// concurrent use.
//
// The record's data arrives base64-encoded in the event; events.KinesisEvent
// decodes it (its Data is a []byte), so the key function and the effect see
// the message as the producer put it. Records run in order per partition
// key.
//
// KPL aggregates are refused, as bad input that names the fix (errAggregate):
// see errAggregate for why.
type Kinesis[T any] struct {
	c *core[T]
}

// NewKinesis returns a Kinesis handler that runs fn once per fact under
// guard.
func NewKinesis[T any](guard *idempotency.Guard, key handler.KeyFunc[T], fn handler.Func[T], cfg Config) *Kinesis[T] {
	return newKinesis(newCore(guard, key, batch.Effect(guard, fn), cfg))
}

// NewKinesisTx returns a Kinesis handler whose effect is transactional: fn's
// writes commit with the COMPLETED record in one request. guard's store must
// be an idempotency.TxStore.
func NewKinesisTx[T, W any](guard *idempotency.Guard, key handler.KeyFunc[T], fn handler.TxFunc[T, W], cfg Config) *Kinesis[T] {
	return newKinesis(newCore(guard, key, batch.TxEffect(guard, fn), cfg))
}

func newKinesis[T any](c *core[T]) *Kinesis[T] {
	c.originName = "Kinesis ApproximateArrivalTimestamp"
	c.groupName = "partition key"
	return &Kinesis[T]{c: c}
}

// kplMagic starts every KPL aggregated record
// (https://github.com/awslabs/amazon-kinesis-producer/blob/master/aggregation-format.md).
// Its first byte is not valid UTF-8, so no JSON message starts with it.
var kplMagic = []byte{0xF3, 0x89, 0x9A, 0xC2}

// errAggregate marks a Kinesis record that is a KPL (Kinesis Producer
// Library) aggregate: bad input. Lambda does not de-aggregate: the user
// records of an aggregate share its one sequence number, so Lambda can
// checkpoint only the whole aggregate, and one failing user record replays
// all of them. The handler refuses aggregates rather than de-aggregating
// them: a fact per stream record keeps one record, one sequence number, one
// outcome and one line, which is what the partial batch response can
// report, and it keeps a protobuf decoder out of every handler. Fix: turn
// aggregation off in the producer (KPL AggregationEnabled=false), or
// produce with PutRecords.
var errAggregate = fmt.Errorf("%w: the record is a KPL aggregate (it starts with the KPL magic number F3899AC2), which this handler does not de-aggregate; turn aggregation off in the producer (KPL AggregationEnabled=false) or produce with PutRecords", outcome.ErrBadInput)

// Handle processes a batch and returns the record to resume from: the
// failed or not started record with the lowest sequence number (see
// reportedSequenceNumber), or none. It returns an error only when no record
// could be judged, or when one met an error wrapping
// outcome.ErrMisconfigured; Lambda then retries the whole batch.
func (h *Kinesis[T]) Handle(ctx context.Context, ev events.KinesisEvent) (events.KinesisEventResponse, error) {
	recs := make([]record[T], len(ev.Records))
	for i := range ev.Records {
		r := &ev.Records[i]
		recs[i] = record[T]{
			seq: r.Kinesis.SequenceNumber, group: r.Kinesis.PartitionKey, id: r.EventID,
			origin: r.Kinesis.ApproximateArrivalTimestamp.Time,
			decode: func() (T, []byte, string, error) {
				msg, err := decodeKinesis[T](r.Kinesis.Data)
				return msg, r.Kinesis.Data, "", err
			},
		}
	}
	seq, err := h.c.handle(ctx, recs)
	if err != nil || seq == "" {
		return events.KinesisEventResponse{}, err
	}
	return events.KinesisEventResponse{BatchItemFailures: []events.KinesisBatchItemFailure{{ItemIdentifier: seq}}}, nil
}

// decodeKinesis decodes a record's data into T. Errors wrap
// outcome.ErrBadInput.
func decodeKinesis[T any](data []byte) (T, error) {
	var msg T
	switch {
	case bytes.HasPrefix(data, kplMagic):
		return msg, errAggregate
	case !utf8.Valid(data):
		return msg, fmt.Errorf("%w: the record's data is not valid UTF-8", outcome.ErrBadInput)
	case !json.Valid(data):
		return msg, fmt.Errorf("%w: the record's data is not JSON", outcome.ErrBadInput)
	}
	if err := json.Unmarshal(data, &msg); err != nil {
		return msg, fmt.Errorf("%w: decode message: %v", outcome.ErrBadInput, err)
	}
	return msg, nil
}
