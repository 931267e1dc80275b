// Package propdoc reads the doc comment of a props field from its source
// file, for the constructs' tests that hold each prop's documented default
// to the value the construct applies: a default lives in one constant, and
// the props' doc comment, which users read, states its value.
package propdoc

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"strings"
)

// Field returns the doc comment of field of the struct type typ declared in
// the Go file at path, as one line (its lines joined by spaces), or an
// error when the file, the type or the field is not there, or the field
// has no doc comment.
func Field(path, typ, field string) (string, error) {
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ParseComments)
	if err != nil {
		return "", err
	}
	var doc string
	found := false
	ast.Inspect(f, func(n ast.Node) bool {
		ts, ok := n.(*ast.TypeSpec)
		if !ok || ts.Name.Name != typ {
			return !found
		}
		st, ok := ts.Type.(*ast.StructType)
		if !ok {
			return false
		}
		for _, fl := range st.Fields.List {
			for _, n := range fl.Names {
				if n.Name == field {
					doc, found = strings.Join(strings.Fields(fl.Doc.Text()), " "), true
				}
			}
		}
		return false
	})
	switch {
	case !found:
		return "", fmt.Errorf("%s: no field %s.%s", path, typ, field)
	case doc == "":
		return "", fmt.Errorf("%s: field %s.%s has no doc comment", path, typ, field)
	}
	return doc, nil
}
