package chaos

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/httpkey"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency/storetest"
)

// HTTPConfig configures RunHTTP, the simulation of HTTP clients that retry
// against an idempotent endpoint (package httpkey) on the same scheduler:
// clients that send one request under an Idempotency-Key, several clients
// per key at once, each retrying on its timeout, on 409 (after Retry-After),
// on 5xx and on 503; a server whose invocations are killed at the function's
// deadline, whose store calls are slow, throttled, fail with 5xx or take
// effect while the caller sees an error, and whose handler's downstream
// answers 503 now and then (the key is released) and charges a payment
// provider that honours Reservation.Key.
type HTTPConfig struct {
	Seed int64
	// Keys is the number of idempotency keys; Clients the clients per key.
	Keys, Clients int
	// Sabotage "no-guard" serves the handler without the adapter: the
	// invariants must break.
	Sabotage string
	// Stall bounds the real time a step may take (a deadlock). Default: 1m.
	Stall time.Duration
}

// HTTPSummary is what a run of RunHTTP did and the invariants' verdict.
type HTTPSummary struct {
	Seed                                         int64
	Keys, Clients, Requests                      int
	Statuses                                     map[int]int
	Replays, ClientTimeouts, Killed, StoreFaults int
	HandlerRuns, Charges                         int
	Violations                                   []string
}

// OK reports whether every invariant held.
func (s *HTTPSummary) OK() bool { return len(s.Violations) == 0 }

// Report writes the summary.
func (s *HTTPSummary) Report(w io.Writer) {
	codes := make([]int, 0, len(s.Statuses))
	for c := range s.Statuses {
		codes = append(codes, c)
	}
	slices.Sort(codes)
	var parts []string
	for _, c := range codes {
		parts = append(parts, fmt.Sprintf("%d×%d", s.Statuses[c], c))
	}
	fmt.Fprintf(w, "http seed %d: %d keys × %d clients, %d requests (%s), %d replays, %d client timeouts, %d invocations killed at their deadline, %d store faults; the handler ran %d times for %d charges\n",
		s.Seed, s.Keys, s.Clients, s.Requests, strings.Join(parts, ", "), s.Replays, s.ClientTimeouts, s.Killed, s.StoreFaults, s.HandlerRuns, s.Charges)
	for _, v := range s.Violations {
		fmt.Fprintln(w, "  violation:", v)
	}
}

// Timing of the simulated endpoint, in virtual time.
const (
	httpFunctionTimeout = 5 * time.Second
	httpClientTimeout   = 3 * time.Second
	httpMaxAttempts     = 60
	httpPoll            = 10 * time.Millisecond
)

type httpSim struct {
	cfg      HTTPConfig
	sched    *scheduler
	clock    *clock
	rng      *rand.Rand
	sum      *HTTPSummary
	provider map[string]string // Reservation.Key → charge id
	charges  map[string]int    // business key → charges made
}

type httpInvocation struct {
	t        *task
	deadline time.Time
	dead     bool
}

type invocationKey struct{}

func (h *httpSim) chance(p float64) bool { return h.rng.Float64() < p }

func (h *httpSim) between(lo, hi time.Duration) time.Duration {
	return lo + time.Duration(h.rng.Int64N(int64(hi-lo)+1))
}

// requestStore is the store of a request-shaped mode (http, saga) under
// faults: every call takes virtual time (spend parks the calling
// invocation, and fails once it is dead: killed at its deadline, nothing
// more reaches the store), with latency spikes, throttling, 5xx, and writes
// that take effect while the caller sees an error; faults counts them.
type requestStore struct {
	inner  idempotency.Store
	rng    *rand.Rand
	faults *int
	spend  func(ctx context.Context, d time.Duration) error
}

var errHTTPDead = errors.New("the invocation was killed at its deadline")

func (st *requestStore) between(lo, hi time.Duration) time.Duration {
	return lo + time.Duration(st.rng.Int64N(int64(hi-lo)+1))
}

func (st *requestStore) call(ctx context.Context, apply func() error) error {
	d := st.between(time.Millisecond, 20*time.Millisecond)
	if st.rng.Float64() < 0.02 {
		d = st.between(time.Second, 3*time.Second) // a latency spike
		*st.faults++
	}
	if err := st.spend(ctx, d); err != nil {
		return err
	}
	switch x := st.rng.Float64(); {
	case x < 0.03:
		*st.faults++
		return errThrottled
	case x < 0.05:
		*st.faults++
		return errServer
	case x < 0.07:
		if err := apply(); err != nil {
			return err
		}
		*st.faults++
		return errAmbiguous
	}
	return apply()
}

func (st *requestStore) Reserve(ctx context.Context, rec idempotency.Record, now time.Time) error {
	return st.call(ctx, func() error { return st.inner.Reserve(ctx, rec, now) })
}

func (st *requestStore) Get(ctx context.Context, key string) (rec *idempotency.Record, err error) {
	err = st.call(ctx, func() error {
		var e error
		rec, e = st.inner.Get(ctx, key)
		return e
	})
	return rec, err
}

func (st *requestStore) Complete(ctx context.Context, rec idempotency.Record) error {
	return st.call(ctx, func() error { return st.inner.Complete(ctx, rec) })
}

func (st *requestStore) Release(ctx context.Context, key, owner string) error {
	return st.call(ctx, func() error { return st.inner.Release(ctx, key, owner) })
}

// spend parks the invocation of ctx for d; it fails once the invocation is
// past its deadline.
func (h *httpSim) spend(ctx context.Context, d time.Duration) error {
	inv := ctx.Value(invocationKey{}).(*httpInvocation)
	h.sched.park(inv.t, d)
	if inv.dead || h.clock.Now().After(inv.deadline) {
		inv.dead = true
		return errHTTPDead
	}
	return nil
}

// charge is the endpoint's handler: a downstream that answers 503 now and
// then (before charging), a payment provider that charges once per
// Reservation.Key (as a payment API honours its idempotency key), and a
// response that names the charge.
func (h *httpSim) charge(w http.ResponseWriter, r *http.Request) {
	inv := r.Context().Value(invocationKey{}).(*httpInvocation)
	h.sum.HandlerRuns++
	business := r.Header.Get("Idempotency-Key")
	res, ok := httpkey.ReservationFrom(r.Context())
	if !ok { // the sabotage: no guard, so no stable key downstream
		res.Key = fmt.Sprintf("run-%d", h.sum.HandlerRuns)
	}
	work := h.between(10*time.Millisecond, 2*time.Second)
	if h.chance(0.05) {
		work = h.between(4*time.Second, 8*time.Second) // may outlive the invocation
	}
	h.sched.park(inv.t, work/2)
	if h.chance(0.08) {
		http.Error(w, "the payment provider is unavailable", http.StatusServiceUnavailable)
		return
	}
	id, charged := h.provider[res.Key]
	if !charged {
		id = fmt.Sprintf("ch_%d", len(h.provider)+1)
		h.provider[res.Key] = id
		h.charges[business]++
	}
	h.sched.park(inv.t, work/2)
	if h.clock.Now().After(inv.deadline) {
		inv.dead = true // Lambda kills the invocation: no answer, nothing more reaches the store
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusCreated)
	fmt.Fprintf(w, `{"charge":%q}`, id)
}

// RunHTTP runs the HTTP simulation and checks its invariants: every client
// ends with a 201 (retrying through timeouts, 409s and 5xx), every client of
// one key gets the same body, and each key is charged exactly once.
func RunHTTP(ctx context.Context, cfg HTTPConfig) (*HTTPSummary, error) {
	if cfg.Stall == 0 {
		cfg.Stall = defaultStall
	}
	c := &clock{now: epoch}
	h := &httpSim{cfg: cfg, sched: newScheduler(c, cfg.Stall), clock: c, rng: rand.New(rand.NewPCG(uint64(cfg.Seed), 0x4774)),
		sum:      &HTTPSummary{Seed: cfg.Seed, Keys: cfg.Keys, Clients: cfg.Clients, Statuses: map[int]int{}},
		provider: map[string]string{}, charges: map[string]int{}}
	guard, err := idempotency.NewGuard(&requestStore{inner: storetest.NewMemoryStore(), rng: h.rng, faults: &h.sum.StoreFaults, spend: h.spend},
		idempotency.Config{Namespace: "pay", Now: c.Now, LeaseMax: httpFunctionTimeout, FinishBudget: time.Second, Window: time.Hour})
	if err != nil {
		return nil, err
	}
	var server http.Handler = httpkey.New(guard, http.HandlerFunc(h.charge), httpkey.Config{Logger: slog.New(slog.DiscardHandler), Metrics: io.Discard, Now: c.Now})
	if cfg.Sabotage == "no-guard" {
		server = http.HandlerFunc(h.charge)
	}
	final := map[string][]string{} // key → the final bodies of its clients
	for k := range cfg.Keys {
		key := fmt.Sprintf("key-%d", k)
		body := fmt.Sprintf(`{"amount":%d}`, 100+k)
		for cl := range cfg.Clients {
			start := epoch.Add(h.between(0, 500*time.Millisecond))
			h.sched.spawn(fmt.Sprintf("client %s/%d", key, cl), start, func(t *task) {
				for attempt := range httpMaxAttempts {
					h.sum.Requests++
					done := false
					var rec *httptest.ResponseRecorder
					inv := &httpInvocation{deadline: h.clock.Now().Add(httpFunctionTimeout)}
					inv.t = h.sched.spawn(fmt.Sprintf("invocation %s/%d/%d", key, cl, attempt), h.clock.Now(), func(st *task) {
						req := httptest.NewRequest("POST", "/charges", strings.NewReader(body))
						req.Header.Set("Idempotency-Key", key)
						rctx, cancel := context.WithDeadline(context.WithValue(context.Background(), invocationKey{}, inv), inv.deadline)
						defer cancel()
						w := httptest.NewRecorder()
						server.ServeHTTP(w, req.WithContext(rctx))
						if inv.dead {
							h.sum.Killed++
							return
						}
						rec, done = w, true
					})
					waited := time.Duration(0)
					for !done && waited < httpClientTimeout {
						h.sched.park(t, httpPoll)
						waited += httpPoll
					}
					if !done {
						h.sum.ClientTimeouts++
						h.sched.park(t, h.between(100*time.Millisecond, time.Second))
						continue
					}
					h.sum.Statuses[rec.Code]++
					switch {
					case rec.Code == http.StatusCreated:
						if rec.Header().Get(httpkey.HeaderReplayed) == "true" {
							h.sum.Replays++
						}
						final[key] = append(final[key], rec.Body.String())
						return
					case rec.Code == http.StatusConflict:
						secs, _ := strconv.Atoi(rec.Header().Get("Retry-After"))
						h.sched.park(t, time.Duration(max(secs, 1))*time.Second+h.between(0, 500*time.Millisecond))
					case rec.Code >= 500:
						h.sched.park(t, h.between(100*time.Millisecond, 2*time.Second))
					default:
						h.sum.Violations = append(h.sum.Violations, fmt.Sprintf("%s: client %d got %d %s for its own retry", key, cl, rec.Code, strings.TrimSpace(rec.Body.String())))
						return
					}
				}
				h.sum.Violations = append(h.sum.Violations, fmt.Sprintf("%s: client %d got no 201 in %d attempts", key, cl, httpMaxAttempts))
			})
		}
	}
	if err := h.sched.run(ctx, epoch.Add(24*time.Hour)); err != nil {
		return h.sum, err
	}
	for k := range cfg.Keys {
		key := fmt.Sprintf("key-%d", k)
		h.sum.Charges += h.charges[key]
		if n := h.charges[key]; n != 1 {
			h.sum.Violations = append(h.sum.Violations, fmt.Sprintf("%s was charged %d times", key, n))
		}
		for _, b := range final[key] {
			if b != final[key][0] {
				h.sum.Violations = append(h.sum.Violations, fmt.Sprintf("%s: its clients got different answers: %s and %s", key, final[key][0], b))
				break
			}
		}
	}
	return h.sum, nil
}
