package bundle

import (
	"debug/buildinfo"
	"fmt"
	"path/filepath"
	"runtime/debug"
	"strings"
)

// libraryPath is the module path of this library: the module whose version
// the construct and the handler it bundles must agree on.
const libraryPath = "github.com/idempotent-consumer/idempotent-consumer"

// library is the copy of the library a binary was built with, as the
// binary's build info records it.
type library struct {
	// linked reports whether the binary holds any package of the library.
	linked bool
	// tree reports source that no version names: the main module, a
	// replace by a directory, a module of a go.work workspace.
	tree bool
	// path and version name the module version that provided the library:
	// libraryPath, or the replacement's under a replace by another module
	// version.
	path, version string
	// required is the version go.mod required, when a replace applies.
	required string
}

// libraryOf finds the library in bi, following its replace directive. A nil
// bi is a binary without build info: it does not link the library.
func libraryOf(bi *debug.BuildInfo) library {
	if bi == nil {
		return library{}
	}
	if bi.Main.Path == libraryPath {
		return library{linked: true, tree: true}
	}
	for _, d := range bi.Deps {
		if d.Path != libraryPath {
			continue
		}
		lib := library{linked: true, path: d.Path, version: d.Version}
		if r := d.Replace; r != nil {
			lib.required, lib.path, lib.version = d.Version, r.Path, r.Version
		}
		// A replace by a directory has the directory as its path and no
		// version ("(devel)" since Go 1.24); a module of a go.work
		// workspace has no version and no replace.
		lib.tree = lib.version == "" || lib.version == "(devel)"
		return lib
	}
	return library{}
}

// String names the module version a side was built with, replace
// included, as a refusal says it.
func (l library) String() string {
	if l.required != "" {
		return fmt.Sprintf("%s %s replaced by %s %s", libraryPath, l.required, l.path, l.version)
	}
	return libraryPath + " " + l.version
}

// checkLibrary reports whether a handler may be bundled by this construct,
// given the build info of the handler's bootstrap (handler) and of the
// synth process (construct, from debug.ReadBuildInfo): whether both were
// built with the same library, and so with the same contract (the names,
// encoding, defaults and bounds of the settings the construct writes into
// the function's environment and the handler reads at init).
//
// They are compatible when:
//   - the handler links the library: its main module is the library, or it
//     depends on a package of it. A bootstrap without the library cannot
//     read the settings, and is refused;
//   - on each side, the library is what its replace directive makes it: a
//     replace by another module version stands for that module version
//     (its path and Replace.Version); the main module itself, a replace by
//     a directory and a workspace module are working trees;
//   - when both sides are module versions (released or pseudo), they are the
//     same module path and the same version. Anything else is refused;
//   - when either side is a working tree, or the synth process has no build
//     info (construct is nil), no version names what it holds and nothing is
//     compared: the handler's own check of the contract version the
//     construct stamps in its environment, at init, is the backstop.
//
// The error names both sides, the rule and the fix; the caller adds Entry.
func checkLibrary(construct, handler *debug.BuildInfo) error {
	h := libraryOf(handler)
	if !h.linked {
		mod := "a binary without module build info"
		if handler != nil {
			mod = "its main module " + handler.Main.Path
		}
		fix := fmt.Sprintf("point Entry at the main package of a handler built on %s (README, \"A handler\")", libraryPath)
		if c := libraryOf(construct); c.linked && !c.tree {
			fix += fmt.Sprintf(", adding it to the handler's module with `go get %s@%s`", libraryPath, c.version)
		}
		return fmt.Errorf("the handler's bootstrap (%s) links no package of %s, so nothing in it reads the settings this construct writes into its environment; rule: a handler must be built on the library; fix: %s",
			mod, libraryPath, fix)
	}
	if construct == nil {
		return nil
	}
	c := libraryOf(construct)
	if h.tree || c.tree || !c.linked {
		return nil
	}
	if h.path == c.path && h.version == c.version {
		return nil
	}
	return fmt.Errorf("the handler is built with %s but this construct with %s; "+
		"rule: a construct and the handler it bundles must be built with the same module version of the library once replace directives apply "+
		"(a working tree on either side is not compared at synth), so that the handler reads its settings as the construct writes them; "+
		"fix: in the handler's module %s, %s",
		h, c, handler.Main.Path, alignFix(h, c))
}

// alignFix is the command that brings the handler's module to the
// construct's library c, from h.
func alignFix(h, c library) string {
	var cmds []string
	if c.required != "" {
		cmds = append(cmds, fmt.Sprintf("go mod edit -replace=%s=%s@%s", libraryPath, c.path, c.version))
	} else {
		if h.required != "" {
			cmds = append(cmds, "go mod edit -dropreplace="+libraryPath)
		}
		cmds = append(cmds, fmt.Sprintf("go get %s@%s", libraryPath, c.version))
	}
	cmds = append(cmds, "go mod tidy")
	return fmt.Sprintf("run `%s` (or build the CDK app with the handler's version)", strings.Join(cmds, " && "))
}

// checkBootstrap checks the bootstrap in dir, built from entry, against
// the library this process was built with (see checkLibrary).
func checkBootstrap(entry, dir string) error {
	handler, err := buildinfo.ReadFile(filepath.Join(dir, "bootstrap"))
	if err != nil {
		return fmt.Errorf("entry %s: read the build info of its bootstrap: %w", entry, err)
	}
	construct, _ := debug.ReadBuildInfo() // nil without build info
	if err := checkLibrary(construct, handler); err != nil {
		return fmt.Errorf("entry %s: %w", entry, err)
	}
	return nil
}
