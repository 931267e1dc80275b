package sources_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/dynamostore"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/handler"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/s3event"
	"github.com/idempotent-consumer/idempotent-consumer/test/internal/kumotest"
)

// objectsConsumer is the real handler of a bucket source (s3event.FromEnv,
// MESSAGE_DELIVERY=s3) on kumo's DynamoDB; its effect counts the facts by
// the default key and fails the keys it is told to, once each.
func objectsConsumer(t *testing.T, c kumotest.Clients, table string, eff *effects) *poller {
	t.Helper()
	settings := contract.Defaults(30 * time.Second)
	settings.Table, settings.Namespace, settings.Consumer = table, "uploads", "Uploads/Import"
	settings.Delivery = contract.S3
	env := settings.Encode()
	h, err := s3event.FromEnv(s3event.ObjectKey, func(ctx context.Context, o s3event.Object, r idempotency.Reservation) (string, error) {
		k, _ := s3event.ObjectKey(o)
		return "", eff.run(k)
	},
		handler.WithGetenv(func(k string) string { return env[k] }),
		handler.WithStore(dynamostore.New(c.DynamoDB, table)),
		handler.WithLogger(slog.New(slog.DiscardHandler)), handler.WithMetrics(io.Discard))
	if err != nil {
		t.Fatal(err)
	}
	return &poller{sqs: c.SQS, handle: h.Handle}
}

// TestS3NotificationsThroughKumo: PutObject → the bucket's notification on
// kumo → a standard queue → the real handler. Three uploads of one key (a
// name with a space, an accent and '/'): the first, a rewrite with other
// content, a rewrite with the same content; then S3 repeats the first
// notification. It checks what it relies on of kumo: the key escaped with
// QueryEscape ('/' as %2F, ' ' as '+'), no versionId, no sequencer, no
// s3:TestEvent when the notification is configured. Without a sequencer the
// default key falls back on the ETag, so on kumo the same-content rewrite is
// a duplicate, where S3 (a new sequencer) would make it a new fact: the
// sequencer keys are proved with AWS-shaped messages below.
func TestS3NotificationsThroughKumo(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := server(t)
	suffix := fmt.Sprint(time.Now().UnixNano())
	table, err := kumotest.NewTable(ctx, c.DynamoDB, "objects")
	if err != nil {
		t.Fatal(err)
	}
	var eff effects
	p := objectsConsumer(t, c, table, &eff)
	p.q = standardQueue(ctx, t, c.SQS, "uploads-"+suffix)
	bucket := "uploads-" + suffix
	if _, err := c.S3.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.S3.PutBucketNotificationConfiguration(ctx, &s3.PutBucketNotificationConfigurationInput{
		Bucket: aws.String(bucket),
		NotificationConfiguration: &s3types.NotificationConfiguration{QueueConfigurations: []s3types.QueueConfiguration{{
			Id: aws.String("import"), QueueArn: aws.String(p.q.arn), Events: []s3types.Event{"s3:ObjectCreated:*"},
		}}},
	}); err != nil {
		t.Fatal(err)
	}
	key := "invoices/2026/café bill.pdf"
	put := func(content string) {
		if _, err := c.S3.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: strings.NewReader(content)}); err != nil {
			t.Fatal(err)
		}
	}
	put("invoice v1")
	p.drain(ctx, t, 1)
	put("invoice v2")
	p.drain(ctx, t, 2)
	put("invoice v2")
	p.drain(ctx, t, 3)
	p.send(ctx, t, p.bodies[0]) // S3 repeats the first notification
	p.drain(ctx, t, 4)

	// What the proof relies on of kumo.
	for _, b := range p.bodies {
		var n struct {
			Records []struct {
				EventName string
				S3        struct {
					Object map[string]any `json:"object"`
				} `json:"s3"`
			}
			Event string
		}
		if err := json.Unmarshal([]byte(b), &n); err != nil || len(n.Records) != 1 || n.Event == "s3:TestEvent" {
			t.Fatalf("kumo delivered %s", b)
		}
		o := n.Records[0].S3.Object
		if o["key"] != "invoices%2F2026%2Fcaf%C3%A9+bill.pdf" || o["versionId"] != nil || o["sequencer"] != nil || o["eTag"] == "" {
			t.Errorf("kumo's record: %v", o)
		}
	}
	if len(eff.runs) != 2 {
		t.Errorf("facts %v, want the two contents once each", eff.runs)
	}
	for k, n := range eff.runs {
		if n != 1 || !strings.HasPrefix(k, bucket+"/"+key+"@etag:") {
			t.Errorf("fact %s ran %d times", k, n)
		}
	}
	records := countRecords(ctx, t, c, table)
	if records != 2 {
		t.Errorf("%d records, want 2", records)
	}
	t.Logf("kumo: 3 PutObject of one key + 1 repeated notification: %d notifications received, %d facts run once each, %d records, none reported; key as sent %q", p.received, len(eff.runs), records, "invoices%2F2026%2Fcaf%C3%A9+bill.pdf")
}

// s3Record is one record of an S3 event notification in the shape of the S3
// User Guide's "Event message structure"
// (https://docs.aws.amazon.com/AmazonS3/latest/userguide/notification-content-structure.html).
func s3Record(bucket, key, eTag, version, sequencer string, at time.Time) string {
	obj := map[string]any{"key": key, "size": 1024, "eTag": eTag, "sequencer": sequencer}
	if version != "" {
		obj["versionId"] = version
	}
	b, _ := json.Marshal(map[string]any{
		"eventVersion": "2.1", "eventSource": "aws:s3", "awsRegion": "eu-west-1", "eventTime": at.UTC().Format("2006-01-02T15:04:05.000Z"),
		"eventName": "ObjectCreated:Put", "userIdentity": map[string]string{"principalId": "AWS:AIDAJDPLRKLG7UEXAMPLE"},
		"requestParameters": map[string]string{"sourceIPAddress": "203.0.113.7"},
		"responseElements":  map[string]string{"x-amz-request-id": fmt.Sprintf("C3D13FE58DE4C%03d", at.Nanosecond()%1000), "x-amz-id-2": "FMyUVURIY8/IgAtTv8xRjskZQpcIZ9KG4V5Wp6S7S/JRWeUWerMUE5JgHvANOjpD"},
		"s3":                map[string]any{"s3SchemaVersion": "1.0", "configurationId": "import", "bucket": map[string]any{"name": bucket, "arn": "arn:aws:s3:::" + bucket}, "object": obj},
	})
	return string(b)
}

// TestS3WhatKumoDoesNotModel proves with AWS-shaped messages sent to a
// queue on kumo what kumo's S3 does not send: versioned keys (two versions
// of one key, two facts), sequencer keys (a rewrite of one key with the
// same content, a new sequencer: a new fact; a repeated notification, the
// same sequencer: one), S3's s3:TestEvent (acknowledged), and a message of
// several records, one of which fails: the message comes back, its records
// already done are duplicates, the failed one runs.
func TestS3WhatKumoDoesNotModel(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := server(t)
	table, err := kumotest.NewTable(ctx, c.DynamoDB, "objects-gaps")
	if err != nil {
		t.Fatal(err)
	}
	eff := effects{fails: map[string]int{"in/b.csv@0B": 1}}
	p := objectsConsumer(t, c, table, &eff)
	p.q = standardQueue(ctx, t, c.SQS, fmt.Sprint("uploads-gaps-", time.Now().UnixNano()))
	now := time.Now()
	notification := func(recs ...string) string { return `{"Records":[` + strings.Join(recs, ",") + `]}` }

	p.send(ctx, t, `{"Service":"Amazon S3","Event":"s3:TestEvent","Time":"2026-12-01T10:00:00.000Z","Bucket":"in","RequestId":"5582815E1AEA5ADF","HostId":"8cLeGAmw098X5cv4Zkwcmo8vvZa3eH3eKxsPzbB9wrR+YstdA6Knx4Ip8EXAMPLE"}`)
	p.send(ctx, t, notification(s3Record("in", "report.csv", "e1", "3HL4kqtJlcpXroDTDmJ+rmSpXd3dIbrHY+MTRCxf3vjVBH40Nr8X8gdRQBpUMLUo", "0A1", now)))
	p.send(ctx, t, notification(s3Record("in", "report.csv", "e1", "3HL4kqtJlcpXroDTDmJ+rmSpXd3dIbrHY+MTRCxf3vjVBH40Nr8X8gdRQBpUMLUp", "0A2", now)))
	p.send(ctx, t, notification(s3Record("in", "plain.csv", "e1", "", "0055AED6DCD90281E5", now)))
	p.send(ctx, t, notification(s3Record("in", "plain.csv", "e1", "", "0055AED6DCD90281F0", now)))                  // the same content again, a new upload
	p.send(ctx, t, notification(s3Record("in", "plain.csv", "e1", "", "0055AED6DCD90281F0", now.Add(time.Minute)))) // S3 repeats it
	p.send(ctx, t, notification(
		s3Record("in", "a.csv", "ea", "", "0A", now), s3Record("in", "b.csv", "eb", "", "0B", now), s3Record("in", "c.csv", "ec", "", "0C", now)))
	p.drain(ctx, t, 7)

	want := map[string]int{
		"in/report.csv@3HL4kqtJlcpXroDTDmJ+rmSpXd3dIbrHY+MTRCxf3vjVBH40Nr8X8gdRQBpUMLUo": 1,
		"in/report.csv@3HL4kqtJlcpXroDTDmJ+rmSpXd3dIbrHY+MTRCxf3vjVBH40Nr8X8gdRQBpUMLUp": 1,
		"in/plain.csv@0055AED6DCD90281E5":                                                1, "in/plain.csv@0055AED6DCD90281F0": 1,
		"in/a.csv@0A": 1, "in/b.csv@0B": 1, "in/c.csv@0C": 1,
	}
	for k, n := range want {
		if eff.runs[k] != n {
			t.Errorf("%s ran %d times, want %d", k, eff.runs[k], n)
		}
	}
	if len(eff.runs) != len(want) {
		t.Errorf("facts %v", eff.runs)
	}
	if p.reported != 1 || p.received != 8 {
		t.Errorf("reported %d, received %d; want the multi-record message reported once and received twice (8 receives)", p.reported, p.received)
	}
	t.Logf("AWS-shaped on kumo's queue: 7 messages (a test event, 2 versions, 2 sequencers + a repeat, 3 records with one failing), %d receives, %d reported, %d facts run once each", p.received, p.reported, len(eff.runs))
}
