package contract_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	pub "github.com/idempotent-consumer/idempotent-consumer/contract"
	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
)

// TestNewEnvIsTheConstructsDefault: the environment a test or a local
// runner builds with the public contract.NewEnv is read by the handler as
// the settings a construct with no other props writes: the defaults for a
// function of Lambda's longest timeout (what a handler assumes without
// IDEMPOTENCY_FUNCTION_TIMEOUT), with the table and namespace given.
func TestNewEnvIsTheConstructsDefault(t *testing.T) {
	env := pub.NewEnv("orders-idempotency", "charge")
	got, err := contract.Decode(env.Getenv, "ChargeOrder")
	if err != nil {
		t.Fatal(err)
	}
	want := contract.Defaults(15 * time.Minute)
	want.Table, want.Namespace, want.Consumer = "orders-idempotency", "charge", "ChargeOrder"
	written := want.Encode()
	fromConstruct, err := contract.Decode(func(k string) string { return written[k] }, "ChargeOrder")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, fromConstruct) || !reflect.DeepEqual(got, want) {
		t.Errorf("NewEnv's settings\n  %+v\nwant the construct's\n  %+v", got, fromConstruct)
	}
}

// TestThePublicNamesAreTheContracts: the public package names every
// variable of the contract (Names), and no other, under the name this
// package gives it: a constant "<Name>Var" of package contract (../../contract)
// per variable.
func TestThePublicNamesAreTheContracts(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "contract", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var public []string
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			spec, ok := n.(*ast.ValueSpec)
			if !ok {
				return true
			}
			for i, id := range spec.Names {
				if lit, ok := spec.Values[i].(*ast.BasicLit); ok && strings.HasSuffix(id.Name, "Var") {
					v, _ := strconv.Unquote(lit.Value)
					public = append(public, v)
				}
			}
			return true
		})
	}
	slices.Sort(public)
	names := contract.Names()
	slices.Sort(names)
	if !slices.Equal(public, names) {
		t.Errorf("the public package's variables\n  %v\nare not the contract's\n  %v", public, names)
	}
}
