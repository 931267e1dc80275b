package contract

import (
	"fmt"
	"strings"
	"time"
)

// providers is the one table of the webhook providers an endpoint can name
// (Settings.WebhookProvider; package webhook holds their verifiers). Each
// retry is the span of the provider's documented redelivery, from the
// event's first delivery attempt to its last (see RetryPeriod), with its
// source.
var providers = []struct {
	name  string
	retry time.Duration
}{
	// "In live mode, Stripe attempts to deliver a given event to your
	// webhook endpoint for up to 3 days with an exponential back off."
	// https://docs.stripe.com/webhooks#retries
	{"stripe", 72 * time.Hour},
	// No automatic retries; a failed delivery can be redelivered (by hand
	// or through the API) if it was delivered in the past 3 days.
	// https://docs.github.com/en/webhooks/testing-and-troubleshooting-webhooks/redelivering-webhooks
	{"github", 72 * time.Hour},
	// "Webhooks will now be retried a total of 8 times over 4 hours",
	// with the original payload (since 2024-09-10; before, 19 times over
	// 48 hours). https://shopify.dev/changelog/updates-to-webhook-retry-mechanism,
	// https://shopify.dev/docs/apps/build/webhooks/troubleshooting-webhooks
	{"shopify", 4 * time.Hour},
	// The specification leaves the schedule to the sender; this is Svix's,
	// the scheme's origin: immediately, then 5 s, 5 min, 30 min, 2 h, 5 h,
	// 10 h and 10 h, each after the previous failure: 27 h 35 min 5 s in
	// all. A sender with a longer schedule needs a longer window.
	// https://docs.svix.com/retries
	{"standard-webhooks", 27*time.Hour + 35*time.Minute + 5*time.Second},
	// Three retries: nearly immediately, after 1 minute, after 5 minutes,
	// each after the previous failure: 6 minutes in all.
	// https://api.slack.com/apis/events-api#retries
	{"slack", 6 * time.Minute},
}

// Providers are the webhook providers' names, in the order of their table.
var Providers = func() []string {
	names := make([]string, len(providers))
	for i, p := range providers {
		names[i] = p.name
	}
	return names
}()

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

// ClientNone is the ClientAttribute of an endpoint whose keys every client
// shares: a choice made by name, for an endpoint whose keys are the
// callers' business facts whoever sends them, or one that a webhook
// verifier authenticates (the provider is the one client).
const ClientNone = "none"

// DefaultMaxRequestBytes is the default MaxRequestBytes: 1 MiB. A larger
// body gets 413 and costs no store request.
const DefaultMaxRequestBytes = 1 << 20

// ParseClient reads a ClientAttribute: kind "iam" (no name), "claim" or
// "header" with the name after the colon, or "" for ClientNone and "" (keys
// shared by every client). It is the one reading of the setting: the
// contract's rule, and package httpkey's choice of a client function.
func ParseClient(spec string) (kind, name string, err error) {
	kind, name, _ = strings.Cut(spec, ":")
	switch {
	case spec == "", spec == ClientNone:
		return "", "", nil
	case spec == "iam":
		return "iam", "", nil
	case (kind == "claim" || kind == "header") && name != "":
		return kind, name, nil
	}
	return "", "", fmt.Errorf("client attribute %q: want \"iam\", \"claim:<name>\", \"header:<name>\" or %q", spec, ClientNone)
}
