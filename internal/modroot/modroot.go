// Package modroot finds the root of the Go module that holds a directory:
// the one lookup that the construct (a relative Entry) and the test kit (a
// module's cdk.json) share.
package modroot

import (
	"fmt"
	"os"
	"path/filepath"
)

// Find returns the nearest directory at or above dir that holds a go.mod.
func Find(dir string) (string, error) {
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no go.mod at or above %s", dir)
		}
	}
}

// OfWorkingDirectory returns the root of the module that holds the working
// directory (a test runs in its package's directory; `cdk synth` at the
// app's root).
func OfWorkingDirectory() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	root, err := Find(wd)
	if err != nil {
		return "", fmt.Errorf("%w, the working directory", err)
	}
	return root, nil
}
