package step

import (
	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/handler"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/internal/build"
)

// FromEnv returns the handler of the step that the function's contract
// describes (the step construct writes it: contract.SourceStep, the step's
// name in STEP_NAME, the table and its design, the namespace, the window),
// whose effect runs once per fact, the key that key reads from the state
// input: New over a guard on the contract's table, built as every entry
// point builds it (handler's options). It refuses a contract of another
// source, or one it cannot run with, naming the variable.
func FromEnv(key KeyFunc, effect Effect, opts ...handler.Option) (Handler, error) {
	env, err := build.Load(build.Resolve(opts), contract.SourceStep, "step.Start", nil)
	if err != nil {
		return nil, err
	}
	return New(env.Guard, env.Settings.StepName, key, effect, Config{Logger: env.Logger})
}

// Start builds the step's handler with FromEnv and runs it under the Lambda
// runtime; it does not return. A configuration it cannot run with is logged
// as one JSON line at FATAL and ends the process with status 1; the garbage
// collector is set for the function's memory first, as every entry point
// does.
func Start(key KeyFunc, effect Effect, opts ...handler.Option) {
	build.Run(build.Resolve(opts), func() (Handler, error) { return FromEnv(key, effect, opts...) })
}
