package proxy

import (
	"bufio"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"
)

// BenchmarkSettleConnection is admit's Connection handling of a
// browser's request, without a Connection field and with the
// "Connection: keep-alive" every HTTP/1.1 browser sends.
func BenchmarkSettleConnection(b *testing.B) {
	for _, conn := range []string{"", "Connection: keep-alive\r\n"} {
		raw := "GET /page HTTP/1.1\r\nHost: a.test\r\n" + conn +
			"Upgrade-Insecure-Requests: 1\r\n" +
			"User-Agent: Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36\r\n" +
			"Accept: text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8\r\n" +
			"Sec-Fetch-Site: same-origin\r\nSec-Fetch-Mode: navigate\r\nSec-Fetch-User: ?1\r\nSec-Fetch-Dest: document\r\n" +
			"Referer: http://a.test/\r\n" +
			"Accept-Encoding: gzip, deflate, br, zstd\r\n" +
			"Accept-Language: en-US,en;q=0.9\r\n" +
			"Cookie: _ga=GA1.1.123456789.1700000000; _gid=GA1.1.987654321.1700000000\r\n\r\n"
		var h fasthttp.RequestHeader
		if err := h.Read(bufio.NewReader(strings.NewReader(raw))); err != nil {
			b.Fatal(err)
		}
		b.Run("conn="+strings.TrimSpace(conn), func(b *testing.B) {
			for b.Loop() {
				settleConnection(&h)
			}
		})
	}
}
