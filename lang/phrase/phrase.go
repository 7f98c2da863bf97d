// Package phrase carries a sentence for a person as its English format and
// its arguments, so that it can be worded in the reader's language where
// the mail is written (package lang), not where the sentence arises. The
// rules engine and the command grammar, which know no languages, build
// their refusals and errors with it.
//
// It depends on nothing of the project: the engine stays free of the
// languages' files.
package phrase

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Error is a sentence for a person, as an error: Format is its English
// wording (a key of every language's phrases) and Args its arguments,
// each a string, an int or another *Error.
type Error struct {
	Format string
	Args   []any
}

// Errorf is a sentence with its arguments. An argument that is an error
// becomes its *Error when it is one (so it is worded in the reader's
// language too), else its text; %w in format reads like %v.
func Errorf(format string, args ...any) *Error {
	e := &Error{Format: strings.ReplaceAll(format, "%w", "%v"), Args: make([]any, len(args))}
	for i, a := range args {
		e.Args[i] = normalize(a)
	}
	return e
}

func normalize(a any) any {
	switch a := a.(type) {
	case *Error:
		return a
	case error:
		var p *Error
		if errors.As(a, &p) && p.Error() == a.Error() {
			return p
		}
		return a.Error()
	case int:
		return a
	case int64:
		return int(a)
	case int32: // a rune: %q still writes it as a character
		return int(a)
	case string:
		return a
	case fmt.Stringer:
		return a.String()
	}
	return fmt.Sprint(a)
}

// Error is the sentence in English.
func (e *Error) Error() string { return e.Sprint(func(format string) string { return format }) }

// Sprint words the sentence with word, which gives a format's wording in
// some language; nested sentences are worded the same way.
func (e *Error) Sprint(word func(format string) string) string {
	args := make([]any, len(e.Args))
	for i, a := range e.Args {
		if p, ok := a.(*Error); ok {
			args[i] = p.Sprint(word)
			continue
		}
		args[i] = a
	}
	return fmt.Sprintf(word(e.Format), args...)
}

type wire struct {
	Format string            `json:"format"`
	Args   []json.RawMessage `json:"args,omitempty"`
}

// MarshalJSON keeps a sentence, nested ones included, for a message that
// waits in the store.
func (e *Error) MarshalJSON() ([]byte, error) {
	w := wire{Format: e.Format}
	for _, a := range e.Args {
		b, err := json.Marshal(a)
		if err != nil {
			return nil, err
		}
		w.Args = append(w.Args, b)
	}
	return json.Marshal(w)
}

// UnmarshalJSON reads what MarshalJSON wrote.
func (e *Error) UnmarshalJSON(b []byte) error {
	var w wire
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	e.Format, e.Args = w.Format, nil
	for _, raw := range w.Args {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			e.Args = append(e.Args, s)
			continue
		}
		var n int
		if json.Unmarshal(raw, &n) == nil {
			e.Args = append(e.Args, n)
			continue
		}
		p := &Error{}
		if err := json.Unmarshal(raw, p); err != nil {
			return fmt.Errorf("phrase argument %s: %w", raw, err)
		}
		e.Args = append(e.Args, p)
	}
	return nil
}
