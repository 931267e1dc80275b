package e2e

import (
	"maps"
	"testing"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/outcome"
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

// wantUnits are the capacity units of one batch of each case, computed by
// the store (the server reports none, as DynamoDB reports none for a failed
// condition): every item is under 1 KB, so a write is one unit, a
// transaction's two writes (the record and the effect's put) four.
var wantUnits = map[string]map[string]float64{
	"new":                  {"WriteUnits": 2 * batchSize, "ProcessedWriteUnits": 2 * batchSize, "ReadUnits": 0},
	"duplicate":            {"WriteUnits": batchSize, "DuplicateWriteUnits": batchSize, "ReadUnits": 0},
	"cached-duplicate":     {"WriteUnits": 0, "ReadUnits": 0},
	"transactional":        {"WriteUnits": 4 * batchSize, "ProcessedWriteUnits": 4 * batchSize},
	"effect-failure":       {"WriteUnits": 2 * batchSize, "ProcessedWriteUnits": 0},
	"same-batch-duplicate": {"WriteUnits": batchSize, "ProcessedWriteUnits": batchSize, "DuplicateWriteUnits": 0},
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
					if err := c.batch(sc.keys(0), outcome.Processed); err != nil {
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
			line, err := c.metrics.lastLine()
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]float64{}
			for name := range wantUnits[sc.name] {
				got[name], _ = line[name].(float64)
			}
			if !maps.Equal(got, wantUnits[sc.name]) {
				t.Errorf("capacity of a batch %v, want %v", got, wantUnits[sc.name])
			}
			t.Logf("per record: %.1f WCU, %.1f RCU", got["WriteUnits"]/batchSize, got["ReadUnits"]/batchSize)
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
