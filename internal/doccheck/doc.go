// Package doccheck holds the tests that keep the docs true: no doc comment,
// comment or Markdown file of the repository names a path or package of the
// repository that does not exist (TestNoStalePaths, TestNoStalePackages);
// README.md and DESIGN.md list their sections (TestTableOfContents); every
// Go block of README.md and docs/*.md compiles and passes go vet in a module
// outside this one, as a user's module would hold it (TestGoBlocksCompile:
// goblocks_test.go says how a fragment is marked and wrapped); README.md is
// a landing page of at most 300 lines that links to every page under docs/,
// each at most 600 (TestPagesAreNavigable).
package doccheck
