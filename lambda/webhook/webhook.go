// Package webhook authenticates the webhooks of Stripe, GitHub, Shopify,
// Slack and any sender of Standard Webhooks, and names the fact each
// carries: verifiers for httpkey.Handler, which runs one before any store
// request and answers 401 when it refuses, or 400 when the request is
// authenticated but names no event (httpkey.ErrNotAnEvent).
//
// Each verifier checks the provider's HMAC-SHA256 signature in constant time
// (hmac.Equal), against every secret it holds, so that a secret can be
// rotated without a refused delivery: list the new secret and the old one
// until the provider signs with the new one alone. Its error says which
// check failed (the header, the timestamp, the signature, the event id) and
// never quotes the secret or the body.
//
// The key a verifier returns is the provider's event id alone ("evt_1", not
// "stripe:evt_1"): the record's namespace is already the endpoint's.
//
// Each verifier accepts exactly the requests the provider's official
// library accepts, where there is one, except for the refusals its type's
// documentation lists; test/webhookdiff holds the two to that. Package
// webhooktest signs requests as each provider does, for a handler's tests.
//
// A provider of your own is a type with one method, Verify(r, body) (key,
// error): see the Example.
package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/httpkey"
)

// ErrUnauthorized is wrapped by every refusal of a verifier of this package
// but those of the check "event id" (see Error.Unwrap).
var ErrUnauthorized = errors.New("webhook not authenticated")

// checkEvent is the check of a request whose signature verified but that
// names no event.
const checkEvent = "event id"

// Error is a verifier's refusal: the provider, the check that failed and
// why, without the secret or the body.
type Error struct {
	Provider string // one of Providers
	Check    string // "header", "timestamp", "signature", "event id", "secret"
	Reason   string
}

func (e *Error) Error() string {
	return e.Provider + ": " + e.Check + ": " + e.Reason
}

// Unwrap returns ErrUnauthorized, or httpkey.ErrNotAnEvent for the check
// "event id", which comes after the signature verified: the request is
// authenticated and names no event (a signed Stripe body that is not JSON),
// so that the handler answers 400 rather than 401.
func (e *Error) Unwrap() error {
	if e.Check == checkEvent {
		return httpkey.ErrNotAnEvent
	}
	return ErrUnauthorized
}

func refuse(provider, check, format string, args ...any) error {
	return &Error{Provider: provider, Check: check, Reason: fmt.Sprintf(format, args...)}
}

// signedBy reports whether one of sigs is the HMAC-SHA256 of the message
// under one of the secrets, comparing in constant time. enc, when not nil,
// encodes each MAC before the comparison, for a scheme whose library
// compares the encoded text (Standard Webhooks' base64).
func signedBy(secrets, sigs [][]byte, enc func([]byte) []byte, message ...[]byte) bool {
	for _, secret := range secrets {
		mac := hmac.New(sha256.New, secret)
		for _, m := range message {
			mac.Write(m)
		}
		sum := mac.Sum(nil)
		if enc != nil {
			sum = enc(sum)
		}
		for _, sig := range sigs {
			if hmac.Equal(sum, sig) {
				return true
			}
		}
	}
	return false
}

// header returns the value of a header a provider sends under any of
// names (Shopify's "X-Shopify-…" and "Shopify-…" spellings), "" when it is
// absent. A field repeated with the same value is that value, as the
// official libraries, which read the first (Header.Get), accept it. Fields
// whose values differ are refused: the provider never sends two, so a
// second value was added on the way (a proxy, a forger), and which one a
// verifier reads would decide what it authenticates.
func header(r *http.Request, p string, names ...string) (string, error) {
	var value string
	n := 0
	for _, name := range names {
		for _, v := range r.Header.Values(name) {
			if n > 0 && v != value {
				return "", refuse(p, "header", "%s is sent more than once with different values", names[0])
			}
			value = v
			n++
		}
	}
	return value, nil
}

// required is header for a header the scheme cannot do without: its
// absence is refused too ("no <name> header").
func required(r *http.Request, p string, names ...string) (string, error) {
	value, err := header(r, p, names...)
	if err == nil && value == "" {
		err = refuse(p, "header", "no %s header", strings.Join(names, " or "))
	}
	return value, err
}

// timely refuses a signed timestamp older than maxAge, or further ahead of
// now than maxAhead when maxAhead is not negative (negative: no bound, as
// stripe-go checks the age alone).
func timely(p string, t, now time.Time, maxAge, maxAhead time.Duration) error {
	// Times, not durations: now.Sub saturates for a timestamp centuries
	// away (one in milliseconds), and the negation of the saturated
	// minimum is itself.
	if t.Before(now.Add(-maxAge)) {
		return refuse(p, "timestamp", "the timestamp is older than the tolerance of %s", maxAge)
	}
	if maxAhead >= 0 && t.After(now.Add(maxAhead)) {
		return refuse(p, "timestamp", "the timestamp is further ahead than the tolerance of %s", maxAhead)
	}
	return nil
}

// signature checks that a secret is configured and returns the signature
// header a provider sends under names: the first checks of every verifier
// whose signature is one header.
func signature(r *http.Request, p string, secrets [][]byte, names ...string) (string, error) {
	if err := noSecret(p, secrets); err != nil {
		return "", err
	}
	return required(r, p, names...)
}

// unixTime reads the value of the timestamp header name, unix seconds, and
// refuses one outside the tolerances (timely) on the clock now.
func unixTime(p, name, value string, now func() time.Time, maxAge, maxAhead time.Duration) (int64, error) {
	t, err := strconv.ParseInt(value, 10, 64)
	if err != nil {
		return 0, refuse(p, "header", "%s is not unix seconds", name)
	}
	return t, timely(p, time.Unix(t, 0), clock(now), maxAge, maxAhead)
}

func clock(now func() time.Time) time.Time {
	if now != nil {
		return now()
	}
	return time.Now()
}

func noSecret(provider string, secrets [][]byte) error {
	for _, s := range secrets {
		if len(s) > 0 {
			return nil
		}
	}
	return refuse(provider, "secret", "no signing secret is configured")
}
