// Package e2e measures what one record costs end to end: the batch handler
// built as a deployed consumer builds it (sqsbatch.FromEnv: the AWS SDK's
// DynamoDB client from the default configuration, the DynamoDB store, the
// guard, the adapter, the default JSON logger), against a DynamoDB-compatible
// server in another process (cmd/ddbserver: kumo behind TLS), so that the
// server's CPU is not counted. Per record it reports CPU time of this
// process (getrusage: user + system, every goroutine, the GC), heap
// allocations, requests and bytes on the wire, and log bytes; beside it, the
// floor: the same requests made by a minimal signed HTTP client (floor.go).
//
// Run with `make bench`; medians with benchstat. Nothing here is a timed
// assertion: TestCases only checks that each case does what it says.
package e2e

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/handler"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/outcome"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/sqsbatch"
)

// batchSize is the records per batch: the construct's default.
const batchSize = 10

var (
	srv    *server
	logs   *stderrCounter
	admin  *dynamodb.Client
	keySeq atomic.Int64
)

func TestMain(m *testing.M) {
	if spec := os.Getenv(warmChildVar); spec != "" {
		os.Exit(warmChild(spec)) // a warm run's process (warm_test.go)
	}
	dir, err := os.MkdirTemp("", "e2e")
	if err != nil {
		log.Fatal(err)
	}
	srv, err = startServer(dir)
	if err != nil {
		log.Fatal(err)
	}
	// The handler's default AWS configuration reads these, as on Lambda
	// (where the endpoint is the regional one and the credentials the role's).
	for k, v := range map[string]string{
		"AWS_ENDPOINT_URL_DYNAMODB":   srv.endpoint,
		"AWS_REGION":                  "us-east-1",
		"AWS_ACCESS_KEY_ID":           "AKIDBENCHMARK",
		"AWS_SECRET_ACCESS_KEY":       "benchmark-secret",
		"AWS_SESSION_TOKEN":           "benchmark-session-token",
		"AWS_EC2_METADATA_DISABLED":   "true",
		"AWS_CONFIG_FILE":             dir + "/no-config",
		"AWS_SHARED_CREDENTIALS_FILE": dir + "/no-credentials",
		"AWS_CA_BUNDLE":               srv.certFile, // trust the server's self-signed certificate
	} {
		os.Setenv(k, v)
	}
	// What sqsbatch.Start does before it builds the handler, for a function
	// of 256 MB.
	os.Setenv("AWS_LAMBDA_FUNCTION_MEMORY_SIZE", "256")
	handler.TuneGC()
	if admin, err = adminClient(); err != nil {
		log.Fatal(err)
	}
	if logs, err = countStderr(); err != nil {
		log.Fatal(err)
	}
	code := m.Run()
	srv.stop()
	os.RemoveAll(dir)
	os.Exit(code)
}

// order is the business message: an order as the example consumers read it.
type order struct {
	OrderID    string `json:"orderId"`
	CustomerID string `json:"customerId"`
	Amount     int64  `json:"amount"`
	Currency   string `json:"currency"`
	Email      string `json:"email"`
	PlacedAt   string `json:"placedAt"`
}

func orderKey(o order) (string, error) {
	if o.Amount <= 0 {
		return "", fmt.Errorf("%w: amount %d", outcome.ErrBadInput, o.Amount)
	}
	return o.OrderID, nil
}

// published and sent are the messages' SNS Timestamp and SQS SentTimestamp:
// the run's start, so that no record is older than the business window.
var (
	published = time.Now().UTC().Format("2006-01-02T15:04:05.000Z")
	sent      = strconv.FormatInt(time.Now().UnixMilli(), 10)
)

// message is the SQS record of one order in an SNS envelope, as the
// construct's queue receives it by default.
func message(i int, orderID string) events.SQSMessage {
	msg := `{"orderId":"` + orderID + `","customerId":"c-42","amount":5000,"currency":"EUR","email":"a@example.com","placedAt":"2026-11-29T12:00:00Z"}`
	body := `{"Type":"Notification","MessageId":"6f1c2a9e-1b7e-5c4a-9a0e-` + fmt.Sprintf("%012d", i) + `","TopicArn":"arn:aws:sns:us-east-1:123456789012:orders",` +
		`"Message":` + strconv.Quote(msg) + `,"Timestamp":"` + published + `","SignatureVersion":"1",` +
		`"Signature":"` + strings.Repeat("A", 344) + `","SigningCertURL":"https://sns.us-east-1.amazonaws.com/SimpleNotificationService-0000000000000000000000.pem",` +
		`"UnsubscribeURL":"https://sns.us-east-1.amazonaws.com/?Action=Unsubscribe&SubscriptionArn=arn:aws:sns:us-east-1:123456789012:orders:00000000-0000-0000-0000-000000000000"}`
	return events.SQSMessage{
		MessageId:      fmt.Sprintf("8d0c4f1e-0000-4000-8000-%012d", i),
		Body:           body,
		Attributes:     map[string]string{"ApproximateReceiveCount": "1", "SentTimestamp": sent},
		EventSourceARN: "arn:aws:sqs:us-east-1:123456789012:ChargeOrder",
		EventSource:    "aws:sqs",
		AWSRegion:      "us-east-1",
	}
}

// scenario is one case of the table: how its batches are made and what its
// records must end as.
type scenario struct {
	name    string
	tx      bool // a transactional effect (one TransactWriteItems)
	fail    bool // the effect fails: reserve + release
	cache   int  // the completed-key cache
	want    outcome.Outcome
	keys    func(iter int) []string // the orders of one batch
	prepare bool                    // complete the keys once before measuring
}

func freshKeys(distinct int) func(int) []string {
	return func(int) []string {
		keys := make([]string, batchSize)
		for i := range keys {
			if i < distinct {
				keys[i] = "o-" + strconv.FormatInt(keySeq.Add(1), 10)
			} else {
				keys[i] = keys[i-distinct]
			}
		}
		return keys
	}
}

func fixedKeys() func(int) []string {
	base := keySeq.Add(batchSize)
	return func(int) []string {
		keys := make([]string, batchSize)
		for i := range keys {
			keys[i] = "o-" + strconv.FormatInt(base-int64(i), 10)
		}
		return keys
	}
}

func scenarios() []scenario {
	return []scenario{
		{name: "new", want: outcome.Processed, keys: freshKeys(batchSize)},
		{name: "duplicate", want: outcome.Duplicate, keys: fixedKeys(), prepare: true},
		{name: "cached-duplicate", cache: 1024, want: outcome.Duplicate, keys: fixedKeys(), prepare: true},
		{name: "transactional", tx: true, want: outcome.Processed, keys: freshKeys(batchSize)},
		{name: "effect-failure", fail: true, want: outcome.Failed, keys: freshKeys(batchSize)},
		{name: "same-batch-duplicate", want: outcome.Processed, keys: freshKeys(batchSize / 2)},
	}
}

var errPaymentAPI = errors.New("payment API: 502 Bad Gateway")

// consumer is a handler built the way a deployed consumer builds it.
type consumer struct {
	h       *sqsbatch.Handler[order]
	metrics *writeCounter
}

func newConsumer(sc scenario) (*consumer, string, error) {
	table, err := newTable(admin, "idempotency")
	if err != nil {
		return nil, "", err
	}
	s := contract.Defaults(30 * time.Second)
	s.BatchConcurrency = contract.DefaultConcurrency(batchSize)
	s.Table, s.Namespace, s.Consumer, s.CacheSize = table, "charge", "ChargeOrder", sc.cache
	env := s.Encode()
	getenv := func(k string) string {
		if v, ok := env[k]; ok {
			return v
		}
		return os.Getenv(k)
	}
	c := &consumer{metrics: &writeCounter{}}
	opts := []handler.Option{handler.WithGetenv(getenv), handler.WithMetrics(c.metrics)}
	if sc.tx {
		wallets, err := newTable(admin, "wallets")
		if err != nil {
			return nil, "", err
		}
		c.h, err = sqsbatch.FromEnvTx(orderKey, func(_ context.Context, o order, r idempotency.Reservation) (any, string, error) {
			return []types.TransactWriteItem{{Put: &types.Put{
				TableName: aws.String(wallets),
				Item: map[string]types.AttributeValue{
					"pk":     &types.AttributeValueMemberS{Value: "credit#" + r.Key},
					"amount": &types.AttributeValueMemberN{Value: strconv.FormatInt(o.Amount, 10)},
				},
			}}}, "credited", nil
		}, opts...)
		return c, table, err
	}
	c.h, err = sqsbatch.FromEnv(orderKey, func(_ context.Context, o order, r idempotency.Reservation) (string, error) {
		if sc.fail {
			return "", errPaymentAPI
		}
		return "ch_" + o.OrderID, nil
	}, opts...)
	return c, table, err
}

// batch runs one batch of keys and returns how many records ended as want.
func (c *consumer) batch(keys []string, want outcome.Outcome) error {
	ev := events.SQSEvent{Records: make([]events.SQSMessage, len(keys))}
	for i, k := range keys {
		ev.Records[i] = message(i, k)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := c.h.Handle(ctx, ev)
	if err != nil {
		return err
	}
	failed := len(resp.BatchItemFailures)
	if want.Succeeded() && failed != 0 || !want.Succeeded() && failed != len(keys) {
		return fmt.Errorf("%d of %d records failed; want every record %s", failed, len(keys), want)
	}
	return nil
}

func start() (time.Duration, uint64, wire, int64) {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	w, err := srv.stats()
	if err != nil {
		panic(err)
	}
	return cpuTime(), ms.Mallocs, w, logs.n.Load()
}

// report reports the per-record figures since start; metrics < 0 is the
// floor, which writes no logs or metrics.
func report(b *testing.B, records int, cpu0 time.Duration, m0 uint64, w0 wire, l0 int64, metrics int64) {
	cpu := cpuTime() - cpu0
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	w, err := srv.stats()
	if err != nil {
		b.Fatal(err)
	}
	time.Sleep(10 * time.Millisecond) // let the stderr reader catch up
	d := w.minus(w0)
	n := float64(records)
	b.ReportMetric(float64(cpu.Microseconds())/n, "cpu-µs/rec")
	b.ReportMetric(float64(ms.Mallocs-m0)/n, "allocs/rec")
	b.ReportMetric(float64(d.Requests)/n, "req/rec")
	b.ReportMetric(float64(d.Conns)/n, "conns/rec")
	b.ReportMetric(float64(d.BytesIn+d.BytesOut)/n, "wire-B/rec")
	if metrics >= 0 {
		b.ReportMetric(float64(logs.n.Load()-l0)/n, "log-B/rec")
		b.ReportMetric(float64(metrics)/n, "metric-B/rec")
	}
	b.ReportMetric(0, "ns/op") // wall time is not the measure here
}

// BenchmarkEndToEnd is the library's path, one batch of batchSize records
// per op; the per-record figures are the ones to read.
func BenchmarkEndToEnd(b *testing.B) {
	for _, sc := range scenarios() {
		b.Run("case="+sc.name, func(b *testing.B) {
			c, _, err := newConsumer(sc)
			if err != nil {
				b.Fatal(err)
			}
			if sc.prepare {
				for range 2 { // complete, then (with a cache) fill the cache
					if err := c.batch(sc.keys(0), outcome.Processed); err != nil {
						b.Fatal(err)
					}
				}
			}
			// One warm-up batch, so that connections are open as in a warm
			// execution environment.
			if err := c.batch(sc.keys(0), sc.want); err != nil {
				b.Fatal(err)
			}
			cpu0, m0, w0, l0 := start()
			met0 := c.metrics.n.Load()
			iter := 0
			for b.Loop() {
				iter++
				if err := c.batch(sc.keys(iter), sc.want); err != nil {
					b.Fatal(err)
				}
			}
			report(b, iter*batchSize, cpu0, m0, w0, l0, c.metrics.n.Load()-met0)
		})
	}
}

// BenchmarkFloor is the same requests made by a minimal signed HTTP client
// (floor.go): what the requests cost without the SDK, the guard and the
// adapter. The cached duplicate makes no request and has no floor.
func BenchmarkFloor(b *testing.B) {
	f, err := newFloor()
	if err != nil {
		b.Fatal(err)
	}
	for _, sc := range scenarios() {
		if sc.cache > 0 {
			continue
		}
		b.Run("case="+sc.name, func(b *testing.B) {
			fc, err := f.consumer(sc)
			if err != nil {
				b.Fatal(err)
			}
			if sc.prepare {
				if err := fc.batch(sc.keys(0), false); err != nil {
					b.Fatal(err)
				}
			}
			if err := fc.batch(sc.keys(0), sc.prepare); err != nil {
				b.Fatal(err)
			}
			cpu0, m0, w0, l0 := start()
			iter := 0
			for b.Loop() {
				iter++
				if err := fc.batch(sc.keys(iter), sc.prepare); err != nil {
					b.Fatal(err)
				}
			}
			report(b, iter*batchSize, cpu0, m0, w0, l0, -1)
		})
	}
}
