package httpkey_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idempotent-consumer/idempotent-consumer/internal/fakeclock"
	"github.com/idempotent-consumer/idempotent-consumer/internal/limits"
	"github.com/idempotent-consumer/idempotent-consumer/internal/testkit/storespy"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/httpkey"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency/storetest"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/outcome"
)

// app is the wrapped handler of the tests: its answer depends on the path,
// and it counts its runs per path.
type app struct {
	mu   sync.Mutex
	runs map[string]int
	// block, when set, is waited on by /slow before it answers.
	block chan struct{}
	// entered is closed when /slow starts.
	entered chan struct{}
}

func newApp() *app { return &app{runs: map[string]int{}} }

func (a *app) count(path string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.runs[path]
}

func (a *app) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	a.runs[r.URL.Path]++
	n := a.runs[r.URL.Path]
	a.mu.Unlock()
	if _, ok := httpkey.ReservationFrom(r.Context()); !ok && !strings.HasPrefix(r.URL.Path, "/unkeyed") {
		http.Error(w, "no reservation in the context", http.StatusTeapot)
		return
	}
	switch r.URL.Path {
	case "/orders":
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Location", "/orders/1")
		w.Header().Set("X-Run", "not replayed")
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte(`{"order":1,"echo":` + string(body) + `}`))
	case "/missing":
		http.Error(w, "no such customer", http.StatusNotFound)
	case "/boom":
		if n == 1 {
			http.Error(w, "downstream unavailable", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("second run"))
	case "/unkeyed-panic":
		panic("the handler broke")
	case "/panic":
		if n == 1 {
			panic("the handler broke")
		}
		_, _ = w.Write([]byte("after the panic"))
	case "/big":
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write(bytes.Repeat([]byte("x"), limits.LargestResultBytes+1))
	case "/busy":
		if n == 1 {
			w.Header().Set("Retry-After", "7")
			http.Error(w, "slow down", http.StatusTooManyRequests)
			return
		}
		_, _ = w.Write([]byte("served after the 429"))
	case "/gzip":
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Encoding", "gzip")
		w.Header().Set("Content-Language", "es")
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte{0x1f, 0x8b, 0x08, 0x00, 0xff})
	case "/binary":
		w.Header().Set("Content-Type", "application/octet-stream")
		_, _ = w.Write([]byte{0xff, 0x00, 0xfe})
	case "/slow":
		close(a.entered)
		<-a.block
		_, _ = w.Write([]byte("slow done"))
	default:
		_, _ = w.Write([]byte("ok"))
	}
}

// eventHeader is a webhook verifier of the tests: every request is
// authentic, and its Event-Id header is the provider's event id.
type eventHeader struct{}

func (eventHeader) Verify(r *http.Request, _ []byte) (string, error) {
	return r.Header.Get("Event-Id"), nil
}

type fixture struct {
	t     *testing.T
	app   *app
	h     *httpkey.Handler
	store *storespy.Counter
	clock *fakeclock.Clock
	logs  *bytes.Buffer
}

func newFixture(t *testing.T, cfg httpkey.Config) *fixture {
	t.Helper()
	clock := fakeclock.New()
	store := storespy.NewCounter(storetest.NewMemoryStore())
	g, err := idempotency.NewGuard(store, idempotency.Config{Namespace: "shop", Now: clock.Now, LeaseMax: 30 * time.Second, Window: 48 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, app: newApp(), store: store, clock: clock, logs: &bytes.Buffer{}}
	cfg.Logger = outcome.NewLogger(&syncWriter{w: f.logs}, slog.LevelDebug)
	if cfg.Metrics == nil {
		cfg.Metrics = io.Discard
	}
	cfg.Now = clock.Now
	f.h = httpkey.New(g, f.app, cfg)
	return f
}

type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(b []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(b)
}

func (f *fixture) do(method, path, key, body string, hdr ...string) *http.Response {
	r := httptest.NewRequest(method, path, strings.NewReader(body))
	if key != "" {
		r.Header.Set("Idempotency-Key", key)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		r.Header.Add(hdr[i], hdr[i+1])
	}
	w := httptest.NewRecorder()
	f.h.ServeHTTP(w, r)
	return w.Result()
}

func readBody(t *testing.T, r *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(r.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestStatusTable pins one row of DESIGN.md's HTTP status table per case:
// the status, the headers that matter, how often the wrapped handler ran
// and whether anything reached the store.
func TestStatusTable(t *testing.T) {
	type step struct {
		method, path, key, body string
		hdr                     []string
		status                  int
		header                  map[string]string // "" means absent
		want                    string            // in the body, when set
	}
	for _, tc := range []struct {
		name     string
		cfg      httpkey.Config
		steps    []step
		runs     map[string]int
		requests int // store requests, -1: not checked
	}{
		{name: "400 missing key", steps: []step{{method: "POST", path: "/orders", body: `{}`, status: 400, header: map[string]string{"Content-Type": "application/problem+json"}, want: "missing"}},
			runs: map[string]int{"/orders": 0}, requests: 0},
		{name: "400 unclosed quoted key", steps: []step{{method: "POST", path: "/orders", key: `"abc`, body: `{}`, status: 400, want: "not closed"}},
			runs: map[string]int{"/orders": 0}, requests: 0},
		{name: "400 key with parameters", steps: []step{{method: "POST", path: "/orders", key: `"abc";v=1`, body: `{}`, status: 400}},
			runs: map[string]int{"/orders": 0}, requests: 0},
		{name: "400 key too long", cfg: httpkey.Config{MaxKeyBytes: 8}, steps: []step{{method: "POST", path: "/orders", key: "123456789", body: `{}`, status: 400, want: "longer than 8"}},
			runs: map[string]int{"/orders": 0}, requests: 0},
		{name: "400 key twice", steps: []step{{method: "POST", path: "/orders", body: `{}`, hdr: []string{"Idempotency-Key", "a", "Idempotency-Key", "b"}, status: 400, want: "2 times"}},
			runs: map[string]int{"/orders": 0}, requests: 0},
		{name: "413 body too large", cfg: httpkey.Config{MaxBodyBytes: 4}, steps: []step{{method: "POST", path: "/orders", key: "k", body: `{"a":1}`, status: 413}},
			runs: map[string]int{"/orders": 0}, requests: 0},
		{name: "2xx new, then replayed with the named headers and the replay mark", steps: []step{
			{method: "POST", path: "/orders", key: `"8e03978e-40d5-43e8-bc93-6894a57f9324"`, body: `{"sku":"a"}`, status: 201,
				header: map[string]string{"Idempotency-Window": "172800", "Idempotency-Replayed": "", "Location": "/orders/1", "X-Run": "not replayed"}, want: `{"order":1,"echo":{"sku":"a"}}`},
			{method: "POST", path: "/orders", key: `8e03978e-40d5-43e8-bc93-6894a57f9324`, body: `{ "sku" : "a" }`, status: 201,
				header: map[string]string{"Idempotency-Replayed": "true", "Idempotency-Window": "172800", "Content-Type": "application/json", "Location": "/orders/1", "X-Run": ""}, want: `{"order":1,"echo":{"sku":"a"}}`},
		}, runs: map[string]int{"/orders": 1}, requests: -1},
		{name: "named replay headers beside the representation headers", cfg: httpkey.Config{ReplayHeaders: []string{"x-run"}}, steps: []step{
			{method: "POST", path: "/orders", key: "k", body: `{}`, status: 201},
			{method: "POST", path: "/orders", key: "k", body: `{}`, status: 201, header: map[string]string{"Location": "/orders/1", "Content-Type": "application/json", "X-Run": "not replayed"}},
		}, runs: map[string]int{"/orders": 1}, requests: -1},
		{name: "a gzip body is replayed with its encoding and language", steps: []step{
			{method: "POST", path: "/gzip", key: "k", status: 201},
			{method: "POST", path: "/gzip", key: "k", status: 201, header: map[string]string{"Idempotency-Replayed": "true", "Content-Encoding": "gzip", "Content-Language": "es", "Content-Type": "application/json"}, want: "\x1f\x8b\x08\x00\xff"},
		}, runs: map[string]int{"/gzip": 1}, requests: -1},
		{name: "429 of the handler releases the key: its Retry-After passes, the retry runs", steps: []step{
			{method: "POST", path: "/busy", key: "k", body: `{}`, status: 429, header: map[string]string{"Retry-After": "7", "Idempotency-Replayed": ""}, want: "slow down"},
			{method: "POST", path: "/busy", key: "k", body: `{}`, status: 200, header: map[string]string{"Idempotency-Replayed": ""}, want: "served after the 429"},
			{method: "POST", path: "/busy", key: "k", body: `{}`, status: 200, header: map[string]string{"Idempotency-Replayed": "true"}, want: "served after the 429"},
		}, runs: map[string]int{"/busy": 2}, requests: -1},
		{name: "a webhook's duplicates are judged by the event id alone: other URL, other body, one fact", cfg: httpkey.Config{Verifier: eventHeader{}}, steps: []step{
			{method: "POST", path: "/orders", body: `{"v":1}`, hdr: []string{"Event-Id", "ev-1"}, status: 201},
			{method: "POST", path: "/orders?subscription=2", body: `{"v":2,"api":"2026-10"}`, hdr: []string{"Event-Id", "ev-1"}, status: 201, header: map[string]string{"Idempotency-Replayed": "true"}},
			{method: "POST", path: "/orders", body: `{"v":1}`, hdr: []string{"Event-Id", "ev-2"}, status: 201, header: map[string]string{"Idempotency-Replayed": ""}},
		}, runs: map[string]int{"/orders": 2}, requests: -1},
		{name: "422 same key, another body", steps: []step{
			{method: "POST", path: "/orders", key: "k", body: `{"sku":"a"}`, status: 201},
			{method: "POST", path: "/orders", key: "k", body: `{"sku":"b"}`, status: 422, want: "another request"},
		}, runs: map[string]int{"/orders": 1}, requests: -1},
		{name: "422 same key, another target", steps: []step{
			{method: "POST", path: "/orders", key: "k", body: `{}`, status: 201},
			{method: "POST", path: "/orders?x=1", key: "k", body: `{}`, status: 422},
			{method: "PUT", path: "/orders", key: "k", body: `{}`, status: 422},
		}, runs: map[string]int{"/orders": 1}, requests: -1},
		{name: "422 same key, another hashed header", cfg: httpkey.Config{HashHeaders: []string{"X-Currency"}}, steps: []step{
			{method: "POST", path: "/orders", key: "k", body: `{}`, hdr: []string{"X-Currency", "EUR"}, status: 201},
			{method: "POST", path: "/orders", key: "k", body: `{}`, hdr: []string{"X-Currency", "USD"}, status: 422},
			{method: "POST", path: "/orders", key: "k", body: `{}`, hdr: []string{"X-Currency", "EUR"}, status: 201, header: map[string]string{"Idempotency-Replayed": "true"}},
		}, runs: map[string]int{"/orders": 1}, requests: -1},
		{name: "4xx of the handler stored and replayed", steps: []step{
			{method: "POST", path: "/missing", key: "k", body: `{}`, status: 404, header: map[string]string{"Idempotency-Replayed": ""}},
			{method: "POST", path: "/missing", key: "k", body: `{}`, status: 404, header: map[string]string{"Idempotency-Replayed": "true"}, want: "no such customer"},
		}, runs: map[string]int{"/missing": 1}, requests: -1},
		{name: "5xx of the handler releases the key: the retry runs", steps: []step{
			{method: "POST", path: "/boom", key: "k", body: `{}`, status: 503, want: "downstream unavailable"},
			{method: "POST", path: "/boom", key: "k", body: `{}`, status: 200, header: map[string]string{"Idempotency-Replayed": ""}, want: "second run"},
			{method: "POST", path: "/boom", key: "k", body: `{}`, status: 200, header: map[string]string{"Idempotency-Replayed": "true"}, want: "second run"},
		}, runs: map[string]int{"/boom": 2}, requests: -1},
		{name: "500 for a panic, the key released", steps: []step{
			{method: "POST", path: "/panic", key: "k", body: `{}`, status: 500, header: map[string]string{"Content-Type": "application/problem+json"}},
			{method: "POST", path: "/panic", key: "k", body: `{}`, status: 200, want: "after the panic"},
		}, runs: map[string]int{"/panic": 2}, requests: -1},
		{name: "a response too large to store: the fact's, its duplicates say so", steps: []step{
			{method: "POST", path: "/big", key: "k", body: `{}`, status: 201, want: strings.Repeat("x", limits.LargestResultBytes+1)},
			{method: "POST", path: "/big", key: "k", body: `{}`, status: 201, header: map[string]string{"Idempotency-Replayed": "true", "Idempotency-Body-Dropped": strconv.Itoa(limits.LargestResultBytes + 1), "Content-Type": "application/problem+json"}, want: "Response not stored"},
		}, runs: map[string]int{"/big": 1}, requests: -1},
		{name: "a binary body is replayed byte for byte", steps: []step{
			{method: "POST", path: "/binary", key: "k", status: 200, want: "\xff\x00\xfe"},
			{method: "POST", path: "/binary", key: "k", status: 200, header: map[string]string{"Idempotency-Replayed": "true", "Content-Type": "application/octet-stream"}, want: "\xff\x00\xfe"},
		}, runs: map[string]int{"/binary": 1}, requests: -1},
		{name: "401 client attribute missing; two clients, one key, two facts", cfg: httpkey.Config{Client: httpkey.ClientHeader("X-Tenant")}, steps: []step{
			{method: "POST", path: "/orders", key: "k", body: `{}`, status: 401},
			{method: "POST", path: "/orders", key: "k", body: `{}`, hdr: []string{"X-Tenant", "a"}, status: 201},
			{method: "POST", path: "/orders", key: "k", body: `{}`, hdr: []string{"X-Tenant", "b"}, status: 201, header: map[string]string{"Idempotency-Replayed": ""}},
			{method: "POST", path: "/orders", key: "k", body: `{}`, hdr: []string{"X-Tenant", "a"}, status: 201, header: map[string]string{"Idempotency-Replayed": "true"}},
		}, runs: map[string]int{"/orders": 2}, requests: -1},
		{name: "an idempotent method without a key: served unkeyed", steps: []step{
			{method: "GET", path: "/unkeyed", status: 200},
			{method: "DELETE", path: "/unkeyed", status: 200},
			{method: "PATCH", path: "/unkeyed", body: `{}`, status: 400},
		}, runs: map[string]int{"/unkeyed": 2}, requests: 0},
		{name: "400 a key function's empty key", cfg: httpkey.Config{Key: func(*http.Request, []byte) (string, error) { return "", nil }}, steps: []step{
			{method: "POST", path: "/orders", body: `{}`, status: 400, want: "empty key"},
		}, runs: map[string]int{"/orders": 0}, requests: 0},
		{name: "500 for a panic served unkeyed", cfg: httpkey.Config{Optional: true}, steps: []step{
			{method: "POST", path: "/unkeyed-panic", body: `{}`, status: 500},
		}, runs: map[string]int{"/unkeyed-panic": 1}, requests: 0},
		{name: "optional key: served unkeyed", cfg: httpkey.Config{Optional: true}, steps: []step{
			{method: "POST", path: "/unkeyed", body: `{}`, status: 200},
			{method: "POST", path: "/unkeyed", body: `{}`, status: 200},
		}, runs: map[string]int{"/unkeyed": 2}, requests: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, tc.cfg)
			for i, s := range tc.steps {
				res := f.do(s.method, s.path, s.key, s.body, s.hdr...)
				got := readBody(t, res)
				if res.StatusCode != s.status {
					t.Fatalf("step %d: status %d, want %d (body %q)", i, res.StatusCode, s.status, got)
				}
				for name, want := range s.header {
					if v := res.Header.Get(name); v != want {
						t.Errorf("step %d: %s = %q, want %q", i, name, v, want)
					}
				}
				if s.want != "" && !strings.Contains(got, s.want) {
					t.Errorf("step %d: body %q, want %q in it", i, got, s.want)
				}
			}
			for path, want := range tc.runs {
				if got := f.app.count(path); got != want {
					t.Errorf("%s ran %d times, want %d", path, got, want)
				}
			}
			if tc.requests >= 0 && f.store.Requests() != tc.requests {
				t.Errorf("%d store requests, want %d", f.store.Requests(), tc.requests)
			}
		})
	}
}

// TryAgain: the answers that ask the client to try again release the key;
// the others are the handler's judgement of the request, stored.
func TestTryAgain(t *testing.T) {
	for status, want := range map[int]bool{200: false, 201: false, 400: false, 404: false, 409: false, 422: false,
		408: true, 425: true, 429: true, 500: true, 502: true, 503: true, 504: true} {
		if httpkey.TryAgain(status) != want {
			t.Errorf("TryAgain(%d) = %v", status, !want)
		}
	}
}

// Under the handler's bound (limits.LargestResultBytes), a 300 KB
// response is replayed whole, so the client
// whose first attempt timed out gets its body; one over the bound completes
// the fact, and its duplicate gets the status, Location and a body that
// says it was not kept, never an empty success.
func TestLargeResponsesAreReplayed(t *testing.T) {
	g, err := idempotency.NewGuard(storetest.NewMemoryStore(), idempotency.Config{Namespace: "shop", MaxResultBytes: limits.LargestResultBytes})
	if err != nil {
		t.Fatal(err)
	}
	runs := 0
	h := httpkey.New(g, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		runs++
		size := 300_000
		if r.URL.Path == "/huge" {
			size = 400_000
		}
		w.Header().Set("Location", "/reports/7")
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write(bytes.Repeat([]byte("r"), size))
	}), httpkey.Config{Logger: slog.New(slog.DiscardHandler), Metrics: io.Discard})
	send := func(path string) (*http.Response, string) {
		r := httptest.NewRequest("POST", path, strings.NewReader(`{}`))
		r.Header.Set("Idempotency-Key", "k"+path)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Result(), w.Body.String()
	}
	send("/large")
	res, body := send("/large")
	if res.StatusCode != 201 || res.Header.Get(httpkey.HeaderReplayed) != "true" || len(body) != 300_000 || res.Header.Get("Location") != "/reports/7" {
		t.Fatalf("replay of 300 KB: %d, %d bytes, %v", res.StatusCode, len(body), res.Header)
	}
	if _, first := send("/huge"); len(first) != 400_000 {
		t.Fatalf("the first response is the handler's: %d bytes", len(first))
	}
	res, body = send("/huge")
	if res.StatusCode != 201 || res.Header.Get(httpkey.HeaderDropped) != "400000" || res.Header.Get("Location") != "/reports/7" ||
		res.Header.Get("Content-Type") != "application/problem+json" || !strings.Contains(body, "was larger than the 350000 bytes kept") {
		t.Fatalf("replay of 400 KB: %d %v %q", res.StatusCode, res.Header, body)
	}
	if runs != 2 {
		t.Fatalf("runs %d, want 2", runs)
	}
}

// TestAPlainGuardKeepsTheHTTPBound: the bound of a stored response comes
// with the handler, not with how its guard was built: over a guard of
// idempotency.NewGuard's defaults (MaxResultBytes 4,096), a 64 KiB response
// is replayed whole, and one over limits.LargestResultBytes is replayed as
// its status and headers with Idempotency-Body-Dropped, the handler run
// once each.
func TestAPlainGuardKeepsTheHTTPBound(t *testing.T) {
	g, err := idempotency.NewGuard(storetest.NewMemoryStore(), idempotency.Config{Namespace: "shop"})
	if err != nil {
		t.Fatal(err)
	}
	sizes := map[string]int{"/report": 64 << 10, "/huge": limits.LargestResultBytes + 1}
	runs := map[string]int{}
	h := httpkey.New(g, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		runs[r.URL.Path]++
		w.Header().Set("Location", "/reports/7")
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write(bytes.Repeat([]byte("r"), sizes[r.URL.Path]))
	}), httpkey.Config{Logger: slog.New(slog.DiscardHandler), Metrics: io.Discard})
	send := func(path string) (*http.Response, string) {
		r := httptest.NewRequest("POST", path, strings.NewReader(`{}`))
		r.Header.Set("Idempotency-Key", "k"+path)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Result(), w.Body.String()
	}
	for path, size := range sizes {
		if res, body := send(path); res.StatusCode != 201 || len(body) != size {
			t.Fatalf("%s, first: %d, %d bytes", path, res.StatusCode, len(body))
		}
	}
	res, body := send("/report")
	if res.StatusCode != 201 || res.Header.Get(httpkey.HeaderReplayed) != "true" || res.Header.Get(httpkey.HeaderDropped) != "" || len(body) != 64<<10 {
		t.Fatalf("replay of 64 KiB: %d, %d bytes, %v", res.StatusCode, len(body), res.Header)
	}
	res, body = send("/huge")
	if res.StatusCode != 201 || res.Header.Get(httpkey.HeaderDropped) != strconv.Itoa(limits.LargestResultBytes+1) || res.Header.Get("Location") != "/reports/7" ||
		!strings.Contains(body, fmt.Sprintf("larger than the %d bytes kept", limits.LargestResultBytes)) {
		t.Fatalf("replay of a response over the bound: %d %v %q", res.StatusCode, res.Header, body)
	}
	if runs["/report"] != 1 || runs["/huge"] != 1 {
		t.Fatalf("runs %v, want one each", runs)
	}
}

// A request that meets a running one gets 409 with Retry-After at the end of
// the running request's lease, and nothing of it is stored: after the first
// completes, the same request is its replay.
func TestInProgressIs409WithTheLeaseEnd(t *testing.T) {
	f := newFixture(t, httpkey.Config{})
	f.app.block, f.app.entered = make(chan struct{}), make(chan struct{})
	first := make(chan *http.Response, 1)
	go func() { first <- f.do("POST", "/slow", "k", `{}`) }()
	<-f.app.entered
	f.clock.Advance(12*time.Second + 300*time.Millisecond) // the lease (30s) ends in 17.7s
	res := f.do("POST", "/slow", "k", `{}`)
	if res.StatusCode != http.StatusConflict || res.Header.Get("Retry-After") != "18" {
		t.Fatalf("status %d, Retry-After %q; want 409 and 18", res.StatusCode, res.Header.Get("Retry-After"))
	}
	if other := f.do("POST", "/slow", "k", `{"other":1}`); other.StatusCode != http.StatusUnprocessableEntity {
		t.Errorf("another payload under a running key: %d, want 422", other.StatusCode)
	}
	close(f.app.block)
	if res := <-first; res.StatusCode != 200 {
		t.Fatalf("first: %d", res.StatusCode)
	}
	res = f.do("POST", "/slow", "k", `{}`)
	if res.StatusCode != 200 || res.Header.Get(httpkey.HeaderReplayed) != "true" || readBody(t, res) != "slow done" {
		t.Fatalf("after completion: %d %v", res.StatusCode, res.Header)
	}
	if n := f.app.count("/slow"); n != 1 {
		t.Fatalf("ran %d times", n)
	}
}

// A store that fails before the handler runs is 503 with Retry-After: the
// request was not judged, and nothing ran.
func TestStoreFailureIs503(t *testing.T) {
	f := newFixture(t, httpkey.Config{})
	f.store.Fail(errors.New("throttled"))
	res := f.do("POST", "/orders", "k", `{}`)
	if res.StatusCode != http.StatusServiceUnavailable || res.Header.Get("Retry-After") != "1" {
		t.Fatalf("status %d, Retry-After %q", res.StatusCode, res.Header.Get("Retry-After"))
	}
	if n := f.app.count("/orders"); n != 0 {
		t.Fatalf("ran %d times", n)
	}
	if !strings.Contains(f.logs.String(), `"level":"ERROR"`) || !strings.Contains(f.logs.String(), "throttled") {
		t.Errorf("log: %s", f.logs)
	}
}

type refuse struct{}

func (refuse) Verify(*http.Request, []byte) (string, error) {
	return "", errors.New("signature: no v1 matches")
}

// A verifier's refusal is 401 before any store request, with a log line that
// says which check failed.
func TestVerifierRefusalIs401BeforeTheStore(t *testing.T) {
	var metrics bytes.Buffer
	f := newFixture(t, httpkey.Config{Verifier: refuse{}, Name: "hooks", Metrics: &metrics})
	res := f.do("POST", "/orders", "k", `{}`)
	if res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("status %d", res.StatusCode)
	}
	if f.store.Requests() != 0 || f.app.count("/orders") != 0 {
		t.Fatalf("store requests %d, runs %d", f.store.Requests(), f.app.count("/orders"))
	}
	var line map[string]any
	if err := json.Unmarshal(f.logs.Bytes(), &line); err != nil {
		t.Fatal(err)
	}
	if line["outcome"] != "unauthorized" || line["reason"] != "signature: no v1 matches" || line["level"] != "WARN" || line["endpoint"] != "hooks" {
		t.Errorf("log line %v", line)
	}
	var m map[string]any
	if err := json.Unmarshal(metrics.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	if _, other := m["Processed"]; m["Unauthorized"] != 1.0 || other || m[outcome.MetricDimension] != "hooks" || m["ServerErrors"] != nil {
		t.Errorf("metrics %v", m)
	}
}

// notAnEvent authenticates every request and finds no event in it.
type notAnEvent struct{}

func (notAnEvent) Verify(*http.Request, []byte) (string, error) {
	return "", fmt.Errorf("event id: the signed body is not an event: %w", httpkey.ErrNotAnEvent)
}

// TestAnAuthenticatedRequestWithoutAnEventIs400: a verifier's refusal that
// wraps ErrNotAnEvent (the signature verified, the request names no event)
// is 400 and bad input, not 401 and unauthorized, before any store request.
func TestAnAuthenticatedRequestWithoutAnEventIs400(t *testing.T) {
	var metrics bytes.Buffer
	f := newFixture(t, httpkey.Config{Verifier: notAnEvent{}, Name: "hooks", Metrics: &metrics})
	res := f.do("POST", "/orders", "k", `{}`)
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "is not an event") {
		t.Fatalf("status %d: %s", res.StatusCode, body)
	}
	if f.store.Requests() != 0 || f.app.count("/orders") != 0 {
		t.Fatalf("store requests %d, runs %d", f.store.Requests(), f.app.count("/orders"))
	}
	var line, m map[string]any
	if err := json.Unmarshal(f.logs.Bytes(), &line); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(metrics.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	if line["outcome"] != "bad_input" || line["level"] != "WARN" || m["BadInput"] != 1.0 || m["Unauthorized"] != nil {
		t.Errorf("log line %v, metrics %v", line, m)
	}
}

// TestConcurrentIdenticalRequests sends 64 identical requests at once
// through a real HTTP server: the handler runs once, and every other request
// gets 409 (while it runs) or the replay (after). The handler answers only
// once half of the others have had their 409, so that both kinds occur.
func TestConcurrentIdenticalRequests(t *testing.T) {
	const n = 64
	clock := fakeclock.New()
	g, err := idempotency.NewGuard(storetest.NewMemoryStore(), idempotency.Config{Namespace: "shop", Now: clock.Now, LeaseMax: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	var runs, answered atomic.Int32
	half := make(chan struct{})
	effect := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		runs.Add(1)
		<-half
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte("charged"))
	})
	h := httpkey.New(g, effect, httpkey.Config{Logger: slog.New(slog.DiscardHandler), Metrics: io.Discard, Now: clock.Now})
	srv := httptest.NewServer(h)
	defer srv.Close()
	client := srv.Client()
	client.Transport.(*http.Transport).MaxConnsPerHost = n

	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		counts = map[string]int{}
		once   sync.Once
	)
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest("POST", srv.URL+"/charge", strings.NewReader(`{"amount":50}`))
			req.Header.Set("Idempotency-Key", `"c-42"`)
			res, err := client.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			body, _ := io.ReadAll(res.Body)
			res.Body.Close()
			kind := "other"
			switch {
			case res.StatusCode == http.StatusConflict && res.Header.Get("Retry-After") != "":
				kind = "409"
				if answered.Add(1) == n/2 {
					once.Do(func() { close(half) })
				}
			case res.StatusCode == http.StatusCreated && res.Header.Get(httpkey.HeaderReplayed) == "true" && string(body) == "charged":
				kind = "replay"
			case res.StatusCode == http.StatusCreated && string(body) == "charged":
				kind = "first"
			}
			mu.Lock()
			counts[kind]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	t.Logf("%d concurrent identical requests: %d effect, %d first response, %d 409 Conflict, %d replays, %d other",
		n, runs.Load(), counts["first"], counts["409"], counts["replay"], counts["other"])
	if runs.Load() != 1 || counts["first"] != 1 || counts["other"] != 0 || counts["409"] < n/2 || counts["409"]+counts["replay"] != n-1 {
		t.Fatalf("runs %d, counts %v", runs.Load(), counts)
	}
}

// A duplicate whose record holds something this package did not write is
// a 500 that says so, never a second run.
func TestUnreadableStoredResponse(t *testing.T) {
	store := storetest.NewMemoryStore()
	g, _ := idempotency.NewGuard(store, idempotency.Config{Namespace: "shop"})
	_, err := g.Do(context.Background(), "k", mustFingerprint(), func(context.Context, idempotency.Reservation) (string, error) { return "not ours", nil })
	if err != nil {
		t.Fatal(err)
	}
	a := newApp()
	h := httpkey.New(g, a, httpkey.Config{Logger: slog.New(slog.DiscardHandler), Metrics: io.Discard})
	r := httptest.NewRequest("POST", "/x", nil)
	r.Header.Set("Idempotency-Key", "k")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != 500 || a.count("/x") != 0 {
		t.Fatalf("status %d, runs %d", w.Code, a.count("/x"))
	}
}

// mustFingerprint is the payload the adapter hashes for POST /x without a
// body (its encoding is the adapter's: pinned here so that a change is seen).
func mustFingerprint() []byte { return []byte(`{"m":"POST","t":"/x"}`) }

// The metrics line of a request holds its own counts: a 5xx counts its
// outcome and ServerErrors, a replay Duplicate alone, with the duration.
func TestMetricsLineIsTheRequests(t *testing.T) {
	var metrics bytes.Buffer
	f := newFixture(t, httpkey.Config{Metrics: &syncWriter{w: &metrics}})
	f.do("POST", "/boom", "k", `{}`) // 503, released
	f.do("POST", "/boom", "k", `{}`) // 200
	f.do("POST", "/boom", "k", `{}`) // replay
	var lines []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(metrics.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatal(err)
		}
		delete(m, "_aws")
		delete(m, "timestamp")
		delete(m, "RequestDuration")
		lines = append(lines, m)
	}
	want := []map[string]any{
		{"Consumer": "endpoint", "level": "INFO", "Failed": 1.0, "ServerErrors": 1.0},
		{"Consumer": "endpoint", "level": "INFO", "Processed": 1.0},
		{"Consumer": "endpoint", "level": "INFO", "Duplicate": 1.0},
	}
	if js, _ := json.Marshal(lines); string(js) != func() string { b, _ := json.Marshal(want); return string(b) }() {
		t.Fatalf("metrics lines %s, want %v", js, want)
	}
}
