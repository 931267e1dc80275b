package local

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
)

// This file is what the local run knows of EventBridge: the template's
// buses and rules (AWS::Events::EventBus, AWS::Events::Rule, whose SQS
// targets are the consumers' queues), provisioned on kumo's EventBridge
// through its JSON API, and PutEvents.
//
// kumo v0.33.1 delivers a rule's targets to standard SQS queues, the whole
// event as the body, with a new event id per PutEvents entry. It does not
// model a target's retry policy (a failed delivery is not retried), its
// dead-letter queue, nor a FIFO target's message group id: the demo
// provisions the rule's targets without them and says so. The queue
// policies the construct writes (conditioned on the rule) are not checked:
// kumo authorizes every call.

// Rule is an AWS::Events::Rule with SQS targets.
type Rule struct {
	ID      string
	Bus     string          // logical id of the bus; "" for the default bus
	Pattern json.RawMessage // the event pattern
	Targets []RuleTarget
	// StateMachines are the state machines the rule starts (logical ids):
	// the demo starts the saga's executions itself (saga.go), with the
	// event's detail, the order, as their input.
	StateMachines []string
}

// RuleTarget is a rule's SQS target, as the template declares it.
type RuleTarget struct {
	ID, Queue, DeadLetter string // logical ids
	RetryAttempts         int
	MaxEventAge           int    // seconds
	MessageGroupID        string // a FIFO target's
}

func (s *Stack) addBus(id string) { s.Buses = append(s.Buses, id) }

func (s *Stack) addRule(id string, r resource) error {
	var p struct {
		EventBusName *intrinsic      `json:"EventBusName"`
		EventPattern json.RawMessage `json:"EventPattern"`
		State        string          `json:"State"`
		Targets      []struct {
			ID               string    `json:"Id"`
			Arn              intrinsic `json:"Arn"`
			DeadLetterConfig *struct {
				Arn intrinsic `json:"Arn"`
			} `json:"DeadLetterConfig"`
			RetryPolicy *struct {
				MaximumRetryAttempts     int `json:"MaximumRetryAttempts"`
				MaximumEventAgeInSeconds int `json:"MaximumEventAgeInSeconds"`
			} `json:"RetryPolicy"`
			SqsParameters *struct {
				MessageGroupID string `json:"MessageGroupId"`
			} `json:"SqsParameters"`
		} `json:"Targets"`
	}
	if err := json.Unmarshal(r.Properties, &p); err != nil {
		return err
	}
	rule := &Rule{ID: id, Pattern: p.EventPattern}
	if p.EventBusName != nil {
		bus, err := p.EventBusName.target("")
		if err != nil {
			return fmt.Errorf("EventBusName: %w (only a bus of the template runs locally)", err)
		}
		rule.Bus = bus
	}
	for _, t := range p.Targets {
		q, err := t.Arn.target("Arn")
		if err != nil {
			return err
		}
		rt := RuleTarget{ID: t.ID, Queue: q}
		if t.DeadLetterConfig != nil {
			if rt.DeadLetter, err = t.DeadLetterConfig.Arn.target("Arn"); err != nil {
				return err
			}
		}
		if t.RetryPolicy != nil {
			rt.RetryAttempts, rt.MaxEventAge = t.RetryPolicy.MaximumRetryAttempts, t.RetryPolicy.MaximumEventAgeInSeconds
		}
		if t.SqsParameters != nil {
			rt.MessageGroupID = t.SqsParameters.MessageGroupID
		}
		rule.Targets = append(rule.Targets, rt)
	}
	s.Rules = append(s.Rules, rule)
	return nil
}

// checkRules refuses a rule whose targets are not queues of the template,
// or its state machines: those targets (the saga's start) move to the
// rule's StateMachines, which the demo plays (saga.go), and are not
// provisioned on kumo.
func (s *Stack) checkRules() error {
	machines := map[string]bool{}
	for _, m := range s.StateMachines {
		machines[m.ID] = true
	}
	for _, r := range s.Rules {
		queues := r.Targets[:0]
		for _, t := range r.Targets {
			if machines[t.Queue] {
				r.StateMachines = append(r.StateMachines, t.Queue)
			} else {
				queues = append(queues, t)
			}
		}
		r.Targets = queues
		for _, t := range r.Targets {
			if s.Queues[t.Queue] == nil || (t.DeadLetter != "" && s.Queues[t.DeadLetter] == nil) {
				return fmt.Errorf("rule %s: target %s is not a queue of the template", r.ID, t.ID)
			}
		}
	}
	return nil
}

// eventsAPI calls kumo's EventBridge (JSON 1.1, AWSEvents.<action>).
type eventsAPI struct{ endpoint string }

func (e eventsAPI) call(ctx context.Context, action string, in any) (map[string]any, error) {
	body, err := json.Marshal(in)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.endpoint+"/", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-amz-json-1.1")
	req.Header.Set("X-Amz-Target", "AWSEvents."+action)
	req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=local/20261201/"+Region+"/events/aws4_request, SignedHeaders=host, Signature=0")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("EventBridge %s: %s %s", action, resp.Status, raw)
	}
	var out map[string]any
	_ = json.Unmarshal(raw, &out)
	return out, nil
}

// provisionRules creates the template's buses (named by their logical id)
// and rules, each with its queue targets.
func (d *deployment) provisionRules(ctx context.Context, c *clients) error {
	eb := eventsAPI{endpoint: c.endpoint}
	for _, id := range d.stack.Buses {
		if _, err := eb.call(ctx, "CreateEventBus", map[string]any{"Name": id}); err != nil {
			return fmt.Errorf("bus %s: %w", id, err)
		}
		d.busName[id] = id
	}
	for _, r := range d.stack.Rules {
		if len(r.Targets) == 0 {
			continue // a rule that starts the saga: the demo plays it (saga.go)
		}
		bus := "default"
		if r.Bus != "" {
			bus = d.busName[r.Bus]
		}
		if _, err := eb.call(ctx, "PutRule", map[string]any{"Name": r.ID, "EventBusName": bus, "EventPattern": string(r.Pattern), "State": "ENABLED"}); err != nil {
			return fmt.Errorf("rule %s: %w", r.ID, err)
		}
		var targets []map[string]any
		for _, t := range r.Targets {
			// The dead-letter queue and the retry policy are the template's;
			// kumo does not model them (see above).
			targets = append(targets, map[string]any{"Id": t.ID, "Arn": d.queueARN[t.Queue]})
		}
		if _, err := eb.call(ctx, "PutTargets", map[string]any{"Rule": r.ID, "EventBusName": bus, "Targets": targets}); err != nil {
			return fmt.Errorf("rule %s targets: %w", r.ID, err)
		}
		d.ruleBus[r.ID] = bus
	}
	return nil
}

// putEvent puts one event on bus and returns its id.
func putEvent(ctx context.Context, c *clients, bus, source, detailType, detail string) (string, error) {
	out, err := eventsAPI{endpoint: c.endpoint}.call(ctx, "PutEvents", map[string]any{"Entries": []map[string]any{{
		"EventBusName": bus, "Source": source, "DetailType": detailType, "Detail": detail,
	}}})
	if err != nil {
		return "", err
	}
	entries, _ := out["Entries"].([]any)
	if len(entries) != 1 {
		return "", fmt.Errorf("PutEvents: %v", out)
	}
	e, _ := entries[0].(map[string]any)
	id, _ := e["EventId"].(string)
	if id == "" {
		return "", fmt.Errorf("PutEvents: entry not put: %v", e)
	}
	return id, nil
}

// kumoEventsEndpoint is where kumo's EventBridge sends a rule's SQS
// deliveries: the address it reads from KUMO_HOST and KUMO_PORT when the
// package loads (localhost:4566 without them), not the address of the
// in-process server the demo starts on a free port.
const kumoEventsEndpoint = "localhost:4566"

// redirectEventDeliveries makes the process's default HTTP transport,
// which kumo's EventBridge delivers with, dial serverURL's host for
// kumoEventsEndpoint, and returns the function that restores it.
func redirectEventDeliveries(serverURL string) (restore func(), err error) {
	u, err := url.Parse(serverURL)
	if err != nil {
		return nil, err
	}
	base, ok := http.DefaultTransport.(*http.Transport)
	if !ok {
		return nil, fmt.Errorf("http.DefaultTransport is a %T", http.DefaultTransport)
	}
	redirected := base.Clone()
	var d net.Dialer
	redirected.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		if addr == kumoEventsEndpoint {
			addr = u.Host
		}
		return d.DialContext(ctx, network, addr)
	}
	http.DefaultTransport = redirected
	return func() { http.DefaultTransport = base }, nil
}
