package consumer

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/jsii-runtime-go"

	"github.com/idempotent-consumer/idempotent-consumer/cdktest"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/core"
)

// TestTheRulesNeverWriteTheSettings: compute computes, the rules only read.
// Over props that make compute read a given queue of the app, an imported
// one, and the queues it creates, the settings after the rules are the
// settings compute returned.
func TestTheRulesNeverWriteTheSettings(t *testing.T) {
	cdktest.Must(t, func() {
		stack := awscdk.NewStack(nil, jsii.String("T"), nil)
		dlq := awssqs.NewQueue(stack, jsii.String("DLQ"), nil)
		own := awssqs.NewQueue(stack, jsii.String("Own"), &awssqs.QueueProps{
			VisibilityTimeout: awscdk.Duration_Minutes(jsii.Number(1)), // too short: a problem
			DeadLetterQueue:   &awssqs.DeadLetterQueue{Queue: dlq, MaxReceiveCount: jsii.Number(3)},
		})
		imported := awssqs.Queue_FromQueueArn(stack, jsii.String("Imported"), jsii.String("arn:aws:sqs:eu-west-1:123456789012:q"))
		for name, p := range map[string]*IdempotentConsumerProps{
			"created":  {Props: core.Props{Entry: jsii.String("e")}, VisibilityTimeout: awscdk.Duration_Seconds(jsii.Number(10))},
			"app":      {Props: core.Props{Entry: jsii.String("e")}, Queue: own, MaxReceiveCount: jsii.Number(7), VisibilityTimeout: awscdk.Duration_Minutes(jsii.Number(9))},
			"imported": {Props: core.Props{Entry: jsii.String("e")}, Queue: imported},
			"fifo":     {Props: core.Props{Entry: jsii.String("e")}, FifoTopic: jsii.Bool(true), BatchSize: jsii.Number(50)},
			// What refusals.go judges: a layer and a table imported, the
			// retentions, TransactionalTables.
			"refusals": {Props: core.Props{Entry: jsii.String("e"), LogLevel: awslambda.ApplicationLogLevel("VERBOSE"),
				Layers: &[]awslambda.ILayerVersion{awslambda.LayerVersion_FromLayerVersionArn(stack, jsii.String("Layer"), jsii.String("arn:aws:lambda:eu-west-1:123456789012:layer:l:1"))},
				Table:  awsdynamodb.Table_FromTableName(stack, jsii.String("Shared"), jsii.String("shared")), Namespace: jsii.String("n"),
				TransactionalTables: &[]awsdynamodb.ITable{nil, awsdynamodb.Table_FromTableName(stack, jsii.String("Stock"), jsii.String("stock"))}},
				QueueProps:           &awssqs.QueueProps{RetentionPeriod: awscdk.Duration_Minutes(jsii.Number(10))},
				DeadLetterQueueProps: &awssqs.QueueProps{RetentionPeriod: awscdk.Duration_Minutes(jsii.Number(5))}},
		} {
			s, _ := p.compute("C")
			before := *s
			shared := *s.Settings // the family's settings, behind a pointer
			before.Settings = &shared
			if len(p.problems(s)) == 0 {
				t.Errorf("%s: no problems; the case is meant to break rules", name)
			}
			if !reflect.DeepEqual(before, *s) {
				t.Errorf("%s: the rules changed the settings:\nbefore %+v\n after %+v", name, before, *s)
			}
		}
	})
}

// TestTheBuildersReadOnlyTheSettings: no method of the construct, and no
// builder, takes the props: what they build comes from the settings alone.
func TestTheBuildersReadOnlyTheSettings(t *testing.T) {
	fset := token.NewFileSet()
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	builders := 0
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Recv == nil {
				continue
			}
			if star, ok := fd.Recv.List[0].Type.(*ast.StarExpr); !ok || star.X.(*ast.Ident).Name != "idempotentConsumer" {
				continue
			}
			builders++
			for _, p := range fd.Type.Params.List {
				if star, ok := p.Type.(*ast.StarExpr); ok {
					if id, ok := star.X.(*ast.Ident); ok && id.Name == "IdempotentConsumerProps" {
						t.Errorf("%s: (*idempotentConsumer).%s takes the props", fset.Position(fd.Pos()), fd.Name.Name)
					}
				}
			}
		}
	}
	if builders < 10 {
		t.Fatalf("found %d methods of idempotentConsumer; the test is not reading the package", builders)
	}
}
