package local

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
)

// This file runs the example platform's consumers of its other sources
// beside the SNS fan-out, each with its source's cause of duplicates:
//
//   - ship (an EventBridge rule on the platform's bus): PutEvents of an
//     OrderPlaced event per order, and a producer's retry of some (a new
//     PutEvents: a new event id, the same detail);
//   - settle (direct producers): SendMessage of each order to its queue,
//     and a retried send of some (a new message id, the same body);
//   - invoice (the uploads bucket): a presigned-URL upload per invoice (an
//     HTTP PUT to a presigned URL, as a supplier's browser does), a
//     repeated notification of one (S3's at-least-once delivery), a
//     rewrite of one key with new content (a new version: a new fact), and
//     S3's s3:TestEvent (which kumo never sends).
//
// Each effect is a POST to a fake API with no idempotency of its own
// (effectsAPI): only the consumer's guard keeps them single.

// Kinds of the handlers of the other sources (their package names).
const (
	kindShip    = "ship"
	kindSettle  = "settle"
	kindInvoice = "invoice"
)

// isSourceKind says whether kind is a consumer of another source than the
// orders topic.
func isSourceKind(kind string) bool {
	return kind == kindShip || kind == kindSettle || kind == kindInvoice
}

// effectsAPI counts the effects of the other sources' consumers, by path
// and fact (an order id, or an object's key and content).
type effectsAPI struct {
	mu    sync.Mutex
	facts map[string]map[string]int // path → fact → effects
	n     int
}

func newEffectsAPI() *effectsAPI { return &effectsAPI{facts: map[string]map[string]int{}} }

func (e *effectsAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req struct {
		OrderID string `json:"orderId"`
		Bucket  string `json:"bucket"`
		Key     string `json:"key"`
		ETag    string `json:"eTag"`
	}
	if r.Method != http.MethodPost || json.NewDecoder(r.Body).Decode(&req) != nil {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	fact := req.OrderID
	if fact == "" {
		fact = req.Bucket + "/" + req.Key + "#" + strings.Trim(req.ETag, `"`)
	}
	e.mu.Lock()
	if e.facts[r.URL.Path] == nil {
		e.facts[r.URL.Path] = map[string]int{}
	}
	e.facts[r.URL.Path][fact]++
	e.n++
	id := fmt.Sprintf("fx_%d", e.n)
	e.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]string{"id": id})
}

// effects are the effects made on path, by fact.
func (e *effectsAPI) effects(path string) map[string]int {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := map[string]int{}
	for k, v := range e.facts[path] {
		out[k] = v
	}
	return out
}

// SourceReport is what happened in a consumer of another source.
type SourceReport struct {
	Name, Source string
	Facts        int // facts sent: orders, or objects written
	Sent         int // what the producers sent: events put, messages sent, notifications
	Retries      int // a producer's retries, repeated notifications
	Deliveries   int64
	Processed    int
	Duplicates   int
	Effects      int
	Doubles      int // facts whose effect happened more than once
	Lost         int // facts with no effect and not dead-lettered
	DLQ          int
}

// sources is the run of the other sources.
type sources struct {
	api      *effectsAPI
	orders   int
	expected map[string][]string // kind → the facts its effects must show once each
	sent     map[string]int
	retries  map[string]int
}

// sourceFacts is how many facts each other source gets: a fraction of the
// orders, so that the demo stays fast.
func sourceFacts(orders int) int { return max(4, min(orders/5, 20)) }

// send runs each source's producers, once the consumers run.
func (src *sources) send(ctx context.Context, c *clients, stack *Stack, dep *deployment, consumers []*consumer) error {
	src.expected, src.sent, src.retries = map[string][]string{}, map[string]int{}, map[string]int{}
	n := sourceFacts(src.orders)
	for _, con := range consumers {
		var err error
		switch con.kind {
		case kindShip:
			err = src.putEvents(ctx, c, stack, dep, con, n)
		case kindSettle:
			err = src.sendMessages(ctx, c, dep, con, n)
		case kindInvoice:
			err = src.upload(ctx, c, stack, dep, con, n)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", con.fn.Name, err)
		}
	}
	return nil
}

func sourceOrder(prefix string, i int) order {
	return order{OrderID: fmt.Sprintf("%s-%03d", prefix, i), CustomerID: fmt.Sprintf("c-%s-%03d", prefix, i), Amount: 1000 + int64(i), Currency: "EUR",
		Email: "buyer@example.com", PlacedAt: "2026-12-01T10:00:00Z"}
}

// putEvents puts an OrderPlaced event per order on the bus of the rule
// whose target is con's queue, and a producer's retry of every third.
func (src *sources) putEvents(ctx context.Context, c *clients, stack *Stack, dep *deployment, con *consumer, n int) error {
	bus := ""
	for _, r := range stack.Rules {
		for _, t := range r.Targets {
			if t.Queue == con.queue {
				bus = dep.ruleBus[r.ID]
			}
		}
	}
	if bus == "" {
		return fmt.Errorf("no rule targets queue %s", con.queue)
	}
	for i := range n {
		o := sourceOrder("ev", i)
		detail, _ := json.Marshal(o)
		tries := 1
		if i%3 == 0 {
			tries = 2 // the producer saw no answer and put it again: a new event id
		}
		for range tries {
			if _, err := putEvent(ctx, c, bus, "orders", "OrderPlaced", string(detail)); err != nil {
				return err
			}
			src.sent[kindShip]++
		}
		src.retries[kindShip] += tries - 1
		src.expected[kindShip] = append(src.expected[kindShip], o.OrderID)
	}
	return nil
}

// sendMessages sends each order to con's queue, and retries every third
// send (a new message id, the same body).
func (src *sources) sendMessages(ctx context.Context, c *clients, dep *deployment, con *consumer, n int) error {
	for i := range n {
		o := sourceOrder("dp", i)
		body, _ := json.Marshal(o)
		tries := 1
		if i%3 == 0 {
			tries = 2
		}
		for range tries {
			if _, err := c.sqs.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(dep.queueURL[con.queue]), MessageBody: aws.String(string(body))}); err != nil {
				return err
			}
			src.sent[kindSettle]++
		}
		src.retries[kindSettle] += tries - 1
		src.expected[kindSettle] = append(src.expected[kindSettle], o.OrderID)
	}
	return nil
}

// upload writes n invoices under the notified prefix through presigned
// URLs, then repeats the notification of the first (a copy of S3's, in
// its shape, sent to the queue), rewrites the second with new content, and
// sends S3's s3:TestEvent.
func (src *sources) upload(ctx context.Context, c *clients, stack *Stack, dep *deployment, con *consumer, n int) error {
	var bucket, prefix string
	for _, no := range stack.Notifications {
		for _, q := range no.Queues {
			if q.Queue == con.queue {
				bucket, prefix = dep.bucketName[no.Bucket], q.Prefix
			}
		}
	}
	if bucket == "" {
		return fmt.Errorf("no bucket notifies queue %s", con.queue)
	}
	presign := s3.NewPresignClient(c.s3)
	put := func(key, content string) (string, error) {
		req, err := presign.PresignPutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
		if err != nil {
			return "", err
		}
		hr, err := http.NewRequestWithContext(ctx, http.MethodPut, req.URL, bytes.NewReader([]byte(content)))
		if err != nil {
			return "", err
		}
		for k, vs := range req.SignedHeader {
			for _, v := range vs {
				hr.Header.Add(k, v)
			}
		}
		resp, err := http.DefaultClient.Do(hr)
		if err != nil {
			return "", err
		}
		resp.Body.Close()
		if resp.StatusCode/100 != 2 {
			return "", fmt.Errorf("PUT %s to its presigned URL: %s", key, resp.Status)
		}
		src.sent[kindInvoice]++
		return resp.Header.Get("ETag"), nil
	}
	fact := func(key, etag string) string { return bucket + "/" + key + "#" + strings.Trim(etag, `"`) }
	var first, firstETag string
	for i := range n {
		key := fmt.Sprintf("%ssupplier %d/inv-%03d.pdf", prefix, i%3, i) // a space and slashes: keys arrive URL-encoded
		etag, err := put(key, fmt.Sprintf("%%PDF invoice %d", i))
		if err != nil {
			return err
		}
		src.expected[kindInvoice] = append(src.expected[kindInvoice], fact(key, etag))
		if i == 0 {
			first, firstETag = key, etag
		}
		if i == 1 {
			// The supplier uploads a corrected invoice under the same key.
			etag, err := put(key, fmt.Sprintf("%%PDF invoice %d, corrected", i))
			if err != nil {
				return err
			}
			src.expected[kindInvoice] = append(src.expected[kindInvoice], fact(key, etag))
			src.retries["rewrite"]++
		}
	}
	// S3 delivers at least once: the first upload's notification again
	// (its eventTime is the upload's, now: the handler judges its age).
	now := time.Now().UTC().Format("2006-01-02T15:04:05.000Z")
	repeat := `{"Records":[{"eventVersion":"2.1","eventSource":"aws:s3","awsRegion":"` + Region + `","eventTime":"` + now + `","eventName":"ObjectCreated:Put",` +
		`"s3":{"s3SchemaVersion":"1.0","bucket":{"name":"` + bucket + `","arn":"arn:aws:s3:::` + bucket + `"},"object":{"key":"` + url.QueryEscape(first) + `","size":14,"eTag":"` + strings.Trim(firstETag, `"`) + `"}}}]}`
	test := `{"Service":"Amazon S3","Event":"s3:TestEvent","Time":"` + now + `","Bucket":"` + bucket + `","RequestId":"demo","HostId":"demo"}`
	for _, body := range []string{repeat, test} {
		if _, err := c.sqs.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(dep.queueURL[con.queue]), MessageBody: aws.String(body)}); err != nil {
			return err
		}
	}
	src.retries[kindInvoice]++
	return nil
}

// paths are the effect APIs' paths of each kind.
var paths = map[string]string{kindShip: "/shipments", kindSettle: "/settlements", kindInvoice: "/invoices"}

// check reads con's effects and dead-letter queue.
func (src *sources) check(ctx context.Context, c *clients, con *consumer) (SourceReport, error) {
	r := SourceReport{Name: con.fn.Name, Source: map[string]string{kindShip: "eventbridge", kindSettle: "direct", kindInvoice: "uploads"}[con.kind],
		Sent: src.sent[con.kind], Retries: src.retries[con.kind], Deliveries: con.stats.records.Load()}
	con.mu.Lock()
	r.Processed, r.Duplicates = con.outcomes["Processed"], con.outcomes["Duplicate"]
	con.mu.Unlock()
	effects := src.api.effects(paths[con.kind])
	for _, v := range effects {
		r.Effects += v
	}
	dead, err := dlqBodies(ctx, c, con.dlqURL)
	if err != nil {
		return r, err
	}
	r.DLQ = len(dead)
	r.Facts = len(src.expected[con.kind])
	for _, f := range src.expected[con.kind] {
		switch n := effects[f]; {
		case n > 1:
			r.Doubles++
		case n == 0:
			r.Lost++ // nothing of these sources is poison: a dead letter is a loss too
		}
	}
	return r, nil
}

// sourcesLine is the report's figures of the other sources, for its last
// line.
func sourcesLine(rs []SourceReport) string {
	var parts []string
	for _, r := range rs {
		parts = append(parts, fmt.Sprintf("%s=facts:%d,sent:%d,retries:%d,deliveries:%d,effects:%d,duplicates_absorbed:%d,double_effects:%d,lost:%d,dlq:%d",
			r.Source, r.Facts, r.Sent, r.Retries, r.Deliveries, r.Effects, r.Duplicates, r.Doubles, r.Lost, r.DLQ))
	}
	return strings.Join(parts, " ")
}
