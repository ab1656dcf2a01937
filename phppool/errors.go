package phppool

import "errors"

// Sentinels callers branch on with errors.Is.
var (
	// ErrProtocol: the peer broke the FastCGI protocol. The Conn is broken.
	ErrProtocol = errors.New("fastcgi protocol error")
	// ErrBroken: Do was called on a Conn already marked broken or closed.
	ErrBroken = errors.New("fastcgi connection broken")
	// ErrRejected: the application refused the request (END_REQUEST with
	// CANT_MPX_CONN, OVERLOADED or UNKNOWN_ROLE).
	ErrRejected = errors.New("fastcgi request rejected")
	// ErrRequestBody: reading the request body (Do's stdin) failed; the
	// worker never saw the whole request. The Conn is broken.
	ErrRequestBody = errors.New("read request body")
	// ErrParams: a name-value pair stream is malformed.
	ErrParams = errors.New("malformed fastcgi params")
	// ErrResponseHead: the CGI response head is malformed or too long.
	ErrResponseHead = errors.New("malformed cgi response head")
)
