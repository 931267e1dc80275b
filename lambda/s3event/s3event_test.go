package s3event_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/internal/queue/queuetest"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/outcome"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/s3event"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/sqsbatch"
)

// s3Rec is one record of an S3 event notification in the shape of the S3
// User Guide's "Event message structure"
// (https://docs.aws.amazon.com/AmazonS3/latest/userguide/notification-content-structure.html).
type s3Rec struct {
	event, bucket, key, eTag, version, sequencer string
	size                                         int
	at                                           time.Time
	requestID                                    string
}

// requests numbers the records' request ids.
var requests atomic.Int64

func (r s3Rec) json() string {
	if r.event == "" {
		r.event = "ObjectCreated:Put"
	}
	if r.at.IsZero() {
		r.at = time.Now()
	}
	if r.requestID == "" {
		r.requestID = fmt.Sprintf("C3D13FE58DE4C%03d", requests.Add(1)%1000)
	}
	obj := map[string]any{"key": r.key}
	if !strings.HasPrefix(r.event, "ObjectRemoved:") {
		obj["size"], obj["eTag"] = r.size, r.eTag
	}
	if r.version != "" {
		obj["versionId"] = r.version
	}
	if r.sequencer != "" {
		obj["sequencer"] = r.sequencer
	}
	b, _ := json.Marshal(map[string]any{
		"eventVersion": "2.1", "eventSource": "aws:s3", "awsRegion": "us-west-2",
		"eventTime": r.at.UTC().Format("2006-01-02T15:04:05.000Z"), "eventName": r.event,
		"userIdentity":      map[string]string{"principalId": "AWS:AIDAJDPLRKLG7UEXAMPLE"},
		"requestParameters": map[string]string{"sourceIPAddress": "127.0.0.1"},
		"responseElements":  map[string]string{"x-amz-request-id": r.requestID, "x-amz-id-2": "FMyUVURIY8/IgAtTv8xRjskZQpcIZ9KG4V5Wp6S7S/JRWeUWerMUE5JgHvANOjpD"},
		"s3": map[string]any{
			"s3SchemaVersion": "1.0", "configurationId": "testConfigRule",
			"bucket": map[string]any{"name": r.bucket, "ownerIdentity": map[string]string{"principalId": "A3NL1KOZZKExample"}, "arn": "arn:aws:s3:::" + r.bucket},
			"object": obj,
		},
	})
	return string(b)
}

// s3Body is a notification carrying the records.
func s3Body(recs ...s3Rec) string {
	parts := make([]string, len(recs))
	for i, r := range recs {
		parts[i] = r.json()
	}
	return `{"Records":[` + strings.Join(parts, ",") + `]}`
}

// s3TestEvent is the message S3 sends when a bucket's notifications are
// configured, as the S3 User Guide shows it.
const s3TestEvent = `{"Service":"Amazon S3","Event":"s3:TestEvent","Time":"2014-10-13T15:57:02.089Z","Bucket":"amzn-s3-demo-bucket","RequestId":"5582815E1AEA5ADF","HostId":"8cLeGAmw098X5cv4Zkwcmo8vvZa3eH3eKxsPzbB9wrR+YstdA6Knx4Ip8EXAMPLE"}`

// objects is a test effect over objects: it fails for a key while fail
// holds it, and counts the effects by fact.
type objects struct {
	mu   sync.Mutex
	fail map[string]bool
	runs map[string]int // by bucket/key@version-or-sequencer
	seen []s3event.Object
}

func (o *objects) effect(ctx context.Context, obj s3event.Object, r idempotency.Reservation) (string, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.fail[obj.Key] {
		return "", errors.New("the import of " + obj.Key + " failed")
	}
	if o.runs == nil {
		o.runs = map[string]int{}
	}
	k, _ := s3event.ObjectKey(obj)
	o.runs[k]++
	o.seen = append(o.seen, obj)
	return "", nil
}

func objectsHandler(f *queuetest.Fixture, o *objects) *sqsbatch.Handler[s3event.Object] {
	return s3event.New(f.Guard, s3event.ObjectKey, o.effect, f.Config(""))
}

func handleS3(t *testing.T, h *sqsbatch.Handler[s3event.Object], recs ...events.SQSMessage) events.SQSEventResponse {
	t.Helper()
	resp, err := h.Handle(context.Background(), events.SQSEvent{Records: recs})
	if err != nil {
		t.Fatalf("Handle: %v", err)
	}
	return resp
}

// TestS3KeyIsDecoded: S3 sends object keys URL-encoded as in a query string
// (a space as '+', UTF-8 bytes as %XX; kumo encodes '/' as %2F too): the
// effect and the key get the key decoded with url.QueryUnescape. A key that
// does not decode is bad input, for its record alone.
func TestS3KeyIsDecoded(t *testing.T) {
	f := queuetest.NewFixture(t)
	o := &objects{}
	h := objectsHandler(f, o)
	a := queuetest.Message(s3Body(s3Rec{bucket: "invoices", key: "2026/caf%C3%A9+bill+%281%29.pdf", size: 1024, eTag: "d41d8cd98f00b204e9800998ecf8427e", sequencer: "0055AED6DCD90281E5"}), contract.Raw)
	b := queuetest.Message(s3Body(s3Rec{bucket: "invoices", key: "2026%2Fa+b%2Bc.pdf", size: 3, eTag: "e1", sequencer: "0055AED6DCD90281E6"}), contract.Raw)
	c := queuetest.Message(s3Body(s3Rec{bucket: "invoices", key: "bad%zz", size: 3, eTag: "e2", sequencer: "0055AED6DCD90281E7"}), contract.Raw)
	resp := handleS3(t, h, a, b, c)
	if failed := queuetest.FailedIDs(resp); len(failed) != 1 || !failed[c.MessageId] {
		t.Fatalf("failures %v", failed)
	}
	keys := map[string]bool{}
	for _, s := range o.seen {
		keys[s.Key] = true
	}
	if !keys["2026/café bill (1).pdf"] || !keys["2026/a b+c.pdf"] {
		t.Fatalf("keys %v", keys)
	}
	if got := f.LogLine(t, a.MessageId)["key"]; got != "charge#invoices/2026/café bill (1).pdf@0055AED6DCD90281E5" {
		t.Errorf("key %v", got)
	}
	line := f.LogLine(t, c.MessageId)
	if line["outcome"] != "bad_input" || !strings.Contains(fmt.Sprint(line["reason"]), `object key "bad%zz" is not URL-encoded as S3 encodes keys`) {
		t.Errorf("undecodable key: %v", line)
	}
}

// TestS3VersionAndSequencerKeys: with versioning, two writes of one key are
// two facts (two versionIds) and a repeated notification of one is one;
// without it, a rewrite of the key is a new fact only by its new sequencer,
// and a repeated notification (same sequencer, another eventTime and
// request id) is a duplicate costing one store request. A delete of a
// version is a fact of its own beside the version's creation.
func TestS3VersionAndSequencerKeys(t *testing.T) {
	f := queuetest.NewFixture(t)
	o := &objects{}
	h := objectsHandler(f, o)
	put := func(r s3Rec) events.SQSMessage { return queuetest.Message(s3Body(r), contract.Raw) }
	v1 := s3Rec{bucket: "b", key: "report.csv", size: 10, eTag: "e1", version: "3HL4kqtJlcpXroDTDmJ+rmSpXd3dIbrHY+MTRCxf3vjVBH40Nr8X8gdRQBpUMLUo", sequencer: "0A1"}
	v2 := s3Rec{bucket: "b", key: "report.csv", size: 12, eTag: "e2", version: "3HL4kqtJlcpXroDTDmJ+rmSpXd3dIbrHY+MTRCxf3vjVBH40Nr8X8gdRQBpUMLUp", sequencer: "0A2"}
	u1 := s3Rec{bucket: "b", key: "plain.csv", size: 10, eTag: "e1", sequencer: "0055AED6DCD90281E5"}
	u2 := s3Rec{bucket: "b", key: "plain.csv", size: 10, eTag: "e1", sequencer: "0055AED6DCD90281F0"} // the same content, a new upload
	del := s3Rec{event: "ObjectRemoved:Delete", bucket: "b", key: "report.csv", version: v1.version, sequencer: "0A3"}
	handleS3(t, h, put(v1), put(v2), put(u1), put(u2), put(del))
	if len(o.runs) != 5 {
		t.Fatalf("%d facts ran, want 5: %v", len(o.runs), o.runs)
	}
	for k := range o.runs {
		if strings.HasSuffix(k, "#ObjectRemoved:Delete") != strings.Contains(k, "@"+v1.version+"#") {
			t.Errorf("key %s", k)
		}
	}
	for _, again := range []s3Rec{v1, u1} {
		again.at, again.requestID = time.Now().Add(time.Minute), "OTHERREQUEST0001" // S3's repeated notification
		rec := put(again)
		before := f.Store.Requests()
		if resp := handleS3(t, h, rec); len(resp.BatchItemFailures) > 0 {
			t.Fatalf("repeat: %v", resp)
		}
		if line := f.LogLine(t, rec.MessageId); line["outcome"] != "duplicate" {
			t.Fatalf("a repeated notification of %s: %v (%v)", again.key, line["outcome"], line["reason"])
		}
		if n := f.Store.Requests() - before; n != 1 {
			t.Errorf("a repeated notification made %d store requests, want 1", n)
		}
	}
	for k, n := range o.runs {
		if n != 1 {
			t.Errorf("%s ran %d times", k, n)
		}
	}
	// A versionId of "null" (S3's word for none) is no version.
	if k, _ := s3event.ObjectKey(s3event.Object{EventName: "ObjectCreated:Put", Bucket: "b", Key: "k", Sequencer: "0F"}); k != "b/k@0F" {
		t.Errorf("ObjectKey %q", k)
	}
	nul := put(s3Rec{bucket: "b", key: "n.csv", size: 1, eTag: "e", version: "null", sequencer: "0B"})
	handleS3(t, h, nul)
	if got := f.LogLine(t, nul.MessageId)["key"]; got != "charge#b/n.csv@0B" {
		t.Errorf(`versionId "null": key %v`, got)
	}
}

// TestObjectKey: the default key of each kind of record, and the record
// with nothing to tell its event by, which has none.
func TestObjectKey(t *testing.T) {
	for _, c := range []struct {
		o    s3event.Object
		want string
	}{
		{s3event.Object{EventName: "ObjectCreated:Put", Bucket: "b", Key: "a b", VersionID: "v1", Sequencer: "01"}, "b/a b@v1"},
		{s3event.Object{EventName: "ObjectCreated:CompleteMultipartUpload", Bucket: "b", Key: "k", Sequencer: "01"}, "b/k@01"},
		{s3event.Object{EventName: "ObjectRemoved:Delete", Bucket: "b", Key: "k", VersionID: "v1", Sequencer: "02"}, "b/k@v1#ObjectRemoved:Delete"},
		{s3event.Object{EventName: "ObjectRemoved:DeleteMarkerCreated", Bucket: "b", Key: "k", VersionID: "dm", Sequencer: "03"}, "b/k@dm#ObjectRemoved:DeleteMarkerCreated"},
		{s3event.Object{EventName: "ObjectCreated:Put", Bucket: "b", Key: "k", ETag: "e"}, "b/k@etag:e"},
		{s3event.Object{EventName: "ObjectRestore:Completed", Bucket: "b", Key: "k", ETag: "e"}, "b/k@etag:e#ObjectRestore:Completed"},
	} {
		if got, err := s3event.ObjectKey(c.o); got != c.want || err != nil {
			t.Errorf("%+v: %q %v, want %q", c.o, got, err, c.want)
		}
	}
	if _, err := s3event.ObjectKey(s3event.Object{EventName: "ObjectRestore:Delete", Bucket: "b", Key: "k"}); !errors.Is(err, outcome.ErrBadInput) || !strings.Contains(err.Error(), "give a key function of your own") {
		t.Errorf("no version, sequencer or eTag: %v", err)
	}
}

// TestS3TestEvent: S3's s3:TestEvent is acknowledged (not reported, so SQS
// deletes it) and logged as such: no fact, no store request, no outcome
// counted, never bad input.
func TestS3TestEvent(t *testing.T) {
	f := queuetest.NewFixture(t)
	h := objectsHandler(f, &objects{})
	rec := queuetest.Message(s3TestEvent, contract.Raw)
	if resp := handleS3(t, h, rec); len(resp.BatchItemFailures) > 0 {
		t.Fatalf("the test event was reported: %v", resp)
	}
	line := f.LogLine(t, rec.MessageId)
	if line["msg"] != "test_event" || !strings.Contains(fmt.Sprint(line["reason"]), "s3:TestEvent") || line["level"] != "INFO" {
		t.Fatalf("line %v", line)
	}
	if f.Store.Requests() != 0 || f.Metric(t, "BadInput") != 0 || f.Metric(t, "Processed") != 0 {
		t.Errorf("store requests %d, bad input %v", f.Store.Requests(), f.Metric(t, "BadInput"))
	}
}

// TestS3MultiRecordPartialFailure: a message of three records whose second
// fails: the others are processed, the message is reported once (one
// batchItemFailures entry), each record has its line with its index and its
// count; on redelivery the records already done are duplicates at one store
// request each, and the one that failed runs.
func TestS3MultiRecordPartialFailure(t *testing.T) {
	f := queuetest.NewFixture(t)
	o := &objects{fail: map[string]bool{"b.csv": true}}
	h := objectsHandler(f, o)
	body := s3Body(
		s3Rec{bucket: "in", key: "a.csv", size: 1, eTag: "ea", sequencer: "01"},
		s3Rec{bucket: "in", key: "b.csv", size: 2, eTag: "eb", sequencer: "02"},
		s3Rec{bucket: "in", key: "c.csv", size: 3, eTag: "ec", sequencer: "03"},
	)
	rec := queuetest.Message(body, contract.Raw)
	neighbour := queuetest.Message(s3Body(s3Rec{bucket: "in", key: "n.csv", size: 1, eTag: "en", sequencer: "09"}), contract.Raw)
	resp := handleS3(t, h, rec, neighbour)
	if len(resp.BatchItemFailures) != 1 || resp.BatchItemFailures[0].ItemIdentifier != rec.MessageId {
		t.Fatalf("failures %v, want the message once", resp.BatchItemFailures)
	}
	lines := f.Lines(rec.MessageId)
	if len(lines) != 3 {
		t.Fatalf("%d lines, want one per record: %v", len(lines), lines)
	}
	for i, want := range []string{"processed", "failed", "processed"} {
		if lines[i]["outcome"] != want || lines[i]["record_index"] != float64(i) {
			t.Errorf("record %d: %v", i, lines[i])
		}
	}
	if f.Metric(t, "Processed") != 3 || f.Metric(t, "Failed") != 1 {
		t.Errorf("counts: processed %v failed %v, want 3 and 1 (per record, the neighbour's too)", f.Metric(t, "Processed"), f.Metric(t, "Failed"))
	}

	// The import is fixed; SQS redelivers the message.
	o.fail = nil
	f.Logs.Reset()
	before := f.Store.Requests()
	again := rec
	again.Attributes = map[string]string{"ApproximateReceiveCount": "2", "SentTimestamp": rec.Attributes["SentTimestamp"]}
	if resp := handleS3(t, h, again); len(resp.BatchItemFailures) > 0 {
		t.Fatalf("redelivery: %v", resp)
	}
	lines = f.Lines(rec.MessageId)
	for i, want := range []string{"duplicate", "processed", "duplicate"} {
		if lines[i]["outcome"] != want {
			t.Errorf("redelivery, record %d: %v", i, lines[i])
		}
	}
	if n := f.Store.Requests() - before; n != 1+1+2 { // a duplicate's one request each, the new fact's reserve and complete
		t.Errorf("the redelivery made %d store requests, want 4", n)
	}
	for k, n := range o.runs {
		if n != 1 {
			t.Errorf("%s ran %d times", k, n)
		}
	}
}

// TestS3Age: a record's age is from the earlier of its eventTime and the
// SentTimestamp; the eventTime is never in the hash (a repeated notification
// with another eventTime is a duplicate, tested above), and a record as old
// as the window is expired, alone of its message.
func TestS3Age(t *testing.T) {
	f, clk := queuetest.NewClockFixture(t)
	h := objectsHandler(f, &objects{})
	now := clk.Now()
	old := s3Rec{bucket: "b", key: "old", size: 1, eTag: "e", sequencer: "01", at: now.Add(-queuetest.Window)}
	young := s3Rec{bucket: "b", key: "young", size: 1, eTag: "e", sequencer: "02", at: now}
	rec := queuetest.MessageAt(s3Body(old, young), contract.Raw, now)
	resp := handleS3(t, h, rec)
	if len(resp.BatchItemFailures) != 1 {
		t.Fatalf("failures %v", resp)
	}
	lines := f.Lines(rec.MessageId)
	if lines[0]["outcome"] != "expired" || !strings.Contains(fmt.Sprint(lines[0]["reason"]), "its origin time is the S3 eventTime") || lines[1]["outcome"] != "processed" {
		t.Fatalf("lines %v", lines)
	}
}

// TestS3BadInput: bodies that are no S3 notification, and records that
// cannot be read, are bad input with a reason, never a panic; a bad record
// fails its message, never its neighbours.
func TestS3BadInput(t *testing.T) {
	good := s3Rec{bucket: "b", key: "k", size: 1, eTag: "e", sequencer: "01"}.json()
	for _, c := range []struct {
		name, body, reason string
		records            int // lines of records; 0: one line for the message
	}{
		{"a raw message", `{"orderId":"o-1"}`, "no Records", 0},
		{"an EventBridge event", `{"version":"0","id":"x","detail-type":"OrderPlaced","source":"shop","time":"2026-12-01T10:00:00Z","detail":{"orderId":"o-1"}}`, "no Records", 0},
		{"empty Records", `{"Records":[]}`, "no Records", 0},
		{"Records not an array", `{"Records":{}}`, "is not an S3 event notification", 0},
		{"not JSON", `Records`, "not a JSON object", 0},
		{"not UTF-8", "{\"Records\":[\"\xff\"]}", "not valid UTF-8", 0},
		{"a lone surrogate", `{"Records":[{"eventName":"\ud800"}]}`, "lone UTF-16 surrogate", 0},
		{"a record that is no object", `{"Records":[7,` + good + `]}`, "S3 record", 2},
		{"a record without s3", `{"Records":[{"eventSource":"aws:s3","eventName":"ObjectCreated:Put"}]}`, "no s3.bucket.name", 1},
		{"another source", `{"Records":[` + strings.Replace(good, `"aws:s3"`, `"aws:sqs"`, 1) + `]}`, `eventSource "aws:sqs" is not aws:s3`, 1},
		{"a size that is no number", `{"Records":[` + strings.Replace(good, `"size":1`, `"size":"big"`, 1) + `]}`, "S3 record: json: invalid number", 1},
		{"a negative size", `{"Records":[` + strings.Replace(good, `"size":1`, `"size":-1`, 1) + `]}`, `object size "-1"`, 1},
		{"a key not UTF-8 once decoded", s3Body(s3Rec{bucket: "b", key: "%FF", size: 1, eTag: "e", sequencer: "01"}), "is not UTF-8 once decoded", 1},
		{"nothing to key by", s3Body(s3Rec{event: "ObjectRestore:Delete", bucket: "b", key: "k"}), "give a key function of your own", 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := queuetest.NewFixture(t)
			h := objectsHandler(f, &objects{})
			rec := queuetest.Message(c.body, contract.Raw)
			neighbour := queuetest.Message(s3Body(s3Rec{bucket: "b", key: "neighbour", size: 1, eTag: "e", sequencer: "01"}), contract.Raw)
			resp := handleS3(t, h, rec, neighbour)
			if failed := queuetest.FailedIDs(resp); !failed[rec.MessageId] || failed[neighbour.MessageId] {
				t.Fatalf("failures %v", failed)
			}
			lines := f.Lines(rec.MessageId)
			if want := max(c.records, 1); len(lines) != want {
				t.Fatalf("%d lines, want %d: %v", len(lines), want, lines)
			}
			l := lines[0]
			if l["outcome"] != "bad_input" || !strings.Contains(fmt.Sprint(l["reason"]), c.reason) {
				t.Fatalf("%v (%v), want bad_input with %q", l["outcome"], l["reason"], c.reason)
			}
		})
	}
}

// TestFailedObjectsBackOff: an S3 notification is one message: it backs off
// when one of its records failed, and is left alone when all succeeded.
func TestFailedObjectsBackOff(t *testing.T) {
	f := queuetest.NewFixture(t)
	ch := &queuetest.Changes{}
	cfg := f.Config(contract.S3)
	cfg.Visibility, cfg.MaxReceiveCount, cfg.Random = ch, 5, func() float64 { return 0 }
	o := &objects{fail: map[string]bool{"b.csv": true}}
	h := s3event.New(f.Guard, s3event.ObjectKey, o.effect, cfg)
	bad := queuetest.Received("x", 2, "")
	bad.Body = s3Body(s3Rec{bucket: "in", key: "a.csv", eTag: "e1", sequencer: "01"}, s3Rec{bucket: "in", key: "b.csv", eTag: "e2", sequencer: "02"})
	good := queuetest.Received("y", 2, "")
	good.MessageId, good.ReceiptHandle = "m-good", "rh-m-good"
	good.Body = s3Body(s3Rec{bucket: "in", key: "c.csv", eTag: "e3", sequencer: "03"})
	resp, err := h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{bad, good}})
	if err != nil || len(resp.BatchItemFailures) != 1 || resp.BatchItemFailures[0].ItemIdentifier != bad.MessageId {
		t.Fatalf("Handle: %v, %+v", err, resp)
	}
	if d := ch.Calls[bad.ReceiptHandle]; d != 10*time.Minute { // receive 2: c = 20m, floor 10m
		t.Errorf("the notification with a failed record: visibility %v, want 10m", d)
	}
	if _, changed := ch.Calls[good.ReceiptHandle]; changed {
		t.Error("the notification whose records all succeeded was changed")
	}
}

// TestInspectReadsEachRecordOfAnS3Message: an S3 notification's facts are
// its records', each with the key the handler stores (ObjectKey, URL-decoded),
// and S3's test event has none.
func TestInspectReadsEachRecordOfAnS3Message(t *testing.T) {
	f := queuetest.NewFixture(t)
	h := objectsHandler(f, &objects{})
	rec := events.SQSMessage{MessageId: "m-1", Attributes: map[string]string{"SentTimestamp": strconv.FormatInt(time.Now().UnixMilli(), 10)},
		Body: s3Body(s3Rec{bucket: "uploads", key: "invoices/a+b.pdf", eTag: "e1", version: "v1", size: 3}, s3Rec{bucket: "uploads", key: "invoices/c.pdf", eTag: "e2", version: "v2", size: 4})}
	facts, err := h.Inspect(&rec)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, fact := range facts {
		keys = append(keys, fact.Key)
	}
	want := []string{"charge#uploads/invoices/a b.pdf@v1", "charge#uploads/invoices/c.pdf@v2"}
	if strings.Join(keys, "|") != strings.Join(want, "|") {
		t.Errorf("Inspect = keys %q, want %q", keys, want)
	}
	rec.Body = s3TestEvent
	if facts, err := h.Inspect(&rec); err != nil || len(facts) != 0 {
		t.Errorf("the test event: %d facts, %v; want none", len(facts), err)
	}
}

// FuzzNotifications: whatever the body, an S3 consumer never panics or
// fails the batch, and every message it does not delete has a log line
// that says why.
func FuzzNotifications(f *testing.F) {
	for _, s := range []string{
		s3Body(s3Rec{bucket: "b", key: "a+b%2Fc", size: 1, eTag: "e", sequencer: "01"}, s3Rec{bucket: "b", key: "%zz", size: 1, eTag: "e", sequencer: "02"}),
		s3TestEvent, `{"Records":[null]}`, `{"Records":[{"s3":{"bucket":{"name":""},"object":{"key":null}}}]}`, `[]`, `{`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		fx := queuetest.NewFixture(t)
		queuetest.CheckEveryFailureSaysWhy(t, fx, objectsHandler(fx, &objects{}).Handle, body)
	})
}
