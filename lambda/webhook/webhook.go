// Package webhook authenticates the webhooks of Stripe, GitHub and Shopify
// and names the fact each carries: verifiers for httpkey.Handler, which runs
// one before any store request and answers 401 when it refuses.
//
// Each verifier checks the provider's HMAC-SHA256 signature over the raw
// body in constant time (hmac.Equal), against every secret it holds, so that
// a secret can be rotated without a refused delivery: list the new secret
// and the old one until the provider signs with the new one alone. Its
// error says which check failed (the header, the timestamp, the signature,
// the event id) and never quotes the secret or the body.
//
// A provider of your own is a type with one method, Verify(r, body) (key,
// error): see the Example.
package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
)

// ErrUnauthorized is wrapped by every refusal of a verifier of this package.
var ErrUnauthorized = errors.New("webhook not authenticated")

// Error is a verifier's refusal: the provider, the check that failed and
// why, without the secret or the body.
type Error struct {
	Provider string // "stripe", "github", "shopify"
	Check    string // "header", "timestamp", "signature", "event id", "secret"
	Reason   string
}

func (e *Error) Error() string {
	return e.Provider + ": " + e.Check + ": " + e.Reason
}

// Unwrap returns ErrUnauthorized.
func (e *Error) Unwrap() error { return ErrUnauthorized }

func refuse(provider, check, format string, args ...any) error {
	return &Error{Provider: provider, Check: check, Reason: fmt.Sprintf(format, args...)}
}

// anyMatch reports whether one of the signatures is the HMAC-SHA256 of the
// message under one of the secrets, comparing in constant time.
func anyMatch(secrets [][]byte, sigs [][]byte, message ...[]byte) bool {
	for _, secret := range secrets {
		mac := hmac.New(sha256.New, secret)
		sum := macOf(mac, message)
		for _, sig := range sigs {
			if hmac.Equal(sum, sig) {
				return true
			}
		}
	}
	return false
}

func macOf(mac hash.Hash, message [][]byte) []byte {
	for _, m := range message {
		mac.Write(m)
	}
	return mac.Sum(nil)
}

func noSecret(provider string, secrets [][]byte) error {
	for _, s := range secrets {
		if len(s) > 0 {
			return nil
		}
	}
	return refuse(provider, "secret", "no signing secret is configured")
}
