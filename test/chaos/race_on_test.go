//go:build race

package chaos_test

// raceDetector: the race detector slows the simulation tenfold; the stream
// mode then runs its second and third seeds on fewer facts (make test), and
// the full 10,000 without it (make chaos-stream, go test -run TestStream).
const raceDetector = true
