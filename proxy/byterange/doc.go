// Package byterange picks the part of a response a request's Range header
// asks for (RFC 9110 14.2): one byte range, or the whole body when there
// are several or the header cannot be read, or "not satisfiable". It owns
// that arithmetic only: callers check If-Range against their own
// validators and write the status, Content-Range and body themselves.
package byterange
