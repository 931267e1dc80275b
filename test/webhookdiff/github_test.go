package webhookdiff

import (
	"bytes"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v84/github"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/httpkey"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/webhook"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/webhook/webhooktest"
)

// githubOfficial is go-github's ValidatePayloadFromBody over the first
// X-Hub-Signature-256 field, for a JSON delivery; the event's identity is
// the signed payload it returns, keyed on its SHA-256.
func githubOfficial(h http.Header, body []byte, secret string) (string, bool) {
	payload, err := github.ValidatePayloadFromBody("application/json", bytes.NewReader(body), h.Get(github.SHA256SignatureHeader), []byte(secret))
	return sha(payload), err == nil
}

func TestGitHubAgreesWithGoGitHub(t *testing.T) { agree(t, githubMatrix()) }

func githubMatrix() matrix {
	const current, old = "gh-current", "gh-old"
	body := []byte(`{"action":"opened","number":1347,"repository":{"full_name":"octo/hello"}}`)
	good := webhooktest.GitHub(body, current)
	sig := good.Get("X-Hub-Signature-256")
	hexSig := strings.TrimPrefix(sig, "sha256=")
	set := func(v string) http.Header { return http.Header{"X-Hub-Signature-256": {v}} }
	rows := []row{
		{"signed", good, body},
		{"signed by the old secret during a rotation", webhooktest.GitHub(body, old), body},
		{"GitHub's published vector", set("sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"), []byte("Hello, World!")},
		{"another secret", webhooktest.GitHub(body, "gh-other"), body},
		{"a tampered body", good, append(body, '\n')},
		{"an empty body, signed", webhooktest.GitHub(nil, current), nil},
		{"no header", http.Header{}, body},
		{"an empty header", set(""), body},
		{"no prefix", set(hexSig), body},
		{"an upper-case prefix", set("SHA256=" + hexSig), body},
		{"upper-case hex", set("sha256=" + strings.ToUpper(hexSig)), body},
		{"not hex", set("sha256=" + strings.Repeat("zz", 32)), body},
		{"truncated", set(sig[:len(sig)-2]), body},
		{"a trailing space", set(sig + " "), body},
		{"the header twice, the same value", twice(good, "X-Hub-Signature-256", sig), body},
		{"the delivery id changed (unsigned)", with(good, "X-GitHub-Delivery", "forged"), body},
	}
	return matrix{
		rows:    rows,
		secrets: []string{current, old, "It's a Secret to Everybody"},
		one:     githubOfficial,
		clocked: false,
		build:   func(s [][]byte, _ func() time.Time) httpkey.Verifier { return webhook.GitHub{Secrets: s} },
	}
}
