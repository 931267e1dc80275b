// Package dynamodbstream turns a business function into a Lambda handler
// for DynamoDB Streams batches (the outbox: a table's stream feeding a
// consumer) that runs each change under an idempotency.Guard and reports
// the stream's partial batch response.
//
// On a stream, duplicates are the rule: Lambda checkpoints a shard at a
// sequence number and, after a failure, resumes from the checkpoint, so
// every record after the failed one is delivered again; the guard absorbs
// those replays. The records of one item key run in order, different items
// in parallel (Config.Concurrency at most at once); after a record of an
// item fails, the later records of that item in the batch are not started,
// and the response names the failed (or not started) record with the
// lowest sequence number, from which Lambda resumes the shard.
//
// The function receives a Change: the item's images decoded into the
// user's type. REMOVE records are a choice the consumer makes
// (Config.Removes). In a Lambda main package, Start builds the handler from
// the contract that the stream construct (constructs/stream) wrote into the
// function's environment:
//
//	func main() {
//		dynamodbstream.Start(orderStatus, confirm)
//	}
package dynamodbstream

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/aws/aws-lambda-go/events"

	"github.com/idempotent-consumer/idempotent-consumer/contract"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/handler"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/internal/stream"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/outcome"
)

// Config configures a Handler. The zero value of every field means the
// documented default, but for Removes, which a handler needs to be told.
type Config struct {
	// Batch holds the settings every batch source shares; the records of
	// one item key always run one after another.
	handler.Batch
	// OldImage hands the function the item's old image too (Change.Old) on
	// MODIFY records: the stream's view type must be NEW_AND_OLD_IMAGES. A
	// REMOVE record's old image, when its stream carries one, is always
	// handed over.
	OldImage bool
	// Removes says what the handler does with REMOVE records (an item
	// deleted, by a caller or by TTL): contract.RemoveRun,
	// contract.RemoveSkip or contract.RemoveSkipExpired. Required: a REMOVE
	// is never skipped without a word.
	Removes contract.Removes
}

// Event is the kind of change a DynamoDB stream record carries.
type Event string

// The DynamoDB stream events.
const (
	Insert Event = "INSERT"
	Modify Event = "MODIFY"
	Remove Event = "REMOVE"
)

// Change is one DynamoDB stream record, its images decoded into the user's
// type T: the message a DynamoDB handler's key function and effect receive.
//
// Images are decoded from DynamoDB's attribute values as JSON would carry
// them, by T's json tags: a string (S) is a string, a number (N) a JSON
// number of its exact digits, a boolean (BOOL) a boolean, NULL null, a map
// (M) an object, a list (L) an array, a binary (B) a base64 string (a
// []byte field), and sets (SS, NS, BS) arrays. No AWS SDK is needed.
type Change[T any] struct {
	// Event is INSERT, MODIFY or REMOVE.
	Event Event
	// Keys is the item's key attributes, decoded into T (its other fields
	// zero).
	Keys T
	// New is the item's new image; nil on a REMOVE.
	New *T
	// Old is the item's old image: on a MODIFY with Config.OldImage, and on
	// a REMOVE when the stream carries it; nil otherwise.
	Old *T
	// ByTTL says DynamoDB's Time to Live deleted the item (a REMOVE whose
	// userIdentity is the service dynamodb.amazonaws.com).
	ByTTL bool
	// EventID and SequenceNumber identify the stream record. They are the
	// same on every replay of the record, and new for a new write of the
	// same business fact: keys come from the images, never from these.
	EventID, SequenceNumber string
}

// Handler is a Lambda handler for DynamoDB Streams batches whose items
// decode into T. It is safe for concurrent use. Records run in order per
// item key.
//
// The fact's payload, whose hash tells a replay from a different change
// under the same key, is the change as JSON: {"event", "keys", "new",
// "old"} (old only with Config.OldImage or on a REMOVE), so that
// Config.PayloadIgnore paths of the guard read "new.updatedAt".
type Handler[T any] struct {
	c   *stream.Core[Change[T]]
	own own
}

// own is this source's own settings: the images asked for, and what
// REMOVE records do.
type own struct {
	oldImage bool
	removes  contract.Removes
}

// New returns a Handler that runs fn once per fact under guard. It refuses
// a Config that breaks a rule of the contract's (Removes must be chosen).
func New[T any](guard *idempotency.Guard, key handler.KeyFunc[Change[T]], fn handler.Func[Change[T]], cfg Config) (*Handler[T], error) {
	return newHandler(stream.New(guard, key, fn, cfg.Batch, origin, group), own{cfg.OldImage, cfg.Removes})
}

// NewTx returns a Handler whose effect is transactional: fn's writes
// commit with the COMPLETED record in one request. guard's store must be an
// idempotency.TxStore.
func NewTx[T, W any](guard *idempotency.Guard, key handler.KeyFunc[Change[T]], fn handler.TxFunc[Change[T], W], cfg Config) (*Handler[T], error) {
	return newHandler(stream.NewTx(guard, key, fn, cfg.Batch, origin, group), own{cfg.OldImage, cfg.Removes})
}

// origin and group name a record's origin time and its ordering key in
// log lines.
const origin, group = "DynamoDB ApproximateCreationDateTime", "item key"

func newHandler[T any](c *stream.Core[Change[T]], own own) (*Handler[T], error) {
	switch own.removes {
	case contract.RemoveRun, contract.RemoveSkip, contract.RemoveSkipExpired:
	default: // the contract's rule (StreamRemoves), for a Config not built from it
		return nil, fmt.Errorf("dynamodbstream: Removes %q is not one of %q, %q or %q: a DynamoDB stream delivers a REMOVE record for each deleted item, and the consumer must say what to do with them", own.removes, contract.RemoveRun, contract.RemoveSkip, contract.RemoveSkipExpired)
	}
	return &Handler[T]{c: c, own: own}, nil
}

// Handle processes a batch and returns the record to resume from: the
// failed or not started record with the lowest sequence number, compared
// as a number, or none. It returns an error only when no record could be
// judged, or when one met an error wrapping outcome.ErrMisconfigured (a
// stream without the images the consumer needs); Lambda then retries the
// whole batch.
func (h *Handler[T]) Handle(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
	recs := make([]stream.Record[Change[T]], len(ev.Records))
	for i := range ev.Records {
		r := &ev.Records[i]
		keys, err := attributesJSON(r.Change.Keys)
		if err != nil {
			keys = nil // the record is refused by decode, under an ordering key of its own
		}
		recs[i] = stream.Record[Change[T]]{
			Seq: r.Change.SequenceNumber, Group: string(keys), ID: r.EventID,
			Origin: r.Change.ApproximateCreationDateTime.Time,
			Decode: func() (Change[T], []byte, string, error) { return h.decode(r) },
		}
		if keys == nil {
			recs[i].Group = "\x00" + r.EventID
		}
	}
	seq, err := h.c.Handle(ctx, recs)
	if err != nil || seq == "" {
		return events.DynamoDBEventResponse{}, err
	}
	return events.DynamoDBEventResponse{BatchItemFailures: []events.DynamoDBBatchItemFailure{{ItemIdentifier: seq}}}, nil
}

// errView marks a record whose stream does not carry the image the
// consumer needs: the stream's view type is wrong, which no retry fixes.
var errView = fmt.Errorf("%w: the table's stream does not carry the images the consumer needs", outcome.ErrMisconfigured)

// decode turns a stream record into its Change and payload.
func (h *Handler[T]) decode(r *events.DynamoDBEventRecord) (Change[T], []byte, string, error) {
	ch := Change[T]{Event: Event(r.EventName), EventID: r.EventID, SequenceNumber: r.Change.SequenceNumber}
	view := r.Change.StreamViewType
	switch ch.Event {
	case Insert, Modify:
	case Remove:
		ch.ByTTL = byTTL(r)
		switch {
		case h.own.removes == contract.RemoveSkip:
			return ch, nil, "a REMOVE record, acknowledged without running: the consumer's choice (Removes skip)", nil
		case h.own.removes == contract.RemoveSkipExpired && ch.ByTTL:
			return ch, nil, "a REMOVE record of a TTL expiry (userIdentity dynamodb.amazonaws.com), acknowledged without running: the consumer's choice (Removes skip-expired)", nil
		}
	default:
		return ch, nil, "", fmt.Errorf("%w: eventName %q is not INSERT, MODIFY or REMOVE", outcome.ErrBadInput, r.EventName)
	}
	if len(r.Change.Keys) == 0 {
		return ch, nil, "", fmt.Errorf("%w: the record has no Keys", outcome.ErrBadInput)
	}
	keys, err := attributesJSON(r.Change.Keys)
	if err != nil {
		return ch, nil, "", fmt.Errorf("%w: Keys: %v", outcome.ErrBadInput, err)
	}
	if err := json.Unmarshal(keys, &ch.Keys); err != nil {
		return ch, nil, "", fmt.Errorf("%w: decode Keys: %v", outcome.ErrBadInput, err)
	}
	var buf bytes.Buffer
	buf.WriteString(`{"event":`)
	writeString(&buf, string(ch.Event))
	buf.WriteString(`,"keys":`)
	buf.Write(keys)

	image := func(name string, attrs map[string]events.DynamoDBAttributeValue) (*T, error) {
		raw, err := attributesJSON(attrs)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", outcome.ErrBadInput, name, err)
		}
		v := new(T)
		if err := json.Unmarshal(raw, v); err != nil {
			return nil, fmt.Errorf("%w: decode %s: %v", outcome.ErrBadInput, name, err)
		}
		buf.WriteString(`,"` + strings.ToLower(name[:3]) + `":`)
		buf.Write(raw)
		return v, nil
	}
	if ch.Event != Remove {
		if r.Change.NewImage == nil {
			return ch, nil, "", fmt.Errorf("%w: a %s record without NewImage (stream view type %q): give the table's stream the view type NEW_IMAGE or NEW_AND_OLD_IMAGES", errView, ch.Event, view)
		}
		if ch.New, err = image("NewImage", r.Change.NewImage); err != nil {
			return ch, nil, "", err
		}
	}
	wantOld := ch.Event == Modify && h.own.oldImage
	if wantOld && r.Change.OldImage == nil {
		return ch, nil, "", fmt.Errorf("%w: a MODIFY record without OldImage (stream view type %q), and the consumer asks for the old image (OldImage): give the table's stream the view type NEW_AND_OLD_IMAGES", errView, view)
	}
	if r.Change.OldImage != nil && (wantOld || ch.Event == Remove) {
		if ch.Old, err = image("OldImage", r.Change.OldImage); err != nil {
			return ch, nil, "", err
		}
	}
	buf.WriteByte('}')
	return ch, buf.Bytes(), "", nil
}

// byTTL says the record is DynamoDB's Time to Live deleting an expired
// item: its userIdentity is the service dynamodb.amazonaws.com (a caller's
// delete carries no userIdentity).
func byTTL(r *events.DynamoDBEventRecord) bool {
	return r.UserIdentity != nil && r.UserIdentity.Type == "Service" && r.UserIdentity.PrincipalID == "dynamodb.amazonaws.com"
}

// attributesJSON writes a map of attribute values as a JSON object, its
// members sorted by name (so that one item key is one ordering key).
func attributesJSON(attrs map[string]events.DynamoDBAttributeValue) ([]byte, error) {
	var buf bytes.Buffer
	if err := writeMap(&buf, attrs, 0); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// maxDepth is DynamoDB's deepest nesting of documents (32 levels).
const maxDepth = 32

func writeMap(buf *bytes.Buffer, attrs map[string]events.DynamoDBAttributeValue, depth int) error {
	names := make([]string, 0, len(attrs))
	for n := range attrs {
		names = append(names, n)
	}
	slices.Sort(names)
	buf.WriteByte('{')
	for i, n := range names {
		if i > 0 {
			buf.WriteByte(',')
		}
		writeString(buf, n)
		buf.WriteByte(':')
		if err := writeValue(buf, attrs[n], depth+1); err != nil {
			return fmt.Errorf("%s: %w", n, err)
		}
	}
	buf.WriteByte('}')
	return nil
}

func writeValue(buf *bytes.Buffer, av events.DynamoDBAttributeValue, depth int) error {
	if depth > maxDepth {
		return fmt.Errorf("nested deeper than DynamoDB's %d levels", maxDepth)
	}
	switch av.DataType() {
	case events.DataTypeString:
		writeString(buf, av.String())
	case events.DataTypeNumber:
		return writeNumber(buf, av.Number())
	case events.DataTypeBoolean:
		if av.Boolean() {
			buf.WriteString("true")
		} else {
			buf.WriteString("false")
		}
	case events.DataTypeNull:
		buf.WriteString("null")
	case events.DataTypeBinary:
		writeString(buf, base64.StdEncoding.EncodeToString(av.Binary()))
	case events.DataTypeMap:
		return writeMap(buf, av.Map(), depth)
	case events.DataTypeList:
		buf.WriteByte('[')
		for i, v := range av.List() {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := writeValue(buf, v, depth+1); err != nil {
				return fmt.Errorf("[%d]: %w", i, err)
			}
		}
		buf.WriteByte(']')
	case events.DataTypeStringSet:
		writeArray(buf, av.StringSet(), func(s string) error { writeString(buf, s); return nil })
	case events.DataTypeNumberSet:
		return writeArray(buf, av.NumberSet(), func(s string) error { return writeNumber(buf, s) })
	case events.DataTypeBinarySet:
		writeArray(buf, av.BinarySet(), func(b []byte) error {
			writeString(buf, base64.StdEncoding.EncodeToString(b))
			return nil
		})
	default:
		return fmt.Errorf("attribute value of unknown type %d", av.DataType())
	}
	return nil
}

func writeArray[E any](buf *bytes.Buffer, xs []E, each func(E) error) error {
	buf.WriteByte('[')
	for i, x := range xs {
		if i > 0 {
			buf.WriteByte(',')
		}
		if err := each(x); err != nil {
			return err
		}
	}
	buf.WriteByte(']')
	return nil
}

// writeNumber writes a DynamoDB number as a JSON number of its digits, so
// that no precision is lost (DynamoDB keeps 38 digits; a float64 16).
func writeNumber(buf *bytes.Buffer, n string) error {
	if n == "" || (n[0] != '-' && (n[0] < '0' || n[0] > '9')) || !json.Valid([]byte(n)) {
		return fmt.Errorf("number %q is not a JSON number", n)
	}
	buf.WriteString(n)
	return nil
}

func writeString(buf *bytes.Buffer, s string) {
	b, _ := json.Marshal(s) // a string always marshals
	buf.Write(b)
}
