//go:build !race

package chaos_test

const raceDetector = false
