package privacy_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/dynamodbstream"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/eventbridge"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/handler"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/httpkey"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency/storetest"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/kinesis"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/outcome"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/s3event"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/sqsbatch"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/webhook"
)

// email is the business key of every source: personal data.
const email = "jane.doe@example.com"

// secret is the key secret of the keyed runs.
var secret = []byte(strings.Repeat("s3cr3t-k", 4))

// world is what one run of a source writes: its log lines, its metric
// lines and its store.
type world struct {
	mu      sync.Mutex
	logs    bytes.Buffer
	metrics bytes.Buffer
	store   *storetest.MemoryStore
	guard   *idempotency.Guard
}

type lockedWriter struct {
	mu *sync.Mutex
	b  *bytes.Buffer
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *world) logger() *slog.Logger {
	return outcome.NewLogger(lockedWriter{&w.mu, &w.logs}, slog.LevelDebug)
}
func (w *world) metricsOut() io.Writer { return lockedWriter{&w.mu, &w.metrics} }

// stored is every record of the store, attribute by attribute, as a
// reader of the table sees them.
func (w *world) stored() string {
	var b strings.Builder
	for _, r := range w.store.Records() {
		fmt.Fprintf(&b, "pk=%s status=%s owner=%s lease_until=%d expires_at=%d ttl=%d payload_hash=%s result=%s\n",
			r.Key, r.Status, r.Owner, r.LeaseUntil.UnixMilli(), r.ExpiresAt.Unix(), r.TTL.Unix(), r.PayloadHash, r.Result)
	}
	return b.String()
}

// outcomes are the outcomes of the run's record or request lines.
func (w *world) outcomes(t *testing.T) map[string]int {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	out := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(w.logs.String()), "\n") {
		var v struct{ Outcome string }
		if err := json.Unmarshal([]byte(line), &v); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if v.Outcome != "" {
			out[v.Outcome]++
		}
	}
	return out
}

// source is one way a fact reaches a consumer. run delivers, in order: a
// fact (processed), the same delivery again (duplicate) and, where the
// source can carry one, another payload under the same key (mismatch). It
// returns the payloads as delivered (bodies, or data) and the business keys
// the source derived.
type source struct {
	name     string
	mismatch bool // the source can deliver another payload under one key
	run      func(t *testing.T, w *world) (payloads []string, keys []string)
}

func order(amount int) string {
	return `{"orderId":"` + email + `","amount":` + strconv.Itoa(amount) + `}`
}

type orderMsg struct {
	OrderID string `json:"orderId"`
	Amount  int    `json:"amount"`
}

func sqsMessage(id, body string) events.SQSMessage {
	return events.SQSMessage{MessageId: id, Body: body, EventSourceARN: "arn:aws:sqs:us-east-1:123456789012:orders",
		Attributes: map[string]string{"ApproximateReceiveCount": "1", "SentTimestamp": strconv.FormatInt(time.Now().UnixMilli(), 10)}}
}

func queueSource(name string, d contract.Delivery, wrap func(string) string) source {
	return source{name: name, mismatch: true, run: func(t *testing.T, w *world) ([]string, []string) {
		h := sqsbatch.New(w.guard, func(o orderMsg) (string, error) { return o.OrderID, nil },
			func(context.Context, orderMsg, idempotency.Reservation) (string, error) { return "ok", nil },
			sqsbatch.Config{Delivery: d, Batch: handler.Batch{Consumer: "charge", Logger: w.logger(), Metrics: w.metricsOut()}})
		var bodies []string
		for i, amount := range []int{1, 1, 2} {
			body := wrap(order(amount))
			bodies = append(bodies, order(amount), body)
			sqsHandle(t, h.Handle, sqsMessage(fmt.Sprint("m-", i), body))
		}
		// A key the guard refuses (a control character): its line says
		// why without quoting it.
		bad := wrap(`{"orderId":"` + email + `\u0001","amount":1}`)
		sqsHandle(t, h.Handle, sqsMessage("m-bad", bad))
		return append(bodies, bad), []string{email}
	}}
}

func sqsHandle(t *testing.T, handle func(context.Context, events.SQSEvent) (events.SQSEventResponse, error), m events.SQSMessage) {
	t.Helper()
	if _, err := handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{m}}); err != nil {
		t.Fatal(err)
	}
}

func envelope(msg string) string {
	b, _ := json.Marshal(map[string]string{"Type": "Notification", "MessageId": "sns-1", "TopicArn": "arn:aws:sns:us-east-1:123456789012:orders",
		"Message": msg, "Timestamp": time.Now().UTC().Format("2006-01-02T15:04:05.000Z"), "SignatureVersion": "1"})
	return string(b)
}

var sources = []source{
	queueSource("queue (raw)", contract.Raw, func(s string) string { return s }),
	queueSource("queue (SNS envelope)", contract.Envelope, envelope),
	{name: "EventBridge", mismatch: true, run: func(t *testing.T, w *world) ([]string, []string) {
		h := eventbridge.New(w.guard, func(e eventbridge.Event[orderMsg]) (string, error) { return e.Detail.OrderID, nil },
			func(context.Context, eventbridge.Event[orderMsg], idempotency.Reservation) (string, error) {
				return "ok", nil
			},
			sqsbatch.Config{Batch: handler.Batch{Consumer: "ship", Logger: w.logger(), Metrics: w.metricsOut()}})
		var bodies []string
		for i, amount := range []int{1, 1, 2} {
			body := `{"version":"0","id":"ev-` + strconv.Itoa(i) + `","detail-type":"OrderPaid","source":"shop","account":"111122223333",` +
				`"time":"` + time.Now().UTC().Format(time.RFC3339) + `","region":"eu-west-1","resources":[],"detail":` + order(amount) + `}`
			bodies = append(bodies, order(amount), body)
			sqsHandle(t, h.Handle, sqsMessage(fmt.Sprint("m-", i), body))
		}
		return bodies, []string{email}
	}},
	{name: "S3", mismatch: true, run: func(t *testing.T, w *world) ([]string, []string) {
		h := s3event.New(w.guard, s3event.ObjectKey, func(context.Context, s3event.Object, idempotency.Reservation) (string, error) { return "ok", nil },
			sqsbatch.Config{Batch: handler.Batch{Consumer: "uploads", Logger: w.logger(), Metrics: w.metricsOut()}})
		var bodies []string
		for i, size := range []int{1024, 1024, 2048} {
			body := `{"Records":[{"eventVersion":"2.1","eventSource":"aws:s3","eventTime":"` + time.Now().UTC().Format("2006-01-02T15:04:05.000Z") + `","eventName":"ObjectCreated:Put",` +
				`"s3":{"bucket":{"name":"invoices"},"object":{"key":"` + strings.ReplaceAll(email, "@", "%40") + `/bill.pdf","size":` + strconv.Itoa(size) + `,"eTag":"d41d8cd98f00b204e9800998ecf8427e","sequencer":"0055AED6DCD90281E5"}}}]}`
			bodies = append(bodies, body)
			sqsHandle(t, h.Handle, sqsMessage(fmt.Sprint("m-", i), body))
		}
		return bodies, []string{email, "invoices/" + email + "/bill.pdf@0055AED6DCD90281E5"}
	}},
	{name: "Kinesis", mismatch: true, run: func(t *testing.T, w *world) ([]string, []string) {
		h := kinesis.New(w.guard, func(o orderMsg) (string, error) { return o.OrderID, nil },
			func(context.Context, orderMsg, idempotency.Reservation) (string, error) { return "ok", nil },
			handler.Batch{Consumer: "ledger", Logger: w.logger(), Metrics: w.metricsOut()})
		var data []string
		for i, amount := range []int{1, 1, 2} {
			data = append(data, order(amount))
			rec := events.KinesisEventRecord{EventID: "shard-1:" + strconv.Itoa(i), Kinesis: events.KinesisRecord{
				Data: []byte(order(amount)), PartitionKey: "p", SequenceNumber: strconv.Itoa(100 + i),
				ApproximateArrivalTimestamp: events.SecondsEpochTime{Time: time.Now()}}}
			if _, err := h.Handle(context.Background(), events.KinesisEvent{Records: []events.KinesisEventRecord{rec}}); err != nil {
				t.Fatal(err)
			}
		}
		return data, []string{email}
	}},
	{name: "DynamoDB Streams", mismatch: true, run: func(t *testing.T, w *world) ([]string, []string) {
		h, err := dynamodbstream.New(w.guard, func(c dynamodbstream.Change[orderMsg]) (string, error) { return c.Keys.OrderID, nil },
			func(context.Context, dynamodbstream.Change[orderMsg], idempotency.Reservation) (string, error) {
				return "ok", nil
			},
			dynamodbstream.Config{Removes: contract.RemoveRun, Batch: handler.Batch{Consumer: "notify", Logger: w.logger(), Metrics: w.metricsOut()}})
		if err != nil {
			t.Fatal(err)
		}
		var docs []string
		for i, amount := range []int{1, 1, 2} {
			keys := map[string]events.DynamoDBAttributeValue{"orderId": events.NewStringAttribute(email)}
			img := map[string]events.DynamoDBAttributeValue{"orderId": events.NewStringAttribute(email), "amount": events.NewNumberAttribute(strconv.Itoa(amount))}
			// the document the adapter hashes, as written and canonical
			docs = append(docs, `{"event":"INSERT","keys":{"orderId":"`+email+`"},"new":{"amount":`+strconv.Itoa(amount)+`,"orderId":"`+email+`"}}`)
			rec := events.DynamoDBEventRecord{EventID: "ev-" + strconv.Itoa(i), EventName: "INSERT", Change: events.DynamoDBStreamRecord{
				SequenceNumber: strconv.Itoa(100 + i), Keys: keys, NewImage: img, StreamViewType: "NEW_IMAGE",
				ApproximateCreationDateTime: events.SecondsEpochTime{Time: time.Now()}}}
			if _, err := h.Handle(context.Background(), events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{rec}}); err != nil {
				t.Fatal(err)
			}
		}
		return docs, []string{email}
	}},
	{name: "HTTP (Idempotency-Key)", mismatch: true, run: func(t *testing.T, w *world) ([]string, []string) {
		h := httpkey.New(w.guard, okHandler, httpkey.Config{Name: "payments", Logger: w.logger(), Metrics: w.metricsOut()})
		var bodies []string
		for _, amount := range []int{1, 1, 2} {
			bodies = append(bodies, order(amount))
			serve(t, h, "POST", "/payments", order(amount), "Idempotency-Key", `"`+email+`"`)
		}
		return append(bodies, fingerprints("POST", "/payments", bodies)...), []string{email}
	}},
	{name: "HTTP (key in the path)", mismatch: true, run: func(t *testing.T, w *world) ([]string, []string) {
		h := httpkey.New(w.guard, okHandler, httpkey.Config{Name: "payments", Logger: w.logger(), Metrics: w.metricsOut(),
			Key: func(r *http.Request, _ []byte) (string, error) {
				return strings.TrimPrefix(r.URL.Path, "/payments/"), nil
			}})
		var bodies []string
		for _, amount := range []int{1, 1, 2} {
			body := `{"amount":` + strconv.Itoa(amount) + `}`
			bodies = append(bodies, body)
			serve(t, h, "PUT", "/payments/"+email, body)
		}
		return append(bodies, fingerprints("PUT", "/payments/"+email, bodies)...), []string{email}
	}},
	{name: "webhook (Stripe)", run: func(t *testing.T, w *world) ([]string, []string) {
		wsecret := "whsec_test"
		h := httpkey.New(w.guard, okHandler, httpkey.Config{Name: "stripe", Verifier: webhook.Stripe{Secrets: [][]byte{[]byte(wsecret)}}, Logger: w.logger(), Metrics: w.metricsOut()})
		var bodies []string
		for _, amount := range []int{1, 1, 2} { // a retry of one event: the same id, maybe another body
			body := `{"id":"evt_` + email + `","object":"event","type":"charge.succeeded","data":{"object":{"amount":` + strconv.Itoa(amount) + `}}}`
			bodies = append(bodies, body)
			ts := time.Now().Unix()
			mac := hmac.New(sha256.New, []byte(wsecret))
			fmt.Fprintf(mac, "%d.%s", ts, body)
			serve(t, h, "POST", "/", body, "Stripe-Signature", fmt.Sprintf("t=%d,v1=%s", ts, hex.EncodeToString(mac.Sum(nil))))
		}
		return bodies, []string{"evt_" + email}
	}},
	{name: "webhook (GitHub)", run: func(t *testing.T, w *world) ([]string, []string) {
		wsecret := []byte("gh-secret")
		h := httpkey.New(w.guard, okHandler, httpkey.Config{Name: "github", Verifier: webhook.GitHub{Secrets: [][]byte{wsecret}}, Logger: w.logger(), Metrics: w.metricsOut()})
		body := `{"action":"opened","sender":{"email":"` + email + `"}}`
		for range 2 {
			mac := hmac.New(sha256.New, wsecret)
			mac.Write([]byte(body))
			serve(t, h, "POST", "/", body, "X-Hub-Signature-256", "sha256="+hex.EncodeToString(mac.Sum(nil)), "X-GitHub-Delivery", "d-1")
		}
		sum := sha256.Sum256([]byte(body))
		return []string{body}, []string{email, "github:" + hex.EncodeToString(sum[:])}
	}},
	{name: "webhook (Shopify)", run: func(t *testing.T, w *world) ([]string, []string) {
		wsecret := []byte("shpss_secret")
		h := httpkey.New(w.guard, okHandler, httpkey.Config{Name: "shopify", Verifier: webhook.Shopify{Secrets: [][]byte{wsecret}}, Logger: w.logger(), Metrics: w.metricsOut()})
		body := `{"id":1,"email":"` + email + `"}`
		for range 2 {
			mac := hmac.New(sha256.New, wsecret)
			mac.Write([]byte(body))
			serve(t, h, "POST", "/", body, "X-Shopify-Hmac-Sha256", base64.StdEncoding.EncodeToString(mac.Sum(nil)), "X-Shopify-Event-Id", "evt-"+email)
		}
		return []string{body}, []string{"evt-" + email}
	}},
}

var okHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	w.WriteHeader(http.StatusCreated)
	_, _ = io.WriteString(w, `{"status":"charged"}`)
})

func serve(t *testing.T, h http.Handler, method, target, body string, header ...string) {
	t.Helper()
	r := httptest.NewRequest(method, target, strings.NewReader(body))
	for i := 0; i+1 < len(header); i += 2 {
		r.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	if rec.Code >= 500 {
		t.Fatalf("%s %s: %d %s", method, target, rec.Code, rec.Body)
	}
}

// fingerprints are the documents httpkey hashes for requests without
// HashHeaders (method, target and JSON body).
func fingerprints(method, target string, bodies []string) []string {
	var out []string
	for _, b := range bodies {
		out = append(out, `{"m":"`+method+`","t":"`+target+`","j":`+b+`}`)
	}
	return out
}

// forbidden are the strings no output of a keyed run may hold: the
// business keys, the checkable hashes of the payloads, and what the same
// run without a secret stored (its record keys and unkeyed payload hashes,
// whatever document the adapter hashed).
func forbidden(payloads, keys []string, shadow *world) []string {
	out := append([]string(nil), keys...)
	for _, p := range payloads {
		out = append(out, storetest.CheckableHashes([]byte(p))...)
	}
	for _, r := range shadow.store.Records() {
		out = append(out, r.Key, strings.TrimPrefix(r.PayloadHash, "v2:"))
	}
	return out
}

func newWorld(t *testing.T, keySecret []byte) *world {
	w := &world{store: storetest.NewMemoryStore()}
	var err error
	if w.guard, err = idempotency.NewGuard(w.store, idempotency.Config{Namespace: "orders", KeySecret: keySecret}); err != nil {
		t.Fatal(err)
	}
	return w
}

// TestHashedKeysOnEverySource: under a key secret, for every source, no log
// line, metric line or stored attribute holds the business key or a hash
// of the payload that anyone can compute (SHA-256 of the payload as
// written or canonical, of the document the adapter hashes, the unkeyed
// record key); the deliveries include a duplicate and, where the source can
// carry one, a payload mismatch, whose line names the keyed hashes only.
// The same run without a secret is the sabotage: its logs and records do
// hold the key or such a hash, so the checks can fail.
func TestHashedKeysOnEverySource(t *testing.T) {
	table := []string{"| source | log lines | metric lines | stored attributes |", "| --- | --- | --- | --- |"}
	for _, s := range sources {
		t.Run(s.name, func(t *testing.T) {
			shadow := newWorld(t, nil)
			s.run(t, shadow)
			w := newWorld(t, secret)
			payloads, keys := s.run(t, w)
			got := w.outcomes(t)
			want := []string{"processed", "duplicate"}
			if strings.HasPrefix(s.name, "queue") {
				want = append(want, "bad_input")
			}
			if s.mismatch {
				want = append(want, "mismatch")
			}
			for _, o := range want {
				if got[o] == 0 {
					t.Errorf("outcomes %v: no %s, which the run must exercise", got, o)
				}
			}
			bad := forbidden(payloads, keys, shadow)
			w.mu.Lock()
			columns := []struct{ name, text string }{{"log lines", w.logs.String()}, {"metric lines", w.metrics.String()}, {"stored attributes", w.stored()}}
			w.mu.Unlock()
			row := "| " + s.name + " |"
			for _, c := range columns {
				verdict := "clean"
				for _, b := range bad {
					if b != "" && strings.Contains(c.text, b) {
						verdict = "LEAKS"
						t.Errorf("the %s hold %q (a business key or a hash anyone can compute):\n%s", c.name, b, c.text)
					}
				}
				row += " " + verdict + " |"
			}
			table = append(table, row)
			if testing.Verbose() {
				for _, l := range strings.Split(w.logs.String(), "\n") {
					if strings.Contains(l, "mismatch") || strings.Contains(l, "bad_input") {
						t.Log(l)
					}
				}
			}
			if s.mismatch && !strings.Contains(w.logs.String(), "k2:") {
				t.Errorf("the mismatch line does not name the keyed hashes (k2:…):\n%s", w.logs.String())
			}
			// The sabotage: without a secret, the same run's logs and table
			// hold what the keyed run must not.
			shadow.mu.Lock()
			plain := shadow.logs.String() + shadow.stored()
			shadow.mu.Unlock()
			if !containsAny(plain, bad) {
				t.Errorf("the run without a secret holds no key or checkable hash either: the checks cannot fail")
			}
		})
	}
	t.Log("\n" + strings.Join(table, "\n"))
}

func containsAny(s string, subs []string) bool {
	for _, b := range subs {
		if b != "" && strings.Contains(s, b) {
			return true
		}
	}
	return false
}
