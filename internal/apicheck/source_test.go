package apicheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// sourceNames returns, for each exported declaration of the library whose
// source, as go doc shows it, names something of an internal package, what
// it names: in a const's or var's value (go doc shows "PartitionKey =
// schema.Key", which a user cannot follow), in a defined type's or alias's
// type expression, or in its doc comment or its package's ("see
// limits.LargestResultBytes": a name cited as package.Name that no library
// package of that name has, and an internal package of that name has),
// keyed by the declaration's name.
func sourceNames(lib library) (map[string][]string, error) {
	mentions := lib.internalMention()
	found := map[string][]string{}
	fset := token.NewFileSet()
	for _, pkg := range lib.pkgs {
		for _, file := range lib.files[pkg.Path()] {
			f, err := parser.ParseFile(fset, file, nil, parser.ParseComments)
			if err != nil {
				return nil, err
			}
			imports := internalImports(f)
			note := func(name string, doc *ast.CommentGroup, exprs ...ast.Expr) {
				if doc != nil {
					for _, m := range mentions.FindAllStringSubmatch(doc.Text(), -1) {
						if lib.internalOnly(m[2], m[3]) {
							found[pkg.Name()+"."+name] = append(found[pkg.Name()+"."+name], m[1])
						}
					}
				}
				for _, e := range exprs {
					found[pkg.Name()+"."+name] = append(found[pkg.Name()+"."+name], selectors(e, imports)...)
				}
			}
			note("(package doc)", f.Doc)
			for _, d := range f.Decls {
				declSourceNames(d, note)
			}
		}
	}
	return found, nil
}

// declSourceNames hands note every exported name that d declares, with its
// doc comment and, for a const or var, its value.
func declSourceNames(d ast.Decl, note func(name string, doc *ast.CommentGroup, exprs ...ast.Expr)) {
	switch d := d.(type) {
	case *ast.FuncDecl:
		if !d.Name.IsExported() {
			return
		}
		name := d.Name.Name
		if d.Recv != nil {
			recv := receiverName(d.Recv.List[0].Type)
			if !ast.IsExported(recv) {
				return
			}
			name = recv + "." + name
		}
		note(name, d.Doc)
	case *ast.GenDecl:
		for _, spec := range d.Specs {
			doc := d.Doc
			switch s := spec.(type) {
			case *ast.ValueSpec:
				if s.Doc != nil {
					doc = s.Doc
				}
				for _, n := range s.Names {
					if n.IsExported() {
						note(n.Name, doc, s.Values...)
					}
				}
			case *ast.TypeSpec:
				if s.Doc != nil {
					doc = s.Doc
				}
				if !s.Name.IsExported() {
					continue
				}
				note(s.Name.Name, doc, typeExpr(s.Type))
				fieldSourceNames(s, note)
			}
		}
	}
}

// fieldSourceNames hands note the exported fields of a struct type, or
// the methods of an interface type, with their doc comments.
func fieldSourceNames(s *ast.TypeSpec, note func(name string, doc *ast.CommentGroup, exprs ...ast.Expr)) {
	var fields *ast.FieldList
	switch t := s.Type.(type) {
	case *ast.StructType:
		fields = t.Fields
	case *ast.InterfaceType:
		fields = t.Methods
	default:
		return
	}
	for _, f := range fields.List {
		for _, n := range f.Names {
			if n.IsExported() {
				note(s.Name.Name+"."+n.Name, f.Doc)
				note(s.Name.Name+"."+n.Name, f.Comment)
			}
		}
	}
}

// receiverName is the type name of a method's receiver.
func receiverName(e ast.Expr) string {
	for {
		switch t := e.(type) {
		case *ast.StarExpr:
			e = t.X
		case *ast.IndexExpr:
			e = t.X
		case *ast.IndexListExpr:
			e = t.X
		case *ast.Ident:
			return t.Name
		default:
			return ""
		}
	}
}

// internalImports maps the names under which f imports internal packages
// to their paths.
func internalImports(f *ast.File) map[string]string {
	out := map[string]string{}
	for _, imp := range f.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		if !isInternal(path) {
			continue
		}
		name := path[strings.LastIndex(path, "/")+1:]
		if imp.Name != nil {
			name = imp.Name.Name
		}
		out[name] = path
	}
	return out
}

// selectors are the names of internal packages that e selects
// ("schema.Key").
func selectors(e ast.Expr, imports map[string]string) []string {
	if e == nil {
		return nil
	}
	var out []string
	ast.Inspect(e, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if x, ok := sel.X.(*ast.Ident); ok && imports[x.Name] != "" {
				out = append(out, x.Name+"."+sel.Sel.Name)
			}
		}
		return true
	})
	return out
}

// typeExpr is a type declaration's expression as go doc shows it: a named
// type's or an alias's ("queue.Config"), not a struct's or an interface's,
// whose fields and methods are declarations of their own.
func typeExpr(e ast.Expr) ast.Expr {
	switch e.(type) {
	case *ast.StructType, *ast.InterfaceType:
		return nil
	}
	return e
}

// internalMention matches, in a doc comment, a name cited as package.Name
// where package is the name of an internal package ("contract.Settings",
// "limits.LargestResultBytes"): the whole, the package, the name.
func (lib library) internalMention() *regexp.Regexp {
	var alts []string
	for n := range lib.internalByName {
		alts = append(alts, regexp.QuoteMeta(n))
	}
	slices.Sort(alts)
	return regexp.MustCompile(`\b((` + strings.Join(alts, "|") + `)\.([A-Z][A-Za-z0-9_]*))`)
}

// internalOnly reports whether pkg.name cites an internal package's name:
// no library package called pkg declares name, and an internal one does.
func (lib library) internalOnly(pkg, name string) bool {
	for _, p := range lib.publicByName[pkg] {
		if p.Scope().Lookup(name) != nil {
			return false
		}
	}
	for _, p := range lib.internalByName[pkg] {
		if p.Scope().Lookup(name) != nil {
			return true
		}
	}
	return false
}
