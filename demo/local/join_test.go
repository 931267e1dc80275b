package local

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/jsii-runtime-go"
	"github.com/sivchari/kumo"

	consumercdk "github.com/idempotent-consumer/idempotent-consumer/constructs/consumer"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/core"
	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
)

// TestTransactionalTablesResolveLocally: a consumer that declares two
// transactional tables gets IDEMPOTENCY_TX_TABLES as an Fn::Join of the
// tables' Refs; the local run provisions the template on kumo and resolves
// the join to the local tables' names, in the declared order, which the
// handler decodes as its TxTables.
func TestTransactionalTablesResolveLocally(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	cdkContext, err := readCDKContext(root)
	if err != nil {
		t.Fatal(err)
	}
	outDir := t.TempDir()
	var stockID, ordersID string
	func() {
		defer func() {
			if r := recover(); r != nil {
				t.Fatalf("synth: %v", r)
			}
		}()
		app := awscdk.NewApp(&awscdk.AppProps{Outdir: jsii.String(outDir), Context: &cdkContext})
		stack := awscdk.NewStack(app, jsii.String("TxStack"), nil)
		table := func(id string) awsdynamodb.Table {
			return awsdynamodb.NewTable(stack, jsii.String(id), &awsdynamodb.TableProps{
				PartitionKey: &awsdynamodb.Attribute{Name: jsii.String("id"), Type: awsdynamodb.AttributeType_STRING},
				BillingMode:  awsdynamodb.BillingMode_PAY_PER_REQUEST,
			})
		}
		stock, orders := table("Stock"), table("Orders")
		consumercdk.NewIdempotentConsumer(stack, jsii.String("Reserve"), &consumercdk.IdempotentConsumerProps{
			Props: core.Props{Entry: jsii.String(filepath.Join(root, "app", "cmd", "charge")), TransactionalTables: &[]awsdynamodb.ITable{stock, orders}},
		})
		app.Synth(nil)
		stockID = *stack.GetLogicalId(stock.Node().DefaultChild().(awsdynamodb.CfnTable))
		ordersID = *stack.GetLogicalId(orders.Node().DefaultChild().(awsdynamodb.CfnTable))
	}()
	s, err := LoadStack(outDir, "TxStack")
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Functions) != 1 {
		t.Fatalf("%d functions, want 1", len(s.Functions))
	}
	var fn *Function
	for _, f := range s.Functions {
		fn = f
	}
	raw, _ := json.Marshal(fn.Env[contract.TxTablesVar])
	want := fmt.Sprintf(`{"Fn::Join":[",",[{"Ref":%q},{"Ref":%q}]]}`, stockID, ordersID)
	if string(raw) != want {
		t.Fatalf("the template's %s is %s, want %s: the case this test is about", contract.TxTablesVar, raw, want)
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv := kumo.NewServer()
	defer srv.Close()
	dep, err := provision(ctx, newClients(srv.URL), s, 1)
	if err != nil {
		t.Fatal(err)
	}
	env, err := dep.environment(fn)
	if err != nil {
		t.Fatal(err)
	}
	names := []string{dep.tableName[stockID], dep.tableName[ordersID]}
	if got := env[contract.TxTablesVar]; got != strings.Join(names, ",") || names[0] == "" || names[1] == "" {
		t.Fatalf("%s=%q, want the local tables %q joined by commas", contract.TxTablesVar, got, names)
	}
	settings, err := contract.Decode(func(k string) string { return env[k] }, "")
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(settings.TxTables) != fmt.Sprint(names) {
		t.Errorf("the handler's TxTables %q, want %q", settings.TxTables, names)
	}
	t.Logf("%s: %s → %q", contract.TxTablesVar, raw, env[contract.TxTablesVar])
}

// TestValueResolvesJoinsOfWhatItResolves: Fn::Join of strings, Refs,
// Fn::GetAtt and joins is resolved and joined with its delimiter; what the
// local run cannot resolve, or a malformed join, is refused with what it is.
func TestValueResolvesJoinsOfWhatItResolves(t *testing.T) {
	d := &deployment{
		tableName: map[string]string{"StockA1": "stock-local", "OrdersB2": "orders-local"},
		topicARN:  map[string]string{"TopicC3": "arn:aws:sns:us-east-1:000000000000:TopicC3"},
		queueURL:  map[string]string{},
		queueARN:  map[string]string{"QueueD4": "arn:aws:sqs:us-east-1:000000000000:QueueD4"},
	}
	parse := func(s string) any {
		var v any
		if err := json.Unmarshal([]byte(s), &v); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		return v
	}
	for _, c := range []struct{ in, want string }{
		{`"plain"`, "plain"},
		{`{"Ref":"StockA1"}`, "stock-local"},
		{`{"Fn::Join":[",",[{"Ref":"StockA1"},{"Ref":"OrdersB2"}]]}`, "stock-local,orders-local"},
		{`{"Fn::Join":["",["table/",{"Ref":"StockA1"}]]}`, "table/stock-local"},
		{`{"Fn::Join":[";",[{"Fn::GetAtt":["QueueD4","Arn"]},{"Ref":"TopicC3"},{"Fn::Join":["-",["a",{"Ref":"OrdersB2"}]]}]]}`,
			"arn:aws:sqs:us-east-1:000000000000:QueueD4;arn:aws:sns:us-east-1:000000000000:TopicC3;a-orders-local"},
		{`{"Fn::Join":[",",[]]}`, ""},
	} {
		got, err := d.value(parse(c.in))
		if err != nil || got != c.want {
			t.Errorf("value(%s) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	for _, c := range []struct{ in, want string }{
		{`{"Ref":"Missing"}`, "cannot resolve"},
		{`{"Fn::Join":[",",[{"Ref":"StockA1"},{"Ref":"Missing"}]]}`, "Fn::Join, value 1: cannot resolve"},
		{`{"Fn::Join":[",",{"Ref":"StockA1"}]}`, "want [delimiter, [values...]]"},
		{`{"Fn::Join":[1,["a"]]}`, "want [delimiter, [values...]]"},
		{`{"Fn::Join":[","]}`, "want [delimiter, [values...]]"},
		{`{"Fn::Sub":"${StockA1}"}`, `cannot resolve {"Fn::Sub":"${StockA1}"} locally: the local run resolves Ref, Fn::GetAtt and Fn::Join`},
		{`{"Ref":"StockA1","Fn::Join":[",",[]]}`, "an intrinsic function has one key"},
		{`{"Fn::Join":[",",[1]]}`, "value 0: cannot resolve 1"},
	} {
		got, err := d.value(parse(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("value(%s) = %q, %v; want an error with %q", c.in, got, err, c.want)
		}
	}
}
