// Package growstack grows a new goroutine's stack, while it is still
// shallow, to the size that a store request through the AWS SDK reaches.
//
// A goroutine starts with a small stack, and the runtime doubles it
// whenever a call needs more, copying the stack and adjusting every frame on
// it. The SDK's middleware stack is deep, so a record's goroutine (the
// adapters run each message group on one) grew its stack three or four
// times within its first DynamoDB request, each time with dozens of frames
// to adjust: 6.2% of a consumer's CPU in runtime.newstack in the end-to-end
// benchmark (bench/e2e, a new record). Growing it once at the goroutine's
// start, where there is one frame to copy, leaves 0.9% there (DESIGN.md,
// "What a consumer process costs").
package growstack

// frame is the stack frame grow takes: with the frames below it, the
// stack's next power of two is 32 KiB, deeper than the SDK's request path
// reaches.
const frame = 31 << 10

// Grow grows the calling goroutine's stack to 32 KiB in one growth. Call it
// first in a goroutine that will make a store request. It costs no heap
// allocation; the stack is the runtime's to shrink again if it goes unused.
func Grow() { grow() }

// grow takes a frame of frame bytes: the runtime grows the stack before it
// runs.
//
//go:noinline
func grow() {
	var b [frame]byte
	touch(b[:])
}

// touch uses b, so that grow's frame is not optimised away; it does not
// keep b, so that b stays on the stack.
//
//go:noinline
func touch(b []byte) { b[len(b)-1] = 1 }
