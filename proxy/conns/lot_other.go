//go:build !linux

package conns

import "errors"

// lot needs epoll; elsewhere NewListener serves without parking.
type lot struct{}

func newLot(*Listener) (*lot, error) {
	return nil, errors.New("conns: parking needs epoll (Linux)")
}

func (*lot) start()                 {}
func (*lot) park(c *Conn)           { c.state.Store(stClosed); _ = c.closeSocket() }
func (*lot) forget(*Conn)           {}
func (*lot) count() (int64, uint64) { return 0, 0 }
func (*lot) close()                 {}
func (*lot) drain()                 {}

func (*Conn) closeDetached() error { return nil }
