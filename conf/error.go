package conf

import (
	"errors"
	"strconv"
	"strings"
)

// Error is one problem with a configuration. Parse and Validate return
// errors.Join of several; each prints on its own line as
// "FILE:LINE: PATH: MSG", leaving out what is unknown. Use errors.As on a
// single problem, or the Unwrap() []error of the joined error to list them.
type Error struct {
	File string // file name given to Parse; "" from Validate
	Line int    // 1-based; 0 when unknown
	Path string // key path such as "cache.size" or "hosts[1].names[0]"; "" for the whole file
	Msg  string
	Err  error // underlying error, if any
}

func (e *Error) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		if e.Line > 0 {
			b.WriteString(":" + strconv.Itoa(e.Line))
		}
		b.WriteString(": ")
	}
	if e.Path != "" {
		b.WriteString(e.Path + ": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// problems collects Errors.
type problems []error

func (p *problems) add(path, msg string) {
	*p = append(*p, &Error{Path: path, Msg: msg})
}

// flatten lists the problems in err, which is one error or an errors.Join.
func flatten(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

var _ error = (*Error)(nil)

// asError returns err as an *Error, wrapping foreign errors.
func asError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		c := *e
		return &c
	}
	return &Error{Msg: err.Error(), Err: err}
}
