package httpkey

import (
	"errors"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/internal/emf"
)

// Defaults of Config's zero values.
const (
	// defaultHeader is the request header that carries the client's key.
	defaultHeader = "Idempotency-Key"
	// defaultMaxKeyBytes bounds the key a client sends: 255 bytes, as long
	// as Stripe's idempotency keys.
	defaultMaxKeyBytes = 255
)

// representationHeaders are the response headers that every replay
// carries, beside Config.ReplayHeaders: those without which the stored body
// is not the response (RFC 9110 §8: its media type, its content coding, its
// language; §10.2.2 and §8.7: where the created resource is, and where this
// representation is). Without Content-Encoding a gzip body cannot be
// decoded; without Location a 201 does not say what it created.
var representationHeaders = []string{"Content-Type", "Content-Encoding", "Content-Language", "Location", "Content-Location"}

// Response headers that the adapter writes.
const (
	// HeaderReplayed marks a replayed response: "true" on every response
	// answered from the fact's record instead of the handler.
	HeaderReplayed = "Idempotency-Replayed"
	// headerDropped is set, with the size in bytes of the body that was not
	// kept, on the replay of a response too large to store (see Handler).
	headerDropped = "Idempotency-Body-Dropped"
	// headerWindow publishes the expiry policy: how many seconds a key
	// stays bound to its first request, from that request's completion (the
	// business window). It is on every response that a key decided.
	headerWindow = "Idempotency-Window"
)

// Verifier authenticates a webhook before any store request and names the
// fact it carries. Verify is given the request and its raw body (the bytes
// the provider signed); it returns the fact's key (the provider's event id,
// "evt_1"), or an error that says which check failed without quoting the
// secret or the body: the adapter answers 401 with nothing stored and logs
// that error, or 400 when the error wraps ErrNotAnEvent. Package webhook has
// Stripe's, GitHub's, Shopify's, Standard Webhooks' and Slack's.
type Verifier interface {
	Verify(r *http.Request, body []byte) (key string, err error)
}

// ErrNotAnEvent is wrapped by a Verifier's error for a request it
// authenticated (the signature verified) that names no event: a signed body
// that is not the provider's event, a delivery without its event id. The
// adapter answers 400, not 401: the sender is who it says, and a 401 would
// read as a signature or secret to fix. Nothing is stored.
var ErrNotAnEvent = errors.New("the authenticated request is not an event")

// KeyFunc derives the key from a request and its body, for an endpoint
// whose key is not the Idempotency-Key header (an order id in the path,
// a field of the body). An error is bad input: 400, nothing stored.
type KeyFunc func(r *http.Request, body []byte) (string, error)

// ClientFunc returns the client attribute that scopes a request's key (the
// caller's IAM identity, a tenant header): two clients that send one key
// then make two facts, as the draft's security considerations ask. An
// error, or an empty attribute, is answered 401 with nothing stored.
type ClientFunc func(r *http.Request) (string, error)

// Config configures a Handler. The zero value of every field means the
// documented default.
type Config struct {
	// Name names the endpoint in logs and metrics (the metrics' dimension,
	// outcome.MetricDimension). Default: "endpoint".
	Name string
	// Region is the AWS Region the function runs in, the metrics' second
	// dimension (outcome.RegionDimension). Default: none, the metrics then
	// have the Name dimension alone; the entry points set it from
	// AWS_REGION. It is not added to the log lines, which are the Logger's:
	// the entry points' logger carries "region" already; with a Logger of
	// your own, add it there (Logger.With("region", region)).
	Region string
	// Header is the request header that carries the client's key.
	// Default: "Idempotency-Key". Ignored with Verifier or Key.
	Header string
	// MaxKeyBytes bounds the client's key. Default: 255 bytes.
	MaxKeyBytes int
	// Optional serves a request without a key by the handler alone, with no
	// idempotency; by default a POST or PATCH without a key gets 400, as the
	// draft asks of an operation that requires the key, and a request of a
	// method idempotent by RFC 9110 (GET, HEAD, OPTIONS, TRACE, PUT, DELETE)
	// without one is served unkeyed. With a key, every method is keyed.
	Optional bool
	// Verifier, when set, authenticates every request as a webhook and
	// gives its key (the provider's event id); the Idempotency-Key header
	// is then not read.
	Verifier Verifier
	// Key, when set (and Verifier is not), derives the key from the request
	// instead of the header.
	Key KeyFunc
	// Client, when set, scopes every key to the client attribute it
	// returns (see ClientFunc and ParseClient).
	Client ClientFunc
	// HashHeaders names request headers whose values are part of the
	// payload hash, beside the method, the target (path and query) and the
	// body: the same key with another value of one of them is a mismatch
	// (422). Default: none.
	HashHeaders []string
	// ReplayHeaders names the response headers stored with the response
	// and replayed to duplicates beside the representation headers
	// (Content-Type, Content-Encoding, Content-Language, Location, Content-Location), which always are. Default: none.
	ReplayHeaders []string
	// MaxBodyBytes bounds a request's body. Default: 1 MiB (1,048,576 bytes).
	MaxBodyBytes int
	// MetricsNamespace is the CloudWatch namespace of the metrics.
	// Default: outcome.DefaultNamespace.
	MetricsNamespace string
	// Logger receives one line per request. Default: outcome.NewLogger on
	// standard error at INFO.
	Logger *slog.Logger
	// Metrics receives one Embedded Metric Format line per request.
	// Default: standard output; io.Discard turns metrics off.
	Metrics io.Writer
	// MetricsLevel is the "level" of the metrics line (see
	// sqsbatch.Config.MetricsLevel). Default: "INFO".
	MetricsLevel string
	// Now is the clock of Retry-After. Default: time.Now.
	Now func() time.Time
}

func (c Config) withDefaults() Config {
	if c.Name == "" {
		c.Name = "endpoint"
	}
	if c.Header == "" {
		c.Header = defaultHeader
	}
	if c.MaxKeyBytes <= 0 {
		c.MaxKeyBytes = defaultMaxKeyBytes
	}
	c.ReplayHeaders = append(append([]string(nil), representationHeaders...), c.ReplayHeaders...)
	if c.MaxBodyBytes <= 0 {
		c.MaxBodyBytes = contract.DefaultMaxRequestBytes
	}
	emf.Defaults(&c.MetricsNamespace, &c.Logger, &c.Metrics, &c.MetricsLevel)
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}
