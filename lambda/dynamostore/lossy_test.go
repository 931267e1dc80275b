package dynamostore_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/idempotent-consumer/idempotent-consumer/internal/dynalite"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/dynamostore"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/outcome"
)

// lossy is an HTTP transport that forwards every request to the server and,
// for the first request of one DynamoDB operation, drops the server's
// answer and fails instead (a 500, a connection reset, or the answer's body
// altered under its X-Amz-Crc32 checksum): the server applied the request,
// the caller never reads its answer, and the SDK's retryer sends it again.
type lossy struct {
	op    string // "PutItem", "UpdateItem", "DeleteItem"
	fault string // "500", "reset" or "crc"

	mu      sync.Mutex
	sent    int // requests of op forwarded to the server
	dropped int // answers of op dropped
}

func (l *lossy) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil || !strings.HasSuffix(req.Header.Get("X-Amz-Target"), "."+l.op) {
		return resp, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sent++
	if l.dropped > 0 {
		return resp, nil
	}
	l.dropped++
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	switch l.fault {
	case "crc":
		if resp.Header.Get("X-Amz-Crc32") == "" {
			return nil, errors.New("lossy: the server sent no X-Amz-Crc32 to corrupt under")
		}
		// Valid JSON, a byte longer: only the checksum tells it from the
		// server's answer.
		resp.Body = io.NopCloser(strings.NewReader(string(body) + " "))
		resp.ContentLength = int64(len(body) + 1)
		return resp, nil
	case "reset":
		return nil, &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}
	}
	return &http.Response{
		StatusCode: http.StatusInternalServerError,
		Status:     "500 Internal Server Error",
		Header:     http.Header{"Content-Type": []string{"application/x-amz-json-1.0"}},
		Body:       io.NopCloser(strings.NewReader(`{"__type":"com.amazonaws.dynamodb.v20120810#InternalServerError","message":"injected: the request was applied"}`)),
		Request:    req,
	}, nil
}

// TestLostResponsesAreRetriedSafely: a write that the server applied but
// whose answer was lost is sent again by the SDK's own retryer (the default
// one, through a real client and a real server); the retry must be
// recognised as this reservation's own write. A retried reservation runs the
// effect (it used to answer "in progress elsewhere" and wait out its own
// lease); a retried release is a release (it used to be a lost lease); a
// retried complete completes. An answer whose body does not match its
// X-Amz-Crc32 is retried too (service/dynamodb v1.74.1 on: before, the SDK
// returned the corrupted output).
func TestLostResponsesAreRetriedSafely(t *testing.T) {
	srv := dynalite.Start(t)
	for _, fault := range []string{"500", "reset", "crc"} {
		for _, op := range []string{"PutItem", "UpdateItem", "DeleteItem"} {
			t.Run(op+"/"+fault, func(t *testing.T) {
				l := &lossy{op: op, fault: fault}
				client := dynamodb.New(srv.Client().Options(), func(o *dynamodb.Options) { o.HTTPClient = &http.Client{Transport: l} })
				s := dynamostore.New(client, srv.NewTable(t))
				g, err := idempotency.NewGuard(s, idempotency.Config{Namespace: "charge"})
				if err != nil {
					t.Fatal(err)
				}
				ctx := context.Background()
				runs := 0
				boom := errors.New("payment declined")
				res, err := g.Do(ctx, "order-1", []byte(`{"orderId":"order-1"}`), func(context.Context, idempotency.Reservation) (string, error) {
					runs++
					if op == "DeleteItem" {
						return "", boom
					}
					return "receipt", nil
				})
				rec, gerr := s.Get(ctx, "charge#order-1")
				if gerr != nil {
					t.Fatal(gerr)
				}
				switch op {
				case "DeleteItem":
					if !errors.Is(err, boom) || errors.Is(err, idempotency.ErrLeaseLost) || rec != nil {
						t.Fatalf("err %v, record %+v; want the effect's error alone and the record released", err, rec)
					}
				default:
					if err != nil || res.Outcome != outcome.Processed || runs != 1 || rec == nil || rec.Status != idempotency.StatusCompleted {
						t.Fatalf("%+v, %v, effect ran %d times, record %+v; want processed once and COMPLETED", res, err, runs, rec)
					}
				}
				if l.dropped != 1 || l.sent != 2 {
					t.Fatalf("%s: %d answers dropped, %d requests sent; want the first dropped and one retry by the SDK", op, l.dropped, l.sent)
				}
			})
		}
	}
}
