package contract_test

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/internal/limits"
)

// A queue consumer's environment says nothing of the source or of the HTTP
// settings; an endpoint's says what is not the default.
func TestHTTPSettingsAreQuietByDefault(t *testing.T) {
	s := contract.Defaults(30e9)
	s.Table, s.Namespace, s.Consumer = "t", "n", "c"
	for name := range s.Encode() {
		if name == contract.SourceVar || strings.HasPrefix(name, "HTTP_") {
			t.Errorf("a queue consumer's environment has %s", name)
		}
	}
	s.Source, s.WebhookProvider, s.WebhookSecret, s.ClientAttribute = contract.SourceHTTP, "github", "arn:aws:secretsmanager:eu-west-1:123456789012:secret:gh-AbCdEf", "none"
	s.Window = contract.ProviderWindow("github")
	env := s.Encode()
	if env[contract.SourceVar] != "http" || env[contract.WebhookProviderVar] != "github" || env[contract.ReplayHeadersVar] != "" || env[contract.ClientAttributeVar] != "" {
		t.Errorf("an endpoint's environment: %v", env)
	}
	back, err := contract.Decode(func(k string) string { return env[k] }, "")
	if err != nil || !reflect.DeepEqual(back, s) {
		t.Fatalf("Decode(Encode) = %+v, %v", back, err)
	}
}

// The HTTP rules, each a problem that names the setting and the fix.
func TestHTTPProblems(t *testing.T) {
	if got := contract.ProviderWindow("stripe"); got != 72*time.Hour {
		t.Errorf("ProviderWindow(stripe) = %s, want 72h", got)
	}
	if got := contract.ProviderWindow("slack"); got != limits.DefaultWindow {
		t.Errorf("ProviderWindow(slack) = %s, want the default window", got)
	}
	base := contract.Defaults(30e9)
	base.Table, base.Namespace, base.Consumer, base.Source = "t", "n", "c", contract.SourceHTTP
	for _, tc := range []struct {
		name string
		set  func(*contract.Settings)
		want string // "" means valid
	}{
		{"defaults", func(*contract.Settings) {}, ""},
		{"a provider with its secret", func(s *contract.Settings) {
			s.WebhookProvider, s.WebhookSecret = "stripe", "arn:aws:secretsmanager:eu-west-1:123456789012:secret:s-AbCdEf"
			s.Window = contract.ProviderWindow("stripe")
		}, ""},
		{"Stripe, which retries for 3 days, with the default window of 24 hours", func(s *contract.Settings) {
			s.WebhookProvider, s.WebhookSecret = "stripe", "arn:aws:secretsmanager:eu-west-1:123456789012:secret:s-AbCdEf"
		}, "Window 24h is shorter than stripe's redelivery period, 72h (contract.RetryPeriod)"},
		{"Standard Webhooks, whose senders retry for 27h35m5s, with the default window", func(s *contract.Settings) {
			s.WebhookProvider, s.WebhookSecret = "standard-webhooks", "arn:aws:secretsmanager:eu-west-1:123456789012:secret:s-AbCdEf"
		}, "Window 24h is shorter than standard-webhooks's redelivery period, 27h35m5s"},
		{"Shopify and Slack, whose retries end within the default window", func(s *contract.Settings) {
			s.WebhookProvider, s.WebhookSecret = "shopify", "arn:aws:secretsmanager:eu-west-1:123456789012:secret:s-AbCdEf"
		}, ""},
		{"a provider without a secret", func(s *contract.Settings) { s.WebhookProvider = "stripe" }, "needs WebhookSecret"},
		{"a secret without a provider", func(s *contract.Settings) {
			s.WebhookSecret = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:s-AbCdEf"
		}, "without a WebhookProvider"},
		{"the secret itself", func(s *contract.Settings) { s.WebhookProvider, s.WebhookSecret = "github", "whsec_plain" }, "never the secret itself"},
		{"an unknown provider", func(s *contract.Settings) {
			s.WebhookProvider, s.WebhookSecret = "paypal", "arn:aws:secretsmanager:r:1:secret:x"
		}, "implement httpkey.Verifier"},
		{"an unknown client attribute", func(s *contract.Settings) { s.ClientAttribute = "jwt" }, "ClientAttribute"},
		{"keys shared by every client, by name", func(s *contract.Settings) { s.ClientAttribute = "none" }, ""},
		{"a client-chosen scope on a webhook, whose requests are unauthenticated", func(s *contract.Settings) {
			s.WebhookProvider, s.WebhookSecret, s.ClientAttribute = "slack", "arn:aws:secretsmanager:eu-west-1:123456789012:secret:s-AbCdEf", "header:X-Tenant"
		}, `ClientAttribute "header:X-Tenant" is refused with WebhookProvider "slack"`},
		{"an IAM scope on a webhook", func(s *contract.Settings) {
			s.WebhookProvider, s.WebhookSecret, s.ClientAttribute = "shopify", "arn:aws:secretsmanager:eu-west-1:123456789012:secret:s-AbCdEf", "iam"
		}, `ClientAttribute "iam" is refused with WebhookProvider "shopify"`},
		{"a bad header name", func(s *contract.Settings) { s.HashHeaders = []string{"X Currency"} }, "not an HTTP field name"},
		{"a body too large", func(s *contract.Settings) { s.MaxRequestBytes = 7_000_000 }, "MaxRequestBytes 7000000"},
		{"an unknown source", func(s *contract.Settings) { s.Source = "sqs" }, `Source "sqs" is not a source`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := base
			tc.set(&s)
			got := strings.Join(s.Problems(), "\n")
			if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
				t.Fatalf("Problems() = %q, want %q", got, tc.want)
			}
			if strings.Contains(got, "whsec_plain") {
				t.Errorf("a problem quotes the secret: %q", got)
			}
		})
	}
}
