package chaos

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/idempotent-consumer/idempotent-consumer/internal/ddbfault"
	"github.com/idempotent-consumer/idempotent-consumer/internal/schema"
)

// conflictMessage is the conflict's message as the simulation injects it:
// "injected" marks a failure the simulation caused (consumer.go).
const conflictMessage = "injected: one or more items in this request are being modified by a request in another Region"

// conflictWrites are the DynamoDB operations dynamostore writes an
// idempotency record with, that MRSC answers with the conflict. (MRSC has
// no transactions: TransactWriteItems is not made in this mode.)
var conflictWrites = []string{"PutItem", "UpdateItem", "DeleteItem"}

// conflictTransport is the HTTP client of the DynamoDB client under
// dynamostore in the two-Region mode on MRSC: it answers a write of an item
// that the other Region wrote less than the race window before
// (sim.racing) with ReplicatedWriteConflictException, without sending it
// (DynamoDB rejected it: nothing is applied), and sends every other request
// to the server. The store retries the answer itself
// (dynamostore.retryConflicts) after waits of real time, which the
// transport then lets pass on the virtual clock: the next write of the
// invocation first parks its task for as long as the store waited since the
// answer, and does not reach the server if the invocation died meanwhile.
// Only the running task calls it (the store's call is a step of its task).
type conflictTransport struct {
	sim  *sim
	next dynamodb.HTTPClient
}

// conflictClient returns a client of ddb's server whose writes go through
// conflictTransport.
func (s *sim) conflictClient(ddb *dynamodb.Client) *dynamodb.Client {
	return dynamodb.New(ddb.Options(), func(o *dynamodb.Options) {
		o.HTTPClient = &conflictTransport{sim: s, next: o.HTTPClient}
	})
}

// Do implements dynamodb.HTTPClient.
func (c *conflictTransport) Do(req *http.Request) (*http.Response, error) {
	inv, _ := req.Context().Value(invKey{}).(*invocation)
	if inv == nil || inv.w.c.region == nil || !isWrite(req) {
		return c.next.Do(req)
	}
	s, r := c.sim, inv.w.c.region
	if !inv.conflictAt.IsZero() {
		waited := time.Since(inv.conflictAt)
		inv.conflictAt = time.Time{}
		if dead := s.wait(inv, waited); dead != nil {
			return nil, fmt.Errorf("chaos: the store's retry after a conflict, not sent: %w", dead)
		}
	}
	key, err := requestKey(req)
	if err != nil {
		return nil, err
	}
	if !s.racing(r, key) {
		return c.next.Do(req)
	}
	s.conflictAnswered(inv)
	inv.conflictAt = time.Now()
	return ddbfault.ReplicatedWriteConflict(req, conflictMessage), nil
}

// isWrite reports whether req is one of conflictWrites.
func isWrite(req *http.Request) bool {
	target := req.Header.Get("X-Amz-Target")
	for _, op := range conflictWrites {
		if strings.HasSuffix(target, "."+op) {
			return true
		}
	}
	return false
}

// requestKey returns the item a write request is for: the string value of
// the table's partition key (schema.Key) in its Key (UpdateItem,
// DeleteItem) or Item (PutItem), which dynamostore's table design sets to
// the record's key. It reads the body and puts it back for the server.
func requestKey(req *http.Request) (string, error) {
	body, err := io.ReadAll(req.Body)
	req.Body.Close()
	if err != nil {
		return "", fmt.Errorf("chaos: reading a %s request: %w", req.Header.Get("X-Amz-Target"), err)
	}
	req.Body = io.NopCloser(bytes.NewReader(body))
	var in struct {
		Key, Item map[string]struct{ S string }
	}
	if err := json.Unmarshal(body, &in); err != nil {
		return "", fmt.Errorf("chaos: decoding a %s request: %w", req.Header.Get("X-Amz-Target"), err)
	}
	attrs := in.Key
	if attrs == nil {
		attrs = in.Item
	}
	pk, ok := attrs[schema.Key]
	if !ok || pk.S == "" {
		return "", fmt.Errorf("chaos: a %s request without the string partition key %q", req.Header.Get("X-Amz-Target"), schema.Key)
	}
	return pk.S, nil
}
