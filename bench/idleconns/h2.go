package main

import (
	"bytes"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// exchangeH2 does the TLS handshake (h2 by ALPN), sends the preface, its
// SETTINGS and one GET on stream 1, and reads until that stream ends and
// the server has acknowledged the SETTINGS: then the connection is what
// a browser leaves open after a page, an idle HTTP/2 connection.
func (o *opener) exchangeH2(raw net.Conn) (net.Conn, error) {
	host, _, _ := net.SplitHostPort(o.cfg.addr)
	c := tls.Client(raw, &tls.Config{ServerName: host, NextProtos: []string{"h2"},
		InsecureSkipVerify: true}) // loopback only (parseFlags), the bench's own certificate
	if err := c.SetDeadline(time.Now().Add(10 * time.Second)); err != nil {
		return c, err
	}
	if err := c.Handshake(); err != nil {
		return c, fmt.Errorf("TLS handshake: %w", err)
	}
	if p := c.ConnectionState().NegotiatedProtocol; p != "h2" {
		return c, fmt.Errorf("ALPN chose %q, not h2", p)
	}
	if _, err := c.Write([]byte(http2.ClientPreface)); err != nil {
		return c, fmt.Errorf("preface: %w", err)
	}
	fr := http2.NewFramer(c, c)
	if err := fr.WriteSettings(); err != nil {
		return c, fmt.Errorf("settings: %w", err)
	}
	var hb bytes.Buffer
	enc := hpack.NewEncoder(&hb)
	for _, f := range [][2]string{{":method", "GET"}, {":scheme", "https"}, {":authority", o.cfg.addr},
		{":path", o.cfg.path}, {"user-agent", "ramjet-bench-idleconns"}} {
		_ = enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]}) // a bytes.Buffer does not fail
	}
	if err := fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: hb.Bytes(),
		EndStream: true, EndHeaders: true}); err != nil {
		return c, fmt.Errorf("request: %w", err)
	}
	if err := o.readResponseH2(c, fr); err != nil {
		return c, err
	}
	return c, c.SetDeadline(time.Time{})
}

// readResponseH2 reads frames until stream 1 ended and the server's
// SETTINGS came and acknowledged ours, counting a status other than 200.
func (o *opener) readResponseH2(c net.Conn, fr *http2.Framer) error {
	dec := hpack.NewDecoder(4096, nil)
	ended, settings, acked := false, false, false
	for range 1000 { // bounded: a 725 B answer is a handful of frames
		f, err := fr.ReadFrame()
		if err != nil {
			return fmt.Errorf("response: %w", err)
		}
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if f.IsAck() {
				acked = true
			} else if !settings {
				settings = true
				if err := fr.WriteSettingsAck(); err != nil {
					return fmt.Errorf("settings ack: %w", err)
				}
			}
		case *http2.HeadersFrame:
			fields, err := dec.DecodeFull(f.HeaderBlockFragment())
			if err != nil {
				return fmt.Errorf("response header: %w", err)
			}
			for _, hf := range fields {
				if hf.Name == ":status" && hf.Value != strconv.Itoa(200) {
					o.not200.Add(1)
				}
			}
			ended = ended || f.StreamEnded()
		case *http2.DataFrame:
			ended = ended || f.StreamEnded()
		case *http2.GoAwayFrame:
			return errors.New("GOAWAY before the connection went idle")
		}
		if ended && settings && acked {
			return nil
		}
	}
	return errors.New("no end of the response in 1000 frames")
}
