// Package local runs the example platform's fan-out on this machine, from
// its synthesized CloudFormation template: kumo (in-process SNS, SQS and
// DynamoDB) provisioned as the template says, each consumer's handler as a
// real Lambda runtime client under the Lambda runtime interface emulator,
// and pollers that drive them the way Lambda's SQS event-source mapping does.
package local

import (
	"debug/buildinfo"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
)

// Stack is what the local run needs of a synthesized template.
type Stack struct {
	Topics        []string        // logical ids
	FIFOTopics    map[string]bool // the FIFO topics among them
	Queues        map[string]*Queue
	Subscriptions []*Subscription
	Tables        map[string]*Table
	Functions     map[string]*Function
	Mappings      []*Mapping
	// The other sources (events.go, s3.go): buses and rules, buckets and
	// their notifications.
	Buses         []string
	Rules         []*Rule
	Buckets       map[string]*Bucket
	Notifications []*Notification
	// StreamMappings read a table's stream (streams.go: the outbox).
	StreamMappings []*StreamMapping
	// Endpoints are the functions a function URL or an HTTP API route
	// serves, Secrets the Secrets Manager secrets (endpoints.go).
	Endpoints []*Endpoint
	Secrets   []string
	// StateMachines are the saga's (saga.go).
	StateMachines []*StateMachine
}

// Queue is an AWS::SQS::Queue.
type Queue struct {
	ID                string
	VisibilityTimeout time.Duration // SQS's default (30s) when the template has none
	DeadLetter        string        // logical id of the redrive target, if any
	MaxReceiveCount   int
	FIFO              bool
}

// Subscription is an AWS::SNS::Subscription of a queue to a topic.
type Subscription struct {
	ID, Topic, Queue string
	Raw              bool
	FilterPolicy     json.RawMessage
}

// Table is an AWS::DynamoDB::Table with a string partition key.
type Table struct {
	ID, PartitionKey, TTLAttribute string
	StreamView                     string // the stream's view type; "": no stream
}

// Function is an AWS::Lambda::Function whose code is a local asset.
type Function struct {
	ID      string
	Name    string // the contract's consumer name, or the logical id
	Package string // import path of the handler's main package, read from the asset
	Timeout time.Duration
	Env     map[string]any // strings, or intrinsic functions resolved when provisioned
}

// Mapping is an AWS::Lambda::EventSourceMapping from a queue to a function.
type Mapping struct {
	ID, Queue, Function     string
	BatchSize               int
	BatchingWindow          time.Duration
	ReportBatchItemFailures bool
	MaxConcurrency          int
}

type resource struct {
	Type       string          `json:"Type"`
	Properties json.RawMessage `json:"Properties"`
	Metadata   map[string]any  `json:"Metadata"`
}

// LoadStack reads a template synthesized into dir (cdk.out): the file
// <stack>.template.json and the assets it names.
func LoadStack(dir, stack string) (*Stack, error) {
	data, err := os.ReadFile(filepath.Join(dir, stack+".template.json"))
	if err != nil {
		return nil, fmt.Errorf("%w (run `make synth` first)", err)
	}
	var tpl struct {
		Resources map[string]resource `json:"Resources"`
	}
	if err := json.Unmarshal(data, &tpl); err != nil {
		return nil, fmt.Errorf("template %s: %w", stack, err)
	}
	s := &Stack{Queues: map[string]*Queue{}, Tables: map[string]*Table{}, Functions: map[string]*Function{}, FIFOTopics: map[string]bool{}, Buckets: map[string]*Bucket{}}
	ids := make([]string, 0, len(tpl.Resources))
	for id := range tpl.Resources {
		ids = append(ids, id)
	}
	sort.Strings(ids) // a deterministic order for logs and ports
	for _, id := range ids {
		r := tpl.Resources[id]
		var err error
		switch r.Type {
		case "AWS::SNS::Topic":
			s.Topics = append(s.Topics, id)
			var p struct{ FifoTopic bool }
			if len(r.Properties) > 0 {
				err = json.Unmarshal(r.Properties, &p)
			}
			s.FIFOTopics[id] = p.FifoTopic
		case "AWS::SQS::Queue":
			err = s.addQueue(id, r)
		case "AWS::SNS::Subscription":
			err = s.addSubscription(id, r)
		case "AWS::DynamoDB::Table":
			err = s.addTable(id, r)
		case "AWS::Lambda::Function":
			err = s.addFunction(dir, id, r)
		case "AWS::Lambda::EventSourceMapping":
			if isStreamMapping(r) {
				err = s.addStreamMapping(id, r) // streams.go
			} else {
				err = s.addMapping(id, r)
			}
		case "AWS::Events::EventBus":
			s.addBus(id)
		case "AWS::Events::Rule":
			err = s.addRule(id, r)
		case "AWS::S3::Bucket":
			err = s.addBucket(id, r)
		case "Custom::S3BucketNotifications":
			err = s.addNotification(id, r)
		case "AWS::Lambda::Url":
			err = s.addFunctionURL(id, r) // endpoints.go
		case "AWS::ApiGatewayV2::Route":
			err = s.addRoute(id, r, tpl.Resources)
		case "AWS::SecretsManager::Secret":
			s.Secrets = append(s.Secrets, id)
		case "AWS::StepFunctions::StateMachine":
			err = s.addStateMachine(id, r) // saga.go
		}
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", r.Type, id, err)
		}
	}
	if len(s.Mappings) == 0 {
		return nil, fmt.Errorf("template %s has no SQS event-source mapping", stack)
	}
	for _, m := range s.Mappings {
		if s.Queues[m.Queue] == nil || s.Functions[m.Function] == nil {
			return nil, fmt.Errorf("event-source mapping %s: %s or %s is not in the template", m.ID, m.Queue, m.Function)
		}
	}
	for _, sub := range s.Subscriptions {
		if s.Queues[sub.Queue] == nil {
			return nil, fmt.Errorf("subscription %s: queue %s is not in the template", sub.ID, sub.Queue)
		}
	}
	if err := s.checkRules(); err != nil {
		return nil, err
	}
	if err := s.checkNotifications(); err != nil {
		return nil, err
	}
	return s, nil
}

// getAtt returns X of {"Fn::GetAtt": [X, attr]}, and ref X of {"Ref": X}.
type intrinsic struct {
	Ref    string   `json:"Ref"`
	GetAtt []string `json:"Fn::GetAtt"`
}

func (i intrinsic) target(attr string) (string, error) {
	switch {
	case i.Ref != "":
		return i.Ref, nil
	case len(i.GetAtt) == 2 && i.GetAtt[1] == attr:
		return i.GetAtt[0], nil
	}
	return "", fmt.Errorf("unsupported reference %+v", i)
}

func (s *Stack) addQueue(id string, r resource) error {
	var p struct {
		VisibilityTimeout *int `json:"VisibilityTimeout"`
		FifoQueue         bool `json:"FifoQueue"`
		RedrivePolicy     *struct {
			DeadLetterTargetArn intrinsic `json:"deadLetterTargetArn"`
			MaxReceiveCount     int       `json:"maxReceiveCount"`
		} `json:"RedrivePolicy"`
	}
	if err := json.Unmarshal(r.Properties, &p); err != nil && len(r.Properties) > 0 {
		return err
	}
	q := &Queue{ID: id, VisibilityTimeout: 30 * time.Second, FIFO: p.FifoQueue}
	if p.VisibilityTimeout != nil {
		q.VisibilityTimeout = time.Duration(*p.VisibilityTimeout) * time.Second
	}
	if p.RedrivePolicy != nil {
		dlq, err := p.RedrivePolicy.DeadLetterTargetArn.target("Arn")
		if err != nil {
			return err
		}
		q.DeadLetter, q.MaxReceiveCount = dlq, p.RedrivePolicy.MaxReceiveCount
	}
	s.Queues[id] = q
	return nil
}

func (s *Stack) addSubscription(id string, r resource) error {
	var p struct {
		Protocol           string          `json:"Protocol"`
		TopicArn           intrinsic       `json:"TopicArn"`
		Endpoint           intrinsic       `json:"Endpoint"`
		RawMessageDelivery bool            `json:"RawMessageDelivery"`
		FilterPolicy       json.RawMessage `json:"FilterPolicy"`
	}
	if err := json.Unmarshal(r.Properties, &p); err != nil {
		return err
	}
	if p.Protocol != "sqs" {
		return nil // only queue subscriptions run locally
	}
	topic, err := p.TopicArn.target("")
	if err != nil {
		return err
	}
	queue, err := p.Endpoint.target("Arn")
	if err != nil {
		return err
	}
	s.Subscriptions = append(s.Subscriptions, &Subscription{ID: id, Topic: topic, Queue: queue, Raw: p.RawMessageDelivery, FilterPolicy: p.FilterPolicy})
	return nil
}

func (s *Stack) addTable(id string, r resource) error {
	var p struct {
		KeySchema []struct {
			AttributeName, KeyType string
		} `json:"KeySchema"`
		TimeToLiveSpecification *struct {
			AttributeName string
			Enabled       bool
		} `json:"TimeToLiveSpecification"`
		StreamSpecification *struct{ StreamViewType string } `json:"StreamSpecification"`
	}
	if err := json.Unmarshal(r.Properties, &p); err != nil {
		return err
	}
	t := &Table{ID: id}
	if p.StreamSpecification != nil {
		t.StreamView = p.StreamSpecification.StreamViewType
	}
	for _, k := range p.KeySchema {
		if k.KeyType == "HASH" {
			t.PartitionKey = k.AttributeName
		} else {
			return fmt.Errorf("sort keys are not supported locally")
		}
	}
	if p.TimeToLiveSpecification != nil && p.TimeToLiveSpecification.Enabled {
		t.TTLAttribute = p.TimeToLiveSpecification.AttributeName
	}
	s.Tables[id] = t
	return nil
}

func (s *Stack) addFunction(dir, id string, r resource) error {
	var p struct {
		Timeout     *int `json:"Timeout"`
		Environment struct {
			Variables map[string]any `json:"Variables"`
		} `json:"Environment"`
	}
	if err := json.Unmarshal(r.Properties, &p); err != nil {
		return err
	}
	asset, _ := r.Metadata["aws:asset:path"].(string)
	if asset == "" && strings.Contains(string(r.Properties), `"ZipFile"`) {
		// Inline code: CDK's own custom-resource handler (the bucket
		// notifications'), whose resource the demo applies itself (s3.go).
		return nil
	}
	if asset == "" {
		return fmt.Errorf("no aws:asset:path metadata: the function's code is not a local asset")
	}
	// The asset is the arm64 bootstrap that would be deployed; its build
	// information names the main package, which is built again for this
	// machine: the same handler code.
	info, err := buildinfo.ReadFile(filepath.Join(dir, asset, "bootstrap"))
	if err != nil {
		return fmt.Errorf("asset %s: %w", asset, err)
	}
	f := &Function{ID: id, Name: id, Package: info.Path, Timeout: 3 * time.Second, Env: p.Environment.Variables}
	if p.Timeout != nil {
		f.Timeout = time.Duration(*p.Timeout) * time.Second
	}
	if name, ok := f.Env[contract.ConsumerVar].(string); ok {
		f.Name = path.Base(name) // the consumer's construct path: its id, last
	}
	s.Functions[id] = f
	return nil
}

func (s *Stack) addMapping(id string, r resource) error {
	var p struct {
		EventSourceArn                 intrinsic `json:"EventSourceArn"`
		FunctionName                   intrinsic `json:"FunctionName"`
		BatchSize                      *int      `json:"BatchSize"`
		MaximumBatchingWindowInSeconds int       `json:"MaximumBatchingWindowInSeconds"`
		FunctionResponseTypes          []string  `json:"FunctionResponseTypes"`
		ScalingConfig                  *struct {
			MaximumConcurrency int
		} `json:"ScalingConfig"`
	}
	if err := json.Unmarshal(r.Properties, &p); err != nil {
		return err
	}
	queue, err := p.EventSourceArn.target("Arn")
	if err != nil {
		return err
	}
	fn, err := p.FunctionName.target("")
	if err != nil {
		return err
	}
	m := &Mapping{ID: id, Queue: queue, Function: fn, BatchSize: 10, BatchingWindow: time.Duration(p.MaximumBatchingWindowInSeconds) * time.Second}
	if p.BatchSize != nil {
		m.BatchSize = *p.BatchSize
	}
	for _, t := range p.FunctionResponseTypes {
		m.ReportBatchItemFailures = m.ReportBatchItemFailures || t == "ReportBatchItemFailures"
	}
	if p.ScalingConfig != nil {
		m.MaxConcurrency = p.ScalingConfig.MaximumConcurrency
	}
	s.Mappings = append(s.Mappings, m)
	return nil
}
