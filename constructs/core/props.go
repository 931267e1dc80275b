// Package core holds what every construct of the family shares and its
// users set or read: the shared props (Props, embedded in each construct's
// props, each field documenting its default) and the ids of the synth
// warnings that an app acknowledges. The table design of the table a
// construct creates (contract.PartitionKey, contract.TTLAttribute: a table
// the app brings has it too, or declares its own) is the public package
// contract's, which a handler reads too. The resolver from the props to
// the runtime contract, the defaults, the rules, the builders and the
// construct ids are the family's own (constructs/internal/family,
// constructs/internal/ids).
//
// A construct's props embed Props; a composite literal names it:
//
//	consumer.IdempotentConsumerProps{
//		Props: core.Props{Entry: jsii.String("cmd/charge"), Table: ledger, Namespace: jsii.String("charge")},
//		Topic: payments,
//	}
//
// and its fields read and assign as the construct's own (props.Namespace).
package core

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsec2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
)

// Props are the settings every construct of the family takes: its
// handler's entry, the idempotency table and its design, the namespace and
// business window, the function and its logs, the alarms' action. They are
// declared once, here, and embedded in IdempotentConsumerProps,
// IdempotentStreamConsumerProps, IdempotentEndpointProps and
// IdempotentStepProps, which add only what their source needs. Each works
// on every construct, by one resolver, or is refused by name where a
// construct cannot honour it (a step refuses TransactionalTables and
// Dashboard).
//
// Only Entry is required. Every other field documents its default; a nil
// field means that default. Durations must be concrete values (not
// tokens): the construct checks them and hands them to the handler.
type Props struct {
	// Entry is the directory of the handler's Go main package, for example
	// "cmd/charge": absolute, or relative to EntryRoot, by default the root
	// of the Go module that holds the working directory (the CDK app's
	// module, under `cdk synth` at its root as under `go test` in one of its
	// packages). It must be a main package (the construct refuses any other
	// at synth).
	//
	// Its main calls the entry point of the construct's source (sqsbatch.Start, kinesis.Start, dynamodbstream.Start, endpoint.Start, step.Start...): the contract names the source, and the other entry points refuse it at init.
	//
	// The construct builds it at synth time into a `bootstrap` for Linux on
	// the function's Architecture (GOARCH arm64, or amd64 for x86_64) with
	// `CGO_ENABLED=0 go build -tags lambda.norpc -trimpath -buildvcs=false
	// -ldflags "-s -w"`, so the same source gives the same asset hash (one
	// per architecture). Required.
	Entry *string

	// EntryRoot is the directory a relative Entry is resolved against.
	//
	// Default: the root of the Go module that holds the working directory.
	EntryRoot *string

	// Table is an existing table to hold the idempotency records
	// (shared-table mode), of the construct's design or of the app's own (a
	// single-table design: its own key names, a sort key, its own TTL
	// attribute; see TablePartitionKey, TableSortKey, TableKeyInSortKey,
	// TableFixedKeyValue and TableTTLAttribute). Its keys must be strings.
	// The construct reads the key schema and the TTL attribute of a table
	// defined in the app, and passes them to the handler; for an imported
	// table, which it cannot read, the props declare them (a partition key
	// "pk", no sort key and TTL on "ttl" when they say nothing). A table
	// without TTL gets a synth warning; an imported one a warning that
	// names the key schema and TTL attribute the construct assumes
	// (WarnTableImported, WarnTableTTL). Records are
	// keyed "<Namespace>#<business key>", so the table can also hold
	// business data under other prefixes. A table encrypted with a
	// customer-managed key must be imported with that key
	// (awsdynamodb.Table_FromTableAttributes) so that the function is
	// allowed to use it.
	//
	// Default: a new table owned by the construct: on-demand capacity,
	// string partition key "pk", TTL attribute "ttl", point-in-time recovery
	// on, encrypted with the AWS-managed key.
	Table awsdynamodb.ITable

	// TablePartitionKey is the name of the given Table's partition key
	// attribute (a string). For a table the app defines it is read from the
	// table (a different value here is refused); for an imported table it
	// declares the table's. Only with Table.
	//
	// Default: the table's partition key; "pk" for an imported table.
	TablePartitionKey *string

	// TableSortKey is the name of the given Table's sort key attribute (a
	// string), for a table that has one. Read from a table the app
	// defines, as TablePartitionKey is. The record key stays in the
	// partition key, and the sort key holds TableFixedKeyValue, unless
	// TableKeyInSortKey. Only with Table.
	//
	// Default: the table's sort key; none for an imported table.
	TableSortKey *string

	// TableKeyInSortKey puts the record key "<Namespace>#<business key>" in
	// the sort key, under the partition key value TableFixedKeyValue: the
	// layout of the most used peer library. IAM's dynamodb:LeadingKeys
	// condition sees the partition key only, so the consumer's role is then
	// scoped to its partition value (StringEquals), not to its namespace:
	// consumers that share a partition value can write each other's
	// records (a synth warning says so; DESIGN.md, "A shared table of the
	// app's own design"). Needs a sort key.
	//
	// Default: false, the record key is the partition key's value and the
	// role is scoped to "<Namespace>#*".
	TableKeyInSortKey *bool

	// TableFixedKeyValue is the value of the table's other key on every
	// record of this consumer: the sort key's (the record key in the
	// partition key), or the partition key's (TableKeyInSortKey). Only with
	// a sort key.
	//
	// Default: the Namespace as the sort key's value; "idempotency#" and
	// the Namespace as the partition key's, a partition per consumer.
	TableFixedKeyValue *string

	// TableTTLAttribute is the attribute the given Table's TTL is enabled
	// on (epoch seconds), which the records carry. Read from a table the
	// app defines (a different value here is refused: a table has one TTL
	// attribute, so the records would never be deleted); for an imported
	// table it declares the table's. Only with Table.
	//
	// Default: the table's TTL attribute; "ttl" for an imported table, or
	// one without TTL.
	TableTTLAttribute *string

	// GlobalTable makes the idempotency table a global table in
	// multi-Region strong consistency (MRSC), created by the construct or,
	// with Table, declared: see GlobalTable.
	//
	// Default: none, a table of one Region (a Table of the app that is a
	// global table is read).
	GlobalTable *GlobalTable

	// SingleWritingRegion allows a Table that is a global table in
	// multi-Region eventual consistency (MREC, DynamoDB's default), which is
	// refused otherwise: such a table checks a conditional write against
	// the local Region's copy only and settles concurrent writes by last
	// writer wins, so two deliveries of one fact handled in two Regions
	// could both reserve it and run its effect twice. Set it only when
	// every record of this construct is written in one Region (the other
	// Regions' stacks run no consumer of this namespace, or stand by). A
	// table in strong consistency (GlobalTable) needs no such statement.
	//
	// Default: false, an eventual global table is refused.
	SingleWritingRegion *bool

	// RemovalPolicy applies to the table the construct creates (ignored in
	// shared-table mode).
	//
	// Default: awscdk.RemovalPolicy_RETAIN, the table and its records
	// outlive the stack.
	RemovalPolicy awscdk.RemovalPolicy

	// Namespace prefixes every idempotency key ("<Namespace>#<key>"). It must
	// not be empty nor contain '#', '*', '?' or control characters.
	//
	// Default: the construct id in lower case, without those characters (an
	// id of them alone is refused: set Namespace); required with a
	// given Table, where two consumers with one namespace (in two stacks, say)
	// would suppress each other's facts. Two constructs of one app with one
	// namespace on one table are refused.
	Namespace *string

	// MemorySize of the function in MiB.
	//
	// Default: 256 MiB.
	MemorySize *float64

	// Timeout of the function.
	//
	// Default: 30 seconds; 10 seconds for an IdempotentEndpoint (a caller
	// waits).
	Timeout awscdk.Duration

	// EphemeralStorageSize is the size of the function's /tmp, in MiB: a
	// whole number from 512 to 10240 (an effect that spools a large
	// payload, an S3 object, to disk).
	//
	// Default: 512, Lambda's.
	EphemeralStorageSize *float64

	// ReservedConcurrentExecutions reserves (and caps) concurrency for the
	// function: a whole number, at least 0 (at least 1 for an endpoint,
	// which it throttles: Lambda answers 429 beyond it). A queue consumer's
	// must be at least its MaxConcurrency.
	//
	// Default: none, the function uses the account's unreserved
	// concurrency; 10 for an IdempotentEndpoint.
	ReservedConcurrentExecutions *float64

	// LogRetention of the function's log group, which the construct creates
	// and owns (so that the function's role can be limited to it). The log
	// group is retained when the stack is deleted, as CDK does by default.
	//
	// Default: awslogs.RetentionDays_ONE_MONTH, one month.
	LogRetention awslogs.RetentionDays

	// Architecture of the function: awslambda.Architecture_ARM_64() or
	// awslambda.Architecture_X86_64(). The bootstrap is built for it (GOARCH
	// arm64 or amd64); each architecture has its own asset. Others are
	// refused.
	//
	// Default: arm64 (Graviton: cheaper per GB-second).
	Architecture awslambda.Architecture

	// Role is an existing execution role for the function. The construct
	// grants it what the function needs (its log group, the table, its
	// source, X-Ray, the VPC's network interfaces), as it does its own role;
	// a role imported with Mutable false takes no grant, and must already
	// hold them. The construct (an awsiam.IGrantable) grants through it.
	//
	// Default: a new role with no managed policy, assumed by Lambda.
	Role awsiam.IRole

	// Vpc attaches the function to a VPC, to reach private resources. The
	// role is allowed to manage the function's network interfaces (the
	// actions of AWSLambdaVPCAccessExecutionRole, on "*": network
	// interfaces have no ARN before they exist). The subnets must reach
	// DynamoDB and the construct's source (a NAT gateway, or VPC
	// endpoints), or every record fails.
	//
	// Default: none, the function runs outside any VPC.
	Vpc awsec2.IVpc

	// VpcSubnets selects the subnets of Vpc for the function; needs Vpc.
	//
	// Default: the VPC's private subnets (CDK's default).
	VpcSubnets *awsec2.SubnetSelection

	// SecurityGroups for the function in Vpc; needs Vpc.
	//
	// Default: with Vpc, a new security group that allows all outbound
	// traffic and no inbound (CDK's default).
	SecurityGroups *[]awsec2.ISecurityGroup

	// Layers are Lambda layers for the function (extensions, such as a
	// telemetry agent). They must be built for its Architecture: a layer of
	// the app whose compatibleArchitectures leave it out is refused; the
	// architectures of an imported layer cannot be read at synth, and the
	// construct warns.
	//
	// Default: none.
	Layers *[]awslambda.ILayerVersion

	// Tracing mode of the function.
	//
	// Default: awslambda.Tracing_ACTIVE, invocations are sampled and traced
	// with X-Ray. For every mode but awslambda.Tracing_DISABLED the role is
	// allowed xray:PutTraceSegments and xray:PutTelemetryRecords, on "*"
	// since X-Ray has no resource-level permissions.
	Tracing awslambda.Tracing

	// LogLevel is the function's application log level under Lambda's
	// advanced logging controls; its logs are JSON. The handler writes a
	// line per record at INFO (processed, duplicate) or above (WARN: in
	// progress, not started, lease lost; ERROR: failures, bad input,
	// mismatches), so awslambda.ApplicationLogLevel_WARN keeps every line that
	// says why a record is retried or dead-lettered and drops the rest. The
	// metrics line is written at this level, so it is never dropped. A value
	// that is not one of those levels (TRACE, DEBUG, INFO, WARN, ERROR,
	// FATAL) is refused.
	//
	// Default: awslambda.ApplicationLogLevel_INFO.
	LogLevel awslambda.ApplicationLogLevel

	// Environment holds extra environment variables for the function. It
	// must not set a variable of the configuration contract (the table of
	// docs/contract.md): use the matching prop instead.
	//
	// Default: none.
	Environment *map[string]*string

	// Window is the business window: how long a completed fact suppresses
	// duplicates, counted from its completion. At least LeaseMax.
	//
	// A queue or stream consumer judges each record by its age: one older
	// than Window is not run (its fact's record may have ended its window)
	// but ends as expired. The queue consumer warns when Window is shorter
	// than its queue's retention, the stream consumer refuses a
	// MaxRecordAge that is not shorter than Window, and the endpoint
	// refuses, with a Webhook, a Window shorter than the provider's
	// redelivery period (see each construct's props).
	//
	// Default: 24 hours; for a webhook endpoint the provider's redelivery
	// period when longer (72 hours for Stripe and GitHub).
	Window awscdk.Duration

	// TTLAfterWindow is how long after the end of the business window a
	// record becomes eligible for DynamoDB TTL deletion (clean-up only; on
	// an MRSC table, which has no TTL, for the sweeper's: GlobalTable).
	//
	// Default: 24 hours.
	TTLAfterWindow awscdk.Duration

	// HashKeys makes the handler store and log a keyed hash
	// (HMAC-SHA-256) of each business key instead of the key, for keys that
	// are personal data (an e-mail address, an account number). The
	// construct generates the secret in AWS Secrets Manager (64 letters and
	// digits, retained with the stack, never rotated) and hands it to the
	// handler through a CloudFormation dynamic reference: the template holds
	// no secret, the function's configuration does, so whoever may call
	// lambda:GetFunctionConfiguration on the function can read it and test
	// guesses against the table: keep that right from the table's and the
	// logs' readers (DESIGN.md, "Hashed keys").
	//
	// It costs reading keys back from the table and the logs; duplicates
	// are found as before and the key the effect passes downstream
	// (Reservation.Key, now the hashed key) is stable across deliveries.
	// Turning it on or off on a running consumer gives every fact a new
	// record key: do it only when no fact of the last business window can
	// be delivered again (see idempotency.Config.KeySecret). A secret
	// changed in Secrets Manager reaches the function only at the next
	// stack update that updates the function: CloudFormation resolves the
	// dynamic reference then, and does not notice the change by itself.
	//
	// Default: false, keys are stored and logged as they are.
	HashKeys *bool

	// MetricsNamespace is the CloudWatch namespace of the handler's
	// embedded-metric-format lines.
	//
	// Default: "IdempotentConsumer" (outcome.DefaultNamespace).
	MetricsNamespace *string

	// AlarmAction is added to every alarm of the construct (for example an
	// awscloudwatchactions.SnsAction).
	//
	// Default: none, the alarms only change state.
	AlarmAction awscloudwatch.IAlarmAction

	// Dashboard creates a CloudWatch dashboard of the construct (its
	// Widgets): effects run against duplicates absorbed, the outcomes
	// retried or dead-lettered, what its source adds (a queue's depth and
	// oldest message, a stream's iterator age), errors and throttles,
	// durations and the alarms. CloudFormation names it.
	//
	// Default: false, no dashboard (Widgets() still gives its widgets, for
	// a dashboard of the app's own).
	Dashboard *bool

	// TransactionalTables are the tables a transactional effect
	// (sqsbatch.StartTx, kinesis.StartTx, ...) writes in the same TransactWriteItems
	// as its idempotency record. Each is granted as GrantTransactionalWrites
	// grants it (PutItem, UpdateItem, DeleteItem and ConditionCheckItem, and
	// its customer-managed key), the construct's own shared Table too: the
	// records' grant covers only the items of Namespace
	// (dynamodb:LeadingKeys), and the effect writes the table's other items;
	// on a table that is an idempotency table of the app, the effect's grant
	// excludes the records of every other namespace claimed on it in the
	// app (so the function may write the business items and its own
	// records, never another construct's). Their names reach the handler
	// (IDEMPOTENCY_TX_TABLES), which refuses, before any request, a
	// transactional write to a table not declared. A table can also be
	// declared after the queue consumer is created, with
	// consumer.GrantTransactionalWrites(table, theConsumer). The HTTP
	// runtime has no transactional entry point today: an endpoint's
	// tables are granted and named, for an effect that calls
	// idempotency.Guard.RunTx itself.
	//
	// A construct whose bootstrap links a transactional effect (the StartTx,
	// FromEnvTx or NewTx of sqsbatch, eventbridge, kinesis or
	// dynamodbstream) with no table declared is refused at synth: in AWS
	// every one of its writes would be denied.
	// The construct sees it in the bootstrap's function table; a handler
	// that calls idempotency.Guard.RunTx itself is not seen, and must
	// declare its tables all the same.
	//
	// Default: none; a transactional handler is refused without them.
	TransactionalTables *[]awsdynamodb.ITable
}
