package webhook

import (
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// defaultStripeTolerance is how old a Stripe-Signature timestamp may be:
// 300 s, the official libraries' default.
const defaultStripeTolerance = 300 * time.Second

// Stripe verifies Stripe's webhooks as Stripe documents them
// (https://docs.stripe.com/webhooks#verify-manually) and as stripe-go's
// webhook.ConstructEvent judges them: the Stripe-Signature header
// "t=<unix seconds>,v1=<hex>[,v1=<hex>…]" (other schemes, such as v0, are
// ignored), each v1 the hex HMAC-SHA256 under the endpoint's signing secret
// ("whsec_…", used as it is) of t, ".", and the raw body. During a secret's
// rotation Stripe sends one v1 per active secret; any of them matching any
// of Secrets passes. A timestamp older than Tolerance is refused, which
// bounds the replay of a captured delivery; one ahead of the clock is
// accepted, as stripe-go accepts it (it checks the age alone). Elements are
// split at "," and "=" without trimming, as stripe-go splits them: "t=…,
// v1=…" (a space after the comma) carries no v1 and is refused.
//
// Refused where stripe-go accepts (none of them is a request Stripe sends):
// t given twice (stripe-go reads the last), two Stripe-Signature fields with
// different values (it reads the first; see the package's header rule), and
// a signed body that is not JSON or has no event id (no key; the check
// "event id", which the handler answers 400: the request is authenticated).
//
// The key is the event's id (the signed body's "id", "evt_…"): Stripe
// retries a delivery (for up to three days in live mode) with the same
// event and a new t, so every retry is the same fact.
type Stripe struct {
	// Secrets are the endpoint's signing secrets, the newest first.
	Secrets [][]byte
	// Tolerance bounds now − t. Default: 300 s, the official libraries' default.
	Tolerance time.Duration
	// Now is the clock. Default: time.Now.
	Now func() time.Time
}

// Verify implements httpkey.Verifier.
func (s Stripe) Verify(r *http.Request, body []byte) (string, error) {
	const p = "stripe"
	value, err := signature(r, p, s.Secrets, "Stripe-Signature")
	if err != nil {
		return "", err
	}
	t, sigs, err := parseStripe(value)
	if err != nil {
		return "", err
	}
	tol := s.Tolerance
	if tol <= 0 {
		tol = defaultStripeTolerance
	}
	if err := timely(p, time.Unix(t, 0), clock(s.Now), tol, -1); err != nil {
		return "", err
	}
	if !signedBy(s.Secrets, sigs, nil, []byte(strconv.FormatInt(t, 10)), []byte("."), body) {
		return "", refuse(p, "signature", "none of %d v1 signatures matches any of %d secrets", len(sigs), len(s.Secrets))
	}
	var event struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(body, &event); err != nil || event.ID == "" {
		return "", refuse(p, checkEvent, "the signed body is not a Stripe event (not a JSON object with an id)")
	}
	return event.ID, nil
}

// parseStripe reads a Stripe-Signature header as stripe-go does: every
// element is exactly one key=value; t is unix seconds; a v1 that is not hex
// is ignored.
func parseStripe(value string) (t int64, sigs [][]byte, err error) {
	const p = "stripe"
	seen := false
	for _, item := range strings.Split(value, ",") {
		kv := strings.Split(item, "=")
		if len(kv) != 2 {
			return 0, nil, refuse(p, "header", "an element of Stripe-Signature is not key=value")
		}
		switch kv[0] {
		case "t":
			if seen {
				return 0, nil, refuse(p, "header", "Stripe-Signature has t twice")
			}
			seen = true
			if t, err = strconv.ParseInt(kv[1], 10, 64); err != nil {
				return 0, nil, refuse(p, "header", "Stripe-Signature's t is not unix seconds")
			}
		case "v1":
			if sig, err := hex.DecodeString(kv[1]); err == nil {
				sigs = append(sigs, sig)
			}
		}
	}
	if !seen {
		return 0, nil, refuse(p, "header", "Stripe-Signature has no timestamp t")
	}
	if len(sigs) == 0 {
		return 0, nil, refuse(p, "header", "Stripe-Signature has no v1 signature in hex")
	}
	return t, sigs, nil
}
