package webhook_test

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/httpkey"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/webhook"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/webhook/webhooktest"
)

// request is a POST of body with the headers h, then each name and value
// of extra added (a second field of a header, a header of another name).
func request(body string, h http.Header, extra ...string) *http.Request {
	r := httptest.NewRequest("POST", "/hooks", strings.NewReader(body))
	for name, values := range h {
		r.Header[name] = append([]string(nil), values...)
	}
	for i := 0; i+1 < len(extra); i += 2 {
		r.Header.Add(extra[i], extra[i+1])
	}
	return r
}

// hdr is a header of one name and value.
func hdr(name, value string) http.Header {
	h := http.Header{}
	h.Set(name, value)
	return h
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

// refusal fails unless err is a refusal of check: unauthorized, or for the
// check "event id" (after the signature verified) not an event.
func refusal(t *testing.T, err error, check string) {
	t.Helper()
	var e *webhook.Error
	kind := webhook.ErrUnauthorized
	if check == "event id" {
		kind = httpkey.ErrNotAnEvent
	}
	if !errors.As(err, &e) || !errors.Is(err, kind) || errors.Is(err, webhook.ErrUnauthorized) == (kind == httpkey.ErrNotAnEvent) || e.Check != check {
		t.Fatalf("err = %v, want a refusal of the %s check (%v)", err, check, kind)
	}
}

// noLeak fails if a refusal quotes a secret or the body.
func noLeak(t *testing.T, err error, secrets ...string) {
	t.Helper()
	for _, s := range secrets {
		if strings.Contains(err.Error(), s) {
			t.Fatalf("the refusal %q quotes %q", err, s)
		}
	}
}

// sha is the hex SHA-256 of body: the key of a delivery keyed on its body.
func sha(body string) string {
	sum := sha256.Sum256([]byte(body))
	return hex.EncodeToString(sum[:])
}

// verdict is one request to a verifier: accepted with key, or refused by
// check.
type verdict struct {
	name  string
	h     http.Header
	body  string
	check string // "" for accepted
	key   string // when accepted
}

func judge(t *testing.T, v httpkey.Verifier, cases []verdict, secrets ...string) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			key, err := v.Verify(request(tc.body, tc.h), []byte(tc.body))
			if tc.check == "" {
				if err != nil || key != tc.key {
					t.Fatalf("got %q, %v; want %q accepted", key, err, tc.key)
				}
				return
			}
			refusal(t, err, tc.check)
			noLeak(t, err, append(secrets, tc.body)...)
		})
	}
}

const stripeBody = `{"id":"evt_1NG8Du2eZvKYlo2CUI79vXWy","object":"event","type":"payment_intent.succeeded"}`

func TestStripe(t *testing.T) {
	now := time.Unix(1700000000, 0)
	b := []byte(stripeBody)
	v := webhook.Stripe{Secrets: [][]byte{[]byte("whsec_new"), []byte("whsec_test_secret")}, Now: func() time.Time { return now }}
	// The vector (webhooktest's TestSignersMatchPublishedVectors): Stripe's
	// scheme computed apart from this code.
	const vector = "t=1700000000,v1=1ee8dd662a91c944c5fc90522bd8a6c2fa5ad2f05377bafef52d694497464c9a"
	sig := func(at time.Time, secrets ...string) http.Header { return webhooktest.Stripe(b, at, secrets...) }
	v1 := strings.TrimPrefix(sig(now, "whsec_test_secret").Get("Stripe-Signature"), "t=1700000000,")
	const id = "evt_1NG8Du2eZvKYlo2CUI79vXWy"
	judge(t, v, []verdict{
		{"the vector", hdr("Stripe-Signature", vector), stripeBody, "", id},
		{"a rotation: one v1 per secret, and a v0 ignored", hdr("Stripe-Signature", sig(now, "whsec_unknown", "whsec_test_secret").Get("Stripe-Signature")+",v0="+strings.Repeat("0", 64)), stripeBody, "", id},
		{"a timestamp ahead of the clock, as stripe-go accepts", sig(now.Add(time.Hour), "whsec_new"), stripeBody, "", id},
		{"300 s old", sig(now.Add(-300*time.Second), "whsec_new"), stripeBody, "", id},
		{"301 s old", sig(now.Add(-301*time.Second), "whsec_new"), stripeBody, "timestamp", ""},
		{"no header", nil, stripeBody, "header", ""},
		{"no t", hdr("Stripe-Signature", v1), stripeBody, "header", ""},
		{"no v1", hdr("Stripe-Signature", "t=1700000000"), stripeBody, "header", ""},
		{"garbage", hdr("Stripe-Signature", "nonsense"), stripeBody, "header", ""},
		{"a space after the comma: no v1, as stripe-go reads it", hdr("Stripe-Signature", "t=1700000000, "+v1), stripeBody, "header", ""},
		{"an element with two =", hdr("Stripe-Signature", vector+",v1=a=b"), stripeBody, "header", ""},
		{"t twice", hdr("Stripe-Signature", vector+",t=1700000000"), stripeBody, "header", ""},
		{"another secret", sig(now, "whsec_other"), stripeBody, "signature", ""},
		{"a changed body", sig(now, "whsec_new"), stripeBody + " ", "signature", ""},
		{"a signed body without an id", webhooktest.Stripe([]byte(`{"object":"event"}`), now, "whsec_new"), `{"object":"event"}`, "event id", ""},
		{"a signed body that is not JSON", webhooktest.Stripe([]byte("id=evt_1"), now, "whsec_new"), "id=evt_1", "event id", ""},
	}, "whsec_test_secret", "whsec_new")
	// An hour on: a retry (the same event, a new t) is the same fact; the
	// vector is too old.
	v.Now = func() time.Time { return now.Add(time.Hour) }
	judge(t, v, []verdict{
		{"a retry an hour on: the same event, a new t", sig(now.Add(time.Hour), "whsec_test_secret"), stripeBody, "", id},
		{"the vector an hour on", hdr("Stripe-Signature", vector), stripeBody, "timestamp", ""},
		{"a timestamp in milliseconds is ahead, not old, as stripe-go reads it", sig(time.Unix(now.UnixMilli(), 0), "whsec_new"), stripeBody, "", id},
	})
	_, err := webhook.Stripe{}.Verify(request(stripeBody, nil), b)
	refusal(t, err, "secret")
}

func TestGitHub(t *testing.T) {
	// GitHub's published test values (webhooktest's vectors).
	const secret, body = "It's a Secret to Everybody", "Hello, World!"
	const sig = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"
	const key = "dffd6021bb2bd5b0af676290809ec3a53191dd81c7f70a4b28688a362182986f" // sha256sum of the body, in hex
	v := webhook.GitHub{Secrets: [][]byte{[]byte("rotated-in"), []byte(secret)}}
	judge(t, v, []verdict{
		{"the published vector", with(hdr("X-Hub-Signature-256", sig), "X-GitHub-Delivery", "72d3162e-cc78-11e3-81ab-4c9367dc0958"), body, "", key},
		{"a redelivery under another (unsigned) delivery id: the same fact", with(hdr("X-Hub-Signature-256", sig), "X-GitHub-Delivery", "forged"), body, "", key},
		{"the newer secret", webhooktest.GitHub([]byte(body), "rotated-in"), body, "", key},
		{"no header", nil, body, "header", ""},
		{"sha1 in the SHA-256 header", hdr("X-Hub-Signature-256", "sha1="+strings.Repeat("0", 40)), body, "header", ""},
		{"not hex", hdr("X-Hub-Signature-256", "sha256=zz"), body, "header", ""},
		{"a changed body", hdr("X-Hub-Signature-256", sig), body + "!", "signature", ""},
		{"uppercase scheme", hdr("X-Hub-Signature-256", "SHA256="+strings.TrimPrefix(sig, "sha256=")), body, "header", ""},
		{"another secret", webhooktest.GitHub([]byte(body), "wrong"), body, "signature", ""},
	}, secret)
}

func TestShopify(t *testing.T) {
	const body = `{"id":820982911946154508,"email":"jon@example.com"}`
	const vector = "LnwdZPLBbdjkBwPD/lDL1/rYEGby/GHPtL1aAH6Dxjc=" // webhooktest's vector
	const id = "98880550-7158-44d4-b7cd-2c97c8a091b5"
	v := webhook.Shopify{Secrets: [][]byte{[]byte("shpss_new"), []byte("shpss_test_secret")}}
	signed := webhooktest.Shopify([]byte(body), id, "shpss_test_secret")
	newer := http.Header{"Shopify-Hmac-Sha256": {vector}, "Shopify-Event-Id": {id}}
	judge(t, v, []verdict{
		{"the vector", with(signed, "X-Shopify-Triggered-At", "2026-12-01T10:00:00Z"), body, "", id},
		{"a retry: the same event id, a later Triggered-At", with(signed, "X-Shopify-Triggered-At", "2026-12-01T10:05:00Z"), body, "", id},
		{"the newer spelling, without X-", newer, body, "", id},
		{"both spellings, agreeing", with(signed, "Shopify-Hmac-Sha256", vector), body, "", id},
		{"X- HMAC, newer event id", with(with(signed, "X-Shopify-Event-Id", ""), "Shopify-Event-Id", id), body, "", id},
		{"both spellings, HMACs disagreeing", with(signed, "Shopify-Hmac-Sha256", webhooktest.Shopify([]byte(body), id, "x").Get("X-Shopify-Hmac-Sha256")), body, "header", ""},
		{"both spellings, event ids disagreeing", with(signed, "Shopify-Event-Id", "other"), body, "header", ""},
		{"no header", nil, body, "header", ""},
		{"hex instead of base64", hdr("X-Shopify-Hmac-Sha256", strings.Repeat("ab", 32)), body, "header", ""},
		{"a changed body", signed, body + " ", "signature", ""},
		{"no event id", hdr("X-Shopify-Hmac-Sha256", vector), body, "event id", ""},
	}, "shpss_test_secret", "shpss_new")
	keyed := webhook.Shopify{Secrets: v.Secrets, KeyOnBody: true}
	judge(t, keyed, []verdict{
		{"keyed on the body", signed, body, "", sha(body)},
	})
}

func TestStandardWebhooks(t *testing.T) {
	// The official library's TestWebhookSign (webhooktest's vectors).
	const secret, id, body = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "msg_p5jXN8AQM9LWM0D4loKWxJek", `{"test": 2432232314}`
	at := time.Unix(1614265330, 0)
	b := []byte(body)
	v := webhook.StandardWebhooks{Secrets: [][]byte{[]byte("whsec_" + "bmV3LWtleQ=="), []byte(secret)}, Now: func() time.Time { return at }}
	signed := webhooktest.StandardWebhooks(b, id, at, secret)
	judge(t, v, []verdict{
		{"the vector", with(signed, "webhook-signature", "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="), body, "", id},
		{"a rotation: two v1, and a v2 ignored", with(signed, "webhook-signature", "v2,abc "+webhooktest.StandardWebhooks(b, id, at, "whsec_b3RoZXI=", secret).Get("webhook-signature")), body, "", id},
		{"a retry: the same id, a new timestamp", webhooktest.StandardWebhooks(b, id, at.Add(time.Minute), secret), body, "", id},
		{"5 minutes ahead", webhooktest.StandardWebhooks(b, id, at.Add(5*time.Minute), secret), body, "", id},
		{"5 minutes and 1 s ahead", webhooktest.StandardWebhooks(b, id, at.Add(5*time.Minute+time.Second), secret), body, "timestamp", ""},
		{"5 minutes and 1 s old", webhooktest.StandardWebhooks(b, id, at.Add(-5*time.Minute-time.Second), secret), body, "timestamp", ""},
		{"a new id, the old signature", with(signed, "webhook-id", "msg_other"), body, "signature", ""},
		{"a changed body", signed, body + " ", "signature", ""},
		{"another secret", webhooktest.StandardWebhooks(b, id, at, "whsec_b3RoZXI="), body, "signature", ""},
		{"the signature as hex", with(signed, "webhook-signature", "v1,"+strings.Repeat("ab", 32)), body, "signature", ""},
		{"no webhook-id", with(signed, "webhook-id", ""), body, "header", ""},
		{"no webhook-timestamp", with(signed, "webhook-timestamp", ""), body, "header", ""},
		{"no webhook-signature", with(signed, "webhook-signature", ""), body, "header", ""},
		{"a timestamp in milliseconds", with(signed, "webhook-timestamp", "1614265330000"), body, "timestamp", ""},
		{"a timestamp not a number", with(signed, "webhook-timestamp", "soon"), body, "header", ""},
	}, secret)
	// A secret without the prefix is the same key, as the official
	// library reads it.
	bare := webhook.StandardWebhooks{Secrets: [][]byte{[]byte(strings.TrimPrefix(secret, "whsec_"))}, Now: v.Now}
	judge(t, bare, []verdict{{"a secret without whsec_", signed, body, "", id}})
	bad := webhook.StandardWebhooks{Secrets: [][]byte{[]byte("whsec_not base64!")}, Now: v.Now}
	judge(t, bad, []verdict{{"a secret that is not base64", signed, body, "secret", ""}}, "not base64")
	if _, err := webhook.New("standard-webhooks", bad.Secrets); err == nil {
		t.Error("New accepted a secret that is not base64")
	}
}

func TestSlack(t *testing.T) {
	// Slack's worked example (webhooktest's vectors): a slash command.
	const secret = "8f742231b10e8888abcd99yyyzzz85a5"
	const command = "token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c"
	const event = `{"type":"event_callback","event_id":"Ev08MFMKH6","event":{"type":"app_mention"}}`
	at := time.Unix(1531420618, 0)
	v := webhook.Slack{Secrets: [][]byte{[]byte("newer"), []byte(secret)}, Now: func() time.Time { return at }}
	sign := func(body string, t time.Time, s string) http.Header { return webhooktest.Slack([]byte(body), t, s) }
	signed := sign(command, at, secret)
	judge(t, v, []verdict{
		{"the worked example: keyed on the body", with(signed, "X-Slack-Signature", "v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503"), command, "", sha(command)},
		{"an event: keyed on its event_id", sign(event, at, secret), event, "", "Ev08MFMKH6"},
		{"a retry of the event: a new timestamp, X-Slack-Retry-Num", with(sign(event, at.Add(time.Minute), "newer"), "X-Slack-Retry-Num", "1"), event, "", "Ev08MFMKH6"},
		{"5 minutes old", sign(event, at.Add(-5*time.Minute), secret), event, "", "Ev08MFMKH6"},
		{"5 minutes and 1 s old", sign(event, at.Add(-5*time.Minute-time.Second), secret), event, "timestamp", ""},
		{"5 minutes and 1 s ahead", sign(event, at.Add(5*time.Minute+time.Second), secret), event, "timestamp", ""},
		{"another secret", sign(event, at, "other"), event, "signature", ""},
		{"a changed body", signed, command + "&x=1", "signature", ""},
		{"a changed timestamp", with(signed, "X-Slack-Request-Timestamp", "1531420619"), command, "signature", ""},
		{"no signature", with(signed, "X-Slack-Signature", ""), command, "header", ""},
		{"no timestamp", with(signed, "X-Slack-Request-Timestamp", ""), command, "header", ""},
		{"v1 instead of v0", with(signed, "X-Slack-Signature", "v1="+strings.Repeat("ab", 32)), command, "header", ""},
		{"a timestamp not a number", with(signed, "X-Slack-Request-Timestamp", "now"), command, "header", ""},
	}, secret, "newer")
}

// A header repeated with the same value is accepted, as the official
// libraries (which read the first) accept it; repeated with different
// values, it is refused by the header check, where they would read the
// first: a provider never sends two.
func TestRepeatedHeaders(t *testing.T) {
	now := time.Unix(1700000000, 0)
	clock := func() time.Time { return now }
	body := []byte(`{"id":"evt_1","event_id":"Ev1"}`)
	for _, tc := range []struct {
		name   string
		v      httpkey.Verifier
		good   http.Header
		header string
		other  string
	}{
		{"stripe", webhook.Stripe{Secrets: [][]byte{[]byte("s")}, Now: clock}, webhooktest.Stripe(body, now, "s"), "Stripe-Signature", webhooktest.Stripe(body, now, "x").Get("Stripe-Signature")},
		{"github", webhook.GitHub{Secrets: [][]byte{[]byte("s")}}, webhooktest.GitHub(body, "s"), "X-Hub-Signature-256", webhooktest.GitHub(body, "x").Get("X-Hub-Signature-256")},
		{"shopify hmac", webhook.Shopify{Secrets: [][]byte{[]byte("s")}}, webhooktest.Shopify(body, "e", "s"), "X-Shopify-Hmac-Sha256", webhooktest.Shopify(body, "e", "x").Get("X-Shopify-Hmac-Sha256")},
		{"shopify event id", webhook.Shopify{Secrets: [][]byte{[]byte("s")}}, webhooktest.Shopify(body, "e", "s"), "X-Shopify-Event-Id", "f"},
		{"standard webhooks signature", webhook.StandardWebhooks{Secrets: [][]byte{[]byte("whsec_c2VjcmV0")}, Now: clock}, webhooktest.StandardWebhooks(body, "m", now, "whsec_c2VjcmV0"), "webhook-signature", "v1,AAAA"},
		{"standard webhooks id", webhook.StandardWebhooks{Secrets: [][]byte{[]byte("whsec_c2VjcmV0")}, Now: clock}, webhooktest.StandardWebhooks(body, "m", now, "whsec_c2VjcmV0"), "webhook-id", "n"},
		{"slack signature", webhook.Slack{Secrets: [][]byte{[]byte("s")}, Now: clock}, webhooktest.Slack(body, now, "s"), "X-Slack-Signature", webhooktest.Slack(body, now, "x").Get("X-Slack-Signature")},
		{"slack timestamp", webhook.Slack{Secrets: [][]byte{[]byte("s")}, Now: clock}, webhooktest.Slack(body, now, "s"), "X-Slack-Request-Timestamp", "1700000001"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := tc.v.Verify(request(string(body), tc.good, tc.header, tc.good.Get(tc.header)), body); err != nil {
				t.Fatalf("the same value twice: %v", err)
			}
			for _, order := range [][2]string{{tc.good.Get(tc.header), tc.other}, {tc.other, tc.good.Get(tc.header)}} {
				r := request(string(body), with(tc.good, tc.header, order[0]), tc.header, order[1])
				_, err := tc.v.Verify(r, body)
				refusal(t, err, "header")
			}
		})
	}
}

func TestNew(t *testing.T) {
	want := []string{"stripe", "github", "shopify", "standard-webhooks", "slack"}
	if strings.Join(contract.Providers, ",") != strings.Join(want, ",") {
		t.Fatalf("Providers = %v", contract.Providers)
	}
	for _, p := range contract.Providers {
		if _, err := webhook.New(p, [][]byte{[]byte("c2VjcmV0")}); err != nil {
			t.Errorf("New(%q): %v", p, err)
		}
	}
	if _, err := webhook.New("paypal", nil); err == nil {
		t.Error("New(paypal) accepted")
	}
}

// Each provider's documented redelivery horizon (the sources are beside
// the table in new.go), and none for a provider New does not know.
func TestRetryPeriod(t *testing.T) {
	for _, tc := range []struct {
		provider string
		want     time.Duration
	}{
		{"stripe", 72 * time.Hour},
		{"github", 72 * time.Hour},
		{"shopify", 4 * time.Hour},
		{"standard-webhooks", 27*time.Hour + 35*time.Minute + 5*time.Second},
		{"slack", 6 * time.Minute},
	} {
		if got, ok := contract.RetryPeriod(tc.provider); !ok || got != tc.want {
			t.Errorf("RetryPeriod(%q) = %v, %v; want %v", tc.provider, got, ok, tc.want)
		}
	}
	for _, p := range contract.Providers {
		if d, ok := contract.RetryPeriod(p); !ok || d <= 0 {
			t.Errorf("RetryPeriod(%q) = %v, %v", p, d, ok)
		}
	}
	if _, ok := contract.RetryPeriod("paypal"); ok {
		t.Error("RetryPeriod(paypal) is known")
	}
}
