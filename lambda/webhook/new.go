package webhook

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/httpkey"
)

// provider is one entry of the table that New, Providers and RetryPeriod
// read: a provider's name, its documented redelivery horizon, and its
// verifier over secrets.
type provider struct {
	name   string
	retry  time.Duration
	verify func(secrets [][]byte) (httpkey.Verifier, error)
}

// providers is the one table of the providers New knows. Each retry is the
// span of the provider's documented redelivery, from the event's first
// delivery attempt to its last (see RetryPeriod), with its source.
var providers = []provider{
	// "In live mode, Stripe attempts to deliver a given event to your
	// webhook endpoint for up to 3 days with an exponential back off."
	// https://docs.stripe.com/webhooks#retries
	{"stripe", 72 * time.Hour, func(s [][]byte) (httpkey.Verifier, error) { return Stripe{Secrets: s}, nil }},
	// No automatic retries; a failed delivery can be redelivered (by hand
	// or through the API) if it was delivered in the past 3 days.
	// https://docs.github.com/en/webhooks/testing-and-troubleshooting-webhooks/redelivering-webhooks
	{"github", 72 * time.Hour, func(s [][]byte) (httpkey.Verifier, error) { return GitHub{Secrets: s}, nil }},
	// "Webhooks will now be retried a total of 8 times over 4 hours",
	// with the original payload (since 2024-09-10; before, 19 times over
	// 48 hours). https://shopify.dev/changelog/updates-to-webhook-retry-mechanism,
	// https://shopify.dev/docs/apps/build/webhooks/troubleshooting-webhooks
	{"shopify", 4 * time.Hour, func(s [][]byte) (httpkey.Verifier, error) { return Shopify{Secrets: s}, nil }},
	// The specification leaves the schedule to the sender; this is Svix's,
	// the scheme's origin: immediately, then 5 s, 5 min, 30 min, 2 h, 5 h,
	// 10 h and 10 h, each after the previous failure: 27 h 35 min 5 s in
	// all. A sender with a longer schedule needs a longer window.
	// https://docs.svix.com/retries
	{"standard-webhooks", 27*time.Hour + 35*time.Minute + 5*time.Second, newStandardWebhooks},
	// Three retries: nearly immediately, after 1 minute, after 5 minutes,
	// each after the previous failure: 6 minutes in all.
	// https://api.slack.com/apis/events-api#retries
	{"slack", 6 * time.Minute, func(s [][]byte) (httpkey.Verifier, error) { return Slack{Secrets: s}, nil }},
}

// Providers are the names New knows, in the order of its table.
var Providers = func() []string {
	names := make([]string, len(providers))
	for i, p := range providers {
		names[i] = p.name
	}
	return names
}()

// New returns the verifier of a provider by its name (one of Providers),
// over secrets, with its defaults: how the handler builds the verifier the
// contract names. A secret the provider's scheme cannot use (Standard
// Webhooks: not base64) is refused here, at init.
func New(provider string, secrets [][]byte) (httpkey.Verifier, error) {
	for _, p := range providers {
		if p.name == provider {
			return p.verify(secrets)
		}
	}
	return nil, fmt.Errorf("webhook provider %q: want one of %s", provider, strings.Join(Providers, ", "))
}

// RetryPeriod returns a provider's redelivery horizon, and whether the
// provider is one of Providers: the longest time, from an event's first
// delivery attempt, after which the provider may still deliver that same
// event again by itself (the span of its documented automatic retry
// schedule), or, for GitHub, which retries nothing, the documented window
// in which a failed delivery can be redelivered on request. A business
// window shorter than this lets a late delivery of a completed event run
// it again. It does not count a resend by hand from a provider's dashboard
// beyond that documented window, nor delivery lag.
//
//	stripe              72h        (3 days, live mode)
//	github              72h        (redeliveries of the past 3 days)
//	shopify             4h         (8 retries)
//	standard-webhooks   27h35m5s   (Svix's schedule)
//	slack               6m         (3 retries)
func RetryPeriod(provider string) (time.Duration, bool) {
	for _, p := range providers {
		if p.name == provider {
			return p.retry, true
		}
	}
	return 0, false
}

func newStandardWebhooks(secrets [][]byte) (httpkey.Verifier, error) {
	if _, err := standardKeys(secrets); err != nil {
		return nil, err
	}
	return StandardWebhooks{Secrets: secrets}, nil
}

// ParseSecrets reads the secrets of a Secrets Manager secret's value: a
// JSON array of strings (["new","old"], during a rotation) or one secret
// as it is. Empty secrets are refused.
func ParseSecrets(value string) ([][]byte, error) {
	var list []string
	if strings.HasPrefix(strings.TrimSpace(value), "[") {
		if err := json.Unmarshal([]byte(value), &list); err != nil {
			return nil, fmt.Errorf("the secret looks like a JSON array but is not one of strings: %v", err)
		}
	} else {
		list = []string{value}
	}
	out := make([][]byte, 0, len(list))
	for i, s := range list {
		if s == "" {
			return nil, fmt.Errorf("secret %d of %d is empty", i+1, len(list))
		}
		out = append(out, []byte(s))
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("the secret lists no secret")
	}
	return out, nil
}
