package ops

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	lambdatypes "github.com/aws/aws-sdk-go-v2/service/lambda/types"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/aws-sdk-go-v2/service/sts"

	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/internal/guardconfig"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/dynamostore"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
)

// common are the flags every command takes: where the consumer is.
type common struct {
	stack, function, table, namespace, consumer string
	queueURL, dlqURL, keySecretID               string
	endpoint, region                            string
	env                                         envFlag
	json                                        bool
}

func (c *common) register(fs *flag.FlagSet) {
	c.env = envFlag{}
	fs.StringVar(&c.stack, "stack", "", "the CloudFormation stack of the consumer: its Lambda functions whose environment holds the contract; --consumer picks one when it has several")
	fs.StringVar(&c.function, "function", "", "the consumer's Lambda function (name or ARN): its environment gives the contract, its SQS event source the queue")
	fs.StringVar(&c.table, "table", "", "the idempotency table (IDEMPOTENCY_TABLE), over the function's")
	fs.StringVar(&c.namespace, "namespace", "", "the consumer's namespace (IDEMPOTENCY_NAMESPACE), over the function's")
	fs.StringVar(&c.consumer, "consumer", "", "the consumer's name in its metrics (CONSUMER_NAME, the construct's path), over the function's; with --stack, which consumer (its path, or its last part)")
	fs.StringVar(&c.queueURL, "queue-url", "", "the consumer's queue, over its event source's")
	fs.StringVar(&c.dlqURL, "dlq-url", "", "the dead-letter queue, over the queue's redrive policy")
	fs.StringVar(&c.keySecretID, "key-secret-id", "", "the Secrets Manager secret (name or ARN) the consumer hashes keys with (HashKeys), when its configuration cannot be read")
	fs.Var(c.env, "env", "a variable of the contract, VAR=VALUE (repeatable), over the function's: the table's design (IDEMPOTENCY_TABLE_PARTITION_KEY …), the window")
	fs.StringVar(&c.endpoint, "endpoint-url", "", "one endpoint for every AWS service (an emulator)")
	fs.StringVar(&c.region, "region", "", "the AWS region, over the SDK's default configuration")
	fs.BoolVar(&c.json, "json", false, "write JSON")
}

// clients are the command's AWS clients.
type clients struct {
	cfn     *cloudformation.Client
	ddb     *dynamodb.Client
	sqs     *sqs.Client
	lambda  *lambda.Client
	secrets *secretsmanager.Client
	cw      *cloudwatch.Client
	sts     *sts.Client
	region  string // the Region every client is of
}

func newClients(ctx context.Context, o *options, c *common) (*clients, error) {
	var cfg aws.Config
	if o.awsConfig != nil {
		cfg = o.awsConfig.Copy()
	} else {
		loaded, err := config.LoadDefaultConfig(ctx)
		if err != nil {
			return nil, fmt.Errorf("aws configuration: %w", err)
		}
		cfg = loaded
	}
	if c.region != "" {
		cfg.Region = c.region
	}
	if c.endpoint != "" {
		cfg.BaseEndpoint = aws.String(c.endpoint)
	}
	if cfg.Region == "" {
		return nil, errors.New("no AWS region: set AWS_REGION, a profile's region, or --region")
	}
	// An emulator's DynamoDB may not stamp the CRC32 the SDK checks (kumo's
	// does not): with an endpoint override, the check is off.
	emulator := func(o *dynamodb.Options) { o.DisableValidateResponseChecksum = c.endpoint != "" }
	return &clients{
		cfn: cloudformation.NewFromConfig(cfg),
		ddb: dynamodb.NewFromConfig(cfg, emulator), sqs: sqs.NewFromConfig(cfg), lambda: lambda.NewFromConfig(cfg),
		secrets: secretsmanager.NewFromConfig(cfg), cw: cloudwatch.NewFromConfig(cfg), sts: sts.NewFromConfig(cfg),
		region: cfg.Region,
	}, nil
}

// target is a located consumer.
type target struct {
	c        *clients
	s        contract.Settings
	source   string // where the settings came from, in words
	function string
	store    *dynamostore.Store
	guard    *idempotency.Guard
	inspect  inspectFunc // nil without the consumer's key function
	// The queues, when known (queueURL empty otherwise).
	queueURL, queueARN, dlqURL, dlqARN string
}

// secretRefPrefix starts a CloudFormation dynamic reference to a Secrets
// Manager secret, "{{resolve:secretsmanager:secret-id:SecretString:…}}":
// what the construct writes into IDEMPOTENCY_KEY_SECRET (HashKeys).
// CloudFormation resolves it into the function's configuration, so that
// GetFunctionConfiguration returns the secret itself; a reference still
// found (a configuration written by other means, --env) is resolved here.
const secretRefPrefix = "{{resolve:secretsmanager:"

// locate finds the consumer: its contract (from the function's environment,
// under the flags), its table (checked against the design), its queues.
func locate(ctx context.Context, o *options, c *common, needQueues bool) (*target, error) {
	cl, err := newClients(ctx, o, c)
	if err != nil {
		return nil, err
	}
	t := &target{c: cl, function: c.function}
	env := map[string]string{}
	var sources []string
	if c.stack != "" && c.function == "" {
		fn, err := functionOfStack(ctx, cl, c.stack, c.consumer)
		if err != nil {
			return nil, err
		}
		c.function = fn
		t.function = fn
		sources = append(sources, "stack "+c.stack)
	}
	if c.function != "" {
		name, err := functionEnv(ctx, cl, c.function, env)
		if err != nil {
			return nil, err
		}
		t.function = name
		sources = append(sources, "function "+name)
	}
	for k, v := range c.env {
		env[k] = v
	}
	consumer := c.consumer
	if c.stack != "" {
		consumer = "" // it picked the function: the function's name stands
	}
	for k, v := range map[string]string{contract.TableVar: c.table, contract.NamespaceVar: c.namespace, contract.ConsumerVar: consumer} {
		if v != "" {
			env[k] = v
		}
	}
	if len(c.env) > 0 || c.table != "" || c.namespace != "" || consumer != "" {
		sources = append(sources, "flags")
	}
	if env[contract.TableVar] == "" || env[contract.NamespaceVar] == "" {
		return nil, errors.New("unknown consumer: give --function (the consumer's Lambda function), or --table and --namespace")
	}
	secret, err := resolveSecret(ctx, cl, env[contract.KeySecretVar], c.keySecretID)
	if err != nil {
		return nil, err
	}
	env[contract.KeySecretVar] = secret
	fallback := t.function
	if fallback == "" {
		fallback = "consumer" // sqsbatch's default name; stats asks for --consumer
	}
	s, err := contract.Decode(func(k string) string { return env[k] }, fallback)
	if err != nil {
		return nil, fmt.Errorf("the consumer's settings: %w", err)
	}
	t.s, t.source = s, strings.Join(sources, " and ")
	if err := checkTable(ctx, cl.ddb, s); err != nil {
		return nil, err
	}
	if t.store, err = dynamostore.FromEnv(cl.ddb, func(k string) string { return env[k] }); err != nil {
		return nil, err
	}
	if t.guard, err = idempotency.NewGuard(t.store, guardconfig.Of(s)); err != nil {
		return nil, err
	}
	if o.inspector != nil {
		if t.inspect, err = o.inspector(func(k string) string { return env[k] }, t.store, s.Delivery); err != nil {
			return nil, fmt.Errorf("the consumer's handler: %w", err)
		}
	}
	if needQueues {
		if err := t.queues(ctx, c); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// resolveSecret returns the key secret: value itself, or the secret that a
// dynamic reference in value, or id, names.
func resolveSecret(ctx context.Context, cl *clients, value, id string) (string, error) {
	if id == "" && strings.HasPrefix(value, secretRefPrefix) {
		ref := strings.TrimSuffix(strings.TrimPrefix(value, secretRefPrefix), "}}")
		id, _, _ = strings.Cut(ref, ":SecretString")
	}
	if id == "" {
		return value, nil
	}
	out, err := cl.secrets.GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String(id)})
	if err != nil {
		return "", fmt.Errorf("read the consumer's key secret %s (HashKeys): %w", id, err)
	}
	return aws.ToString(out.SecretString), nil
}

// checkTable refuses a table that is missing or whose key schema is not the
// consumer's design: a record read or deleted there would be another's.
func checkTable(ctx context.Context, ddb *dynamodb.Client, s contract.Settings) error {
	out, err := ddb.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(s.Table)})
	var nf *ddbtypes.ResourceNotFoundException
	switch {
	case errors.As(err, &nf):
		return fmt.Errorf("unknown table %q: no such table in this region; check --table, or the function's %s", s.Table, contract.TableVar)
	case err != nil:
		return fmt.Errorf("describe table %s: %w", s.Table, err)
	}
	var hash, rng string
	for _, k := range out.Table.KeySchema {
		switch k.KeyType {
		case ddbtypes.KeyTypeHash:
			hash = aws.ToString(k.AttributeName)
		case ddbtypes.KeyTypeRange:
			rng = aws.ToString(k.AttributeName)
		}
	}
	if hash != s.TablePartitionKey || rng != s.TableSortKey {
		return fmt.Errorf("table %s has no idempotency records of the consumer's layout: its key is (partition %q, sort %q), the consumer's design says (partition %q, sort %q); check the table, or give the design with --env %s=… --env %s=…",
			s.Table, hash, rng, s.TablePartitionKey, s.TableSortKey, contract.PartitionKeyVar, contract.SortKeyVar)
	}
	return nil
}

// queues finds the consumer's queue (the flag, or the function's SQS event
// source) and its dead-letter queue (the flag, or the queue's redrive
// policy).
func (t *target) queues(ctx context.Context, c *common) error {
	cl := t.c
	t.queueURL = c.queueURL
	if t.queueURL == "" && t.function != "" {
		out, err := cl.lambda.ListEventSourceMappings(ctx, &lambda.ListEventSourceMappingsInput{FunctionName: aws.String(t.function)})
		if err != nil {
			return fmt.Errorf("list the event sources of function %s: %w", t.function, err)
		}
		for _, m := range out.EventSourceMappings {
			if arn := aws.ToString(m.EventSourceArn); strings.HasPrefix(arn, "arn:aws") && strings.Contains(arn, ":sqs:") {
				parts := strings.Split(arn, ":")
				u, err := cl.sqs.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(parts[len(parts)-1]), QueueOwnerAWSAccountId: aws.String(parts[4])})
				if err != nil {
					return fmt.Errorf("the queue of function %s's event source %s: %w", t.function, arn, err)
				}
				t.queueURL = aws.ToString(u.QueueUrl)
				break
			}
		}
	}
	if t.queueURL == "" {
		return errors.New("unknown queue: the function has no SQS event source; give --queue-url")
	}
	attrs, err := queueAttributes(ctx, cl.sqs, t.queueURL)
	if err != nil {
		return err
	}
	t.queueARN = attrs[string(sqstypes.QueueAttributeNameQueueArn)]
	t.dlqURL = c.dlqURL
	if t.dlqURL == "" {
		var policy struct {
			DeadLetterTargetArn string `json:"deadLetterTargetArn"`
		}
		if p := attrs[string(sqstypes.QueueAttributeNameRedrivePolicy)]; p != "" {
			if err := json.Unmarshal([]byte(p), &policy); err != nil {
				return fmt.Errorf("queue %s's redrive policy %q: %w", t.queueURL, p, err)
			}
		}
		if policy.DeadLetterTargetArn == "" {
			return fmt.Errorf("queue %s has no redrive policy naming a dead-letter queue; give --dlq-url", t.queueURL)
		}
		parts := strings.Split(policy.DeadLetterTargetArn, ":")
		if len(parts) < 6 {
			return fmt.Errorf("queue %s's dead-letter queue %q is not a queue ARN", t.queueURL, policy.DeadLetterTargetArn)
		}
		u, err := cl.sqs.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(parts[5]), QueueOwnerAWSAccountId: aws.String(parts[4])})
		if err != nil {
			return fmt.Errorf("the dead-letter queue %s: %w", policy.DeadLetterTargetArn, err)
		}
		t.dlqURL = aws.ToString(u.QueueUrl)
	}
	dattrs, err := queueAttributes(ctx, cl.sqs, t.dlqURL)
	if err != nil {
		return err
	}
	t.dlqARN = dattrs[string(sqstypes.QueueAttributeNameQueueArn)]
	return nil
}

func queueAttributes(ctx context.Context, api *sqs.Client, url string) (map[string]string, error) {
	out, err := api.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(url), AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameAll}})
	if err != nil {
		return nil, fmt.Errorf("read queue %s: %w", url, err)
	}
	return out.Attributes, nil
}

// operator is who runs the command, for the audit line: the caller's ARN,
// or "" when STS does not say.
func (t *target) operator(ctx context.Context) string {
	out, err := t.c.sts.GetCallerIdentity(ctx, &sts.GetCallerIdentityInput{})
	if err != nil {
		return ""
	}
	return aws.ToString(out.Arn)
}

// functionOfStack finds, among the Lambda functions of a CloudFormation
// stack, the consumer's: a function whose environment holds the contract
// (CONSUMER_NAME, the construct's path), the one named by consumer (its
// path, or the path's last part) when the stack has several. The construct
// writes no stack outputs: its function is the resource that says what it
// is.
func functionOfStack(ctx context.Context, cl *clients, stack, consumer string) (string, error) {
	var found, names []string
	p := cloudformation.NewListStackResourcesPaginator(cl.cfn, &cloudformation.ListStackResourcesInput{StackName: aws.String(stack)})
	for p.HasMorePages() {
		out, err := p.NextPage(ctx)
		if err != nil {
			return "", fmt.Errorf("unknown consumer: the resources of stack %s: %w", stack, err)
		}
		for _, r := range out.StackResourceSummaries {
			if aws.ToString(r.ResourceType) != "AWS::Lambda::Function" || r.PhysicalResourceId == nil {
				continue
			}
			fn := aws.ToString(r.PhysicalResourceId)
			cfg, err := cl.lambda.GetFunctionConfiguration(ctx, &lambda.GetFunctionConfigurationInput{FunctionName: aws.String(fn)})
			if err != nil || cfg.Environment == nil || cfg.Environment.Variables[contract.TableVar] == "" {
				continue // not a consumer (or not readable: --function names it)
			}
			name := cfg.Environment.Variables[contract.ConsumerVar]
			names = append(names, name)
			if consumer == "" || name == consumer || strings.HasSuffix(name, "/"+consumer) {
				found = append(found, fn)
			}
		}
	}
	switch {
	case len(found) == 1:
		return found[0], nil
	case len(names) == 0:
		return "", fmt.Errorf("unknown consumer: stack %s has no function with an idempotent consumer's contract in its environment", stack)
	case len(found) == 0:
		return "", fmt.Errorf("unknown consumer: stack %s has no consumer %q; its consumers: %s", stack, consumer, strings.Join(names, ", "))
	}
	return "", fmt.Errorf("stack %s has %d consumers; give --consumer, one of: %s", stack, len(found), strings.Join(names, ", "))
}

// functionEnv reads the environment of the consumer's function into env,
// refusing a function without a consumer's contract, and returns the
// function's name.
func functionEnv(ctx context.Context, cl *clients, function string, env map[string]string) (string, error) {
	out, err := cl.lambda.GetFunctionConfiguration(ctx, &lambda.GetFunctionConfigurationInput{FunctionName: aws.String(function)})
	var nf *lambdatypes.ResourceNotFoundException
	switch {
	case errors.As(err, &nf):
		return "", fmt.Errorf("unknown consumer: no function %q in region %s; give the consumer's function name (its construct's Function), or --table and --namespace", function, cl.ddb.Options().Region)
	case err != nil:
		return "", fmt.Errorf("read the configuration of function %s: %w", function, err)
	}
	if out.Environment != nil {
		for k, v := range out.Environment.Variables {
			env[k] = v
		}
	}
	if env[contract.TableVar] == "" && env[contract.VersionVar] == "" {
		return "", fmt.Errorf("unknown consumer: function %s has no idempotent consumer's contract in its environment (no %s, no %s); is it the consumer's function?", function, contract.TableVar, contract.VersionVar)
	}
	return aws.ToString(out.FunctionName), nil
}
