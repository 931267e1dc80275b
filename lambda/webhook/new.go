package webhook

import (
	"fmt"
	"strings"

	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/httpkey"
)

// provider is one entry of the table that New reads: a provider's name
// (one of contract.Providers, which gives its redelivery horizon) and its
// verifier over secrets.
type provider struct {
	name   string
	verify func(secrets [][]byte) (httpkey.Verifier, error)
}

// providers are the verifiers of the providers of contract.Providers, in
// the order of its table.
var providers = []provider{
	{"stripe", func(s [][]byte) (httpkey.Verifier, error) { return Stripe{Secrets: s}, nil }},
	{"github", func(s [][]byte) (httpkey.Verifier, error) { return GitHub{Secrets: s}, nil }},
	{"shopify", func(s [][]byte) (httpkey.Verifier, error) { return Shopify{Secrets: s}, nil }},
	{"standard-webhooks", newStandardWebhooks},
	{"slack", func(s [][]byte) (httpkey.Verifier, error) { return Slack{Secrets: s}, nil }},
}

// New returns the verifier of a provider by its name ("stripe", "github", "shopify", "standard-webhooks" or "slack"),
// over secrets, with its defaults: how the handler builds the verifier the
// contract names. A secret the provider's scheme cannot use (Standard
// Webhooks: not base64) is refused here, at init.
func New(provider string, secrets [][]byte) (httpkey.Verifier, error) {
	for _, p := range providers {
		if p.name == provider {
			return p.verify(secrets)
		}
	}
	return nil, fmt.Errorf("webhook provider %q: want one of %s", provider, strings.Join(contract.Providers, ", "))
}

func newStandardWebhooks(secrets [][]byte) (httpkey.Verifier, error) {
	if _, err := standardKeys(secrets); err != nil {
		return nil, err
	}
	return StandardWebhooks{Secrets: secrets}, nil
}
