package webhookdiff

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/httpkey"
)

// row is one request of a matrix: its headers and its body.
type row struct {
	name string
	h    http.Header
	body []byte
}

// official is a provider's own verifier: whether it accepts the request,
// and the event id it reads when it does.
type official func(h http.Header, body []byte) (key string, ok bool)

// matrix is one provider's differential test: its rows, the secrets both
// verifiers hold (a rotation: the official verifier, which takes one, is
// asked with each), the official verifier under one secret, and ours.
type matrix struct {
	rows    []row
	secrets []string
	one     func(h http.Header, body []byte, secret string) (string, bool)
	clocked bool // whether the scheme signs a timestamp
	build   func(secrets [][]byte, now func() time.Time) httpkey.Verifier
}

// theirs is the official verifier over every secret: it accepts when one
// of them does.
func (m matrix) theirs() official {
	return func(h http.Header, body []byte) (string, bool) {
		for _, s := range m.secrets {
			if key, ok := m.one(h, body, s); ok {
				return key, true
			}
		}
		return "", false
	}
}

func (m matrix) ours() httpkey.Verifier { return m.build(secrets(m.secrets...), nil) }

// disagreements judges every row by ours and by theirs, and lists the rows
// where they differ: one accepts and the other refuses, or both accept with
// different keys.
func disagreements(rows []row, ours httpkey.Verifier, theirs official) []string {
	var out []string
	for _, r := range rows {
		req := httptest.NewRequest("POST", "/hooks", bytes.NewReader(r.body))
		req.Header = r.h.Clone()
		key, err := ours.Verify(req, r.body)
		want, ok := theirs(r.h.Clone(), r.body)
		switch {
		case (err == nil) != ok:
			out = append(out, fmt.Sprintf("%s: ours %v, official accepts=%v", r.name, err, ok))
		case ok && key != want:
			out = append(out, fmt.Sprintf("%s: our key %q, the official event id %q", r.name, key, want))
		}
	}
	return out
}

// agree is the differential test of one provider: at least 12 rows, both
// verdicts present, and no disagreement.
func agree(t *testing.T, m matrix) {
	t.Helper()
	theirs := m.theirs()
	accepted := 0
	for _, r := range m.rows {
		if _, ok := theirs(r.h.Clone(), r.body); ok {
			accepted++
		}
	}
	if len(m.rows) < 12 || accepted < 3 || len(m.rows)-accepted < 3 {
		t.Fatalf("a thin matrix: %d rows, %d accepted by the official verifier", len(m.rows), accepted)
	}
	for _, d := range disagreements(m.rows, m.ours(), theirs) {
		t.Error(d)
	}
	t.Logf("%d rows: %d accepted, %d refused, by both", len(m.rows), accepted, len(m.rows)-accepted)
}

// Each matrix can fail: a verifier that accepts everything, one that
// refuses everything, one that forgot the rotation's older secrets, and,
// where the scheme signs a timestamp, one whose clock is 10 minutes fast,
// each disagrees with the official verifier on some row.
func TestEachMatrixCatchesASabotagedVerifier(t *testing.T) {
	fast := func() time.Time { return time.Now().Add(10 * time.Minute) }
	for name, m := range map[string]matrix{
		"stripe": stripeMatrix(), "github": githubMatrix(), "shopify": shopifyMatrix(),
		"standard-webhooks": standardMatrix(), "slack": slackMatrix(),
	} {
		sabotaged := map[string]httpkey.Verifier{
			"accepts all":            verdictOf{theirs: m.theirs(), accept: true},
			"refuses all":            verdictOf{theirs: m.theirs()},
			"the newest secret only": m.build(secrets(m.secrets[0]), nil),
		}
		if m.clocked {
			sabotaged["a clock 10 minutes fast"] = m.build(secrets(m.secrets...), fast)
		}
		for what, v := range sabotaged {
			if len(disagreements(m.rows, v, m.theirs())) == 0 {
				t.Errorf("%s: the matrix passes a verifier that %s", name, what)
			}
		}
	}
}

// verdictOf is a sabotaged verifier: it accepts every request (with the
// official key when the official verifier accepts) or refuses every one.
type verdictOf struct {
	theirs official
	accept bool
}

func (v verdictOf) Verify(r *http.Request, body []byte) (string, error) {
	if !v.accept {
		return "", errors.New("refused")
	}
	key, _ := v.theirs(r.Header, body)
	return key, nil
}

// with returns h with name set to value ("" deletes it).
func with(h http.Header, name, value string) http.Header {
	h = h.Clone()
	if value == "" {
		h.Del(name)
	} else {
		h.Set(name, value)
	}
	return h
}

// twice returns h with a second field of name holding value.
func twice(h http.Header, name, value string) http.Header {
	h = h.Clone()
	h.Add(name, value)
	return h
}

func hexMAC(secret, message string) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(message))
	return hex.EncodeToString(m.Sum(nil))
}

func sha(body []byte) string {
	sum := sha256.Sum256(body)
	return hex.EncodeToString(sum[:])
}

func secrets(s ...string) [][]byte {
	out := make([][]byte, len(s))
	for i, v := range s {
		out[i] = []byte(v)
	}
	return out
}
