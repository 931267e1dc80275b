// Package doccheck holds a test, in the style of a go vet check, that no
// doc comment, comment or Markdown file of the repository names a path or
// package of the repository that does not exist (moved or removed): see
// TestNoStalePaths.
package doccheck
