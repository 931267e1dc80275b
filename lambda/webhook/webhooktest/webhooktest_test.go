package webhooktest_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/webhook/webhooktest"
)

// Each signer reproduces a vector that its provider publishes, or one
// computed apart from this code from the provider's documentation.
func TestSignersMatchPublishedVectors(t *testing.T) {
	slackBody := "token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c"
	for _, tc := range []struct {
		name   string
		got    http.Header
		header string
		want   string
	}{
		// Python: hmac.new(b"whsec_test_secret", b"1700000000." + body, sha256).hexdigest()
		{"stripe", webhooktest.Stripe([]byte(`{"id":"evt_1NG8Du2eZvKYlo2CUI79vXWy","object":"event","type":"payment_intent.succeeded"}`), time.Unix(1700000000, 0), "whsec_test_secret"),
			"Stripe-Signature", "t=1700000000,v1=1ee8dd662a91c944c5fc90522bd8a6c2fa5ad2f05377bafef52d694497464c9a"},
		// GitHub's "Testing the webhook payload validation":
		// https://docs.github.com/en/webhooks/using-webhooks/validating-webhook-deliveries
		{"github", webhooktest.GitHub([]byte("Hello, World!"), "It's a Secret to Everybody"),
			"X-Hub-Signature-256", "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"},
		// Python: base64.b64encode(hmac.new(b"shpss_test_secret", body, sha256).digest())
		{"shopify", webhooktest.Shopify([]byte(`{"id":820982911946154508,"email":"jon@example.com"}`), "e-1", "shpss_test_secret"),
			"X-Shopify-Hmac-Sha256", "LnwdZPLBbdjkBwPD/lDL1/rYEGby/GHPtL1aAH6Dxjc="},
		// The official Go library's TestWebhookSign
		// (github.com/standard-webhooks/standard-webhooks/libraries/go).
		{"standard webhooks", webhooktest.StandardWebhooks([]byte(`{"test": 2432232314}`), "msg_p5jXN8AQM9LWM0D4loKWxJek", time.Unix(1614265330, 0), "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"),
			"webhook-signature", "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="},
		// Slack's worked example:
		// https://api.slack.com/authentication/verifying-requests-from-slack
		{"slack", webhooktest.Slack([]byte(slackBody), time.Unix(1531420618, 0), "8f742231b10e8888abcd99yyyzzz85a5"),
			"X-Slack-Signature", "v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503"},
	} {
		if got := tc.got.Get(tc.header); got != tc.want {
			t.Errorf("%s: %s = %q, want %q", tc.name, tc.header, got, tc.want)
		}
	}
}
