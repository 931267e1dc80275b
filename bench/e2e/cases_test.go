package e2e

import (
	"maps"
	"testing"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/sqsbatch"
)

// wantRequests are the requests one batch of each case makes, by operation,
// against a server that returns the old item of a failed condition (as
// DynamoDB does, and cmd/ddbserver too).
var wantRequests = map[string]map[string]int64{
	"new":                  {"PutItem": batchSize, "UpdateItem": batchSize},
	"duplicate":            {"PutItem": batchSize},
	"cached-duplicate":     {},
	"transactional":        {"TransactWriteItems": batchSize},
	"effect-failure":       {"PutItem": batchSize, "DeleteItem": batchSize},
	"same-batch-duplicate": {"PutItem": batchSize / 2, "UpdateItem": batchSize / 2},
}

// TestCases checks that each case of the benchmark ends its records as it
// says and makes the requests it should, and that the floor makes the same
// requests: the two columns of the table measure the same work.
func TestCases(t *testing.T) {
	f, err := newFloor()
	if err != nil {
		t.Fatal(err)
	}
	for _, sc := range scenarios() {
		t.Run(sc.name, func(t *testing.T) {
			c, _, err := newConsumer(sc)
			if err != nil {
				t.Fatal(err)
			}
			if sc.prepare {
				for range 2 {
					if err := c.batch(sc.keys(0), sqsbatch.Processed); err != nil {
						t.Fatal(err)
					}
				}
			}
			w0, _ := srv.stats()
			if err := c.batch(sc.keys(1), sc.want); err != nil {
				t.Fatal(err)
			}
			w1, _ := srv.stats()
			if got := w1.minus(w0).Targets; !maps.Equal(got, wantRequests[sc.name]) {
				t.Errorf("handler: requests %v, want %v", got, wantRequests[sc.name])
			}
			if sc.cache > 0 {
				return
			}
			fc, err := f.consumer(sc)
			if err != nil {
				t.Fatal(err)
			}
			keys := sc.keys(2)
			if sc.prepare {
				if err := fc.batch(keys, false); err != nil {
					t.Fatal(err)
				}
			}
			w0, _ = srv.stats()
			if err := fc.batch(keys, sc.prepare); err != nil {
				t.Fatal(err)
			}
			w1, _ = srv.stats()
			if got := w1.minus(w0).Targets; !maps.Equal(got, wantRequests[sc.name]) {
				t.Errorf("floor: requests %v, want %v", got, wantRequests[sc.name])
			}
		})
	}
}
