package consumer

import (
	"fmt"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambdaeventsources"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssecretsmanager"
	"github.com/aws/jsii-runtime-go"

	"github.com/idempotent-consumer/idempotent-consumer/constructs/internal/nag"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/internal/table"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/contract"
)

// vpcActions are what Lambda needs on the execution role to attach a
// function to a VPC: the actions of the AWS-managed policy
// AWSLambdaVPCAccessExecutionRole, which the construct does not attach (its
// role has no managed policies).
var vpcActions = []*string{
	jsii.String("ec2:AssignPrivateIpAddresses"),
	jsii.String("ec2:CreateNetworkInterface"),
	jsii.String("ec2:DeleteNetworkInterface"),
	jsii.String("ec2:DescribeNetworkInterfaces"),
	jsii.String("ec2:DescribeSubnets"),
	jsii.String("ec2:UnassignPrivateIpAddresses"),
}

// addTable creates the table of idempotency records unless one is given.
func (c *idempotentConsumer) addTable(props *IdempotentConsumerProps) {
	c.table = props.Table
	if c.table != nil {
		return
	}
	removal := props.RemovalPolicy
	if removal == "" {
		removal = awscdk.RemovalPolicy_RETAIN
	}
	c.table = table.New(c, IDTable, removal)
}

// addRole creates the function's log group and, unless one is given, its
// role: no managed policy, only what the function needs, each on its one
// resource.
func (c *idempotentConsumer) addRole(props *IdempotentConsumerProps, id string) {
	retention := props.LogRetention
	if retention == "" {
		retention = awslogs.RetentionDays_ONE_MONTH
	}
	c.logGroup = awslogs.NewLogGroup(c, jsii.String(IDLogGroup), &awslogs.LogGroupProps{
		Retention: retention,
	})
	c.role = props.Role
	if c.role == nil {
		c.role = awsiam.NewRole(c, jsii.String(IDRole), &awsiam.RoleProps{
			AssumedBy:   awsiam.NewServicePrincipal(jsii.String("lambda.amazonaws.com"), nil),
			Description: jsii.String(fmt.Sprintf("Execution role of the idempotent consumer %s", id)),
		})
	}
	c.logGroup.GrantWrite(c.role)
	if props.Vpc != nil {
		// The network interfaces have no ARN before they exist, and the
		// Describe actions have no resource-level permissions.
		c.role.AddToPrincipalPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Actions:   &vpcActions,
			Resources: jsii.Strings("*"),
		}))
	}
}

// addFunction creates the function, its environment (the runtime contract,
// and the key secret with HashKeys) and its rights on the table.
func (c *idempotentConsumer) addFunction(props *IdempotentConsumerProps, s *settings, id, assetDir string) {
	environment := map[string]*string{}
	if props.Environment != nil {
		for k, v := range *props.Environment {
			environment[k] = v
		}
	}
	for k, v := range s.runtime.Encode() {
		environment[k] = jsii.String(v)
	}
	environment[contract.TableVar] = c.table.TableName()
	if props.HashKeys != nil && *props.HashKeys {
		// 64 letters and digits: more than the 32 bytes the handler
		// requires. Retained and never rotated: a new secret gives every
		// fact a new record key.
		secret := awssecretsmanager.NewSecret(c, jsii.String(IDKeySecret), &awssecretsmanager.SecretProps{
			Description: jsii.String(fmt.Sprintf("Secret under which the idempotent consumer %s hashes its idempotency keys (HMAC-SHA-256). Never change it while records live.", id)),
			GenerateSecretString: &awssecretsmanager.SecretStringGenerator{
				PasswordLength:     jsii.Number(64),
				ExcludePunctuation: jsii.Bool(true),
				IncludeSpace:       jsii.Bool(false),
			},
			RemovalPolicy: awscdk.RemovalPolicy_RETAIN,
		})
		nag.Suppress(secret, false,
			nag.Rule{ID: "AwsSolutions-SMG4", Reason: "The secret keys the HMAC of every idempotency key: rotating it would give every fact a new record key, so duplicates of the business window would run their effects again."})
		// A dynamic reference: CloudFormation resolves it at deployment, so
		// the template holds no secret and the function needs no access to
		// Secrets Manager.
		environment[contract.KeySecretVar] = secret.SecretValue().UnsafeUnwrap()
		c.keySecret = secret
	}

	c.function = awslambda.NewFunction(c, jsii.String(IDFunction), &awslambda.FunctionProps{
		Description:                  jsii.String(fmt.Sprintf("Idempotent consumer %s", id)),
		Runtime:                      awslambda.Runtime_PROVIDED_AL2023(),
		Architecture:                 s.architecture,
		Handler:                      jsii.String("bootstrap"),
		Code:                         awslambda.Code_FromAsset(jsii.String(assetDir), nil),
		Role:                         c.role,
		LogGroup:                     c.logGroup,
		MemorySize:                   jsii.Number(s.memorySize),
		Timeout:                      awscdk.Duration_Seconds(jsii.Number(s.runtime.Timeout.Seconds())),
		ReservedConcurrentExecutions: props.ReservedConcurrentExecutions,
		Tracing:                      s.tracing,
		Environment:                  &environment,
		Vpc:                          props.Vpc,
		VpcSubnets:                   props.VpcSubnets,
		SecurityGroups:               props.SecurityGroups,
		Layers:                       props.Layers,
		// Lambda's advanced logging controls: JSON lines, filtered by the
		// application log level, which the handler reads too
		// (AWS_LAMBDA_LOG_LEVEL).
		LoggingFormat:         awslambda.LoggingFormat_JSON,
		ApplicationLogLevelV2: logLevel(props.LogLevel),
	})
	nag.Suppress(c.function, false,
		nag.Rule{ID: "Serverless-LambdaDLQ", Reason: "The function is only invoked synchronously, by the SQS event-source mapping; a message it fails MaxReceiveCount times moves to the queue's dead-letter queue by the queue's redrive policy."})

	// Idempotency records: item-level actions on that one table, on the
	// items of the consumer's namespace alone.
	table.GrantRecords(c.table, c.function, c.namespace)
}

// addEventSource connects the queue to the function, with partial batch
// responses: ReceiveMessage, DeleteMessage, ChangeMessageVisibility and
// GetQueueAttributes on the queue (and kms:Decrypt on its key).
func (c *idempotentConsumer) addEventSource(props *IdempotentConsumerProps, s *settings) {
	c.function.AddEventSource(awslambdaeventsources.NewSqsEventSource(c.queue, &awslambdaeventsources.SqsEventSourceProps{
		BatchSize:               jsii.Number(s.runtime.BatchSize),
		MaxBatchingWindow:       props.MaxBatchingWindow,
		MaxConcurrency:          props.MaxConcurrency,
		ReportBatchItemFailures: jsii.Bool(true),
	}))
	// The event-source mapping is the child of the function that
	// AddEventSource just created.
	for _, child := range *c.function.Node().Children() {
		if esm, ok := child.(awslambda.EventSourceMapping); ok {
			nag.Suppress(esm, true,
				nag.Rule{ID: "Serverless-LambdaEventSourceMappingDestination", Reason: "An on-failure destination only applies to stream and Kafka event sources; for SQS the queue's redrive policy moves failed messages to the dead-letter queue."})
		}
	}
}

// suppressWildcards marks the role's wildcard statements, once the role's
// policy holds every statement: X-Ray (CDK grants it for every tracing mode
// but DISABLED) and the network interfaces of a function in a VPC. On a
// given role it marks the policy the construct's grants created.
func (c *idempotentConsumer) suppressWildcards(props *IdempotentConsumerProps, s *settings) {
	if s.tracing != awslambda.Tracing_DISABLED {
		nag.Suppress(c.role, true, nag.Rule{
			ID:        "AwsSolutions-IAM5",
			Reason:    "X-Ray tracing: xray:PutTraceSegments and xray:PutTelemetryRecords do not support resource-level permissions, so X-Ray requires Resource \"*\".",
			AppliesTo: []string{"Resource::*"},
		})
	}
	if props.Vpc != nil {
		nag.Suppress(c.role, true, nag.Rule{
			ID:        "AwsSolutions-IAM5",
			Reason:    "VPC access: Lambda creates, describes and deletes the function's network interfaces, which have no ARN before they exist, and ec2:Describe* has no resource-level permissions (the actions of AWSLambdaVPCAccessExecutionRole).",
			AppliesTo: []string{"Resource::*"},
		})
	}
}

// logLevel is the function's application log level: level, or INFO.
func logLevel(level awslambda.ApplicationLogLevel) awslambda.ApplicationLogLevel {
	if level == "" {
		return awslambda.ApplicationLogLevel_INFO
	}
	return level
}
