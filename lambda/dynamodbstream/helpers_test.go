package dynamodbstream_test

import (
	"bytes"
	"encoding/json"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/internal/contracttest"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/dynamodbstream"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/handler"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/outcome"
)

// The entry points' tests' contract (contracttest).
var (
	settings = contracttest.Settings
	getenv   = contracttest.Getenv
)

func newGuard(t *testing.T, store idempotency.Store) *idempotency.Guard {
	t.Helper()
	g, err := idempotency.NewGuard(store, idempotency.Config{Namespace: "stream"})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func config(logs io.Writer) dynamodbstream.Config {
	return dynamodbstream.Config{Removes: contract.RemoveRun, Batch: handler.Batch{Logger: outcome.NewLogger(logs, slog.LevelDebug), Metrics: io.Discard}}
}

type logBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuf) Write(p []byte) (int, error) { l.mu.Lock(); defer l.mu.Unlock(); return l.b.Write(p) }

// outcomes returns the outcomes of the "record" lines, by sequence number.
func (l *logBuf) outcomes(t *testing.T) map[string]string {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	out := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(l.b.String()), "\n") {
		var v struct{ Msg, SequenceNumber, Outcome string }
		var raw map[string]any
		if err := json.Unmarshal([]byte(line), &raw); err != nil {
			t.Fatalf("not JSON: %q", line)
		}
		v.Msg, _ = raw["msg"].(string)
		v.SequenceNumber, _ = raw["sequence_number"].(string)
		v.Outcome, _ = raw["outcome"].(string)
		if v.Msg == "record" {
			out[v.SequenceNumber] = v.Outcome
		}
	}
	return out
}
