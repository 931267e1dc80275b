package webhook

import (
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// DefaultStripeTolerance is how far a Stripe-Signature timestamp may be
// from now: 300 s, the official libraries' default.
const DefaultStripeTolerance = 300 * time.Second

// Stripe verifies Stripe's webhooks as Stripe documents them
// (https://docs.stripe.com/webhooks#verify-manually): the Stripe-Signature
// header "t=<unix seconds>,v1=<hex>[,v1=<hex>…]" (other schemes, such as
// v0, are ignored), each v1 the hex HMAC-SHA256 under the endpoint's
// signing secret ("whsec_…", used as it is) of t, ".", and the raw body.
// During a secret's rotation Stripe sends one v1 per active secret; any of
// them matching any of Secrets passes. A timestamp further than Tolerance
// from now is refused, which bounds the replay of a captured delivery.
//
// The key is "stripe:" and the event's id (the body's "id", "evt_…"): Stripe
// retries a delivery (for up to three days in live mode) with the same event
// and a new t, so every retry is the same fact.
type Stripe struct {
	// Secrets are the endpoint's signing secrets, the newest first.
	Secrets [][]byte
	// Tolerance bounds |now − t|. Default: DefaultStripeTolerance.
	Tolerance time.Duration
	// Now is the clock. Default: time.Now.
	Now func() time.Time
}

// Verify implements httpkey.Verifier.
func (s Stripe) Verify(r *http.Request, body []byte) (string, error) {
	const p = "stripe"
	if err := noSecret(p, s.Secrets); err != nil {
		return "", err
	}
	values := r.Header.Values("Stripe-Signature")
	if len(values) != 1 {
		return "", refuse(p, "header", "want one Stripe-Signature header, got %d", len(values))
	}
	var t string
	var sigs [][]byte
	for _, item := range strings.Split(values[0], ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(item), "=")
		if !ok {
			return "", refuse(p, "header", "an element of Stripe-Signature is not key=value")
		}
		switch k {
		case "t":
			if t != "" {
				return "", refuse(p, "header", "Stripe-Signature has t twice")
			}
			t = v
		case "v1":
			if sig, err := hex.DecodeString(v); err == nil && len(sig) == 32 {
				sigs = append(sigs, sig)
			}
		}
	}
	ts, err := strconv.ParseInt(t, 10, 64)
	if err != nil {
		return "", refuse(p, "header", "Stripe-Signature has no timestamp t in unix seconds")
	}
	if len(sigs) == 0 {
		return "", refuse(p, "header", "Stripe-Signature has no v1 signature of 64 hex digits")
	}
	now := time.Now
	if s.Now != nil {
		now = s.Now
	}
	tol := s.Tolerance
	if tol <= 0 {
		tol = DefaultStripeTolerance
	}
	if age := now().Sub(time.Unix(ts, 0)); age > tol || age < -tol {
		return "", refuse(p, "timestamp", "t is %s from now, beyond the tolerance of %s", age.Round(time.Second), tol)
	}
	if !anyMatch(s.Secrets, sigs, []byte(t), []byte("."), body) {
		return "", refuse(p, "signature", "none of %d v1 signatures matches any of %d secrets", len(sigs), len(s.Secrets))
	}
	var event struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(body, &event); err != nil || event.ID == "" {
		return "", refuse(p, "event id", "the signed body has no event id")
	}
	return "stripe:" + event.ID, nil
}
