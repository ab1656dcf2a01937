package proxy

import (
	"crypto/tls"

	"github.com/VictoriaMetrics/metrics"

	"github.com/ramjet-proxy/ramjet/proxy/streamctx"
)

// protocol is the HTTP version a client request came over, as its
// transport tells it (request.via).
type protocol = streamctx.Protocol

const (
	protoH1   = streamctx.HTTP1
	protoH2   = streamctx.HTTP2
	protoH3   = streamctx.HTTP3
	protocols = streamctx.Protocols
)

var protocolLabels = [protocols]string{"h1", "h2", "h3"}

// protocolCounters count client requests per protocol: how many, the
// response body bytes they were sent, and the TLS handshakes of their
// connections (resumed ones apart).
type protocolCounters struct {
	requests, bytes    [protocols]*metrics.Counter
	handshakes, resume [protocols]*metrics.Counter
}

func newProtocolCounters(s *metrics.Set) protocolCounters {
	var c protocolCounters
	for p, l := range protocolLabels {
		c.requests[p] = s.NewCounter(`ramjet_client_requests_total{protocol="` + l + `"}`)
		c.bytes[p] = s.NewCounter(`ramjet_client_response_bytes_total{protocol="` + l + `"}`)
		c.handshakes[p] = s.NewCounter(`ramjet_tls_handshakes_total{protocol="` + l + `",resumed="false"}`)
		c.resume[p] = s.NewCounter(`ramjet_tls_handshakes_total{protocol="` + l + `",resumed="true"}`)
	}
	return c
}

// served counts a client request answered over p with a body of n bytes
// (negative: a stream of unknown length, counted as 0).
func (m *Metrics) served(p protocol, n int64) {
	m.protocols.requests[p].Inc()
	if n > 0 {
		m.protocols.bytes[p].AddInt64(n)
	}
}

// Handshake counts a completed TLS handshake by the protocol ALPN chose
// ("h3" over QUIC, "h2", else HTTP/1.1). Its signature is
// tls.Config.VerifyConnection's, which crypto/tls calls on the server
// side after every full or resumed handshake; it refuses none.
func (m *Metrics) Handshake(cs tls.ConnectionState) error {
	p := protoH1
	switch cs.NegotiatedProtocol {
	case "h3":
		p = protoH3
	case "h2":
		p = protoH2
	}
	if cs.DidResume {
		m.protocols.resume[p].Inc()
	} else {
		m.protocols.handshakes[p].Inc()
	}
	return nil
}
