package local

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
)

// Region is the region the local resources live in.
const Region = "us-east-1"

// localAccount is the account of the local resources' ARNs.
const localAccount = "000000000000"

// pseudoParameters are CloudFormation's pseudo parameters, as the local run
// resolves them (a state machine's definition builds ARNs of them).
var pseudoParameters = map[string]string{"AWS::Partition": "aws", "AWS::Region": Region, "AWS::AccountId": localAccount, "AWS::URLSuffix": "amazonaws.com"}

// clients are the SDK clients of the emulator.
type clients struct {
	endpoint string
	sns      *sns.Client
	sqs      *sqs.Client
	ddb      *dynamodb.Client
	s3       *s3.Client
	secrets  *secretsmanager.Client
}

type staticCreds struct{}

func (staticCreds) Retrieve(context.Context) (aws.Credentials, error) {
	return aws.Credentials{AccessKeyID: "local", SecretAccessKey: "local", Source: "demo"}, nil
}

func newClients(endpoint string) *clients {
	ep := aws.String(endpoint)
	return &clients{
		endpoint: endpoint,
		sns:      sns.New(sns.Options{BaseEndpoint: ep, Region: Region, Credentials: staticCreds{}}),
		sqs:      sqs.New(sqs.Options{BaseEndpoint: ep, Region: Region, Credentials: staticCreds{}}),
		ddb:      dynamodb.New(dynamodb.Options{BaseEndpoint: ep, Region: Region, Credentials: staticCreds{}}),
		s3:       s3.New(s3.Options{BaseEndpoint: ep, Region: Region, Credentials: staticCreds{}, UsePathStyle: true}),
		secrets:  secretsmanager.New(secretsmanager.Options{BaseEndpoint: ep, Region: Region, Credentials: staticCreds{}}),
	}
}

// deployment is the stack provisioned on the emulator: physical names and
// addresses by logical id.
type deployment struct {
	stack     *Stack
	scale     float64
	topicARN  map[string]string
	queueURL  map[string]string
	queueARN  map[string]string
	tableName map[string]string
	// The other sources' names (events.go, s3.go).
	busName, ruleBus, bucketName map[string]string
	// The secrets' ARNs by logical id, and their values by ARN
	// (endpoints.go).
	secretARN, secretValue map[string]string
	// functionARN are the functions' ARNs on kumo, which a state machine's
	// definition names (saga.go).
	functionARN map[string]string
}

// provision creates the template's topics, queues (with their redrive
// policies), subscriptions and tables. Durations are divided by scale.
func provision(ctx context.Context, c *clients, s *Stack, scale float64) (*deployment, error) {
	d := &deployment{stack: s, scale: scale, topicARN: map[string]string{}, queueURL: map[string]string{}, queueARN: map[string]string{}, tableName: map[string]string{},
		busName: map[string]string{}, ruleBus: map[string]string{}, bucketName: map[string]string{}, secretARN: map[string]string{}, secretValue: map[string]string{},
		functionARN: map[string]string{}}
	for id := range s.Functions {
		d.functionARN[id] = "arn:aws:lambda:" + Region + ":" + localAccount + ":function:" + id
	}
	for _, id := range s.Topics {
		in := &sns.CreateTopicInput{Name: aws.String(id)}
		if s.FIFOTopics[id] {
			in.Name, in.Attributes = aws.String(id+".fifo"), map[string]string{"FifoTopic": "true"}
		}
		out, err := c.sns.CreateTopic(ctx, in)
		if err != nil {
			return nil, fmt.Errorf("topic %s: %w", id, err)
		}
		d.topicARN[id] = aws.ToString(out.TopicArn)
	}
	// Dead-letter queues first: a redrive policy names its target's ARN.
	var pending []*Queue
	for _, q := range s.Queues {
		if q.DeadLetter == "" {
			pending = append([]*Queue{q}, pending...)
		} else {
			pending = append(pending, q)
		}
	}
	for _, q := range pending {
		if err := d.createQueue(ctx, c, q); err != nil {
			return nil, err
		}
	}
	for _, sub := range s.Subscriptions {
		attrs := map[string]string{"RawMessageDelivery": strconv.FormatBool(sub.Raw)}
		if len(sub.FilterPolicy) > 0 && string(sub.FilterPolicy) != "null" {
			attrs["FilterPolicy"] = string(sub.FilterPolicy)
		}
		if _, err := c.sns.Subscribe(ctx, &sns.SubscribeInput{
			TopicArn: aws.String(d.topicARN[sub.Topic]), Protocol: aws.String("sqs"),
			Endpoint: aws.String(d.queueARN[sub.Queue]), Attributes: attrs,
		}); err != nil {
			return nil, fmt.Errorf("subscription %s: %w", sub.ID, err)
		}
	}
	for _, t := range s.Tables {
		if _, err := c.ddb.CreateTable(ctx, &dynamodb.CreateTableInput{
			TableName:            aws.String(t.ID),
			AttributeDefinitions: []ddbtypes.AttributeDefinition{{AttributeName: aws.String(t.PartitionKey), AttributeType: ddbtypes.ScalarAttributeTypeS}},
			KeySchema:            []ddbtypes.KeySchemaElement{{AttributeName: aws.String(t.PartitionKey), KeyType: ddbtypes.KeyTypeHash}},
			BillingMode:          ddbtypes.BillingModePayPerRequest,
			StreamSpecification:  t.streamSpec(), // streams.go
		}); err != nil {
			return nil, fmt.Errorf("table %s: %w", t.ID, err)
		}
		if t.TTLAttribute != "" {
			if _, err := c.ddb.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{
				TableName:               aws.String(t.ID),
				TimeToLiveSpecification: &ddbtypes.TimeToLiveSpecification{AttributeName: aws.String(t.TTLAttribute), Enabled: aws.Bool(true)},
			}); err != nil {
				return nil, fmt.Errorf("table %s TTL: %w", t.ID, err)
			}
		}
		d.tableName[t.ID] = t.ID
	}
	if err := d.provisionRules(ctx, c); err != nil {
		return nil, err
	}
	if err := d.provisionBuckets(ctx, c); err != nil {
		return nil, err
	}
	if err := d.provisionSecrets(ctx, c); err != nil {
		return nil, err
	}
	return d, nil
}

func (d *deployment) createQueue(ctx context.Context, c *clients, q *Queue) error {
	name := q.ID
	attrs := map[string]string{"VisibilityTimeout": strconv.Itoa(d.seconds(q.VisibilityTimeout))}
	if q.FIFO {
		name += ".fifo"
		attrs["FifoQueue"] = "true"
	}
	if q.DeadLetter != "" {
		policy, _ := json.Marshal(map[string]string{"deadLetterTargetArn": d.queueARN[q.DeadLetter], "maxReceiveCount": strconv.Itoa(q.MaxReceiveCount)})
		attrs["RedrivePolicy"] = string(policy)
	}
	out, err := c.sqs.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(name), Attributes: attrs})
	if err != nil {
		return fmt.Errorf("queue %s: %w", q.ID, err)
	}
	url := aws.ToString(out.QueueUrl)
	got, err := c.sqs.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: out.QueueUrl, AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn}})
	if err != nil {
		return fmt.Errorf("queue %s: %w", q.ID, err)
	}
	d.queueURL[q.ID], d.queueARN[q.ID] = url, got.Attributes[string(sqstypes.QueueAttributeNameQueueArn)]
	return nil
}

// scaled divides a duration of the template by the time scale.
func (d *deployment) scaled(v time.Duration) time.Duration {
	return time.Duration(float64(v) / d.scale)
}

// seconds is a scaled duration in whole seconds, at least 1: the unit of
// SQS visibility timeouts and Lambda timeouts.
func (d *deployment) seconds(v time.Duration) int {
	return max(1, int((d.scaled(v)+time.Second-1)/time.Second))
}

// environment resolves a function's variables (value): references to tables,
// topics and queues become their local names, and the runtime contract's
// durations are scaled with the rest of the template's times.
func (d *deployment) environment(f *Function) (map[string]string, error) {
	out := make(map[string]string, len(f.Env))
	for k, v := range f.Env {
		switch v := v.(type) {
		case string:
			out[k] = v
		case map[string]any:
			val, err := d.value(v)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", k, err)
			}
			out[k] = val
		default:
			return nil, fmt.Errorf("%s: unsupported value %v", k, v)
		}
	}
	if err := d.scaleContract(out); err != nil {
		return nil, fmt.Errorf("%s: %w", f.ID, err)
	}
	return out, nil
}

// minFinishBudget is the least finishing budget of the local run.
const minFinishBudget = 300 * time.Millisecond

// scaleContract divides the durations of the runtime contract in env by the
// time scale, keeping the rules the handler checks: the function's timeout
// in whole seconds, as seconds does; Window and LeaseMax at least a second,
// the lease within the timeout; a webhook's Window at least its provider's
// redelivery period, which the rule reads unscaled (contract.RetryPeriod);
// the finishing budget at least minFinishBudget; the backoff's base and
// caps in whole seconds.
func (d *deployment) scaleContract(env map[string]string) error {
	s, err := contract.Decode(func(k string) string { return env[k] }, "")
	if err != nil {
		return fmt.Errorf("the template's runtime contract: %w", err)
	}
	s.Timeout = time.Duration(d.seconds(s.Timeout)) * time.Second
	s.Window = max(d.scaled(s.Window), time.Second)
	if period, ok := contract.RetryPeriod(s.WebhookProvider); ok {
		s.Window = max(s.Window, period)
	}
	s.TTLAfterWindow = max(d.scaled(s.TTLAfterWindow), time.Second)
	s.LeaseMax = min(max(d.scaled(s.LeaseMax), time.Second), s.Timeout)
	// The finishing budget is the time of one write to kumo, which does not
	// shrink with the scale: a few milliseconds would time out a complete
	// that landed (the record then comes back as a duplicate) whenever the
	// machine is busy.
	s.FinishBudget = max(d.scaled(s.FinishBudget), minFinishBudget)
	s.MinRemaining = max(d.scaled(s.MinRemaining), s.FinishBudget+minFinishBudget/3)
	// The backoff of failed records, whole seconds as SQS takes them (a
	// base of 0 stays off).
	if s.BackoffBase > 0 {
		s.BackoffBase = max(d.scaled(s.BackoffBase), time.Second).Truncate(time.Second)
	}
	s.BackoffCap = max(d.scaled(s.BackoffCap), s.BackoffBase, time.Second).Truncate(time.Second)
	s.BackoffFIFOCap = max(d.scaled(s.BackoffFIFOCap), time.Second).Truncate(time.Second)
	if err := s.Validate(); err != nil {
		return fmt.Errorf("the runtime contract scaled by %v: %w", d.scale, err)
	}
	for k, v := range s.Encode() {
		env[k] = v
	}
	return nil
}

// value resolves a template value to a string: a string is itself, a Ref
// or an Fn::GetAtt what resolve makes of it, and {"Fn::Join": [delimiter,
// [values...]]} its values resolved (strings, references, joins) and joined
// with the delimiter, as CloudFormation does. The construct writes a join
// of Refs when a consumer declares two or more transactional tables
// (IDEMPOTENCY_TX_TABLES). Any other function is refused by name.
func (d *deployment) value(v any) (string, error) {
	switch v := v.(type) {
	case string:
		return v, nil
	case map[string]any:
		if len(v) != 1 {
			return "", fmt.Errorf("cannot resolve %v locally: an intrinsic function has one key", v)
		}
		if args, ok := v["Fn::Join"]; ok {
			return d.join(args)
		}
		raw, err := json.Marshal(v)
		if err != nil {
			return "", err
		}
		if v["Ref"] == nil && v["Fn::GetAtt"] == nil {
			return "", fmt.Errorf("cannot resolve %s locally: the local run resolves Ref, Fn::GetAtt and Fn::Join", raw)
		}
		var ref intrinsic
		if err := json.Unmarshal(raw, &ref); err != nil {
			return "", fmt.Errorf("cannot resolve %s locally: %w", raw, err)
		}
		return d.resolve(ref)
	}
	return "", fmt.Errorf("cannot resolve %v (%T) locally", v, v)
}

// join resolves the arguments of an Fn::Join: a delimiter and a list.
func (d *deployment) join(args any) (string, error) {
	a, ok := args.([]any)
	if !ok || len(a) != 2 {
		return "", fmt.Errorf("Fn::Join %v: want [delimiter, [values...]]", args)
	}
	delimiter, ok := a[0].(string)
	list, isList := a[1].([]any)
	if !ok || !isList {
		return "", fmt.Errorf("Fn::Join %v: want [delimiter, [values...]]", args)
	}
	parts := make([]string, len(list))
	for i, item := range list {
		s, err := d.value(item)
		if err != nil {
			return "", fmt.Errorf("Fn::Join, value %d: %w", i, err)
		}
		parts[i] = s
	}
	return strings.Join(parts, delimiter), nil
}

func (d *deployment) resolve(ref intrinsic) (string, error) {
	if v, ok := pseudoParameters[ref.Ref]; ok {
		return v, nil
	}
	if ref.Ref != "" {
		if v, ok := d.tableName[ref.Ref]; ok {
			return v, nil
		}
		if v, ok := d.topicARN[ref.Ref]; ok {
			return v, nil
		}
		if v, ok := d.queueURL[ref.Ref]; ok {
			return v, nil
		}
		if v, ok := d.secretARN[ref.Ref]; ok {
			return v, nil // a secret's Ref is its ARN
		}
	}
	if len(ref.GetAtt) == 2 && ref.GetAtt[1] == "Arn" {
		if v, ok := d.queueARN[ref.GetAtt[0]]; ok {
			return v, nil
		}
		if v, ok := d.functionARN[ref.GetAtt[0]]; ok {
			return v, nil
		}
	}
	return "", fmt.Errorf("cannot resolve %+v locally", ref)
}

// queueCounts returns the messages of a queue that are visible (or
// delayed), and those in flight: received and not yet deleted or visible
// again.
func queueCounts(ctx context.Context, c *clients, url string) (visible, inFlight int, err error) {
	out, err := c.sqs.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(url), AttributeNames: []sqstypes.QueueAttributeName{
		sqstypes.QueueAttributeNameApproximateNumberOfMessages, sqstypes.QueueAttributeNameApproximateNumberOfMessagesNotVisible, sqstypes.QueueAttributeNameApproximateNumberOfMessagesDelayed,
	}})
	if err != nil {
		return 0, 0, err
	}
	for k, v := range out.Attributes {
		i, _ := strconv.Atoi(strings.TrimSpace(v))
		if k == string(sqstypes.QueueAttributeNameApproximateNumberOfMessagesNotVisible) {
			inFlight += i
		} else {
			visible += i
		}
	}
	return visible, inFlight, nil
}
