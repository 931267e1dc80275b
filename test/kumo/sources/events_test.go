package sources_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/dynamostore"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/eventbridge"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/handler"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/test/internal/kumotest"
)

// poller plays the SQS event source mapping for one queue: it receives
// batches, invokes the real handler, deletes what the partial batch
// response does not name and makes the rest visible again at once (as the
// visibility timeout would, later).
type poller struct {
	sqs    *sqs.Client
	q      queueRef
	handle func(context.Context, events.SQSEvent) (events.SQSEventResponse, error)

	bodies   []string // every body received, in order of receipt
	received int      // receives, redeliveries included
	reported int      // batchItemFailures entries
	deleted  int
}

// drain runs batches until want messages are deleted. kumo delivers rule
// targets and notifications from goroutines of its own, so a receive may
// come back empty before they arrive: it long-polls until ctx ends.
func (p *poller) drain(ctx context.Context, t *testing.T, want int) {
	t.Helper()
	for p.deleted < want {
		if ctx.Err() != nil {
			t.Fatalf("%d of %d messages deleted before the deadline; bodies received: %v", p.deleted, want, p.bodies)
		}
		out, err := p.sqs.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
			QueueUrl: aws.String(p.q.url), MaxNumberOfMessages: 10, WaitTimeSeconds: 1,
			MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{sqstypes.MessageSystemAttributeNameAll},
		})
		if err != nil {
			if ctx.Err() == nil {
				t.Fatalf("receive: %v", err)
			}
			continue
		}
		if len(out.Messages) == 0 {
			continue
		}
		ev := events.SQSEvent{}
		handles := map[string]string{}
		for _, m := range out.Messages {
			p.received++
			p.bodies = append(p.bodies, aws.ToString(m.Body))
			ev.Records = append(ev.Records, events.SQSMessage{
				MessageId: aws.ToString(m.MessageId), ReceiptHandle: aws.ToString(m.ReceiptHandle), Body: aws.ToString(m.Body),
				Attributes: m.Attributes, EventSource: "aws:sqs", EventSourceARN: p.q.arn, AWSRegion: "us-east-1",
			})
			handles[aws.ToString(m.MessageId)] = aws.ToString(m.ReceiptHandle)
		}
		hctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		resp, err := p.handle(hctx, ev)
		cancel()
		if err != nil {
			t.Fatalf("the handler failed the batch: %v", err)
		}
		failed := map[string]bool{}
		for _, f := range resp.BatchItemFailures {
			failed[f.ItemIdentifier] = true
		}
		p.reported += len(failed)
		for id, rh := range handles {
			if failed[id] {
				if _, err := p.sqs.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: aws.String(p.q.url), ReceiptHandle: aws.String(rh), VisibilityTimeout: 0}); err != nil {
					t.Fatal(err)
				}
				continue
			}
			if _, err := p.sqs.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(p.q.url), ReceiptHandle: aws.String(rh)}); err != nil {
				t.Fatal(err)
			}
			p.deleted++
		}
	}
}

// send puts a body on the queue, as a service delivering to it would.
func (p *poller) send(ctx context.Context, t *testing.T, body string) {
	t.Helper()
	if _, err := p.sqs.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(p.q.url), MessageBody: aws.String(body)}); err != nil {
		t.Fatal(err)
	}
}

// events is a client of kumo's EventBridge API (JSON protocol), enough for
// a rule, its target and PutEvents.
type eventsAPI struct{ url string }

func (e eventsAPI) call(ctx context.Context, t *testing.T, action string, in any) map[string]any {
	t.Helper()
	body, _ := json.Marshal(in)
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, e.url+"/", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/x-amz-json-1.1")
	req.Header.Set("X-Amz-Target", "AWSEvents."+action)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s: %s %s", action, resp.Status, raw)
	}
	var out map[string]any
	_ = json.Unmarshal(raw, &out)
	return out
}

// putEvent sends one entry and returns the event id EventBridge gave it.
func (e eventsAPI) putEvent(ctx context.Context, t *testing.T, source, detailType, detail string) string {
	t.Helper()
	out := e.call(ctx, t, "PutEvents", map[string]any{"Entries": []map[string]any{{"Source": source, "DetailType": detailType, "Detail": detail}}})
	entries, _ := out["Entries"].([]any)
	if len(entries) != 1 {
		t.Fatalf("PutEvents: %v", out)
	}
	id, _ := entries[0].(map[string]any)["EventId"].(string)
	return id
}

// shipment is the business message of the EventBridge proof.
type shipment struct {
	OrderID string `json:"orderId"`
	Carrier string `json:"carrier"`
}

// effects counts a proof's effects by fact, and fails the facts it is told
// to, once each.
type effects struct {
	mu    sync.Mutex
	runs  map[string]int
	fails map[string]int
}

func (e *effects) run(fact string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.fails[fact] > 0 {
		e.fails[fact]--
		return errors.New("downstream refused " + fact + ", for now")
	}
	if e.runs == nil {
		e.runs = map[string]int{}
	}
	e.runs[fact]++
	return nil
}

// TestEventBridgeRuleThroughKumo: PutEvents → a rule on kumo's default bus
// → its SQS target (a standard queue) → the real handler, built by
// eventbridge.FromEnv from the environment the construct writes for a bus
// source (MESSAGE_DELIVERY=eventbridge), on kumo's DynamoDB. The handler
// runs in the test's process, invoked by a poller that plays the event
// source mapping. A producer's retry (a second PutEvents of the same
// detail: a new event id) runs its effect once; an event the rule's pattern
// does not match is never delivered. It checks what it relies on of kumo:
// the body is the whole event, its id new on each PutEvents, its detail
// the entry's.
func TestEventBridgeRuleThroughKumo(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := server(t)
	srvURL := c.URL
	kumotest.RouteDefaultAddress(t, srvURL) // kumo delivers SQS targets to its own endpoint
	suffix := fmt.Sprint(time.Now().UnixNano())
	q := standardQueue(ctx, t, c.SQS, "shipments-"+suffix)
	eb := eventsAPI{url: srvURL}
	rule := "shipments-" + suffix
	eb.call(ctx, t, "PutRule", map[string]any{"Name": rule, "EventPattern": `{"source":["com.example.shipping"],"detail-type":["ShipmentBooked"]}`, "State": "ENABLED"})
	eb.call(ctx, t, "PutTargets", map[string]any{"Rule": rule, "Targets": []map[string]any{{"Id": "consumer", "Arn": q.arn}}})
	table, err := kumotest.NewTable(ctx, c.DynamoDB, "events")
	if err != nil {
		t.Fatal(err)
	}

	settings := contract.Defaults(30 * time.Second)
	settings.Table, settings.Namespace, settings.Consumer = table, "ship", "Shipments/Book"
	settings.Delivery = contract.EventBridge
	env := settings.Encode()
	var eff effects
	h, err := eventbridge.FromEnv(func(e eventbridge.Event[shipment]) (string, error) { return e.Detail.OrderID, nil },
		func(ctx context.Context, e eventbridge.Event[shipment], r idempotency.Reservation) (string, error) {
			return "", eff.run(e.Detail.OrderID)
		},
		handler.WithGetenv(func(k string) string { return env[k] }),
		handler.WithStore(dynamostore.New(c.DynamoDB, table)),
		handler.WithLogger(slog.New(slog.DiscardHandler)), handler.WithMetrics(io.Discard))
	if err != nil {
		t.Fatal(err)
	}

	ids := []string{
		eb.putEvent(ctx, t, "com.example.shipping", "ShipmentBooked", `{"orderId":"o-1","carrier":"ups"}`),
		eb.putEvent(ctx, t, "com.example.shipping", "ShipmentBooked", `{"orderId":"o-2","carrier":"dhl"}`),
		// The producer did not see the answer to its first call and retries:
		// a new PutEvents, a new event id, the same detail.
		eb.putEvent(ctx, t, "com.example.shipping", "ShipmentBooked", `{"orderId":"o-1","carrier":"ups"}`),
	}
	eb.putEvent(ctx, t, "com.example.billing", "InvoiceSent", `{"orderId":"o-3"}`) // not the rule's

	p := &poller{sqs: c.SQS, q: q, handle: h.Handle}
	p.drain(ctx, t, 3)

	if eff.runs["o-1"] != 1 || eff.runs["o-2"] != 1 || len(eff.runs) != 2 {
		t.Errorf("effects %v, want o-1 and o-2 once each", eff.runs)
	}
	if ids[0] == ids[2] {
		t.Errorf("kumo gave the retry the first event's id %s", ids[0])
	}
	// What the proof relies on of kumo: the whole event as the body.
	var got []string
	for _, b := range p.bodies {
		var ev struct {
			Version, ID, Source string
			DetailType          string          `json:"detail-type"`
			Detail              json.RawMessage `json:"detail"`
		}
		if err := json.Unmarshal([]byte(b), &ev); err != nil || ev.Version != "0" || ev.Source != "com.example.shipping" || ev.DetailType != "ShipmentBooked" || len(ev.Detail) == 0 {
			t.Errorf("kumo delivered %s, not a whole event", b)
		}
		got = append(got, ev.ID)
	}
	if strings.Join(got, ",") == "" || len(p.bodies) != 3 || p.reported != 0 {
		t.Errorf("bodies %d, reported %d", len(p.bodies), p.reported)
	}
	for _, id := range ids {
		if !strings.Contains(strings.Join(got, ","), id) {
			t.Errorf("event %s was not delivered (delivered %v)", id, got)
		}
	}
	records := countRecords(ctx, t, c, table)
	if records != 2 {
		t.Errorf("%d records in the table, want 2", records)
	}
	t.Logf("kumo: 4 PutEvents (one a producer's retry, one of another source), %d delivered to the rule's queue, %d effects (%v), %d records; event ids %v", len(p.bodies), len(eff.runs), eff.runs, records, got)
}

// countRecords counts the items of a table.
func countRecords(ctx context.Context, t *testing.T, c kumotest.Clients, table string) int {
	t.Helper()
	out, err := c.DynamoDB.Scan(ctx, &dynamodb.ScanInput{TableName: aws.String(table), ConsistentRead: aws.Bool(true)})
	if err != nil {
		t.Fatal(err)
	}
	return int(out.Count)
}

// awsEvent is an event as EventBridge delivers it to an SQS target, in the
// shape of the EventBridge User Guide
// (https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-events-structure.html).
func awsEvent(id string, at time.Time, detail string) string {
	return `{"version":"0","id":"` + id + `","detail-type":"ShipmentBooked","source":"com.example.shipping","account":"111122223333",` +
		`"time":"` + at.UTC().Format(time.RFC3339) + `","region":"eu-west-1","resources":[],"detail":` + detail + `}`
}

// TestEventBridgeWhatKumoDoesNotModel proves with AWS-shaped events sent to
// queues on kumo what kumo's EventBridge does not do: a rule's retry of a
// delivery that had succeeded (the same event, same id, again), a redrive
// from the rule's dead-letter queue (the same event, later), and a FIFO
// target whose content-based deduplication hashes the whole event: it
// absorbs the rule's own redelivery but never a producer's retry (a new
// id), which the consumer runs once.
func TestEventBridgeWhatKumoDoesNotModel(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := server(t)
	suffix := fmt.Sprint(time.Now().UnixNano())
	table, err := kumotest.NewTable(ctx, c.DynamoDB, "events-gaps")
	if err != nil {
		t.Fatal(err)
	}
	var eff effects
	build := func(fifo bool) func(context.Context, events.SQSEvent) (events.SQSEventResponse, error) {
		settings := contract.Defaults(30 * time.Second)
		settings.Table, settings.Namespace, settings.Consumer = table, "ship", "Shipments/Book"
		settings.Delivery, settings.FIFO = contract.EventBridge, fifo
		env := settings.Encode()
		h, err := eventbridge.FromEnv(func(e eventbridge.Event[shipment]) (string, error) { return e.Detail.OrderID, nil },
			func(ctx context.Context, e eventbridge.Event[shipment], r idempotency.Reservation) (string, error) {
				return "", eff.run(e.Detail.OrderID)
			},
			handler.WithGetenv(func(k string) string { return env[k] }),
			handler.WithStore(dynamostore.New(c.DynamoDB, table)),
			handler.WithLogger(slog.New(slog.DiscardHandler)), handler.WithMetrics(io.Discard))
		if err != nil {
			t.Fatal(err)
		}
		return h.Handle
	}

	// A standard queue: the rule's retry, then a redrive from its DLQ.
	now := time.Now()
	std := &poller{sqs: c.SQS, q: standardQueue(ctx, t, c.SQS, "ship-std-"+suffix), handle: build(false)}
	first := awsEvent("a1b2c3d4-0000-4000-8000-000000000001", now, `{"orderId":"s-1","carrier":"ups"}`)
	std.send(ctx, t, first)
	std.send(ctx, t, first) // the rule retried a delivery that SQS had taken
	std.drain(ctx, t, 2)
	std.send(ctx, t, first) // redriven from the rule's dead-letter queue
	std.drain(ctx, t, 3)
	if eff.runs["s-1"] != 1 {
		t.Errorf("s-1 ran %d times, want 1", eff.runs["s-1"])
	}

	// A FIFO target: the queue deduplicates by content (the whole event).
	fifo := &poller{sqs: c.SQS, q: newQueue(ctx, t, c.SQS, "ship-"+suffix+".fifo", map[string]string{"FifoQueue": "true", "ContentBasedDeduplication": "true"}), handle: build(true)}
	sendFIFO := func(body string) {
		if _, err := c.SQS.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(fifo.q.url), MessageBody: aws.String(body), MessageGroupId: aws.String("o")}); err != nil {
			t.Fatal(err)
		}
	}
	ev := awsEvent("a1b2c3d4-0000-4000-8000-000000000002", now, `{"orderId":"f-1","carrier":"dhl"}`)
	sendFIFO(ev)
	sendFIFO(ev)                                                                                                          // the rule's own redelivery: one content, deduplicated by the queue
	sendFIFO(awsEvent("a1b2c3d4-0000-4000-8000-000000000003", now.Add(time.Second), `{"orderId":"f-1","carrier":"dhl"}`)) // the producer's retry
	fifo.drain(ctx, t, 2)
	if eff.runs["f-1"] != 1 {
		t.Errorf("f-1 ran %d times, want 1", eff.runs["f-1"])
	}
	if fifo.received != 2 {
		t.Errorf("the FIFO queue delivered %d messages, want 2 (the rule's redelivery deduplicated, the producer's retry not)", fifo.received)
	}
	t.Logf("standard queue: 3 deliveries of one event (the first, the rule's retry, a DLQ redrive), %d effect; FIFO target with content-based deduplication: 3 sends, %d received, %d effect", eff.runs["s-1"], fifo.received, eff.runs["f-1"])
}
