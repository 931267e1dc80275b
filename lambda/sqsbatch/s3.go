package sqsbatch

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/events"

	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/handler"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/internal/batch"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/internal/jsonesc"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/outcome"
)

// Object is one record of an S3 event notification, as the adapter hands it
// to the key function and the effect (decoded from its JSON, the payload
// that is hashed): what the fact is, never when or by which request it was
// told. The record's eventTime, request ids, principal and source address
// are not in it: a repeated notification of one event carries the same
// fact, and two notification configurations that match one event too.
//
// The structure is AWS's "Event message structure"
// (https://docs.aws.amazon.com/AmazonS3/latest/userguide/notification-content-structure.html).
type Object struct {
	// EventName is the record's event type, without its "s3:" prefix
	// ("ObjectCreated:Put", "ObjectRemoved:Delete").
	EventName string `json:"eventName"`
	// Bucket is the bucket's name.
	Bucket string `json:"bucket"`
	// Key is the object key, decoded: S3 sends it URL-encoded as in a
	// query string (a space as '+'), and the adapter decodes it with
	// url.QueryUnescape.
	Key string `json:"key"`
	// VersionID is the object's version on a versioned bucket; empty
	// otherwise (S3 then sends none, or null).
	VersionID string `json:"versionId,omitempty"`
	// Size is the object's size in bytes (none for a delete).
	Size int64 `json:"size,omitempty"`
	// ETag is the object's entity tag (none for a delete).
	ETag string `json:"eTag,omitempty"`
	// Sequencer orders the events of one key (PUTs and DELETEs only: other
	// events have none). A repeated notification of one event carries the
	// same sequencer; sequencers of one key compare as hexadecimal strings
	// once padded to one length, and never across keys.
	Sequencer string `json:"sequencer,omitempty"`
}

// ObjectKey is the default key of an S3 record's fact:
// "<bucket>/<key>@<versionId>" on a versioned bucket, and
// "<bucket>/<key>@<sequencer>" without versioning, with the key decoded.
//
// What each makes right: with versioning, each write of a key is a version
// of its own, so two writes are two facts and a repeated notification of
// one write is one. Without versioning a key is one object that each write
// replaces: the sequencer tells one event of the key from another (a
// rewrite of the same key in a new upload is a new fact only because its
// sequencer is new; two concurrent writes that S3 reports in one
// notification are one fact), and a repeated notification carries the same
// one.
//
// An event other than ObjectCreated (a delete, a restore, a tagging) is its
// own fact beside the creation of its version: its key ends in
// "#<eventName>" (a permanent delete carries the version id of the version
// it deletes). A record with neither a version id nor a sequencer (events
// other than PUTs and DELETEs on an unversioned bucket) is keyed by its
// ETag ("<bucket>/<key>@etag:<eTag>", and "#<eventName>" as above); with no ETag either it
// has no key: bad input, with the fix (a key function of your own).
func ObjectKey(o Object) (string, error) {
	var id string
	switch {
	case o.VersionID != "":
		id = o.VersionID
	case o.Sequencer != "":
		id = o.Sequencer
	case o.ETag != "":
		id = "etag:" + o.ETag
	default:
		return "", fmt.Errorf("%w: the S3 record of %s/%s (%s) has no versionId, no sequencer and no eTag to tell its event from another of the same key; give a key function of your own", outcome.ErrBadInput, o.Bucket, o.Key, o.EventName)
	}
	k := o.Bucket + "/" + o.Key + "@" + id
	if !strings.HasPrefix(o.EventName, "ObjectCreated:") {
		k += "#" + o.EventName
	}
	return k, nil
}

// s3Record is the part of an S3 event notification record the adapter
// reads.
type s3Record struct {
	EventSource string  `json:"eventSource"`
	EventTime   snsTime `json:"eventTime"` // the origin, never the fact
	EventName   string  `json:"eventName"`
	S3          *struct {
		Bucket struct {
			Name string `json:"name"`
		} `json:"bucket"`
		Object struct {
			Key       *string     `json:"key"`
			Size      json.Number `json:"size"`
			ETag      string      `json:"eTag"`
			VersionID *string     `json:"versionId"` // null without versioning
			Sequencer string      `json:"sequencer"`
		} `json:"object"`
	} `json:"s3"`
}

// s3Notification is an S3 event notification: its records, or S3's test
// event (Event "s3:TestEvent"), which S3 sends when notifications are
// configured.
type s3Notification struct {
	Records []json.RawMessage `json:"Records"`
	Event   string            `json:"Event"`
	Service string            `json:"Service"`
	Bucket  string            `json:"Bucket"`
}

// errNotS3 is the start of the reason of a body that is no S3 notification.
const errNotS3 = "body is not an S3 event notification"

// parseObjects reads an S3 notification: one item per record, each with its
// own error if the record cannot be read (that record alone is bad input),
// or test true for S3's test event. An error is the message's: not UTF-8,
// not a JSON object, a lone surrogate escape, no records.
func parseObjects(body []byte) (items []item, test bool, err error) {
	if !utf8.Valid(body) {
		return nil, false, fmt.Errorf("%w: body is not valid UTF-8", outcome.ErrBadInput)
	}
	if !bytes.HasPrefix(bytes.TrimLeft(body, " \t\r\n"), []byte("{")) {
		return nil, false, fmt.Errorf("%w: %s: not a JSON object", outcome.ErrBadInput, errNotS3)
	}
	var n s3Notification
	if err := json.Unmarshal(body, &n); err != nil {
		return nil, false, fmt.Errorf("%w: %s: %v", outcome.ErrBadInput, errNotS3, err)
	}
	if i := jsonesc.LoneSurrogate(body); i >= 0 {
		return nil, false, fmt.Errorf("%w: the notification holds a lone UTF-16 surrogate escape (%s), which is not valid Unicode", outcome.ErrBadInput, body[i:i+6])
	}
	if n.Records == nil && n.Event == "s3:TestEvent" {
		return nil, true, nil
	}
	if len(n.Records) == 0 {
		return nil, false, fmt.Errorf("%w: %s: no Records (the consumer's delivery is %q: every body must be an S3 notification, or S3's s3:TestEvent)", outcome.ErrBadInput, errNotS3, contract.S3)
	}
	items = make([]item, len(n.Records))
	for i, raw := range n.Records {
		items[i] = objectItem(raw)
	}
	return items, false, nil
}

// ParseObjects returns the facts of an S3 event notification, one Object
// per record (the key decoded), as the adapter reads them; test is true for
// S3's s3:TestEvent, which carries none. Errors wrap outcome.ErrBadInput: the
// body's, or the first record's that cannot be read.
func ParseObjects(body []byte) (objects []Object, test bool, err error) {
	items, test, err := parseObjects(body)
	if err != nil || test {
		return nil, test, err
	}
	objects = make([]Object, len(items))
	for i, it := range items {
		if it.err != nil {
			return nil, false, fmt.Errorf("record %d: %w", i, it.err)
		}
		if err := json.Unmarshal(it.payload, &objects[i]); err != nil {
			return nil, false, fmt.Errorf("%w: record %d: %v", outcome.ErrBadInput, i, err)
		}
	}
	return objects, false, nil
}

// objectItem reads one record: its fact, an Object as JSON, and its
// eventTime as the origin.
func objectItem(raw json.RawMessage) item {
	it := item{source: "S3 eventTime"}
	var r s3Record
	bad := func(format string, args ...any) item {
		it.err = fmt.Errorf("%w: S3 record: "+format, append([]any{outcome.ErrBadInput}, args...)...)
		return it
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return bad("%v", err)
	}
	if r.S3 == nil || r.S3.Bucket.Name == "" || r.S3.Object.Key == nil || r.EventName == "" {
		return bad("no s3.bucket.name, s3.object.key or eventName")
	}
	if r.EventSource != "" && r.EventSource != "aws:s3" {
		return bad("eventSource %q is not aws:s3", r.EventSource)
	}
	key, err := url.QueryUnescape(*r.S3.Object.Key)
	if err != nil {
		return bad("object key %q is not URL-encoded as S3 encodes keys: %v", *r.S3.Object.Key, err)
	}
	if !utf8.ValidString(key) {
		return bad("object key %q is not UTF-8 once decoded", *r.S3.Object.Key)
	}
	o := Object{
		EventName: strings.TrimPrefix(r.EventName, "s3:"),
		Bucket:    r.S3.Bucket.Name,
		Key:       key,
		ETag:      r.S3.Object.ETag,
		Sequencer: r.S3.Object.Sequencer,
	}
	if v := r.S3.Object.VersionID; v != nil && *v != "null" {
		o.VersionID = *v
	}
	if s := r.S3.Object.Size.String(); s != "" {
		size, err := strconv.ParseInt(s, 10, 64)
		if err != nil || size < 0 {
			return bad("object size %q is not a number of bytes", s)
		}
		o.Size = size
	}
	it.payload, _ = json.Marshal(o) // strings and a number: no error
	it.published = r.EventTime.Time
	return it
}

// objects runs the records of an S3 notification, in order, each its own
// fact with its own outcome; the message succeeds when all of them did, and
// is reported failed otherwise (its records already done are duplicates
// when it comes back). S3's test event is acknowledged.
func (b *round[T]) objects(ctx context.Context, rec *events.SQSMessage) report {
	items, test, err := parseObjects([]byte(rec.Body))
	switch {
	case err != nil:
		return report{Report: batch.Bad(err)}
	case test:
		return report{Report: batch.Report{Outcome: outcome.Processed}, testEvent: true}
	}
	r := report{Report: batch.Report{Outcome: outcome.Processed}, records: make([]report, len(items))}
	for i := range items {
		r.records[i] = b.fact(ctx, rec, &items[i])
		if o := r.records[i].Outcome; !o.Succeeded() && r.Outcome.Succeeded() {
			r.Outcome, r.Err = o, fmt.Errorf("S3 record %d: %w", i, errOrOutcome(r.records[i]))
		}
	}
	return r
}

// errOrOutcome is a report's error, or its outcome as one.
func errOrOutcome(r report) error {
	if r.Err != nil {
		return r.Err
	}
	return errors.New(r.Outcome.String())
}

// logTestEvent writes the line of S3's test event: acknowledged (deleted),
// no fact.
func (h *Handler[T]) logTestEvent(ctx context.Context, rec *events.SQSMessage) {
	h.e.Logger.LogAttrs(ctx, slog.LevelInfo, "test_event",
		slog.String("consumer", h.e.Consumer),
		slog.String("message_id", rec.MessageId),
		slog.String("reason", "S3's s3:TestEvent, which S3 sends when a bucket's notifications are configured: acknowledged and deleted, no fact to run"))
}

// NewObjects returns a Handler for a queue that S3 event notifications are
// delivered to: fn runs once per fact, one per record (see Object), with
// the default key ObjectKey. cfg.Delivery is set to S3. For a key of your
// own, use New with T Object and cfg.Delivery S3.
func NewObjects(guard *idempotency.Guard, fn handler.Func[Object], cfg Config) *Handler[Object] {
	cfg.Delivery = contract.S3
	return New(guard, ObjectKey, fn, cfg)
}
