package consumer_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/idempotent-consumer/idempotent-consumer/constructs/consumer"
	"github.com/idempotent-consumer/idempotent-consumer/internal/cdktest"
)

// TestEveryContractVariableIsKnown reads package lambda/env and checks that
// the construct knows (sets, and refuses in Environment) every variable the
// runtime library reads, so that a variable added there cannot be
// forgotten here.
func TestEveryContractVariableIsKnown(t *testing.T) {
	root, err := cdktest.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(root, "lambda", "env", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range file.Decls {
			gen, ok := decl.(*ast.GenDecl)
			if !ok || gen.Tok != token.CONST {
				continue
			}
			for _, spec := range gen.Specs {
				for _, v := range spec.(*ast.ValueSpec).Values {
					if lit, ok := v.(*ast.BasicLit); ok && lit.Kind == token.STRING {
						s, _ := strconv.Unquote(lit.Value)
						names = append(names, s)
					}
				}
			}
		}
	}
	if len(names) == 0 {
		t.Fatal("no string constants found in lambda/env")
	}
	known := consumer.ContractVariables()
	for _, n := range names {
		if !slices.Contains(known, n) {
			t.Errorf("lambda/env names %s, which the construct neither sets nor refuses in Environment", n)
		}
	}
	if len(known) != len(names) {
		t.Errorf("the construct knows %d contract variables, lambda/env names %d", len(known), len(names))
	}
}
