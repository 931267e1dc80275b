package webhookdiff

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/httpkey"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/webhook"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/webhook/webhooktest"
)

// slackOfficial is slack-go's SecretsVerifier (NewSecretsVerifier, Write,
// Ensure). Its key: the event_id of slackevents' EventsAPICallbackEvent for
// an Events API body, else the SHA-256 of the body (our documented key for
// slash commands and interactions, which carry no id).
func slackOfficial(h http.Header, body []byte, secret string) (string, bool) {
	sv, err := slack.NewSecretsVerifier(h, secret)
	if err != nil {
		return "", false
	}
	if _, err := sv.Write(body); err != nil || sv.Ensure() != nil {
		return "", false
	}
	var cb slackevents.EventsAPICallbackEvent
	if json.Unmarshal(body, &cb) == nil && cb.EventID != "" {
		return cb.EventID, true
	}
	return sha(body), true
}

func TestSlackAgreesWithSlackGo(t *testing.T) { agree(t, slackMatrix()) }

func slackMatrix() matrix {
	const current, old = "8f742231b10e8888abcd99yyyzzz85a5", "old-signing-secret"
	event := []byte(`{"token":"t","team_id":"T1","api_app_id":"A1","type":"event_callback","event_id":"Ev08MFMKH6","event_time":1700000000,"event":{"type":"app_mention","text":"hi"}}`)
	command := []byte("token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&command=%2Fwebhook-collect&text=&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c")
	now := time.Now()
	sign := func(body []byte, at time.Time, s string) http.Header { return webhooktest.Slack(body, at, s) }
	good := sign(event, now, current)
	sig := good.Get("X-Slack-Signature")
	ts := strconv.FormatInt(now.Unix(), 10)
	raw := func(ts string) http.Header { // signed over the timestamp's text as sent
		return http.Header{"X-Slack-Request-Timestamp": {ts}, "X-Slack-Signature": {"v0=" + hexMAC(current, "v0:"+ts+":"+string(event))}}
	}
	rows := []row{
		{"an event, signed", good, event},
		{"a slash command, signed", sign(command, now, current), command},
		{"signed by the old secret during a rotation", sign(event, now, old), event},
		{"a retry, X-Slack-Retry-Num 1", with(sign(event, now, current), "X-Slack-Retry-Num", "1"), event},
		{"another secret", sign(event, now, "other"), event},
		{"a tampered body", good, append(event, ' ')},
		{"a tampered command", sign(command, now, current), append(command, []byte("&x=1")...)},
		{"4 minutes old", sign(event, now.Add(-4*time.Minute), current), event},
		{"6 minutes old", sign(event, now.Add(-6*time.Minute), current), event},
		{"4 minutes ahead", sign(event, now.Add(4*time.Minute), current), event},
		{"6 minutes ahead", sign(event, now.Add(6*time.Minute), current), event},
		{"another timestamp under the signature", with(good, "X-Slack-Request-Timestamp", strconv.FormatInt(now.Unix()-1, 10)), event},
		{"a timestamp with a plus sign, signed as sent", raw("+" + ts), event},
		{"a timestamp not a number", raw("now"), event},
		{"no signature", with(good, "X-Slack-Signature", ""), event},
		{"no timestamp", with(good, "X-Slack-Request-Timestamp", ""), event},
		{"v1= instead of v0=", with(good, "X-Slack-Signature", "v1="+strings.TrimPrefix(sig, "v0=")), event},
		{"not hex", with(good, "X-Slack-Signature", "v0="+strings.Repeat("zz", 32)), event},
		{"truncated", with(good, "X-Slack-Signature", sig[:len(sig)-2]), event},
		{"upper-case hex", with(good, "X-Slack-Signature", "v0="+strings.ToUpper(strings.TrimPrefix(sig, "v0="))), event},
		{"the signature twice, the same value", twice(good, "X-Slack-Signature", sig), event},
		{"an event without event_id (url_verification)", sign([]byte(`{"type":"url_verification","challenge":"c"}`), now, current), []byte(`{"type":"url_verification","challenge":"c"}`)},
	}
	return matrix{
		rows:    rows,
		secrets: []string{current, old},
		one:     slackOfficial,
		clocked: true,
		build:   func(s [][]byte, now func() time.Time) httpkey.Verifier { return webhook.Slack{Secrets: s, Now: now} },
	}
}
