package platform

import (
	"fmt"
	"path/filepath"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsevents"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsroute53"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/idempotent-consumer/idempotent-consumer/constructs/consumer"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/core"
)

// The example platform in two Regions (DESIGN.md, "Two Regions"): a stack
// per Region, each with the orders bus (a custom bus of one name in both,
// as a global endpoint requires) and ShipOrder on it; the producers publish
// through an EventBridge global endpoint with event replication, so every
// order reaches both buses, and both Regions' ShipOrder share one MRSC
// idempotency table: each order is shipped once.

// The Regions of the example: the primary and the secondary of the global
// endpoint are the table's two replicas, the witness a third Region of
// their set.
const (
	PrimaryRegion   = "us-east-1"
	SecondaryRegion = "us-east-2"
	WitnessRegion   = "us-west-2"
	// OrdersBusName is the orders bus's name, the same in both Regions.
	OrdersBusName = "orders"
	// ShipTableName is the MRSC table of both Regions' ShipOrder.
	ShipTableName = "orders-platform-ship"
)

// RegionsProps configure the two-Region platform.
type RegionsProps struct {
	// Account of both stacks. Default: the CLI's (environment-agnostic
	// account, concrete Regions).
	Account *string
}

// Regions is the example platform in two Regions.
type Regions struct {
	// Primary and Secondary are the stacks of PrimaryRegion and
	// SecondaryRegion; the primary creates the table and the endpoint.
	Primary, Secondary *RegionStack
	// Endpoint is the global endpoint the producers publish to.
	Endpoint awsevents.CfnEndpoint
}

// RegionStack is the platform in one Region.
type RegionStack struct {
	Stack awscdk.Stack
	Bus   awsevents.EventBus
	Ship  consumer.IdempotentConsumer
}

// NewRegions adds the two-Region platform to scope: a stack per Region
// ("<id>-<region>"), the secondary deployed after the primary (it imports
// the table the primary creates).
func NewRegions(scope constructs.Construct, id string, props *RegionsProps) *Regions {
	if props == nil {
		props = &RegionsProps{}
	}
	r := &Regions{
		Primary:   newRegionStack(scope, id, PrimaryRegion, props.Account),
		Secondary: newRegionStack(scope, id, SecondaryRegion, props.Account),
	}
	r.Secondary.Stack.AddStackDependency(r.Primary.Stack, jsii.String("the primary Region's stack creates the MRSC table the secondary's imports"))
	r.Endpoint = newGlobalEndpoint(r.Primary.Stack)
	return r
}

// newRegionStack is the stack of one Region: the orders bus and ShipOrder
// on it, on the MRSC table.
func newRegionStack(scope constructs.Construct, id, region string, account *string) *RegionStack {
	stack := awscdk.NewStack(scope, jsii.String(id+"-"+region), &awscdk.StackProps{
		Env:         &awscdk.Environment{Region: jsii.String(region), Account: account},
		Description: jsii.String(fmt.Sprintf("The orders platform in %s, one of two Regions on one MRSC idempotency table", region)),
	})
	s := &RegionStack{Stack: stack}
	s.Bus = awsevents.NewEventBus(stack, jsii.String("OrdersBus"), &awsevents.EventBusProps{EventBusName: jsii.String(OrdersBusName)})
	s.Ship = consumer.NewIdempotentConsumer(stack, jsii.String("ShipOrder"), &consumer.IdempotentConsumerProps{
		Props: core.Props{
			Entry:     jsii.String(filepath.Join("app", "cmd", "ship")),
			Namespace: jsii.String("ship"),
			GlobalTable: &core.GlobalTable{
				Regions:       jsii.Strings(PrimaryRegion, SecondaryRegion),
				WitnessRegion: jsii.String(WitnessRegion),
				TableName:     jsii.String(ShipTableName),
			},
		},
		EventBus:      s.Bus,
		EventPattern:  &awsevents.EventPattern{Source: jsii.Strings("orders"), DetailType: jsii.Strings("OrderPlaced")},
		PayloadIgnore: jsii.Strings("placedAt"),
	})
	return s
}

// newGlobalEndpoint adds, to the primary Region's stack, the global
// endpoint of the orders buses: failover to the secondary Region on the
// Route 53 health check, and event replication ENABLED (every custom event
// reaches both buses, through a role EventBridge assumes to put events on
// them), as EventBridge recommends (eb-ge-best-practices). The health
// check follows an alarm on the primary bus's ingestion-to-invocation
// latency (not a subscriber's metric, which the same guide advises
// against). "Missing data will cause the health check to fail"
// (eb-ge-create-endpoint): a quiet bus has no latency datapoints, so the
// alarm treats missing data as not breaching and the health check
// insufficient data as healthy.
func newGlobalEndpoint(stack awscdk.Stack) awsevents.CfnEndpoint {
	busArn := func(region string) *string {
		return stack.FormatArn(&awscdk.ArnComponents{Service: jsii.String("events"), Region: jsii.String(region), Resource: jsii.String("event-bus"), ResourceName: jsii.String(OrdersBusName)})
	}
	primary, secondary := busArn(PrimaryRegion), busArn(SecondaryRegion)
	latency := awscloudwatch.NewAlarm(stack, jsii.String("OrdersBusLatencyAlarm"), &awscloudwatch.AlarmProps{
		AlarmDescription: jsii.String("The primary orders bus is slow to invoke its targets: the global endpoint's health check fails over to the secondary Region"),
		Metric: awscloudwatch.NewMetric(&awscloudwatch.MetricProps{
			Namespace: jsii.String("AWS/Events"), MetricName: jsii.String("IngestionToInvocationStartLatency"),
			DimensionsMap: &map[string]*string{"EventBusName": jsii.String(OrdersBusName)},
			Statistic:     jsii.String("Average"), Period: awscdk.Duration_Minutes(jsii.Number(1)),
		}),
		Threshold:          jsii.Number(30000),
		EvaluationPeriods:  jsii.Number(5),
		ComparisonOperator: awscloudwatch.ComparisonOperator_GREATER_THAN_THRESHOLD,
		TreatMissingData:   awscloudwatch.TreatMissingData_NOT_BREACHING,
	})
	health := awsroute53.NewCfnHealthCheck(stack, jsii.String("OrdersBusHealthCheck"), &awsroute53.CfnHealthCheckProps{
		HealthCheckConfig: &awsroute53.CfnHealthCheck_HealthCheckConfigProperty{
			Type:                         jsii.String("CLOUDWATCH_METRIC"),
			AlarmIdentifier:              &awsroute53.CfnHealthCheck_AlarmIdentifierProperty{Name: latency.AlarmName(), Region: jsii.String(PrimaryRegion)},
			InsufficientDataHealthStatus: jsii.String("Healthy"),
		},
	})
	role := awsiam.NewRole(stack, jsii.String("OrdersReplicationRole"), &awsiam.RoleProps{
		AssumedBy:   awsiam.NewServicePrincipal(jsii.String("events.amazonaws.com"), nil),
		Description: jsii.String("EventBridge replicates the orders events of the global endpoint to both Regions' buses"),
	})
	role.AddToPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions:   jsii.Strings("events:PutEvents"),
		Resources: &[]*string{primary, secondary},
	}))
	return awsevents.NewCfnEndpoint(stack, jsii.String("OrdersEndpoint"), &awsevents.CfnEndpointProps{
		Name:              jsii.String("orders-platform"),
		Description:       jsii.String("The producers' endpoint of the orders buses: both Regions, replicated"),
		EventBuses:        &[]any{&awsevents.CfnEndpoint_EndpointEventBusProperty{EventBusArn: primary}, &awsevents.CfnEndpoint_EndpointEventBusProperty{EventBusArn: secondary}},
		ReplicationConfig: &awsevents.CfnEndpoint_ReplicationConfigProperty{State: jsii.String("ENABLED")},
		RoleArn:           role.RoleArn(),
		RoutingConfig: &awsevents.CfnEndpoint_RoutingConfigProperty{FailoverConfig: &awsevents.CfnEndpoint_FailoverConfigProperty{
			Primary:   &awsevents.CfnEndpoint_PrimaryProperty{HealthCheck: awscdk.Fn_Join(jsii.String(""), jsii.Strings("arn:", *awscdk.Aws_PARTITION(), ":route53:::healthcheck/", *health.AttrHealthCheckId()))},
			Secondary: &awsevents.CfnEndpoint_SecondaryProperty{Route: jsii.String(SecondaryRegion)},
		}},
	})
}
