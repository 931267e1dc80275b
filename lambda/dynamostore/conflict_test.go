package dynamostore_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/idempotent-consumer/idempotent-consumer/internal/ddbfault"
	"github.com/idempotent-consumer/idempotent-consumer/internal/dynalite"
	"github.com/idempotent-consumer/idempotent-consumer/internal/limits"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/dynamostore"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/handler"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/internal/contracttest"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/outcome"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/sqsbatch"
)

// conflicting is an HTTP transport in front of a real server that answers
// the first n requests of one DynamoDB operation with the conflict, without
// forwarding them (DynamoDB rejected them: nothing is applied), and
// forwards every other request. n < 0 conflicts forever. before, if set,
// runs at the first conflict: the other Region's request.
type conflicting struct {
	op     string
	n      int
	before func()

	mu        sync.Mutex
	conflicts int // requests of op answered with the conflict
	passed    int // requests of op forwarded
}

func (c *conflicting) RoundTrip(req *http.Request) (*http.Response, error) {
	if !strings.HasSuffix(req.Header.Get("X-Amz-Target"), "."+c.op) {
		return http.DefaultTransport.RoundTrip(req)
	}
	c.mu.Lock()
	if c.n >= 0 && c.conflicts >= c.n {
		c.passed++
		c.mu.Unlock()
		return http.DefaultTransport.RoundTrip(req)
	}
	c.conflicts++
	first := c.conflicts == 1
	c.mu.Unlock()
	if first && c.before != nil {
		c.before()
	}
	if req.Body != nil {
		_, _ = io.Copy(io.Discard, req.Body)
		req.Body.Close()
	}
	return ddbfault.ReplicatedWriteConflict(req, ddbfault.ConflictMessage), nil
}

// TestReplicatedWriteConflictsAreRetriedWithinTheBudget: each write of the
// store, answered ReplicatedWriteConflictException a few times by a
// transport in front of a real server (dynalite), is sent again after a
// jittered wait and then succeeds: the fact is processed once, completed,
// or released. The SDK's retryer alone returns the first conflict (it
// does not retry it), which failed the record as a store error.
func TestReplicatedWriteConflictsAreRetriedWithinTheBudget(t *testing.T) {
	srv := dynalite.Start(t)
	for _, op := range []string{"PutItem", "UpdateItem", "DeleteItem"} {
		t.Run(op, func(t *testing.T) {
			waits := dynamostore.FakeConflictWaits(t)
			c := &conflicting{op: op, n: 3}
			s := dynamostore.New(conflictClient(srv, c), srv.NewTable(t))
			runs := chargeOnce(t, s, op)
			if runs != 1 || c.conflicts != 3 || c.passed != 1 {
				t.Fatalf("effect ran %d times, %d conflicts, %d requests passed; want once, 3 and 1", runs, c.conflicts, c.passed)
			}
			checkWaits(t, *waits, 3)
		})
	}
}

// checkWaits checks that n waits were taken, each within its cap.
func checkWaits(t *testing.T, waits []time.Duration, n int) {
	t.Helper()
	if len(waits) != n {
		t.Fatalf("%d waits %v, want %d", len(waits), waits, n)
	}
	for i, w := range waits {
		if ceiling := min(limits.ConflictBackoffCap, limits.ConflictBackoffBase<<i); w < 0 || w > ceiling {
			t.Fatalf("wait %d is %s, want at most %s", i+1, w, ceiling)
		}
	}
}

// TestAConflictingReserveFindsTheOtherRegionsRecord: the reserve conflicts
// because the other Region is reserving the same fact; that Region
// processes it, and the retried reserve meets its COMPLETED record: a
// duplicate, with the other Region's result, never an error, and the
// effect ran once in all.
func TestAConflictingReserveFindsTheOtherRegionsRecord(t *testing.T) {
	srv := dynalite.Start(t)
	dynamostore.FakeConflictWaits(t)
	table := srv.NewTable(t)
	runs := 0
	effect := func(region string) idempotency.Effect {
		return func(context.Context, idempotency.Reservation) (string, error) {
			runs++
			return "receipt from " + region, nil
		}
	}
	payload := []byte(`{"orderId":"order-1"}`)
	other, err := idempotency.NewGuard(dynamostore.New(srv.Client(), table), idempotency.Config{Namespace: "charge"})
	if err != nil {
		t.Fatal(err)
	}
	var otherErr error
	c := &conflicting{op: "PutItem", n: 1, before: func() {
		_, otherErr = other.Do(context.Background(), "order-1", payload, effect("eu-west-1"))
	}}
	local, err := idempotency.NewGuard(dynamostore.New(conflictClient(srv, c), table), idempotency.Config{Namespace: "charge"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := local.Do(context.Background(), "order-1", payload, effect("eu-west-2"))
	if otherErr != nil || err != nil || res.Outcome != outcome.Duplicate || res.Value != "receipt from eu-west-1" || runs != 1 {
		t.Fatalf("other Region: %v; here: %+v, %v, effect ran %d times; want a duplicate with the other Region's result, once in all", otherErr, res, err, runs)
	}
}

// TestConflictsBeyondTheBudgetAreAStoreFailure: a write that conflicts on
// every attempt ends as a store error that says why, after at most
// limits.ConflictAttempts attempts, or sooner when the next wait would pass
// the write's deadline (the reserve's: the finishing budget before the
// lease); nothing is written and the effect never runs.
func TestConflictsBeyondTheBudgetAreAStoreFailure(t *testing.T) {
	srv := dynalite.Start(t)
	for _, tc := range []struct {
		name     string
		deadline time.Duration // of the invocation; 0: none
		attempts func(n int) bool
	}{
		{"attempts", 0, func(n int) bool { return n == limits.ConflictAttempts }},
		{"deadline", 2*time.Second + 300*time.Millisecond, func(n int) bool { return n >= 1 && n <= limits.ConflictAttempts }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			waits := dynamostore.FakeConflictWaits(t)
			c := &conflicting{op: "PutItem", n: -1}
			s := dynamostore.New(conflictClient(srv, c), srv.NewTable(t))
			g, err := idempotency.NewGuard(s, idempotency.Config{Namespace: "charge"})
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			if tc.deadline > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tc.deadline)
				defer cancel()
			}
			runs := 0
			_, err = g.Do(ctx, "order-1", []byte(`{"orderId":"order-1"}`), func(context.Context, idempotency.Reservation) (string, error) {
				runs++
				return "", nil
			})
			if !errors.Is(err, idempotency.ErrStore) || !errors.Is(err, dynamostore.ErrReplicatedConflict) || !strings.Contains(err.Error(), "another Region") {
				t.Fatalf("err %v; want a store error wrapping ErrReplicatedConflict, saying why", err)
			}
			if runs != 0 || !tc.attempts(c.conflicts) || c.passed != 0 {
				t.Fatalf("effect ran %d times, %d attempts, %d passed", runs, c.conflicts, c.passed)
			}
			var waited time.Duration
			for _, w := range *waits {
				waited += w
			}
			if tc.deadline > 0 && waited >= tc.deadline-2*time.Second {
				t.Fatalf("waited %s in all, past the reserve's budget of %s", waited, tc.deadline-2*time.Second)
			}
			if rec, _ := s.Get(context.Background(), "charge#order-1"); rec != nil {
				t.Fatalf("record %+v written", rec)
			}
			t.Log(err)
		})
	}
}

// conflictClient is a client of srv whose requests go through c.
func conflictClient(srv *dynalite.Server, c *conflicting) *dynamodb.Client {
	return dynamodb.New(srv.Client().Options(), func(o *dynamodb.Options) { o.HTTPClient = &http.Client{Transport: c} })
}

// TestAConflictBeyondTheBudgetIsLoggedWithWhy: a queue consumer whose
// store's reserve conflicts on every attempt fails the record, reported
// for SQS to deliver again, and its log line says why: another Region's
// request kept modifying the item.
func TestAConflictBeyondTheBudgetIsLoggedWithWhy(t *testing.T) {
	srv := dynalite.Start(t)
	dynamostore.FakeConflictWaits(t)
	c := &conflicting{op: "PutItem", n: -1}
	env := contracttest.Settings().Encode()
	store := dynamostore.New(conflictClient(srv, c), srv.NewTable(t))
	var logs strings.Builder
	h, err := sqsbatch.FromEnv(func(o struct{ OrderID string }) (string, error) { return o.OrderID, nil },
		func(context.Context, struct{ OrderID string }, idempotency.Reservation) (string, error) {
			return "", nil
		},
		contracttest.Getenv(env), handler.WithStore(store), handler.WithLogger(slog.New(slog.NewJSONHandler(&logs, nil))), handler.WithMetrics(io.Discard))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	resp, err := h.Handle(ctx, events.SQSEvent{Records: []events.SQSMessage{{MessageId: "m1", Body: `{"OrderID":"o-1"}`}}})
	if err != nil && !errors.Is(err, idempotency.ErrStore) {
		t.Fatal(err)
	}
	failed := err != nil || len(resp.BatchItemFailures) == 1 && resp.BatchItemFailures[0].ItemIdentifier == "m1"
	if !failed || !strings.Contains(logs.String(), dynamostore.ErrReplicatedConflict.Error()) || !strings.Contains(logs.String(), "8 attempts") ||
		!strings.Contains(logs.String(), `"message_id":"m1"`) {
		t.Fatalf("response %+v, err %v; want m1 failed, its line saying why:\n%s", resp, err, logs.String())
	}
	t.Log(logs.String())
}

// scripted is an HTTP transport in front of a real server that answers the
// requests of one DynamoDB operation by a script, one step per request:
// "lose" forwards the request (the server applies it) and answers 500 in
// place of the server's answer, "conflict" answers the conflict without
// forwarding, and any request past the script is forwarded.
type scripted struct {
	op     string
	script []string

	mu   sync.Mutex
	sent int
}

func (s *scripted) RoundTrip(req *http.Request) (*http.Response, error) {
	if !strings.HasSuffix(req.Header.Get("X-Amz-Target"), "."+s.op) {
		return http.DefaultTransport.RoundTrip(req)
	}
	s.mu.Lock()
	step := ""
	if s.sent < len(s.script) {
		step = s.script[s.sent]
	}
	s.sent++
	s.mu.Unlock()
	switch step {
	case "conflict":
		return (&conflicting{op: s.op, n: -1}).RoundTrip(req)
	case "lose":
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			return nil, err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return &http.Response{StatusCode: http.StatusInternalServerError, Status: "500 Internal Server Error",
			Header:  http.Header{"Content-Type": []string{"application/x-amz-json-1.0"}},
			Body:    io.NopCloser(strings.NewReader(`{"__type":"com.amazonaws.dynamodb.v20120810#InternalServerError","message":"injected: the request was applied"}`)),
			Request: req}, nil
	}
	return http.DefaultTransport.RoundTrip(req)
}

// TestAConflictAfterAnAppliedWriteIsTheWritesOwn: the seam's lesson with
// a conflict in it. The first request of a write is applied but its answer
// lost; the SDK sends it again and that attempt meets a conflict (the SDK
// returns it); the store sends it once more, and that attempt meets the
// first one's effect: its own reservation (the effect runs once), its own
// completed record, or no record after its own release. None of them is an
// error, nor a lost lease.
func TestAConflictAfterAnAppliedWriteIsTheWritesOwn(t *testing.T) {
	srv := dynalite.Start(t)
	for _, op := range []string{"PutItem", "UpdateItem", "DeleteItem"} {
		t.Run(op, func(t *testing.T) {
			dynamostore.FakeConflictWaits(t)
			s := &scripted{op: op, script: []string{"lose", "conflict"}}
			client := dynamodb.New(srv.Client().Options(), func(o *dynamodb.Options) { o.HTTPClient = &http.Client{Transport: s} })
			store := dynamostore.New(client, srv.NewTable(t))
			runs := chargeOnce(t, store, op)
			if runs != 1 || s.sent != 3 {
				t.Fatalf("effect ran %d times, %d requests of %s; want once, and 3 (lost, conflict, the store's retry)", runs, s.sent, op)
			}
		})
	}
}

// chargeOnce runs order-1's effect once under a guard on store, the write
// op being the one the test's transport disturbs: the effect fails for a
// DeleteItem (so that the guard releases the reservation) and succeeds
// otherwise. It checks where the fact ends (released with the effect's
// error alone, or processed and COMPLETED) and returns how many times the
// effect ran.
func chargeOnce(t *testing.T, store *dynamostore.Store, op string) int {
	t.Helper()
	g, err := idempotency.NewGuard(store, idempotency.Config{Namespace: "charge"})
	if err != nil {
		t.Fatal(err)
	}
	boom := errors.New("payment declined")
	runs := 0
	res, err := g.Do(context.Background(), "order-1", []byte(`{"orderId":"order-1"}`), func(context.Context, idempotency.Reservation) (string, error) {
		runs++
		if op == "DeleteItem" {
			return "", boom
		}
		return "receipt", nil
	})
	rec, gerr := store.Get(context.Background(), "charge#order-1")
	if gerr != nil {
		t.Fatal(gerr)
	}
	switch op {
	case "DeleteItem":
		if !errors.Is(err, boom) || errors.Is(err, idempotency.ErrLeaseLost) || errors.Is(err, idempotency.ErrStore) || rec != nil {
			t.Fatalf("err %v, record %+v; want the effect's error alone and the record released", err, rec)
		}
	default:
		if err != nil || res.Outcome != outcome.Processed || rec == nil || rec.Status != idempotency.StatusCompleted {
			t.Fatalf("%+v, %v, record %+v; want processed and COMPLETED", res, err, rec)
		}
	}
	return runs
}
