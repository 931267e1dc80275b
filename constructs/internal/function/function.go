// Package function is the handler's function of a consumer of the family:
// its log group, its role (or a given one) with only what it needs, the key
// secret with HashKeys, the function on provided.al2023 from a bundled
// bootstrap (package bundle), its environment (the user's variables under
// the runtime contract's), and its namespace-scoped rights on the
// idempotency table. A consumer adds its source (an event source, an
// endpoint) and what is its own.
package function

import (
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsec2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssecretsmanager"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/idempotent-consumer/idempotent-consumer/constructs/internal/nag"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/internal/table"
	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
)

// IDs are the construct ids of what New creates, relative to its scope
// (the consumer's public constants).
type IDs struct {
	LogGroup, Role, Function, KeySecret string
}

// Config is a function, every setting resolved.
type Config struct {
	IDs IDs
	// Kind names the consumer in descriptions ("idempotent consumer"), and
	// Name is its construct id.
	Kind, Name string
	// AssetDir holds the bootstrap (bundle.Dir).
	AssetDir     string
	Architecture awslambda.Architecture
	MemorySize   float64
	// EphemeralStorage is the size of /tmp in MiB; 0 for Lambda's.
	EphemeralStorage    float64
	Timeout             time.Duration
	ReservedConcurrency *float64
	Tracing             awslambda.Tracing
	LogLevel            awslambda.ApplicationLogLevel
	LogRetention        awslogs.RetentionDays
	// Role is a given role; nil: New creates one.
	Role           awsiam.IRole
	Vpc            awsec2.IVpc
	VpcSubnets     *awsec2.SubnetSelection
	SecurityGroups *[]awsec2.ISecurityGroup
	Layers         *[]awslambda.ILayerVersion
	// Environment is the user's own variables; the runtime contract's are
	// written over them, with the table's name and, with HashKeys, the key
	// secret.
	Environment map[string]*string
	Runtime     contract.Settings
	Table       awsdynamodb.ITable
	HashKeys    bool
	// TxTables are the tables a transactional effect writes beside its
	// record: declared on the function as TxTables.Declare declares them,
	// granted.
	TxTables []awsdynamodb.ITable
	// Suppressions are the cdk-nag rules of the function that the
	// consumer's source explains (how it is invoked).
	Suppressions []nag.Rule
}

// Function is what New creates, or takes.
type Function struct {
	Function  awslambda.Function
	Role      awsiam.IRole
	LogGroup  awslogs.LogGroup
	KeySecret awssecretsmanager.ISecret // nil without HashKeys
	// TxTables are the tables its transactional effect may write; more can
	// be declared after New.
	TxTables *TxTables
}

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

// New creates the function in scope: its log group and, unless one is
// given, its role (no managed policy, only what the function needs, each on
// its one resource), the key secret with HashKeys, the function, and its
// rights on the records of its namespace in the table.
func New(scope constructs.Construct, cfg Config) Function {
	var f Function
	f.LogGroup = awslogs.NewLogGroup(scope, jsii.String(cfg.IDs.LogGroup), &awslogs.LogGroupProps{
		Retention: cfg.LogRetention,
	})
	f.Role = role(scope, cfg)
	f.LogGroup.GrantWrite(f.Role)
	if cfg.Vpc != nil {
		// The network interfaces have no ARN before they exist, and the
		// Describe actions have no resource-level permissions.
		f.Role.AddToPrincipalPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Actions:   &vpcActions,
			Resources: jsii.Strings("*"),
		}))
	}
	var environment map[string]*string
	environment, f.KeySecret = environmentOf(scope, cfg)
	f.Function = awslambda.NewFunction(scope, jsii.String(cfg.IDs.Function), &awslambda.FunctionProps{
		Description:                  jsii.String(fmt.Sprintf("%s%s %s", strings.ToUpper(cfg.Kind[:1]), cfg.Kind[1:], cfg.Name)),
		Runtime:                      awslambda.Runtime_PROVIDED_AL2023(),
		Architecture:                 cfg.Architecture,
		Handler:                      jsii.String("bootstrap"),
		Code:                         awslambda.Code_FromAsset(jsii.String(cfg.AssetDir), nil),
		Role:                         f.Role,
		LogGroup:                     f.LogGroup,
		MemorySize:                   jsii.Number(cfg.MemorySize),
		EphemeralStorageSize:         ephemeralStorage(cfg.EphemeralStorage),
		Timeout:                      awscdk.Duration_Seconds(jsii.Number(cfg.Timeout.Seconds())),
		ReservedConcurrentExecutions: cfg.ReservedConcurrency,
		Tracing:                      cfg.Tracing,
		Environment:                  &environment,
		Vpc:                          cfg.Vpc,
		VpcSubnets:                   cfg.VpcSubnets,
		SecurityGroups:               cfg.SecurityGroups,
		Layers:                       cfg.Layers,
		// Lambda's advanced logging controls: JSON lines, filtered by the
		// application log level, which the handler reads too
		// (AWS_LAMBDA_LOG_LEVEL).
		LoggingFormat:         awslambda.LoggingFormat_JSON,
		ApplicationLogLevelV2: cfg.LogLevel,
	})
	nag.Suppress(f.Function, false, cfg.Suppressions...)

	// Idempotency records: item-level actions on that one table, on the
	// items of the consumer's namespace alone.
	table.GrantRecords(cfg.Table, f.Function, cfg.Runtime)
	f.TxTables = &TxTables{function: f.Function, namespace: cfg.Runtime.Namespace}
	for _, t := range cfg.TxTables {
		f.TxTables.Declare(t, true)
	}
	return f
}

// TxTables are the tables a function's transactional effect writes in the
// same TransactWriteItems as its idempotency record (DESIGN.md, "Effects"):
// each declared once, granted, and named to the handler in the runtime
// contract's TxTablesVar (comma-separated), which refuses a transactional
// write to any other table before it sends a request.
type TxTables struct {
	function  awslambda.Function
	namespace string // the function's, in the idempotency table
	declared  []awsdynamodb.ITable
}

// Declare declares t, once: it grants the function the transactional
// writes on t (table.GrantTransactional) unless grant is false (the caller
// granted them), and adds t's name to TxTablesVar.
//
// The idempotency table itself is granted too when it is declared: the
// record's grant is scoped to the records of the namespace
// (dynamodb:LeadingKeys), and the effect writes other items of it (a
// shared table's business data), which that grant does not cover. This
// grant, like every transactional grant on an idempotency table of the app,
// excludes the records of the table's other namespaces
// (table.GrantTransactional): the function may write the business items
// and its own records, never another consumer's.
func (x *TxTables) Declare(t awsdynamodb.ITable, grant bool) {
	for _, d := range x.declared {
		if *d.Node().Path() == *t.Node().Path() {
			return
		}
	}
	x.declared = append(x.declared, t)
	if grant {
		table.GrantTransactional(t, x.function, x.namespace)
	}
	names := make([]*string, len(x.declared))
	for i, d := range x.declared {
		names[i] = d.TableName()
	}
	x.function.AddEnvironment(jsii.String(contract.TxTablesVar), awscdk.Fn_Join(jsii.String(","), &names), nil)
}

// Len is the number of tables declared.
func (x *TxTables) Len() int { return len(x.declared) }

// ephemeralStorage is the size of /tmp, or nil for Lambda's.
func ephemeralStorage(mib float64) awscdk.Size {
	if mib == 0 {
		return nil
	}
	return awscdk.Size_Mebibytes(jsii.Number(mib))
}

// role is the given role, or a new one the function can assume.
func role(scope constructs.Construct, cfg Config) awsiam.IRole {
	if cfg.Role != nil {
		return cfg.Role
	}
	return awsiam.NewRole(scope, jsii.String(cfg.IDs.Role), &awsiam.RoleProps{
		AssumedBy:   awsiam.NewServicePrincipal(jsii.String("lambda.amazonaws.com"), nil),
		Description: jsii.String(fmt.Sprintf("Execution role of the %s %s", cfg.Kind, cfg.Name)),
	})
}

// environmentOf is the function's environment: the user's variables, the
// runtime contract's over them, the table's name and, with HashKeys, the
// key secret it creates (a dynamic reference, never the secret itself).
func environmentOf(scope constructs.Construct, cfg Config) (map[string]*string, awssecretsmanager.ISecret) {
	environment := map[string]*string{}
	for k, v := range cfg.Environment {
		environment[k] = v
	}
	for k, v := range cfg.Runtime.Encode() {
		environment[k] = jsii.String(v)
	}
	environment[contract.TableVar] = cfg.Table.TableName()
	if !cfg.HashKeys {
		return environment, nil
	}
	// 64 letters and digits: more than the 32 bytes the handler requires.
	// Retained and never rotated: a new secret gives every fact a new
	// record key.
	secret := awssecretsmanager.NewSecret(scope, jsii.String(cfg.IDs.KeySecret), &awssecretsmanager.SecretProps{
		Description: jsii.String(fmt.Sprintf("Secret under which the %s %s hashes its idempotency keys (HMAC-SHA-256). Never change it while records live.", cfg.Kind, cfg.Name)),
		GenerateSecretString: &awssecretsmanager.SecretStringGenerator{
			PasswordLength:     jsii.Number(64),
			ExcludePunctuation: jsii.Bool(true),
			IncludeSpace:       jsii.Bool(false),
		},
		RemovalPolicy: awscdk.RemovalPolicy_RETAIN,
	})
	nag.Suppress(secret, false,
		nag.Rule{ID: "AwsSolutions-SMG4", Reason: "The secret keys the HMAC of every idempotency key: rotating it would give every fact a new record key, so duplicates of the business window would run their effects again."})
	// A dynamic reference: CloudFormation resolves it at deployment, so the
	// template holds no secret and the function needs no access to Secrets
	// Manager.
	environment[contract.KeySecretVar] = secret.SecretValue().UnsafeUnwrap()
	return environment, secret
}

// SuppressWildcards marks the role's wildcard statements, once the role's
// policy holds every statement: X-Ray (CDK grants it for every tracing mode
// but DISABLED) and the network interfaces of a function in a VPC. On a
// given role it marks the policy the construct's grants created.
func SuppressWildcards(role awsiam.IRole, tracing awslambda.Tracing, vpc awsec2.IVpc) {
	if tracing != awslambda.Tracing_DISABLED {
		nag.Suppress(role, true, nag.Rule{
			ID:        "AwsSolutions-IAM5",
			Reason:    "X-Ray tracing: xray:PutTraceSegments and xray:PutTelemetryRecords do not support resource-level permissions, so X-Ray requires Resource \"*\".",
			AppliesTo: []string{"Resource::*"},
		})
	}
	if vpc != nil {
		nag.Suppress(role, true, nag.Rule{
			ID:        "AwsSolutions-IAM5",
			Reason:    "VPC access: Lambda creates, describes and deletes the function's network interfaces, which have no ARN before they exist, and ec2:Describe* has no resource-level permissions (the actions of AWSLambdaVPCAccessExecutionRole).",
			AppliesTo: []string{"Resource::*"},
		})
	}
}
