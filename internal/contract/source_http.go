package contract

import (
	"fmt"
	"strings"
	"time"

	"github.com/idempotent-consumer/idempotent-consumer/internal/limits"
)

// webhookProviderDocs names the providers package webhook knows, as a
// message or a document lists them.
var webhookProviderDocs = strings.Join(Providers[:len(Providers)-1], ", ") + " or " + Providers[len(Providers)-1] + " (package webhook)"

// readable is d as a person writes it: "72h", "27h35m5s", "6m".
func readable(d time.Duration) string {
	return strings.Replace(strings.Replace(d.String(), "m0s", "m", 1), "h0m", "h", 1)
}

// ProviderWindow is the business window of a webhook endpoint of provider
// by default: the provider's redelivery period (RetryPeriod), or
// limits.DefaultWindow when that is longer, so that no delivery the
// provider documents outlives its fact's record.
func ProviderWindow(provider string) time.Duration {
	period, _ := RetryPeriod(provider)
	return max(period, limits.DefaultWindow)
}

// MaxRequestBytes is the largest MaxRequestBytes: 6 MB, what a Lambda
// function URL or an HTTP API hands a function in a request (a binary body
// arrives in base64, a third larger).
const MaxRequestBytes = 6_000_000

// httpFields are the HTTP endpoint's entries of the contract (fields.go
// appends them), each written only where it is not the default.
var httpFields = []Field{
	quietDefault(entry(WebhookProviderVar, "WebhookProvider", "Webhook",
		"none: the client's Idempotency-Key", "slack",
		"the webhook provider whose signature every request must carry, and whose event id is the key: "+webhookProviderDocs,
		func(s *Settings) *string { return &s.WebhookProvider }, none[string])),
	quietDefault(entry(WebhookSecretVar, "WebhookSecret", "WebhookSecret",
		"none: required with a provider", "arn:aws:secretsmanager:eu-west-1:123456789012:secret:stripe-AbCdEf",
		"the ARN of the Secrets Manager secret that holds the webhook's signing secrets (one, or a JSON array during a rotation), read at init",
		func(s *Settings) *string { return &s.WebhookSecret }, none[string])),
	quietDefault(entry(ClientAttributeVar, "ClientAttribute", "ClientAttribute",
		"iam; none with a webhook provider", "none",
		"the client attribute that scopes every key: iam (the caller's account and role or user), claim:<name>, header:<name>, or none (keys shared by every client)",
		func(s *Settings) *string { return &s.ClientAttribute }, DefaultClientAttribute)),
	quietDefault(entry(ReplayHeadersVar, "ReplayHeaders", "ReplayHeaders",
		"none", "X-Receipt,ETag",
		"the response headers stored and replayed to duplicates beside "+"the representation headers (Content-Type, Content-Encoding, Content-Language, Location, Content-Location)"+", comma-separated",
		func(s *Settings) *[]string { return &s.ReplayHeaders }, none[[]string])),
	quietDefault(entry(HashHeadersVar, "HashHeaders", "HashHeaders",
		"none", "X-Currency",
		"the request headers that are part of the payload hash, beside the method, the target and the body, comma-separated",
		func(s *Settings) *[]string { return &s.HashHeaders }, none[[]string])),
	quietDefault(entry(MaxRequestBytesVar, "MaxRequestBytes", "MaxRequestBytes",
		fmt.Sprint(DefaultMaxRequestBytes), "524288",
		"the largest request body accepted, in bytes",
		func(s *Settings) *int { return &s.MaxRequestBytes }, func(Settings) int { return DefaultMaxRequestBytes })),
}

// DefaultClientAttribute is ClientAttribute's default for the settings
// above it: an endpoint's keys are scoped to the caller's IAM identity (an
// endpoint's default auth), a webhook's are not (its verifier authenticates
// one client, the provider, whose event ids are the keys); other sources
// have no client.
func DefaultClientAttribute(s Settings) string {
	switch {
	case s.Source != SourceHTTP:
		return ""
	case s.WebhookProvider != "":
		return ClientNone
	}
	return "iam"
}

// httpProblems are the rules of an HTTP endpoint's settings
// (adapterProblems, for SourceHTTP): a known provider with its secret's
// ARN, a client attribute the adapter reads, header names, a body bound.
// Other sources do not read the HTTP settings, which are not judged for
// them.
func (s Settings) httpProblems() []string {
	var out []string
	bad := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	period, known := RetryPeriod(s.WebhookProvider)
	switch {
	case s.WebhookProvider == "":
		if s.WebhookSecret != "" {
			bad("WebhookSecret is given without a WebhookProvider; name the provider (%s), or leave the secret out", webhookProviderDocs)
		}
	case !known:
		bad("WebhookProvider %q is not one of %s; give one of them, or implement httpkey.Verifier in your handler", s.WebhookProvider, webhookProviderDocs)
	case s.WebhookSecret == "":
		bad("WebhookProvider %q needs WebhookSecret, the ARN of the Secrets Manager secret that holds its signing secret; give one (never the secret itself)", s.WebhookProvider)
	}
	if known && s.Window < period {
		bad("Window %s is shorter than %s's redelivery period, %s (contract.RetryPeriod): a delivery of a completed event after the window would run its effect again; give a Window of at least %s (the endpoint construct's default for %s)", Format(s.Window), s.WebhookProvider, readable(period), readable(period), s.WebhookProvider)
	}
	if v := s.WebhookSecret; v != "" && (!strings.HasPrefix(v, "arn:") || !strings.Contains(v, ":secretsmanager:") || !strings.Contains(v, ":secret:")) {
		bad("WebhookSecret is not the ARN of a Secrets Manager secret (arn:<partition>:secretsmanager:<region>:<account>:secret:<name>); give the secret's ARN, never the secret itself")
	}
	if _, _, err := ParseClient(s.ClientAttribute); err != nil {
		bad("ClientAttribute: %v", err)
	}
	if s.WebhookProvider != "" && s.ClientAttribute != ClientNone && s.ClientAttribute != "" {
		bad("ClientAttribute %q is refused with WebhookProvider %q: the provider's signature authenticates one client, the provider, and no caller may choose a scope of its own (a header, a claim or an IAM identity that an unauthenticated request does not carry); leave ClientAttribute out", s.ClientAttribute, s.WebhookProvider)
	}
	for _, h := range [][]string{s.ReplayHeaders, s.HashHeaders} {
		for _, name := range h {
			if !headerName(name) {
				bad("header name %q (ReplayHeaders or HashHeaders) is not an HTTP field name; give names such as \"Content-Type\", comma-separated", name)
			}
		}
	}
	if s.MaxRequestBytes < 1 || s.MaxRequestBytes > MaxRequestBytes {
		bad("MaxRequestBytes %d is out of range: give 1 to %d (what a function URL or an HTTP API carries)", s.MaxRequestBytes, MaxRequestBytes)
	}
	return out
}

// headerName reports whether name is an RFC 9110 token.
func headerName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}
