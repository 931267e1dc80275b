// Package s3event is the queue consumer of an S3 bucket's event
// notifications delivered to an SQS queue: each record of a notification
// is a fact of its own (an Object), run once under an idempotency.Guard by
// the SQS transport (its Handler and Config are package sqsbatch's, whose
// rules hold here), in order; a message is deleted only once all its
// records are done, and S3's s3:TestEvent is acknowledged. A record's age
// is taken from the earlier of its eventTime and the SQS SentTimestamp
// (see idempotency.ErrExpired).
package s3event

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/handler"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/internal/jsonesc"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/internal/queue"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/outcome"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/sqsbatch"
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
	EventSource string     `json:"eventSource"`
	EventTime   queue.Time `json:"eventTime"` // the origin, never the fact
	EventName   string     `json:"eventName"`
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
func parseObjects(body []byte) (items []queue.Item, test bool, err error) {
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
	items = make([]queue.Item, len(n.Records))
	for i, raw := range n.Records {
		items[i] = objectItem(raw)
	}
	return items, false, nil
}

// objectItem reads one record: its fact, an Object as JSON, and its
// eventTime as the origin.
func objectItem(raw json.RawMessage) queue.Item {
	it := queue.Item{Source: "S3 eventTime"}
	var r s3Record
	bad := func(format string, args ...any) queue.Item {
		it.Err = fmt.Errorf("%w: S3 record: "+format, append([]any{outcome.ErrBadInput}, args...)...)
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
	it.Payload, _ = json.Marshal(o) // strings and a number: no error
	it.Published = r.EventTime.Time
	return it
}

// New returns a Handler for a queue that S3 event notifications are
// delivered to: fn runs once per fact, one per record (see Object), its key
// derived by key (ObjectKey, or a function of your own). cfg.Delivery is
// set to "s3".
func New(guard *idempotency.Guard, key handler.KeyFunc[Object], fn handler.Func[Object], cfg sqsbatch.Config) *sqsbatch.Handler[Object] {
	cfg.Delivery = contract.S3
	return (*sqsbatch.Handler[Object])(queue.NewRecords(guard, key, fn, queue.Config(cfg), body{}))
}

// body reads S3 notifications (queue.Records).
type body struct{}

// MaxBody is the queue's largest body: a notification's other records are
// not a record's message, so only each record's Object is bounded by
// MaxMessageBytes.
func (body) MaxBody(int) int { return contract.MaxQueueBodyBytes }

// ReadRecords reads a notification's records, or skips S3's test event.
func (body) ReadRecords(raw []byte) ([]queue.Item, string, error) {
	items, test, err := parseObjects(raw)
	if test {
		return nil, "S3's s3:TestEvent, which S3 sends when a bucket's notifications are configured: acknowledged and deleted, no fact to run", nil
	}
	return items, "", err
}

// DecodeFact decodes a record's fact into an Object.
func (body) DecodeFact(it *queue.Item, out *Object) error { return json.Unmarshal(it.Payload, out) }
