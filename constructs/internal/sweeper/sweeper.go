// Package sweeper is the sweeper of an idempotency table in multi-Region
// strong consistency (MRSC), which has no TTL (DESIGN.md, "Two Regions"):
// a function, one per table in the app, scheduled every interval, that
// scans the local replica and deletes each record whose TTL attribute has
// passed, with a delete conditional on it (a record reserved again since
// the scan is never deleted). Its runtime is lambda/sweep (its main,
// Entry, bundled as every handler is); it reads the table's name, keys and
// TTL attribute from the runtime contract's variables, and nothing else.
package sweeper

import (
	"fmt"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsevents"
	"github.com/aws/aws-cdk-go/awscdk/v2/awseventstargets"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/idempotent-consumer/idempotent-consumer/constructs/internal/ids"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/internal/monitor"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/internal/nag"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/internal/table"
	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/internal/limits"
)

// Entry is the import path of the sweeper's main package, which the
// construct bundles from the library's module (bundle.PackageDir).
const Entry = "github.com/idempotent-consumer/idempotent-consumer/lambda/sweep/cmd/sweeper"

// Config is what a sweeper is built from.
type Config struct {
	// Table is the table swept: the local replica (its ARN is the grant's
	// resource).
	Table awsdynamodb.ITable
	// Design is the table's design: its partition key, sort key and TTL
	// attribute, which the sweeper reads from the contract's variables.
	Design contract.Settings
	// AssetDir holds the sweeper's bootstrap, built for Architecture.
	AssetDir     string
	Architecture awslambda.Architecture
	// Interval is how often it sweeps.
	Interval time.Duration
	// AlarmAction is added to its alarm (nil: none).
	AlarmAction awscloudwatch.IAlarmAction
}

// Sweeper is what New creates.
type Sweeper struct {
	Function awslambda.Function
	Role     awsiam.Role
	Schedule awsevents.Rule
	Alarm    awscloudwatch.Alarm
}

// Environment is the sweeper's environment: the contract's variables of the
// table's name, keys and TTL attribute (the sort key's only with one).
func Environment(name *string, design contract.Settings) map[string]*string {
	env := map[string]*string{
		contract.TableVar:        name,
		contract.PartitionKeyVar: jsii.String(design.TablePartitionKey),
		contract.TTLAttributeVar: jsii.String(design.TableTTLAttribute),
	}
	if design.TableSortKey != "" {
		env[contract.SortKeyVar] = jsii.String(design.TableSortKey)
	}
	return env
}

// New creates the sweeper in scope: its log group, its role (its log
// group, and Scan and DeleteItem on the table: table.GrantSweep), the
// function, its schedule and the alarm on its errors.
func New(scope constructs.Construct, cfg Config) Sweeper {
	var s Sweeper
	logs := awslogs.NewLogGroup(scope, jsii.String(ids.SweeperLogGroup), &awslogs.LogGroupProps{Retention: awslogs.RetentionDays_ONE_MONTH})
	s.Role = awsiam.NewRole(scope, jsii.String(ids.SweeperRole), &awsiam.RoleProps{
		AssumedBy:   awsiam.NewServicePrincipal(jsii.String("lambda.amazonaws.com"), nil),
		Description: jsii.String("Execution role of the sweeper of an MRSC idempotency table"),
	})
	logs.GrantWrite(s.Role)
	table.GrantSweep(cfg.Table, s.Role)
	env := Environment(cfg.Table.TableName(), cfg.Design)
	s.Function = awslambda.NewFunction(scope, jsii.String(ids.SweeperFunction), &awslambda.FunctionProps{
		Description:  jsii.String(fmt.Sprintf("Deletes the expired records of an MRSC idempotency table (no TTL), every %s", contract.Format(cfg.Interval))),
		Runtime:      awslambda.Runtime_PROVIDED_AL2023(),
		Architecture: cfg.Architecture,
		Handler:      jsii.String("bootstrap"),
		Code:         awslambda.Code_FromAsset(jsii.String(cfg.AssetDir), nil),
		Role:         s.Role,
		LogGroup:     logs,
		MemorySize:   jsii.Number(256),
		Timeout:      awscdk.Duration_Seconds(jsii.Number(limits.SweepTimeout.Seconds())),
		// One sweep at a time: a second would scan the same items.
		ReservedConcurrentExecutions: jsii.Number(1),
		Environment:                  &env,
		LoggingFormat:                awslambda.LoggingFormat_JSON,
		Tracing:                      awslambda.Tracing_DISABLED,
	})
	nag.Suppress(s.Function, false,
		nag.Rule{ID: "Serverless-LambdaDLQ", Reason: "Invoked by its schedule: a sweep that fails is the next interval's to redo (its deletes are conditional), and the alarm on its errors says so; a dead letter would hold nothing to replay."},
		nag.Rule{ID: "Serverless-LambdaTracing", Reason: "A scan and conditional deletes on one table, every interval: its logs and the alarm on its errors say what a trace would."})
	s.Schedule = awsevents.NewRule(scope, jsii.String(ids.SweeperSchedule), &awsevents.RuleProps{
		Description: jsii.String("Runs the sweeper of an MRSC idempotency table"),
		Schedule:    awsevents.Schedule_Rate(awscdk.Duration_Minutes(jsii.Number(cfg.Interval.Minutes()))),
		Targets:     &[]awsevents.IRuleTarget{awseventstargets.NewLambdaFunction(s.Function, &awseventstargets.LambdaFunctionProps{RetryAttempts: jsii.Number(0)})},
	})
	nag.Suppress(s.Schedule, true,
		nag.Rule{ID: "Serverless-EventBusDLQ", Reason: "A schedule's event carries nothing to replay: a sweep that is not invoked is the next interval's, and the sweeper's alarm watches its errors."})
	s.Alarm = monitor.NewAlarm(scope, ids.SweeperErrorsAlarm,
		"The sweeper of an MRSC idempotency table failed: expired records stay (the guard treats them as absent; they cost storage) until a sweep succeeds. Its logs say why.",
		s.Function.MetricErrors(monitor.WithStatistic(&awscloudwatch.MetricOptions{Period: awscdk.Duration_Minutes(jsii.Number(cfg.Interval.Minutes()))}, "Sum")),
		0, cfg.AlarmAction)
	return s
}
