package orderstest

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/handler"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency/storetest"
)

// API is a fake external API with no idempotency of its own: every POST is
// an effect, counted by its Idempotency-Key, so that only the consumer's
// guard keeps effects single.
type API struct {
	*httptest.Server
	mu    sync.Mutex
	byKey map[string]int
}

// NewAPI starts an API; t's cleanup stops it.
func NewAPI(t *testing.T) *API {
	a := &API{byKey: map[string]int{}}
	a.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		a.byKey[r.Header.Get("Idempotency-Key")]++
		n := len(a.byKey)
		a.mu.Unlock()
		_ = json.NewEncoder(w).Encode(map[string]string{"id": fmt.Sprint(n)})
	}))
	t.Cleanup(a.Close)
	return a
}

// Effects are the effects made, by idempotency key.
func (a *API) Effects() map[string]int {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := map[string]int{}
	for k, v := range a.byKey {
		out[k] = v
	}
	return out
}

// SentText is when an event was sent, as events carry it (RFC 3339 with
// milliseconds, UTC): a minute before the clock of the handlers of Options
// (time.Now, which `make test-dates` moves), so that a test passes on any
// date.
func SentText() string {
	return time.Now().Add(-time.Minute).UTC().Format("2006-01-02T15:04:05.000Z")
}

// Options are a handler's options for a consumer of delivery on an
// in-memory store, with discarded logs and metrics.
func Options(delivery contract.Delivery) []handler.Option {
	settings := contract.Defaults(30 * time.Second)
	settings.Table, settings.Namespace, settings.Consumer, settings.Delivery = "example", "example", "example", delivery
	env := settings.Encode()
	return []handler.Option{handler.WithStore(storetest.NewMemoryStore()), handler.WithGetenv(func(k string) string { return env[k] }),
		handler.WithLogger(slog.New(slog.DiscardHandler)), handler.WithMetrics(io.Discard)}
}
