package platform_test

import (
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"

	"github.com/idempotent-consumer/idempotent-consumer/app/platform"
	"github.com/idempotent-consumer/idempotent-consumer/cdktest"
	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
)

// TestTheOutbox: ChargeOrder writes the orders table (its name in the
// environment, PutItem on it and nothing more), whose stream (NEW_IMAGE)
// feeds NotifyCharge, a DynamoDB Streams consumer that skips REMOVEs.
func TestTheOutbox(t *testing.T) {
	p := load(t)
	orders := *p.Stack.GetLogicalId(p.OrdersTable.Node().DefaultChild().(awscdk.CfnElement))
	cdktest.Must(t, func() {
		synthesized.tmpl.HasResource(jsii.String("AWS::DynamoDB::Table"), map[string]any{
			"DeletionPolicy": "Retain",
			"Properties": map[string]any{
				"KeySchema":           []any{map[string]any{"AttributeName": "orderId", "KeyType": "HASH"}},
				"StreamSpecification": map[string]any{"StreamViewType": "NEW_IMAGE"},
			},
		})
		synthesized.tmpl.HasResourceProperties(jsii.String("AWS::Lambda::Function"), map[string]any{
			"Environment": map[string]any{"Variables": map[string]any{
				contract.ConsumerVar:    "OrdersPlatform/ChargeOrder",
				platform.OrdersTableVar: map[string]any{"Ref": orders},
			}},
		})
		synthesized.tmpl.HasResourceProperties(jsii.String("AWS::IAM::Policy"), map[string]any{
			"PolicyDocument": map[string]any{"Statement": assertions.Match_ArrayWith(&[]any{map[string]any{
				"Action":   "dynamodb:PutItem",
				"Effect":   "Allow",
				"Resource": map[string]any{"Fn::GetAtt": []any{orders, "Arn"}},
			}})},
		})
		synthesized.tmpl.HasResourceProperties(jsii.String("AWS::Lambda::EventSourceMapping"), map[string]any{
			"EventSourceArn":        map[string]any{"Fn::GetAtt": []any{orders, "StreamArn"}},
			"FunctionResponseTypes": []any{"ReportBatchItemFailures"},
		})
		synthesized.tmpl.HasResourceProperties(jsii.String("AWS::Lambda::Function"), map[string]any{
			"Environment": map[string]any{"Variables": map[string]any{
				contract.ConsumerVar:      "OrdersPlatform/NotifyCharge",
				contract.NamespaceVar:     "notify",
				contract.PayloadIgnoreVar: "event",
			}},
		})
	})
	if p.Notify.FailureBucket() == nil {
		t.Error("NotifyCharge has no failure bucket")
	}
}
