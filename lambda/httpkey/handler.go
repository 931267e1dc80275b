// Package httpkey makes HTTP endpoints idempotent on the guard of package
// idempotency: requests that carry an Idempotency-Key, and webhooks whose
// provider retries them.
//
// A Handler wraps the http.Handler that does the work (the effect). For each
// request it derives the key (from a Verifier, a KeyFunc, or the
// Idempotency-Key header, optionally scoped to a client attribute), hashes
// the request (method, target, body and the headers named), and runs the
// wrapped handler once per key under the guard's conditional write. Its
// answers follow draft-ietf-httpapi-idempotency-key-header-07 ("The
// Idempotency-Key HTTP Header Field", an Internet-Draft,
// https://datatracker.ietf.org/doc/draft-ietf-httpapi-idempotency-key-header/07/):
//
//   - 400 for a missing or malformed key (§2.7), 422 for the key of a
//     completed or running request with another payload, 409 with
//     Retry-After (the lease's end) while the first request runs;
//   - the stored response (status, body, the representation headers
//     Content-Type, Content-Encoding, Content-Language, Location and
//     Content-Location, Config.ReplayHeaders, and Idempotency-Replayed:
//     true) for a duplicate of a completed request, whether the first
//     response was a success or a 4xx;
//   - an answer of the wrapped handler that asks the client to try again
//     (TryAgain: 5xx, 408, 425, 429; or its panic, as 500) releases the
//     key, so that the client's retry runs it again: a deviation from the
//     draft's "success or error", since such an answer says the server
//     could not judge the request now, and stored it would be the answer
//     for the whole window;
//   - the adapter's own 400, 401, 409, 413, 422 and 503 are never stored.
//
// Responses are stored up to the guard's MaxResultBytes (the endpoint's
// handler, endpoint.FromEnv, sets 350,000 bytes); a larger
// one still completes the fact, and its duplicates get its status and
// headers, Idempotency-Body-Dropped with the size not kept and a problem
// body that says so, never an empty success; the effect never runs twice.
// With a Verifier, a webhook's duplicates are judged by the provider's
// event id alone. Every keyed response publishes the expiry policy in
// Idempotency-Window (seconds from the first request's completion).
//
// The Handler is a plain net/http handler (a container, a local server);
// FunctionURL and HTTPAPI serve Lambda function URL and API Gateway HTTP API
// (payload 2.0) events through the same code.
package httpkey

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/outcome"
)

// Handler is an idempotent http.Handler. It is safe for concurrent use.
type Handler struct {
	guard  *idempotency.Guard
	next   http.Handler
	cfg    Config
	window string
}

// New returns the Handler that runs next once per key under guard.
func New(guard *idempotency.Guard, next http.Handler, cfg Config) *Handler {
	return &Handler{guard: guard, next: next, cfg: cfg.withDefaults(),
		window: strconv.FormatInt(int64(math.Ceil(guard.Window().Seconds())), 10)}
}

type reservationKey struct{}

// ReservationFrom returns the reservation that the wrapped handler runs
// under, from its request's context: its Key is the one to pass downstream
// as the idempotency key of an external call.
func ReservationFrom(ctx context.Context) (idempotency.Reservation, bool) {
	r, ok := ctx.Value(reservationKey{}).(idempotency.Reservation)
	return r, ok
}

// Outcomes of a request beyond the queue adapter's (outcome.Outcome, whose
// names the others reuse: processed, duplicate, in_progress, mismatch,
// bad_input, failed, lease_lost, not_started).
const (
	// outcomeUnauthorized: the Verifier or the Client refused the request
	// (401): nothing stored, no store request.
	outcomeUnauthorized = "unauthorized"
	// outcomeUnkeyed: a request without a key served with no idempotency
	// (Config.Optional).
	outcomeUnkeyed = "unkeyed"
)

// errTryAgain is the effect's error for a response of the wrapped handler
// that asks the client to try again (TryAgain): the guard releases the key.
type errTryAgain struct{ status int }

func (e errTryAgain) Error() string {
	return fmt.Sprintf("the handler answered %d, which asks the client to try again: the key is released", e.status)
}

// TryAgain reports whether a status of the wrapped handler asks the client
// to try again rather than judging the request, so that its answer is
// passed on and not stored, and the key released: every 5xx (the server
// failed), 408 Request Timeout (RFC 9110 §15.5.9: the client "MAY repeat
// that request"), 425 Too Early (RFC 8470 §5.2: "the client can retry")
// and 429 Too Many Requests (RFC 6585 §4: a rate limit, with Retry-After).
// Stored, any of them would be the answer for the whole business window, and
// the retry the key exists for could never succeed.
func TryAgain(status int) bool {
	switch {
	case status >= 500:
		return true
	case status == http.StatusRequestTimeout, status == http.StatusTooEarly, status == http.StatusTooManyRequests:
		return true
	}
	return false
}

// ServeHTTP serves one request: see the package documentation.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	x := exchange{h: h, w: w, r: r}
	x.serve()
	h.report(&x, time.Since(start))
}

// exchange is one request and what became of it.
type exchange struct {
	h       *Handler
	w       http.ResponseWriter
	r       *http.Request
	outcome string
	status  int
	key     string // the record key, once known
	reason  string
	level   slog.Level
}

func (x *exchange) serve() {
	h, r := x.h, x.r
	body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, int64(h.cfg.MaxBodyBytes)))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			x.problem(http.StatusRequestEntityTooLarge, outcome.BadInput.String(), "Request too large", fmt.Sprintf("the body is larger than %d bytes", h.cfg.MaxBodyBytes))
			return
		}
		x.problem(http.StatusBadRequest, outcome.BadInput.String(), "Unreadable body", err.Error())
		return
	}
	key, ok := x.requestKey(body)
	if !ok {
		return
	}
	if key == "" { // Optional, no key
		x.outcome, x.level = outcomeUnkeyed, slog.LevelInfo
		rec := newRecorder()
		r2 := r.Clone(r.Context())
		r2.Body = io.NopCloser(bytes.NewReader(body))
		if p := serveRecovering(h.next, rec, r2); p != nil {
			x.problem(http.StatusInternalServerError, outcome.Failed.String(), "Internal error", fmt.Sprintf("the handler panicked: %v", p))
			x.level = slog.LevelError
			return
		}
		x.status = rec.flush(x.w)
		return
	}
	if h.cfg.Client != nil {
		client, err := h.cfg.Client(r)
		if err == nil && client == "" {
			err = errors.New("the client attribute is empty")
		}
		if err != nil {
			x.problem(http.StatusUnauthorized, outcomeUnauthorized, "Unknown client", "client: "+err.Error())
			return
		}
		key = strconv.Itoa(len(client)) + ":" + client + ":" + key // unambiguous: the length says where the client ends
	}
	fact, err := h.fact(r, key, body)
	if err != nil {
		x.problem(http.StatusBadRequest, outcome.BadInput.String(), "Bad idempotency key", err.Error())
		return
	}
	x.key = fact.Key
	x.run(fact, body)
}

// serveRecovering serves r with next into rec and returns what it panicked
// with, if it did (the keyed path's panics are the guard's to recover).
func serveRecovering(next http.Handler, rec *recorder, r *http.Request) (p any) {
	defer func() { p = recover() }()
	next.ServeHTTP(rec, r)
	return nil
}

// requestKey returns the request's key, "" for a request without one served
// unkeyed, or false once it has answered.
func (x *exchange) requestKey(body []byte) (string, bool) {
	h, r := x.h, x.r
	switch {
	case h.cfg.Verifier != nil:
		key, err := h.cfg.Verifier.Verify(r, body)
		if err == nil && key == "" {
			err = errors.New("the verifier gave no key")
		}
		if err != nil {
			x.problem(http.StatusUnauthorized, outcomeUnauthorized, "Unauthorized", err.Error())
			return "", false
		}
		return key, true
	case h.cfg.Key != nil:
		key, err := h.cfg.Key(r, body)
		if err == nil && key == "" {
			// An empty key is bad input, never "no idempotency" (DESIGN.md,
			// "The key").
			err = errors.New("the key function returned an empty key; keys come from the business request (an order id, a client's key), never from the transport")
		}
		if err != nil {
			x.problem(http.StatusBadRequest, outcome.BadInput.String(), "Bad idempotency key", err.Error())
			return "", false
		}
		return key, true
	}
	values := r.Header.Values(h.cfg.Header)
	if len(values) == 0 && (h.cfg.Optional || idempotentMethod(r.Method)) {
		return "", true
	}
	key, err := parseKey(values, h.cfg.MaxKeyBytes)
	if err != nil {
		x.problem(http.StatusBadRequest, outcome.BadInput.String(), "Bad Idempotency-Key", fmt.Sprintf("%s: %v", h.cfg.Header, err))
		return "", false
	}
	return key, true
}

// idempotentMethod reports whether method is idempotent by RFC 9110 §9.2.2
// (GET, HEAD, OPTIONS, TRACE, PUT, DELETE): the draft's key is for the
// others (POST, PATCH), so that such a request without a key is served as
// it is rather than refused.
func idempotentMethod(method string) bool {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace, http.MethodPut, http.MethodDelete:
		return true
	}
	return false
}

// verifiedPayload is the payload of every verified webhook delivery (see
// fact).
var verifiedPayload = []byte(`{"v":"provider event"}`)

// fingerprint is the payload the guard hashes: the method, the target (path
// and query), the headers named in Config.HashHeaders and the body, as a
// JSON value ("j", hashed in its canonical form, so that a client that
// re-serialises its retry sends the same request) or as bytes ("r").
type fingerprint struct {
	Method string              `json:"m"`
	Target string              `json:"t"`
	Header map[string][]string `json:"h,omitempty"`
	JSON   json.RawMessage     `json:"j,omitempty"`
	Raw    []byte              `json:"r,omitempty"`
}

func (h *Handler) fact(r *http.Request, key string, body []byte) (idempotency.Fact, error) {
	if h.cfg.Verifier != nil {
		// A webhook's duplicates are judged by the provider's event id
		// alone: one event delivered to two subscriptions (other URLs,
		// other payload versions) is one fact, and the provider gets its
		// 2xx from both rather than a 422 it would retry until it disables
		// the webhook.
		return h.guard.Fact(key, verifiedPayload)
	}
	fp := fingerprint{Method: r.Method, Target: r.URL.RequestURI()}
	for _, name := range h.cfg.HashHeaders {
		if vs := r.Header.Values(name); len(vs) > 0 {
			if fp.Header == nil {
				fp.Header = make(map[string][]string, len(h.cfg.HashHeaders))
			}
			fp.Header[http.CanonicalHeaderKey(name)] = vs
		}
	}
	if len(body) > 0 && json.Valid(body) {
		fp.JSON = body
		doc, err := json.Marshal(fp)
		if err == nil {
			f, err := h.guard.Fact(key, doc)
			if !errors.Is(err, idempotency.ErrInvalidPayload) {
				return f, err
			}
		}
		// JSON the guard will not hash canonically (a member twice, a lone
		// surrogate, deep nesting): the bytes themselves, always the same
		// way for the same bytes.
		fp.JSON = nil
	}
	if len(body) > 0 {
		fp.Raw = body
	}
	doc, err := json.Marshal(fp)
	if err != nil {
		return idempotency.Fact{}, err
	}
	return h.guard.Fact(key, doc)
}

// run runs the wrapped handler under the guard and answers.
func (x *exchange) run(fact idempotency.Fact, body []byte) {
	h, r := x.h, x.r
	var rec *recorder
	res, err := h.guard.Run(r.Context(), fact, func(ctx context.Context, res idempotency.Reservation) (string, error) {
		rec = newRecorder()
		r2 := r.Clone(context.WithValue(ctx, reservationKey{}, res))
		r2.Body = io.NopCloser(bytes.NewReader(body))
		h.next.ServeHTTP(rec, r2)
		if TryAgain(rec.status) {
			return "", errTryAgain{rec.status}
		}
		return encodeResponse(rec.status, rec.header, h.cfg.ReplayHeaders, rec.body.Bytes(), h.guard.MaxResultBytes()), nil
	})
	var again errTryAgain
	switch {
	case err == nil && res.Outcome == outcome.Processed:
		x.outcome, x.level = outcome.Processed.String(), slog.LevelInfo
		if res.TookOver {
			x.reason = "took over the lapsed reservation of another request (lease ended " + res.LapsedLease.UTC().Format(time.RFC3339Nano) + "): the handler may have run before, in part or in full"
			x.level = slog.LevelWarn
		}
		rec.header.Set(headerWindow, h.window)
		x.status = rec.flush(x.w)
	case err == nil:
		x.replay(res.Value)
	case errors.Is(err, idempotency.ErrEffect) && errors.As(err, &again):
		// The handler asked the client to try again: the key is released
		// (or, if the release failed, held until its lease ends) and the
		// answer passes, its Retry-After with it.
		x.outcome, x.level, x.reason = outcome.Failed.String(), slog.LevelWarn, err.Error()
		x.status = rec.flush(x.w)
	case errors.Is(err, idempotency.ErrEffect):
		x.problem(http.StatusInternalServerError, outcome.Failed.String(), "Internal error", "the handler failed: "+err.Error())
		x.level = slog.LevelError
	case errors.Is(err, idempotency.ErrInProgress):
		retry := "1" // no lease end: a reservation's store answer said nothing of it
		if until, ok := idempotency.LeaseEnd(err); ok {
			retry = retrySeconds(until.Sub(h.cfg.Now()))
		}
		x.retryAfter(retry)
		x.problem(http.StatusConflict, outcome.InProgress.String(), "Request in progress", "a request with this key is being processed; retry after it")
	case errors.Is(err, idempotency.ErrPayloadMismatch):
		x.w.Header().Set(headerWindow, h.window)
		x.problem(http.StatusUnprocessableEntity, outcome.Mismatch.String(), "Idempotency-Key reused", "this key was used for another request (another method, target, body or hashed header); send a new key for a new request")
		x.reason = err.Error()
	case errors.Is(err, idempotency.ErrInvalidKey), errors.Is(err, idempotency.ErrInvalidPayload):
		x.problem(http.StatusBadRequest, outcome.BadInput.String(), "Bad idempotency key", err.Error())
	case errors.Is(err, idempotency.ErrNotStarted):
		x.retryAfter("1")
		x.problem(http.StatusServiceUnavailable, outcome.NotStarted.String(), "Not started", "too little time was left to run the request; retry")
		x.reason = err.Error()
	case errors.Is(err, idempotency.ErrLeaseLost):
		// The handler ran after its lease ended and another request took
		// the key over: its answer may not be the fact's.
		x.problem(http.StatusInternalServerError, outcome.LeaseLost.String(), "Lease lost", "the request outlived its reservation; retry to get the fact's answer")
		x.reason, x.level = err.Error(), slog.LevelError
	case rec != nil && !TryAgain(rec.status):
		// The handler ran and answered, and completing its record failed:
		// the record stays IN_PROGRESS until its lease ends, when a retry
		// runs the handler again. Its answer is the truth of this run.
		x.outcome, x.level = outcome.Failed.String(), slog.LevelError
		x.reason = "the handler ran but its record could not be completed; a retry after the lease ends runs it again: " + err.Error()
		x.status = rec.flush(x.w)
	default: // the store failed before the handler ran
		x.retryAfter("1")
		x.problem(http.StatusServiceUnavailable, outcome.Failed.String(), "Store unavailable", "the idempotency store failed; retry")
		x.reason, x.level = err.Error(), slog.LevelError
	}
}

// replay answers a duplicate with the stored response.
func (x *exchange) replay(value string) {
	h := x.h
	s, body, err := decodeResponse(value)
	if err != nil {
		x.problem(http.StatusInternalServerError, outcome.Duplicate.String(), "Unreadable stored response", "the request was already processed, and its stored response cannot be read")
		x.reason, x.level = err.Error(), slog.LevelError
		return
	}
	x.outcome, x.level = outcome.Duplicate.String(), slog.LevelInfo
	hd := x.w.Header()
	for name, vs := range s.Header {
		hd[name] = vs
	}
	hd.Set(HeaderReplayed, "true")
	hd.Set(headerWindow, h.window)
	if s.Dropped > 0 {
		// Never an empty success: the body says that the request was
		// processed and that its response was not kept.
		hd.Set(headerDropped, strconv.Itoa(s.Dropped))
		hd.Set("Content-Type", "application/problem+json")
		hd.Del("Content-Encoding")
		body, _ = json.Marshal(map[string]any{"title": "Response not stored", "status": s.Status,
			"detail": fmt.Sprintf("the request was processed, and its response (%d bytes) was larger than the %d bytes kept for replays: its body is not repeated; its headers (Location) are", s.Dropped, h.guard.MaxResultBytes())})
		x.reason = "the first response was too large to store; replayed its status and headers with a problem body that says so"
	}
	hd.Set("Content-Length", strconv.Itoa(len(body)))
	x.w.WriteHeader(s.Status)
	_, _ = x.w.Write(body)
	x.status = s.Status
}

func (x *exchange) retryAfter(v string) { x.w.Header().Set("Retry-After", v) }

// retrySeconds is Retry-After for a lease that ends in d: whole seconds,
// rounded up, at least 1.
func retrySeconds(d time.Duration) string {
	return strconv.FormatInt(max(1, int64(math.Ceil(d.Seconds()))), 10)
}

// problem answers with an application/problem+json body (RFC 9457), which
// the draft's examples use; such answers are never stored.
func (x *exchange) problem(status int, name, title, detail string) {
	x.outcome, x.status = name, status
	if x.reason == "" {
		x.reason = detail
	}
	if x.level == 0 && name != outcome.Processed.String() && name != outcome.Duplicate.String() {
		x.level = slog.LevelWarn
	}
	out, _ := json.Marshal(map[string]any{"title": title, "status": status, "detail": detail})
	hd := x.w.Header()
	hd.Set("Content-Type", "application/problem+json")
	hd.Set("Content-Length", strconv.Itoa(len(out)))
	x.w.WriteHeader(status)
	_, _ = x.w.Write(out)
}

// recorder keeps the wrapped handler's response until the guard decides.
type recorder struct {
	header http.Header
	status int
	wrote  bool
	body   bytes.Buffer
}

func newRecorder() *recorder { return &recorder{header: make(http.Header), status: http.StatusOK} }

func (rec *recorder) Header() http.Header { return rec.header }

func (rec *recorder) WriteHeader(status int) {
	if !rec.wrote {
		rec.status, rec.wrote = status, true
	}
}

func (rec *recorder) Write(b []byte) (int, error) {
	rec.WriteHeader(http.StatusOK)
	return rec.body.Write(b)
}

// flush writes the recorded response to w and returns its status.
func (rec *recorder) flush(w http.ResponseWriter) int {
	hd := w.Header()
	for name, vs := range rec.header {
		hd[name] = vs
	}
	w.WriteHeader(rec.status)
	_, _ = w.Write(rec.body.Bytes())
	return rec.status
}
