package step

import (
	"errors"
	"reflect"

	"github.com/aws/aws-lambda-go/lambda/messages"
)

// failure is an effect's failure with the name a Catch matches (Fail).
type failure struct {
	// name is the error name Step Functions reports.
	name string
	// err is the cause, reported as the error's message.
	err error
}

// Error is the name and the cause's message, or the name alone when there
// is no cause.
func (f *failure) Error() string {
	if f.err == nil {
		return f.name
	}
	return f.name + ": " + f.err.Error()
}

// Unwrap returns the cause.
func (f *failure) Unwrap() error { return f.err }

// Fail returns err as a failure named name, for an effect to return: a
// business outcome that ends the step ("OutOfStock", "PaymentDeclined"), so
// that the state machine's Catch of name runs the compensations. name is
// the error name Step Functions reports: not empty and not "States." (which
// the service keeps; such a failure is reported as Step.EffectFailed). err is
// the cause, reported as the error's message, and errors.Is and errors.As
// find it. The effect's reservation is released, as for any failure: the
// fact has no effect, and a new attempt (a redrive) runs it again.
func Fail(name string, err error) error { return &failure{name: name, err: err} }

// invokeError is the error a step returns to the Lambda runtime: aws-lambda-go
// reports a messages.InvokeResponse_Error as it is, so that its Type becomes
// the function error's errorType, the name Step Functions matches. (Any other
// Go error is reported under its type's name, "errorString" or "wrapError",
// which a state machine cannot match with meaning.)
func invokeError(name, message string) error {
	return messages.InvokeResponse_Error{Type: name, Message: message}
}

// ErrorName returns the name Step Functions sees for an error a Lambda
// handler returns, by aws-lambda-go's rule: the Type of a
// messages.InvokeResponse_Error (every error of a step), otherwise the name
// of the error's Go type. "" for nil.
func ErrorName(err error) string {
	if err == nil {
		return ""
	}
	var ie messages.InvokeResponse_Error
	if errors.As(err, &ie) {
		return ie.Type
	}
	t := reflect.TypeOf(err)
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Name()
}

// ErrorMessage returns the message Step Functions reports as an error's
// Cause: the Message of a messages.InvokeResponse_Error, otherwise
// err.Error(). "" for nil.
func ErrorMessage(err error) string {
	var ie messages.InvokeResponse_Error
	switch {
	case err == nil:
		return ""
	case errors.As(err, &ie):
		return ie.Message
	}
	return err.Error()
}
