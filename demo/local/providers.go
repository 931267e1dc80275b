package local

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"time"
)

// paymentProvider is a fake payment API that behaves like a real one: it
// honours the Idempotency-Key header (the same key returns the same charge,
// never a second one) and it sometimes misbehaves as the scenario says:
// slow answers, or a charge made and then a 502 (the caller cannot tell
// whether it was charged).
type paymentProvider struct {
	mu       sync.Mutex
	byKey    map[string]string // idempotency key -> charge id
	perOrder map[string]int    // order id -> charges made
	slow     func(orderID string) bool
	failOnce map[string]bool // order ids whose first charge answers 502
	delay    time.Duration
	injected int // 502s answered after a charge
	// down and up bound the API's outage (startOutage): every charge
	// request in it is answered 503 and charges nothing.
	down, up time.Time
	refused  int // requests answered 503 in the outage
}

// startOutage takes the API down for d from now, once: a later call does
// nothing.
func (p *paymentProvider) startOutage(d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.down.IsZero() && d > 0 {
		p.down = time.Now()
		p.up = p.down.Add(d)
	}
}

// inOutage reports whether the API is down now, and counts the request.
func (p *paymentProvider) inOutage() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	if now.Before(p.down) || !now.Before(p.up) {
		return false
	}
	p.refused++
	return true
}

func newPaymentProvider(slow func(string) bool, failOnce map[string]bool, delay time.Duration) *paymentProvider {
	return &paymentProvider{byKey: map[string]string{}, perOrder: map[string]int{}, slow: slow, failOnce: failOnce, delay: delay}
}

func (p *paymentProvider) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/charges" {
		http.NotFound(w, r)
		return
	}
	key := r.Header.Get("Idempotency-Key")
	var req struct {
		OrderID string `json:"orderId"`
		Amount  int64  `json:"amount"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || key == "" || req.OrderID == "" {
		http.Error(w, "bad request: JSON body with orderId and an Idempotency-Key header required", http.StatusBadRequest)
		return
	}
	if p.inOutage() {
		http.Error(w, "payment API unavailable (the demo's outage)", http.StatusServiceUnavailable)
		return
	}
	if p.slow(req.OrderID) {
		time.Sleep(p.delay)
	}
	p.mu.Lock()
	id, seen := p.byKey[key]
	if !seen {
		id = fmt.Sprintf("ch_%d", len(p.byKey)+1)
		p.byKey[key] = id
		p.perOrder[req.OrderID]++
	}
	fail := !seen && p.failOnce[req.OrderID]
	if fail {
		p.injected++
	}
	p.mu.Unlock()
	if fail {
		http.Error(w, "upstream connection reset", http.StatusBadGateway)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]string{"id": id})
}

// charges returns the number of charges made, in total and per order.
func (p *paymentProvider) charges() (int, map[string]int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	per := make(map[string]int, len(p.perOrder))
	for k, v := range p.perOrder {
		per[k] = v
	}
	return len(p.byKey), per
}

// mailProvider is a fake e-mail API with no idempotency support, like most
// real ones: every request sends an e-mail. Only the consumer's guard keeps
// receipts single.
type mailProvider struct {
	mu       sync.Mutex
	perOrder map[string]int
	sent     int
}

func (m *mailProvider) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/receipts" {
		http.NotFound(w, r)
		return
	}
	var req struct {
		OrderID string `json:"orderId"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.OrderID == "" {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	m.mu.Lock()
	m.perOrder[req.OrderID]++
	m.sent++
	id := fmt.Sprintf("msg_%d", m.sent)
	m.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]string{"id": id})
}

func (m *mailProvider) sends() map[string]int {
	m.mu.Lock()
	defer m.mu.Unlock()
	per := make(map[string]int, len(m.perOrder))
	for k, v := range m.perOrder {
		per[k] = v
	}
	return per
}
