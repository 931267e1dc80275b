package apicheck

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite api/next.txt from the code")

// listingPath is the listing of the library's exported API, in the
// module's root: one line per exported name with its signature, sorted.
const listingPath = "api/next.txt"

// TestAPI: the library's exported API is the checked-in listing,
// api/next.txt, in the spirit of Go's api/*.txt: one line per exported
// declaration of every library package (lambda/..., constructs/...,
// contract, cdktest/...; not the example app, nor internal packages), as
// "<package path>, <declaration>", sorted. Each line is what a user's code
// can depend on: a const with its type and value, a var's type, a
// function's or method's signature (parameters by type alone), a type and
// each of its exported fields or interface methods. A change to the API
// fails here until the listing says so:
//
//	go test ./internal/apicheck -run TestAPI -update
//
// rewrites the listing, and is the moment to add the change to
// CHANGELOG.md: the run that rewrites a listing fails unless the newest
// section of CHANGELOG.md (its first "## " heading after the versioning
// policy: "Unreleased", or the version being prepared) names every
// package-level name whose lines it adds or removes, as package.Name
// ("sqsbatch.Config", "contract.NewEnv"; a field or a method is named by
// its type). A reviewer reads the listing's diff as the API's diff.
func TestAPI(t *testing.T) {
	lib := loadLibrary(t)
	got := listing(lib)
	path := filepath.Join(repoRoot(t), listingPath)
	text, err := os.ReadFile(path)
	if err != nil && !(*update && os.IsNotExist(err)) {
		t.Fatalf("%v: write it with go test ./internal/apicheck -run TestAPI -update", err)
	}
	want := strings.Split(strings.TrimSuffix(string(text), "\n"), "\n")
	if len(text) == 0 {
		want = nil
	}
	added, removed := diff(want, got)
	if len(added) == 0 && len(removed) == 0 {
		return
	}
	if *update {
		if err := os.WriteFile(path, []byte(strings.Join(got, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if len(want) > 0 {
			checkChangelog(t, append(added, removed...))
		}
		return
	}
	t.Errorf("the exported API differs from %s:\n%s\nIf the change is meant, run go test ./internal/apicheck -run TestAPI -update, and name each package-level name added or removed in CHANGELOG.md's newest section (the -update run checks it).",
		listingPath, diffText(added, removed))
}

// listing is the library's API: a line per exported declaration, sorted.
func listing(lib library) []string {
	var lines []string
	for _, pkg := range lib.pkgs {
		for _, d := range decls(pkg) {
			lines = append(lines, d.line)
		}
	}
	slices.Sort(lines)
	return slices.Compact(lines)
}

// diff returns the lines of got that want lacks, and the reverse.
func diff(want, got []string) (added, removed []string) {
	for _, l := range got {
		if _, ok := slices.BinarySearch(want, l); !ok {
			added = append(added, l)
		}
	}
	for _, l := range want {
		if _, ok := slices.BinarySearch(got, l); !ok {
			removed = append(removed, l)
		}
	}
	return added, removed
}

func diffText(added, removed []string) string {
	var b strings.Builder
	for _, l := range removed {
		b.WriteString("  - " + l + "\n")
	}
	for _, l := range added {
		b.WriteString("  + " + l + "\n")
	}
	return b.String()
}

// checkChangelog fails unless the newest section of CHANGELOG.md names
// the package-level name of each changed line.
func checkChangelog(t *testing.T, changed []string) {
	t.Helper()
	text, err := os.ReadFile(filepath.Join(repoRoot(t), "CHANGELOG.md"))
	if err != nil {
		t.Fatal(err)
	}
	section := newestSection(string(text))
	var missing []string
	for _, l := range changed {
		if name := lineName(l); name != "" && !strings.Contains(section, name) {
			missing = append(missing, name)
		}
	}
	slices.Sort(missing)
	if missing = slices.Compact(missing); len(missing) > 0 {
		t.Errorf("%s is rewritten; CHANGELOG.md's newest section does not name these API changes: %s", listingPath, strings.Join(missing, ", "))
	}
}

// newestSection is the text of CHANGELOG.md's first section that is a
// version's ("## Unreleased", "## v0.1.0", "## [v0.2.0] - …"), up to the
// next "## " heading.
func newestSection(text string) string {
	parts := strings.Split("\n"+text, "\n## ")
	for _, p := range parts[1:] {
		if versionHeading.MatchString(p) {
			return p
		}
	}
	return ""
}

// versionHeading matches a version's heading: "Unreleased", "v0.1.0",
// "[v0.2.0] - 2027-01-01".
var versionHeading = regexp.MustCompile(`^\[?(?:Unreleased|v\d)`)

// lineShape reads a listing line: its package path and the declared name
// ("lambda/sqsbatch, type Config struct, Delivery …" → sqsbatch.Config;
// "…, method (*Handler[T]) Handle(…)" → sqsbatch.Handler).
var lineShape = regexp.MustCompile(`^(?:[^,]*/)?([^/,]+), (?:const|var|func|type) ([A-Za-z0-9_]+)|^(?:[^,]*/)?([^/,]+), method \(\*?([A-Za-z0-9_]+)`)

// lineName is the package-level name a listing line declares, as
// package.Name.
func lineName(line string) string {
	m := lineShape.FindStringSubmatch(line)
	switch {
	case m == nil:
		return ""
	case m[1] != "":
		return m[1] + "." + m[2]
	}
	return m[3] + "." + m[4]
}

// TestLineName: the name a listing line declares, as CHANGELOG.md names it.
func TestLineName(t *testing.T) {
	for line, want := range map[string]string{
		"lambda/sqsbatch, type Config struct, Delivery contract.Delivery":                                                 "sqsbatch.Config",
		"lambda/sqsbatch, method (*Handler[T]) Handle(context.Context, events.SQSEvent) (events.SQSEventResponse, error)": "sqsbatch.Handler",
		"contract, func NewEnv(string, string) Env":                                                                       "contract.NewEnv",
		`contract, const RemoveSkip Removes = "skip"`:                                                                     "contract.RemoveSkip",
		"lambda/handler, method (VisibilityChanger) x":                                                                    "handler.VisibilityChanger",
	} {
		if got := lineName(line); got != want {
			t.Errorf("lineName(%q) = %q, want %q", line, got, want)
		}
	}
	section := newestSection("# Changelog\n\n## Versioning policy\n\nsqsbatch.Old\n\n## Unreleased\n\n- contract.NewEnv\n\n## v0.0.1\n\n- sqsbatch.Older\n")
	if !strings.Contains(section, "contract.NewEnv") || strings.Contains(section, "sqsbatch.Old") {
		t.Errorf("newestSection = %q, want Unreleased's alone", section)
	}
}
