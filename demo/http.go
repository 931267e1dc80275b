package main

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/httpkey"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency/storetest"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/webhook"
)

// httpReport is what the HTTP part of the demo saw: per route, the events
// (or client keys), the requests sent, the effects run and how the other
// requests were answered.
type httpReport struct {
	routes []*routeReport
}

type routeReport struct {
	name                              string
	facts                             int
	requests                          atomic.Int64
	effects, replays, conflicts, c422 atomic.Int64
	unauthorized, other               atomic.Int64
}

func (r *httpReport) ok() bool {
	for _, rt := range r.routes {
		if int(rt.effects.Load()) != rt.facts || rt.other.Load() != 0 {
			return false
		}
	}
	return true
}

// line is the demo's one line about HTTP.
func (r *httpReport) line() string {
	var parts []string
	doubles := 0
	for _, rt := range r.routes {
		parts = append(parts, fmt.Sprintf("%s %d facts/%d requests → %d effects, %d replays, %d×409, %d×422, %d×401",
			rt.name, rt.facts, rt.requests.Load(), rt.effects.Load(), rt.replays.Load(), rt.conflicts.Load(), rt.c422.Load(), rt.unauthorized.Load()))
		doubles += max(0, int(rt.effects.Load())-rt.facts)
	}
	verdict := "OK"
	if !r.ok() {
		verdict = "FAILED"
	}
	return fmt.Sprintf("http demo %s: %s; doubles %d", verdict, strings.Join(parts, "; "), doubles)
}

// runHTTPDemo serves the webhooks of Stripe, GitHub and Shopify and a
// client endpoint with Idempotency-Key from a local server (package
// httpkey over an in-memory store, one namespace per route), sends each
// event with the retries its provider makes (Stripe: the same event id
// with a new t; Shopify: the same Event-Id, a later Triggered-At; GitHub:
// a redelivery with the same delivery id), forged deliveries, and client
// requests sent three at a time under one key plus one reuse of a key with
// another body, and reports what each route did.
func runHTTPDemo(events int) *httpReport {
	rep := &httpReport{}
	mux := http.NewServeMux()
	route := func(name, path string, v httpkey.Verifier, work time.Duration) *routeReport {
		rt := &routeReport{name: name}
		rep.routes = append(rep.routes, rt)
		guard, err := idempotency.NewGuard(storetest.NewMemoryStore(), idempotency.Config{Namespace: name, LeaseMax: 3 * time.Second, FinishBudget: time.Second})
		if err != nil {
			panic(err) // a literal configuration
		}
		effect := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			rt.effects.Add(1)
			time.Sleep(work) // the effect's own work, so that concurrent requests meet it running
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusCreated)
			fmt.Fprintf(w, `{"done":%d}`, rt.effects.Load())
		})
		mux.Handle(path, httpkey.New(guard, effect, httpkey.Config{Name: name, Verifier: v, Logger: slog.New(slog.DiscardHandler), Metrics: io.Discard}))
		return rt
	}
	stripeSecret, githubSecret, shopifySecret := "whsec_demo", "github-demo", "shpss_demo"
	stripe := route("stripe", "/hooks/stripe", webhook.Stripe{Secrets: [][]byte{[]byte(stripeSecret)}}, 0)
	github := route("github", "/hooks/github", webhook.GitHub{Secrets: [][]byte{[]byte(githubSecret)}}, 0)
	shopify := route("shopify", "/hooks/shopify", webhook.Shopify{Secrets: [][]byte{[]byte(shopifySecret)}}, 0)
	clients := route("clients", "/charges", nil, 200*time.Millisecond)
	srv := httptest.NewServer(mux)
	defer srv.Close()

	send := func(rt *routeReport, path, body string, hdr ...string) {
		rt.requests.Add(1)
		for range 20 {
			req, _ := http.NewRequest("POST", srv.URL+path, strings.NewReader(body))
			for i := 0; i+1 < len(hdr); i += 2 {
				req.Header.Set(hdr[i], hdr[i+1])
			}
			res, err := srv.Client().Do(req)
			if err != nil {
				rt.other.Add(1)
				return
			}
			_, _ = io.Copy(io.Discard, res.Body)
			res.Body.Close()
			switch {
			case res.StatusCode == http.StatusCreated && res.Header.Get(httpkey.HeaderReplayed) == "true":
				rt.replays.Add(1)
				return
			case res.StatusCode == http.StatusCreated:
				return
			case res.StatusCode == http.StatusConflict:
				rt.conflicts.Add(1)
				secs, _ := strconv.Atoi(res.Header.Get("Retry-After"))
				time.Sleep(time.Duration(max(secs, 1)) * time.Second) // as the draft asks of a client
			case res.StatusCode == http.StatusUnprocessableEntity:
				rt.c422.Add(1)
				return
			case res.StatusCode == http.StatusUnauthorized:
				rt.unauthorized.Add(1)
				return
			default:
				rt.other.Add(1)
				return
			}
		}
	}
	hexMAC := func(secret string, parts ...string) string {
		m := hmac.New(sha256.New, []byte(secret))
		for _, p := range parts {
			m.Write([]byte(p))
		}
		return hex.EncodeToString(m.Sum(nil))
	}
	now := time.Now().Unix()
	for i := range events {
		// Stripe: a delivery, and its retry minutes later with a new t.
		body := fmt.Sprintf(`{"id":"evt_demo_%d","object":"event","type":"payment_intent.succeeded"}`, i)
		stripe.facts++
		for _, t := range []int64{now - 120, now} {
			ts := strconv.FormatInt(t, 10)
			send(stripe, "/hooks/stripe", body, "Stripe-Signature", "t="+ts+",v1="+hexMAC(stripeSecret, ts, ".", body))
		}
		// GitHub: a delivery and a redelivery (same delivery id, same body).
		body = fmt.Sprintf(`{"action":"opened","number":%d}`, i)
		github.facts++
		for range 2 {
			send(github, "/hooks/github", body, "X-Hub-Signature-256", "sha256="+hexMAC(githubSecret, body), "X-GitHub-Delivery", fmt.Sprintf("d-%d", i))
		}
		// Shopify: a delivery and a retry with the original payload.
		body = fmt.Sprintf(`{"id":%d,"total_price":"10.00"}`, 820982911946154508+i)
		shopify.facts++
		m := hmac.New(sha256.New, []byte(shopifySecret))
		m.Write([]byte(body))
		sig := base64.StdEncoding.EncodeToString(m.Sum(nil))
		for _, at := range []string{"2026-12-01T10:00:00Z", "2026-12-01T10:05:00Z"} {
			send(shopify, "/hooks/shopify", body, "X-Shopify-Hmac-Sha256", sig, "X-Shopify-Event-Id", fmt.Sprintf("ev-%d", i), "X-Shopify-Triggered-At", at)
		}
	}
	// Forged deliveries: signed with a guessed secret.
	send(stripe, "/hooks/stripe", `{"id":"evt_forged"}`, "Stripe-Signature", fmt.Sprintf("t=%d,v1=%s", now, hexMAC("guess", strconv.FormatInt(now, 10), ".", `{"id":"evt_forged"}`)))
	send(github, "/hooks/github", `{"forged":true}`, "X-Hub-Signature-256", "sha256="+hexMAC("guess", `{"forged":true}`))
	send(shopify, "/hooks/shopify", `{"forged":true}`, "X-Shopify-Hmac-Sha256", base64.StdEncoding.EncodeToString([]byte(strings.Repeat("x", 32))), "X-Shopify-Event-Id", "ev-forged")
	// Clients: three at once under each key, then the key reused for
	// another body.
	var wg sync.WaitGroup
	for i := range events {
		key := fmt.Sprintf(`"order-%d"`, i)
		clients.facts++
		for range 3 {
			wg.Go(func() {
				send(clients, "/charges", fmt.Sprintf(`{"amount":%d}`, 100+i), "Idempotency-Key", key)
			})
		}
	}
	wg.Wait()
	for i := range events {
		send(clients, "/charges", `{"amount":1}`, "Idempotency-Key", fmt.Sprintf(`"order-%d"`, i))
	}
	return rep
}
